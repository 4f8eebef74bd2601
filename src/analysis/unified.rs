//! ejkernel's unified event name `N(P-S)` (analysis.md §c): N = `hlo_module` stat else the event
//! name; P = `program_id` stat (when the key exists, even if empty) else `run_id`; S =
//! `scope_range_id` else `None`. Numeric zeros and empty strings read as `None`, like ejkernel's
//! stat decoding.

use crate::model::{ArgValue, ArgsRef, Capture, StrId};

/// A stat value reduced to what the unified name prints; hashable, no allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValKey {
    /// Missing, zero or empty: printed `None`.
    None,
    /// Signed integer.
    I(i64),
    /// Unsigned integer.
    U(u64),
    /// Float bits.
    F(u64),
    /// Interned string (or JSON text).
    S(StrId),
    /// Boolean.
    B(bool),
}

impl ValKey {
    /// Reduces an arg value (ejkernel: the first non-zero numeric, else the non-empty string).
    pub fn of(v: Option<ArgValue>) -> ValKey {
        match v {
            None | Some(ArgValue::Null) | Some(ArgValue::Bytes(_)) => ValKey::None,
            Some(ArgValue::I64(0)) | Some(ArgValue::U64(0)) => ValKey::None,
            Some(ArgValue::F64(0.0)) => ValKey::None,
            Some(ArgValue::Str(StrId::EMPTY)) | Some(ArgValue::Json(StrId::EMPTY)) => ValKey::None,
            Some(ArgValue::I64(i)) => ValKey::I(i),
            Some(ArgValue::U64(u)) => ValKey::U(u),
            Some(ArgValue::F64(f)) => ValKey::F(f.to_bits()),
            Some(ArgValue::Str(s)) | Some(ArgValue::Json(s)) => ValKey::S(s),
            Some(ArgValue::Bool(b)) => ValKey::B(b),
        }
    }

    /// Appends the value as Python would print it in an f-string.
    pub fn write(self, c: &Capture, out: &mut String) {
        use std::fmt::Write;
        let _ = match self {
            ValKey::None => write!(out, "None"),
            ValKey::I(i) => write!(out, "{i}"),
            ValKey::U(u) => write!(out, "{u}"),
            ValKey::F(b) => write!(out, "{:?}", f64::from_bits(b)),
            ValKey::S(s) => write!(out, "{}", c.strings.get(s)),
            ValKey::B(b) => write!(out, "{}", if b { "True" } else { "False" }),
        };
    }
}

/// The parts of a unified name: (N, P, S).
pub type UnifiedKey = (ValKey, ValKey, ValKey);

/// Stat keys of one capture, looked up once.
#[derive(Clone, Copy, Debug)]
pub struct UnifiedKeys {
    hlo_module: Option<StrId>,
    program_id: Option<StrId>,
    run_id: Option<StrId>,
    scope_range_id: Option<StrId>,
}

impl UnifiedKeys {
    /// Looks the stat names up in the capture's string table (absent names cannot occur in args).
    pub fn new(c: &Capture) -> Self {
        UnifiedKeys {
            hlo_module: c.strings.lookup("hlo_module"),
            program_id: c.strings.lookup("program_id"),
            run_id: c.strings.lookup("run_id"),
            scope_range_id: c.strings.lookup("scope_range_id"),
        }
    }

    /// The unified key of an event named `name` with args `args` (read once: the first value
    /// of each key counts).
    pub fn key(&self, c: &Capture, name: StrId, args: ArgsRef) -> UnifiedKey {
        let keys = [
            self.hlo_module,
            self.program_id,
            self.run_id,
            self.scope_range_id,
        ];
        let mut found: [Option<ArgValue>; 4] = [None; 4];
        if args.is_some() && keys.iter().any(Option::is_some) {
            for (k, v) in c.args.iter(args, &c.strings) {
                for (slot, want) in found.iter_mut().zip(keys) {
                    if slot.is_none() && want == Some(k) {
                        *slot = Some(v);
                    }
                }
            }
        }
        let [hm, pid, rid, sr] = found;
        let n = match hm {
            Some(v) => ValKey::of(Some(v)),
            None => ValKey::S(name),
        };
        let p = match pid {
            Some(v) => ValKey::of(Some(v)),
            None => ValKey::of(rid),
        };
        let s = ValKey::of(sr);
        (n, p, s)
    }
}

/// Renders `N(P-S)`.
pub fn render(c: &Capture, k: UnifiedKey) -> String {
    let mut s = String::new();
    k.0.write(c, &mut s);
    s.push('(');
    k.1.write(c, &mut s);
    s.push('-');
    k.2.write(c, &mut s);
    s.push(')');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::*;

    #[test]
    fn unified_names_follow_ejkernel() {
        let mut b = CaptureBuilder::new();
        let p = b.process(Key::Int(1));
        let t = b.track(p, Key::Int(1), TrackKind::XLine);
        let name = b.intern("fusion.1");
        let (hm, pid, rid, sr) = (
            b.intern("hlo_module"),
            b.intern("program_id"),
            b.intern("run_id"),
            b.intern("scope_range_id"),
        );
        let jit = b.intern("jit_step");
        b.args.begin();
        b.args.push(hm, ArgValue::Str(jit));
        b.args.push(pid, ArgValue::I64(42));
        let a1 = b.args.finish();
        b.args.begin();
        b.args.push(rid, ArgValue::U64(7));
        b.args.push(sr, ArgValue::I64(3));
        let a2 = b.args.finish();
        b.args.begin();
        b.args.push(pid, ArgValue::I64(0));
        b.args.push(rid, ArgValue::U64(7));
        let a3 = b.args.finish();
        b.add_slice(t, 0, 10, name, StrId::EMPTY, a1, 0);
        b.add_slice(t, 20, 10, name, StrId::EMPTY, a2, 0);
        b.add_slice(t, 40, 10, name, StrId::EMPTY, a3, 0);
        b.add_slice(t, 60, 10, name, StrId::EMPTY, ArgsRef::NONE, 0);
        let c = b.finish(SourceInfo::default(), Format::XPlane);
        let k = UnifiedKeys::new(&c);
        let names: Vec<String> = (0..4)
            .map(|i| render(&c, k.key(&c, c.slices.name[i], c.slices.args[i])))
            .collect();
        assert_eq!(
            names,
            vec![
                "jit_step(42-None)",
                "fusion.1(7-3)",
                // program_id present but zero → None, run_id not consulted
                "fusion.1(None-None)",
                "fusion.1(None-None)",
            ]
        );
    }
}
