//! String interning: every name, category, arg key and string arg value of a capture is stored once.

use rustc_hash::FxHashMap;

/// Id of an interned string within one capture. `StrId::EMPTY` is the empty string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct StrId(pub u32);

impl StrId {
    /// The empty string, always id 0.
    pub const EMPTY: StrId = StrId(0);
    /// Index into the interner's table.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// An append-only string table. Look-ups by id are O(1); interning hashes once.
#[derive(Debug, Clone)]
pub struct Interner {
    strings: Vec<Box<str>>,
    map: FxHashMap<Box<str>, StrId>,
    bytes: usize,
}

impl Default for Interner {
    fn default() -> Self {
        Self::new()
    }
}

impl Interner {
    /// A table holding only the empty string.
    pub fn new() -> Self {
        let mut me = Interner {
            strings: Vec::new(),
            map: FxHashMap::default(),
            bytes: 0,
        };
        me.intern("");
        me
    }

    /// Interns `s`, allocating only the first time it is seen.
    #[inline]
    pub fn intern(&mut self, s: &str) -> StrId {
        if let Some(&id) = self.map.get(s) {
            return id;
        }
        let id = StrId(self.strings.len() as u32);
        let boxed: Box<str> = s.into();
        self.bytes += boxed.len();
        self.strings.push(boxed.clone());
        self.map.insert(boxed, id);
        id
    }

    /// Interns bytes that should be UTF-8; invalid sequences become U+FFFD.
    pub fn intern_lossy(&mut self, b: &[u8]) -> StrId {
        match std::str::from_utf8(b) {
            Ok(s) => self.intern(s),
            Err(_) => self.intern(&String::from_utf8_lossy(b)),
        }
    }

    /// Looks a string up without interning it.
    pub fn lookup(&self, s: &str) -> Option<StrId> {
        self.map.get(s).copied()
    }

    /// The string behind `id` (empty for an unknown id).
    #[inline]
    pub fn get(&self, id: StrId) -> &str {
        self.strings.get(id.index()).map(|s| &**s).unwrap_or("")
    }

    /// Number of distinct strings.
    pub fn len(&self) -> usize {
        self.strings.len()
    }

    /// True when only the empty string is present.
    pub fn is_empty(&self) -> bool {
        self.strings.len() <= 1
    }

    /// All strings with their ids, in id order.
    pub fn iter(&self) -> impl Iterator<Item = (StrId, &str)> {
        self.strings
            .iter()
            .enumerate()
            .map(|(i, s)| (StrId(i as u32), &**s))
    }

    /// Approximate heap bytes used (strings stored twice: table and map key).
    pub fn heap_bytes(&self) -> usize {
        self.bytes * 2 + self.strings.capacity() * 24 + self.map.capacity() * 32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interns_once() {
        let mut i = Interner::new();
        assert_eq!(i.intern(""), StrId::EMPTY);
        let a = i.intern("aten::mm");
        let b = i.intern("aten::add");
        assert_ne!(a, b);
        assert_eq!(i.intern("aten::mm"), a);
        assert_eq!(i.get(a), "aten::mm");
        assert_eq!(i.len(), 3);
        assert_eq!(i.lookup("aten::add"), Some(b));
        assert_eq!(i.get(StrId(99)), "");
        let l = i.intern_lossy(b"a\xffb");
        assert_eq!(i.get(l), "a\u{fffd}b");
    }
}
