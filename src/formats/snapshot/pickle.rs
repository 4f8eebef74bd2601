//! A small pickle virtual machine for the opcodes Python writes for plain data (protocols 2–5:
//! dicts, lists, tuples, sets, strings, bytes, ints of any size, floats, bools, None, memo
//! references). Values live in one arena; strings borrow the input bytes, so reading a big
//! allocator snapshot allocates one `Vec` per container and nothing per string or number.
//! Class references (`GLOBAL`, `REDUCE`, ...) become [`Val::Opaque`] instead of failing.

/// Id of a value in [`Pickle::vals`].
pub type ValId = u32;

/// One value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Val {
    /// `None`.
    None,
    /// `True` / `False`.
    Bool(bool),
    /// An int that fits i64.
    Int(i64),
    /// A non-negative int that fits u64 but not i64.
    UInt(u64),
    /// An int wider than 64 bits (approximated).
    BigInt(f64),
    /// A float.
    Float(f64),
    /// A str: byte range of the input.
    Str(u32, u32),
    /// bytes / bytearray: byte range of the input.
    Bytes(u32, u32),
    /// A list: index into [`Pickle::seqs`].
    List(u32),
    /// A tuple: index into [`Pickle::seqs`].
    Tuple(u32),
    /// A set or frozenset: index into [`Pickle::seqs`].
    Set(u32),
    /// A dict: index into [`Pickle::dicts`].
    Dict(u32),
    /// A class reference or an object built from one (not interpreted).
    Opaque,
}

/// A decoded pickle: the value arena and its root.
#[derive(Debug)]
pub struct Pickle<'a> {
    /// The input.
    pub data: &'a [u8],
    /// All values.
    pub vals: Vec<Val>,
    /// Items of lists, tuples and sets.
    pub seqs: Vec<Vec<ValId>>,
    /// Items of dicts (key, value), in insertion order.
    pub dicts: Vec<Vec<(ValId, ValId)>>,
    /// The value `STOP` returned.
    pub root: ValId,
}

/// Why a pickle could not be read: the byte offset and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PickleError {
    /// Offset of the opcode.
    pub offset: u64,
    /// What was expected.
    pub message: String,
}

struct Vm<'a> {
    p: Pickle<'a>,
    pos: usize,
    op_at: usize,
    stack: Vec<ValId>,
    marks: Vec<usize>,
    memo: Vec<ValId>,
}

