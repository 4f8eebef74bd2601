//! The HLO modules a capture carries (`/host:metadata`: one event metadata per program with an
//! `Hlo Proto` bytes stat and a `program_id` stat), read as far as XProf's symbol resolver reads
//! them: per (program id, instruction name), the framework op (`op_name:op_type` of the
//! instruction's `OpMetadata`) and the source (`basename(source_file):source_line`).
//! Only the needed fields are walked on the wire (`HloProto.hlo_module` 1 → `computations` 3 →
//! `instructions` 2 → `name` 1 / `metadata` 7 → `op_type` 1, `op_name` 2, `source_file` 3,
//! `source_line` 4); a malformed proto is skipped, as XProf skips one it cannot parse.

use super::wire::{LEN, Reader, VARINT, WireError};
use rustc_hash::FxHashMap;

/// What XProf's symbol resolver gives for one HLO instruction.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Symbol {
    /// `op_name:op_type` (`:` when the instruction has no metadata).
    pub tf_op: String,
    /// `file.py:line`, empty without a source file.
    pub source: String,
}

/// Instructions by program id and name.
#[derive(Debug, Default)]
pub struct HloSymbols {
    by_program: FxHashMap<u64, FxHashMap<String, Symbol>>,
}

impl HloSymbols {
    /// Adds the module of one `Hlo Proto` stat under `program_id` (the first one wins, as in
    /// XProf's map). Returns false when the bytes are not an HloProto.
    pub fn add(&mut self, program_id: u64, bytes: &[u8]) -> bool {
        if self.by_program.contains_key(&program_id) {
            return true;
        }
        match read_module(bytes) {
            Ok(m) => {
                self.by_program.insert(program_id, m);
                true
            }
            Err(_) => false,
        }
    }

    /// True when no module was read.
    pub fn is_empty(&self) -> bool {
        self.by_program.is_empty()
    }

    /// The symbol of instruction `name` in program `program_id`.
    pub fn get(&self, program_id: Option<u64>, name: &str) -> Option<&Symbol> {
        self.by_program.get(&program_id?)?.get(name)
    }
}

fn str_of(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn read_module(bytes: &[u8]) -> Result<FxHashMap<String, Symbol>, Box<WireError>> {
    let mut out = FxHashMap::default();
    let mut r = Reader::new(bytes, 0);
    while !r.is_empty() {
        let (f, wt) = r.key()?;
        if f == 1 && wt == LEN {
            let mut m = r.sub()?;
            while !m.is_empty() {
                let (f, wt) = m.key()?;
                if f == 3 && wt == LEN {
                    read_computation(m.sub()?, &mut out)?;
                } else {
                    m.skip(wt)?;
                }
            }
        } else {
            r.skip(wt)?;
        }
    }
    Ok(out)
}

fn read_computation(
    mut c: Reader<'_>,
    out: &mut FxHashMap<String, Symbol>,
) -> Result<(), Box<WireError>> {
    while !c.is_empty() {
        let (f, wt) = c.key()?;
        if f != 2 || wt != LEN {
            c.skip(wt)?;
            continue;
        }
        let mut ins = c.sub()?;
        let mut name: &[u8] = &[];
        let (mut op_type, mut op_name, mut file): (&[u8], &[u8], &[u8]) = (&[], &[], &[]);
        let mut line = 0i64;
        while !ins.is_empty() {
            let (f, wt) = ins.key()?;
            match (f, wt) {
                (1, LEN) => name = ins.bytes()?,
                (7, LEN) => {
                    let mut md = ins.sub()?;
                    while !md.is_empty() {
                        let (f, wt) = md.key()?;
                        match (f, wt) {
                            (1, LEN) => op_type = md.bytes()?,
                            (2, LEN) => op_name = md.bytes()?,
                            (3, LEN) => file = md.bytes()?,
                            (4, VARINT) => line = md.varint()? as i32 as i64,
                            _ => md.skip(wt)?,
                        }
                    }
                }
                _ => ins.skip(wt)?,
            }
        }
        let source = if file.is_empty() {
            String::new()
        } else {
            let f = str_of(file);
            let base = f.rsplit('/').next().unwrap_or(&f).to_string();
            format!("{base}:{line}")
        };
        let sym = Symbol {
            tf_op: format!("{}:{}", str_of(op_name), str_of(op_type)),
            source,
        };
        // First instruction of a name wins (XProf's try_emplace).
        out.entry(str_of(name)).or_insert(sym);
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn len_field(out: &mut Vec<u8>, field: u32, body: &[u8]) {
        crate::synth::xplane::put_len_field(field, body, out);
    }

    /// An HloProto with one computation of `(name, op_name, op_type, source_file, line)`.
    pub(crate) fn hlo_proto(instrs: &[(&str, &str, &str, &str, u8)]) -> Vec<u8> {
        let mut comp = Vec::new();
        len_field(&mut comp, 1, b"main");
        for &(name, op_name, op_type, file, line) in instrs {
            let mut md = Vec::new();
            len_field(&mut md, 1, op_type.as_bytes());
            len_field(&mut md, 2, op_name.as_bytes());
            if !file.is_empty() {
                len_field(&mut md, 3, file.as_bytes());
                md.extend_from_slice(&[4 << 3, line]);
            }
            let mut ins = Vec::new();
            len_field(&mut ins, 1, name.as_bytes());
            len_field(&mut ins, 2, b"fusion");
            len_field(&mut ins, 7, &md);
            len_field(&mut comp, 2, &ins);
        }
        let mut module = Vec::new();
        len_field(&mut module, 1, b"jit_f");
        len_field(&mut module, 3, &comp);
        let mut proto = Vec::new();
        len_field(&mut proto, 1, &module);
        proto
    }

    #[test]
    fn reads_instruction_metadata() {
        let mut s = HloSymbols::default();
        assert!(s.add(
            7,
            &hlo_proto(&[
                (
                    "custom-call.1",
                    "jit(f)/dot_general",
                    "",
                    "/src/model.py",
                    12
                ),
                ("fusion.2", "", "", "", 0),
            ])
        ));
        let c = s.get(Some(7), "custom-call.1").unwrap();
        assert_eq!(c.tf_op, "jit(f)/dot_general:");
        assert_eq!(c.source, "model.py:12");
        assert_eq!(s.get(Some(7), "fusion.2").unwrap().tf_op, ":");
        assert!(s.get(Some(8), "fusion.2").is_none());
        assert!(s.get(None, "fusion.2").is_none());
        assert!(!s.add(9, &[0xff, 0xff]));
    }
}