impl<'a> Vm<'a> {
    fn err(&self, m: impl Into<String>) -> PickleError {
        PickleError {
            offset: self.op_at as u64,
            message: m.into(),
        }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], PickleError> {
        let d = self.p.data;
        let s = d
            .get(self.pos..self.pos.saturating_add(n))
            .ok_or_else(|| self.err("the pickle ends inside an opcode's argument"))?;
        self.pos += n;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, PickleError> {
        Ok(self.take(1)?[0])
    }
    fn le(&mut self, n: usize) -> Result<u64, PickleError> {
        let b = self.take(n)?;
        Ok(b.iter().rev().fold(0u64, |a, &x| (a << 8) | u64::from(x)))
    }
    fn push(&mut self, v: Val) {
        let id = self.p.vals.len() as ValId;
        self.p.vals.push(v);
        self.stack.push(id);
    }
    fn pop(&mut self) -> Result<ValId, PickleError> {
        if self.marks.last().is_some_and(|&m| m >= self.stack.len()) {
            return Err(self.err("stack underflow (pop past a MARK)"));
        }
        self.stack.pop().ok_or_else(|| self.err("stack underflow"))
    }
    fn pop_mark(&mut self) -> Result<Vec<ValId>, PickleError> {
        let m = self.marks.pop().ok_or_else(|| self.err("no MARK"))?;
        Ok(self.stack.split_off(m.min(self.stack.len())))
    }
    fn range(&mut self, n: u64, bytes: bool) -> Result<(), PickleError> {
        let start = self.pos;
        let n = usize::try_from(n).map_err(|_| self.err("string length too large"))?;
        self.take(n)?;
        let (s, l) = (
            u32::try_from(start).map_err(|_| self.err("pickles over 4 GiB are not read"))?,
            n as u32,
        );
        self.push(if bytes {
            Val::Bytes(s, l)
        } else {
            Val::Str(s, l)
        });
        Ok(())
    }
    fn long(&mut self, n: usize) -> Result<(), PickleError> {
        let b = self.take(n)?;
        let v = if n == 0 {
            Val::Int(0)
        } else if n <= 8 {
            let mut x = b.iter().rev().fold(0u64, |a, &x| (a << 8) | u64::from(x));
            if n < 8 && b[n - 1] & 0x80 != 0 {
                x |= !0u64 << (8 * n);
            }
            Val::Int(x as i64)
        } else if n == 9 && b[8] == 0 {
            let x = b[..8]
                .iter()
                .rev()
                .fold(0u64, |a, &x| (a << 8) | u64::from(x));
            if x <= i64::MAX as u64 {
                Val::Int(x as i64)
            } else {
                Val::UInt(x)
            }
        } else {
            let neg = b[n - 1] & 0x80 != 0;
            let mut f = 0.0f64;
            for &x in b.iter().rev() {
                f = f * 256.0 + f64::from(if neg { !x } else { x });
            }
            Val::BigInt(if neg { -(f + 1.0) } else { f })
        };
        self.push(v);
        Ok(())
    }
    fn container(&self, id: ValId) -> Val {
        self.p.vals.get(id as usize).copied().unwrap_or(Val::None)
    }
    fn extend_seq(&mut self, target: ValId, items: Vec<ValId>) -> Result<(), PickleError> {
        match self.container(target) {
            Val::List(i) | Val::Set(i) => {
                self.p.seqs[i as usize].extend(items);
                Ok(())
            }
            Val::Opaque => Ok(()),
            _ => Err(self.err("APPEND(S)/ADDITEMS on something that is not a list or set")),
        }
    }
    fn set_items(&mut self, target: ValId, items: Vec<ValId>) -> Result<(), PickleError> {
        match self.container(target) {
            Val::Dict(i) => {
                let d = &mut self.p.dicts[i as usize];
                for kv in items.chunks_exact(2) {
                    d.push((kv[0], kv[1]));
                }
                Ok(())
            }
            Val::Opaque => Ok(()),
            _ => Err(self.err("SETITEM(S) on something that is not a dict")),
        }
    }
    fn seq(&mut self, items: Vec<ValId>, make: fn(u32) -> Val) {
        let i = self.p.seqs.len() as u32;
        self.p.seqs.push(items);
        self.push(make(i));
    }
    fn memo_get(&mut self, i: u64) -> Result<(), PickleError> {
        let id = usize::try_from(i)
            .ok()
            .and_then(|i| self.memo.get(i).copied())
            .filter(|&v| v != ValId::MAX)
            .ok_or_else(|| self.err(format!("memo key {i} was never stored")))?;
        self.stack.push(id);
        Ok(())
    }
    fn memo_put(&mut self, i: u64) -> Result<(), PickleError> {
        let top = *self
            .stack
            .last()
            .ok_or_else(|| self.err("PUT on an empty stack"))?;
        let i = usize::try_from(i).map_err(|_| self.err("memo key too large"))?;
        if i > self.memo.len() + (1 << 20) {
            return Err(self.err(format!("memo key {i} is far beyond the memo")));
        }
        if i >= self.memo.len() {
            self.memo.resize(i + 1, ValId::MAX);
        }
        self.memo[i] = top;
        Ok(())
    }

    fn run(&mut self) -> Result<ValId, PickleError> {
        loop {
            self.op_at = self.pos;
            let op = self.u8()?;
            match op {
                0x80 => {
                    let v = self.u8()?;
                    if v > 5 {
                        return Err(self.err(format!("pickle protocol {v} (at most 5 is read)")));
                    }
                }
                0x95 => {
                    self.take(8)?;
                }
                b'.' => return self.pop(),
                b'(' => self.marks.push(self.stack.len()),
                b'N' => self.push(Val::None),
                0x88 => self.push(Val::Bool(true)),
                0x89 => self.push(Val::Bool(false)),
                b'J' => {
                    let v = self.le(4)? as u32 as i32;
                    self.push(Val::Int(i64::from(v)));
                }
                b'K' => {
                    let v = self.u8()?;
                    self.push(Val::Int(i64::from(v)));
                }
                b'M' => {
                    let v = self.le(2)?;
                    self.push(Val::Int(v as i64));
                }
                0x8a => {
                    let n = self.u8()?;
                    self.long(usize::from(n))?;
                }
                0x8b => {
                    let n = self.le(4)? as u32 as i32;
                    let n = usize::try_from(n).map_err(|_| self.err("negative LONG4 length"))?;
                    self.long(n)?;
                }
                b'G' => {
                    let b = self.take(8)?;
                    let mut a = [0u8; 8];
                    a.copy_from_slice(b);
                    self.push(Val::Float(f64::from_be_bytes(a)));
                }
                0x8c => {
                    let n = self.u8()?;
                    self.range(u64::from(n), false)?;
                }
                b'X' => {
                    let n = self.le(4)?;
                    self.range(n, false)?;
                }
                0x8d => {
                    let n = self.le(8)?;
                    self.range(n, false)?;
                }
                b'U' | b'C' => {
                    let n = self.u8()?;
                    self.range(u64::from(n), op == b'C')?;
                }
                b'T' | b'B' => {
                    let n = self.le(4)?;
                    self.range(n, op == b'B')?;
                }
                0x8e | 0x96 => {
                    let n = self.le(8)?;
                    self.range(n, true)?;
                }
                b'}' => {
                    let i = self.p.dicts.len() as u32;
                    self.p.dicts.push(Vec::new());
                    self.push(Val::Dict(i));
                }
                b']' => self.seq(Vec::new(), Val::List),
                b')' => self.seq(Vec::new(), Val::Tuple),
                0x8f => self.seq(Vec::new(), Val::Set),
                b'l' => {
                    let items = self.pop_mark()?;
                    self.seq(items, Val::List);
                }
                b'd' => {
                    let items = self.pop_mark()?;
                    let i = self.p.dicts.len() as u32;
                    self.p.dicts.push(Vec::new());
                    self.push(Val::Dict(i));
                    let top = self.pop()?;
                    self.set_items(top, items)?;
                    self.stack.push(top);
                }
                b't' => {
                    let items = self.pop_mark()?;
                    self.seq(items, Val::Tuple);
                }
                0x91 => {
                    let items = self.pop_mark()?;
                    self.seq(items, Val::Set);
                }
                0x85..=0x87 => {
                    let n = usize::from(op - 0x84);
                    if self.stack.len() < n {
                        return Err(self.err("stack underflow in TUPLEn"));
                    }
                    let items = self.stack.split_off(self.stack.len() - n);
                    self.seq(items, Val::Tuple);
                }
                b'a' => {
                    let v = self.pop()?;
                    let l = *self
                        .stack
                        .last()
                        .ok_or_else(|| self.err("APPEND without list"))?;
                    self.extend_seq(l, vec![v])?;
                }
                b'e' | 0x90 => {
                    let m = self.marks.pop().ok_or_else(|| self.err("no MARK"))?;
                    let m = m.min(self.stack.len());
                    let l = *self.stack[..m]
                        .last()
                        .ok_or_else(|| self.err("APPENDS without list"))?;
                    match self.container(l) {
                        Val::List(i) | Val::Set(i) => {
                            self.p.seqs[i as usize].extend_from_slice(&self.stack[m..]);
                        }
                        Val::Opaque => {}
                        _ => return Err(self.err("APPENDS on something that is not a list")),
                    }
                    self.stack.truncate(m);
                }
                b's' => {
                    let v = self.pop()?;
                    let k = self.pop()?;
                    let d = *self
                        .stack
                        .last()
                        .ok_or_else(|| self.err("SETITEM without dict"))?;
                    self.set_items(d, vec![k, v])?;
                }
                b'u' => {
                    let m = self.marks.pop().ok_or_else(|| self.err("no MARK"))?;
                    let m = m.min(self.stack.len());
                    let d = *self.stack[..m]
                        .last()
                        .ok_or_else(|| self.err("SETITEMS without dict"))?;
                    match self.container(d) {
                        Val::Dict(i) => {
                            let items = &self.stack[m..];
                            let dict = &mut self.p.dicts[i as usize];
                            dict.reserve(items.len() / 2);
                            dict.extend(items.chunks_exact(2).map(|kv| (kv[0], kv[1])));
                        }
                        Val::Opaque => {}
                        _ => return Err(self.err("SETITEMS on something that is not a dict")),
                    }
                    self.stack.truncate(m);
                }
                0x94 => {
                    let i = self.memo.len() as u64;
                    self.memo_put(i)?;
                }
                b'q' => {
                    let i = self.u8()?;
                    self.memo_put(u64::from(i))?;
                }
                b'r' => {
                    let i = self.le(4)?;
                    self.memo_put(i)?;
                }
                b'h' => {
                    let i = self.u8()?;
                    self.memo_get(u64::from(i))?;
                }
                b'j' => {
                    let i = self.le(4)?;
                    self.memo_get(i)?;
                }
                b'0' => {
                    self.pop()?;
                }
                b'1' => {
                    self.pop_mark()?;
                }
                b'2' => {
                    let top = *self
                        .stack
                        .last()
                        .ok_or_else(|| self.err("DUP on empty stack"))?;
                    self.stack.push(top);
                }
                b'c' => {
                    // GLOBAL: two newline-terminated names.
                    for _ in 0..2 {
                        let rest = &self.p.data[self.pos.min(self.p.data.len())..];
                        let n = rest
                            .iter()
                            .position(|&b| b == b'\n')
                            .ok_or_else(|| self.err("GLOBAL name without newline"))?;
                        self.pos += n + 1;
                    }
                    self.push(Val::Opaque);
                }
                0x93 => {
                    self.pop()?;
                    self.pop()?;
                    self.push(Val::Opaque);
                }
                b'R' | 0x81 => {
                    self.pop()?;
                    self.pop()?;
                    self.push(Val::Opaque);
                }
                0x92 => {
                    self.pop()?;
                    self.pop()?;
                    self.pop()?;
                    self.push(Val::Opaque);
                }
                b'b' => {
                    self.pop()?;
                }
                0x97 => {}
                other => {
                    return Err(self.err(format!(
                        "unsupported pickle opcode 0x{other:02x} (plain-data pickles of protocol 2–5 are read)"
                    )));
                }
            }
        }
    }
}

/// Decodes a whole pickle.
pub fn decode(data: &[u8]) -> Result<Pickle<'_>, PickleError> {
    let mut vm = Vm {
        p: Pickle {
            data,
            // Rough sizes for snapshots (a value per ~8 bytes, a container per ~100): fewer
            // regrowths of the arenas on big files.
            vals: Vec::with_capacity(data.len() / 8),
            seqs: Vec::with_capacity(data.len() / 200),
            dicts: Vec::with_capacity(data.len() / 100),
            root: 0,
        },
        pos: 0,
        op_at: 0,
        stack: Vec::new(),
        marks: Vec::new(),
        memo: Vec::new(),
    };
    let root = vm.run()?;
    vm.p.root = root;
    Ok(vm.p)
}

impl<'a> Pickle<'a> {
    /// The value `id`.
    pub fn val(&self, id: ValId) -> Val {
        self.vals.get(id as usize).copied().unwrap_or(Val::None)
    }

    /// The text of a str value (lossy for invalid UTF-8), `None` for other values.
    pub fn str(&self, id: ValId) -> Option<std::borrow::Cow<'a, str>> {
        match self.val(id) {
            Val::Str(s, l) => self
                .data
                .get(s as usize..s as usize + l as usize)
                .map(String::from_utf8_lossy),
            _ => None,
        }
    }

    /// An int value (bools count; floats do not).
    pub fn int(&self, id: ValId) -> Option<i64> {
        match self.val(id) {
            Val::Int(v) => Some(v),
            Val::UInt(v) => i64::try_from(v).ok(),
            Val::Bool(b) => Some(i64::from(b)),
            _ => None,
        }
    }

    /// An int value as u64 (addresses): negative ints wrap, as C pointers would.
    pub fn uint(&self, id: ValId) -> Option<u64> {
        match self.val(id) {
            Val::Int(v) => Some(v as u64),
            Val::UInt(v) => Some(v),
            _ => None,
        }
    }

    /// Items of a list / tuple / set (empty for other values).
    pub fn items(&self, id: ValId) -> &[ValId] {
        match self.val(id) {
            Val::List(i) | Val::Tuple(i) | Val::Set(i) => {
                self.seqs.get(i as usize).map_or(&[], |v| v.as_slice())
            }
            _ => &[],
        }
    }

    /// Entries of a dict (empty for other values).
    pub fn entries(&self, id: ValId) -> &[(ValId, ValId)] {
        match self.val(id) {
            Val::Dict(i) => self.dicts.get(i as usize).map_or(&[], |v| v.as_slice()),
            _ => &[],
        }
    }

    /// The value under str key `key` of dict `id` (the last one when repeated).
    pub fn get(&self, id: ValId, key: &str) -> Option<ValId> {
        self.entries(id)
            .iter()
            .rev()
            .find(|&&(k, _)| self.key_is(k, key))
            .map(|&(_, v)| v)
    }

    /// True when value `k` is the str `key` (compared as bytes, no allocation).
    pub fn key_is(&self, k: ValId, key: &str) -> bool {
        match self.val(k) {
            Val::Str(s, l) => {
                self.data.get(s as usize..s as usize + l as usize) == Some(key.as_bytes())
            }
            _ => false,
        }
    }
}
