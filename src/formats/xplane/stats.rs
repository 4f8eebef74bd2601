//! Stat resolution: stat metadata id → interned name and a "role" for the few stats the loader
//! interprets (correlation, flows, derived-timeline inputs); XStat values → [`ArgValue`].

use super::generated::{XStat, x_stat};
use super::wire::{I64, LEN, Reader, WireError};
use crate::model::{ArgValue, Interner, StrId};
use rustc_hash::FxHashMap;
use std::io::Read;

/// Stats the loader interprets, identified by name (numbers are not stable across versions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Role {
    /// Just an arg.
    #[default]
    None,
    /// `correlation_id` → slice corr column.
    Correlation,
    /// `flow` → flow point.
    Flow,
    /// `group_id` (Steps, Launch Stats).
    GroupId,
    /// `hlo_op` (XLA Ops).
    HloOp,
    /// `hlo_module` (XLA Modules).
    HloModule,
    /// `tf_op` or old `level 0` (Framework lines).
    TfOp,
    /// `kernel_details`: marks a GPU kernel.
    KernelDetails,
    /// `memcpy_details`.
    MemcpyDetails,
    /// `Memset_details` / `memset_details`.
    MemsetDetails,
    /// `step_name`.
    StepName,
    /// `source` / `source_info` (Source code line).
    Source,
    /// `device_id` (launch stats).
    DeviceId,
    /// `program_id`.
    ProgramId,
    /// `_r`: a root event of step grouping (its level).
    IsRoot,
    /// `step_num` (group names).
    StepNum,
    /// `iter_num` (group names).
    IterNum,
    /// `graph_type` (group names).
    GraphType,
    /// `_pt`: producer context type.
    ProducerType,
    /// `_p`: producer context id.
    ProducerId,
    /// `_ct`: consumer context type.
    ConsumerType,
    /// `_c`: consumer context id.
    ConsumerId,
    /// `_a`: async event (not nested in grouping).
    IsAsync,
    /// `scope_range_id`: one per module execution (splits module runs).
    ScopeRangeId,
    /// `cuda_graph_id`: the CUDA graph (command buffer) a kernel ran in.
    CudaGraphId,
    /// `cuda_graph_exec_id`: a whole CUDA graph execution.
    CudaGraphExecId,
}

fn role_of(name: &str) -> Role {
    match name {
        "correlation_id" => Role::Correlation,
        "flow" => Role::Flow,
        "group_id" => Role::GroupId,
        "hlo_op" => Role::HloOp,
        "hlo_module" => Role::HloModule,
        "tf_op" | "level 0" => Role::TfOp,
        "kernel_details" => Role::KernelDetails,
        "memcpy_details" => Role::MemcpyDetails,
        "Memset_details" | "memset_details" => Role::MemsetDetails,
        "step_name" => Role::StepName,
        "source" | "source_info" => Role::Source,
        "device_id" => Role::DeviceId,
        "program_id" => Role::ProgramId,
        "_r" => Role::IsRoot,
        "step_num" => Role::StepNum,
        "iter_num" => Role::IterNum,
        "graph_type" => Role::GraphType,
        "_pt" => Role::ProducerType,
        "_p" => Role::ProducerId,
        "_ct" => Role::ConsumerType,
        "_c" => Role::ConsumerId,
        "_a" => Role::IsAsync,
        "scope_range_id" => Role::ScopeRangeId,
        "cuda_graph_id" => Role::CudaGraphId,
        "cuda_graph_exec_id" => Role::CudaGraphExecId,
        _ => Role::None,
    }
}

/// A table keyed by metadata id: dense vector for small non-negative ids, hash map otherwise.
#[derive(Debug)]
pub struct IdTable<T: Copy + Default> {
    dense: Vec<Option<T>>,
    sparse: FxHashMap<i64, T>,
}

impl<T: Copy + Default> Default for IdTable<T> {
    fn default() -> Self {
        IdTable {
            dense: Vec::new(),
            sparse: FxHashMap::default(),
        }
    }
}

impl<T: Copy + Default> IdTable<T> {
    /// Builds a table from `(id, value)` pairs; later duplicates win.
    pub fn from_pairs(pairs: Vec<(i64, T)>) -> Self {
        let n = pairs.len() as i64;
        let max = pairs.iter().map(|p| p.0).max().unwrap_or(-1);
        let min = pairs.iter().map(|p| p.0).min().unwrap_or(0);
        let mut t = IdTable::default();
        if min >= 0 && max < n.saturating_mul(4).saturating_add(4096) {
            t.dense = vec![None; (max + 1) as usize];
            for (k, v) in pairs {
                t.dense[k as usize] = Some(v);
            }
        } else {
            t.sparse = pairs.into_iter().collect();
        }
        t
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.dense.capacity() * std::mem::size_of::<Option<T>>()
            + self.sparse.capacity() * (std::mem::size_of::<(i64, T)>() + 1)
    }

    /// The value for `id`, if present.
    #[inline(always)]
    pub fn get(&self, id: i64) -> Option<T> {
        if let Ok(i) = usize::try_from(id)
            && let Some(&v) = self.dense.get(i)
        {
            return v;
        }
        if self.sparse.is_empty() {
            return None;
        }
        self.sparse.get(&id).copied()
    }
}

/// One plane's stat metadata: names and roles.
#[derive(Debug, Default)]
pub struct StatTable {
    table: IdTable<(StrId, Role)>,
}

impl StatTable {
    /// Builds the table from `(id, name)` pairs.
    pub fn new(pairs: Vec<(i64, StrId)>, strings: &Interner) -> Self {
        let pairs = pairs
            .into_iter()
            .map(|(id, n)| (id, (n, role_of(strings.get(n)))))
            .collect();
        StatTable {
            table: IdTable::from_pairs(pairs),
        }
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.table.heap_bytes()
    }

    /// Interned name of stat metadata `id` (empty when unknown) and its role.
    #[inline(always)]
    pub fn get(&self, id: i64) -> (StrId, Role) {
        self.table.get(id).unwrap_or_default()
    }
}

/// A stat value as read from the wire, before resolution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RawValue<'a> {
    /// No value set.
    None,
    /// `double_value`.
    F64(f64),
    /// `uint64_value`.
    U64(u64),
    /// `int64_value`.
    I64(i64),
    /// `str_value`.
    Str(&'a [u8]),
    /// `bytes_value`.
    Bytes(&'a [u8]),
    /// `ref_value`.
    Ref(u64),
    /// `compressed_str_value`.
    Compressed(&'a [u8]),
}

impl RawValue<'_> {
    /// The value as an integer (int64, uint64 or an integral double).
    pub fn as_int(&self) -> Option<i64> {
        match *self {
            RawValue::I64(v) => Some(v),
            RawValue::U64(v) => Some(v as i64),
            RawValue::F64(v) if v.fract() == 0.0 => Some(v as i64),
            _ => None,
        }
    }
}

/// Reads one XStat message from the wire: `(metadata_id, value)`. Unknown fields are skipped.
#[inline(always)]
pub fn read_stat<'a>(mut r: Reader<'a>) -> Result<(i64, RawValue<'a>), Box<WireError>> {
    let mut mid = 0i64;
    let mut val = RawValue::None;
    while !r.is_empty() {
        let (f, wt) = r.key()?;
        match (f, wt) {
            (1, _) if wt != LEN => mid = r.scalar(wt)? as i64,
            (2, I64) => val = RawValue::F64(f64::from_bits(r.fixed64()?)),
            (3, _) if wt != LEN => val = RawValue::U64(r.scalar(wt)?),
            (4, _) if wt != LEN => val = RawValue::I64(r.scalar(wt)? as i64),
            (5, LEN) => val = RawValue::Str(r.bytes()?),
            (6, LEN) => val = RawValue::Bytes(r.bytes()?),
            (7, _) if wt != LEN => val = RawValue::Ref(r.scalar(wt)?),
            (8, LEN) => val = RawValue::Compressed(r.bytes()?),
            _ => r.skip(wt)?,
        }
    }
    Ok((mid, val))
}

/// [`read_stat`] for the encoding profilers write: a one-byte `metadata_id` first, then one
/// value field that ends the message. Any other shape goes through the general reader, so
/// the result (and every error) is the same.
#[inline(always)]
pub fn read_stat_fast<'a>(r: Reader<'a>) -> Result<(i64, RawValue<'a>), Box<WireError>> {
    let d = r.data();
    if let [0x08, mid @ 0..=0x7f, key, rest @ ..] = d {
        let mid = i64::from(*mid);
        match *key {
            0x18 | 0x20 | 0x38 => {
                if let Some(v) = varint_exact(rest) {
                    let val = match *key {
                        0x18 => RawValue::U64(v),
                        0x20 => RawValue::I64(v as i64),
                        _ => RawValue::Ref(v),
                    };
                    return Ok((mid, val));
                }
            }
            0x11 => {
                if let Ok(b) = <[u8; 8]>::try_from(rest) {
                    return Ok((mid, RawValue::F64(f64::from_bits(u64::from_le_bytes(b)))));
                }
            }
            0x2a => {
                if let [n @ 0..=0x7f, text @ ..] = rest
                    && text.len() == usize::from(*n)
                {
                    return Ok((mid, RawValue::Str(text)));
                }
            }
            _ => {}
        }
    }
    read_stat(r)
}

/// A varint that spans all of `b` (1 to 10 bytes, the 10th carrying only bit 63).
#[inline(always)]
fn varint_exact(b: &[u8]) -> Option<u64> {
    let (&last, body) = b.split_last()?;
    if last >= 0x80 || body.len() > 9 || body.iter().any(|&x| x < 0x80) {
        return None;
    }
    if body.len() == 9 && last > 1 {
        return None;
    }
    let mut v = 0u64;
    for (i, &x) in body.iter().enumerate() {
        v |= u64::from(x & 0x7f) << (7 * i);
    }
    Some(v | (u64::from(last) << (7 * body.len())))
}

/// Converts a prost-decoded stat (metadata stats, plane stats) to a raw value.
pub fn raw_of(s: &XStat) -> RawValue<'_> {
    match &s.value {
        None => RawValue::None,
        Some(x_stat::Value::DoubleValue(v)) => RawValue::F64(*v),
        Some(x_stat::Value::Uint64Value(v)) => RawValue::U64(*v),
        Some(x_stat::Value::Int64Value(v)) => RawValue::I64(*v),
        Some(x_stat::Value::StrValue(v)) => RawValue::Str(v.as_bytes()),
        Some(x_stat::Value::BytesValue(v)) => RawValue::Bytes(v),
        Some(x_stat::Value::RefValue(v)) => RawValue::Ref(*v),
        Some(x_stat::Value::CompressedStrValue(v)) => RawValue::Compressed(v),
    }
}

/// Largest compressed string inflated into the model; longer ones are kept as opaque bytes.
const MAX_INFLATED: u64 = 1 << 20;

/// Resolves a raw value: strings interned, `ref_value` to the referenced stat metadata name,
/// bytes to their length, compressed strings inflated (opaque bytes when that fails).
#[inline(always)]
pub fn resolve(v: RawValue<'_>, table: &StatTable, strings: &mut Interner) -> ArgValue {
    match resolve_plain(v, table) {
        Some(a) => a,
        None => resolve_str(v, strings),
    }
}

/// The value of every kind but the strings (`str`, `compressed_str`): those give `None`.
#[inline(always)]
fn resolve_plain(v: RawValue<'_>, table: &StatTable) -> Option<ArgValue> {
    Some(match v {
        RawValue::None => ArgValue::Null,
        RawValue::F64(x) => ArgValue::F64(x),
        RawValue::U64(x) => ArgValue::U64(x),
        RawValue::I64(x) => ArgValue::I64(x),
        RawValue::Bytes(b) => ArgValue::Bytes(b.len() as u64),
        RawValue::Ref(r) => ArgValue::Str(table.get(r as i64).0),
        RawValue::Str(_) | RawValue::Compressed(_) => return None,
    })
}

/// The string cases of [`resolve`] (interning, inflating), kept out of the hot loop.
#[inline(never)]
fn resolve_str(v: RawValue<'_>, strings: &mut Interner) -> ArgValue {
    match v {
        RawValue::Str(b) => ArgValue::Str(strings.intern_lossy(b)),
        RawValue::Compressed(b) => match inflate(v) {
            Some(out) => ArgValue::Str(strings.intern_lossy(&out)),
            None => ArgValue::Bytes(b.len() as u64),
        },
        _ => ArgValue::Null,
    }
}

/// The text of a `compressed_str_value` (gzip) when it inflates to under 1 MiB.
pub fn inflate(v: RawValue<'_>) -> Option<Vec<u8>> {
    let RawValue::Compressed(b) = v else {
        return None;
    };
    let mut out = Vec::new();
    let ok = flate2::read::MultiGzDecoder::new(b)
        .take(MAX_INFLATED)
        .read_to_end(&mut out)
        .is_ok();
    (ok && (out.len() as u64) < MAX_INFLATED).then_some(out)
}

/// Resolves a raw value against a finished capture's strings (read-only): what lazy args
/// decoding does. String values were interned by the loader; one that is not found (it
/// cannot happen for a file the loader read) shows as opaque bytes.
pub fn resolve_ro(v: RawValue<'_>, table: &StatTable, strings: &Interner) -> ArgValue {
    let look = |b: &[u8]| match std::str::from_utf8(b) {
        Ok(s) => strings.lookup(s),
        Err(_) => strings.lookup(&String::from_utf8_lossy(b)),
    };
    match v {
        RawValue::Str(b) => look(b).map_or(ArgValue::Bytes(b.len() as u64), ArgValue::Str),
        RawValue::Compressed(b) => inflate(v)
            .and_then(|s| look(&s))
            .map_or(ArgValue::Bytes(b.len() as u64), ArgValue::Str),
        _ => resolve_plain(v, table).unwrap_or(ArgValue::Null),
    }
}

/// A string-valued stat as an interned id (str, ref or compressed), else `None`.
#[inline]
pub fn as_str_id(v: ArgValue) -> Option<StrId> {
    match v {
        ArgValue::Str(s) => Some(s),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    #[test]
    fn reads_every_value_kind_and_skips_unknown() {
        let mut s = Interner::new();
        let ids = vec![
            (1, s.intern("a")),
            (7, s.intern("hlo_op")),
            (1000, s.intern("ref")),
        ];
        let t = StatTable::new(ids, &s);
        assert_eq!(t.get(7).1, Role::HloOp);
        assert_eq!(t.get(99).0, StrId::EMPTY);
        let cases = [
            (x_stat::Value::DoubleValue(1.5), ArgValue::F64(1.5)),
            (
                x_stat::Value::Uint64Value(u64::MAX),
                ArgValue::U64(u64::MAX),
            ),
            (x_stat::Value::Int64Value(-3), ArgValue::I64(-3)),
            (x_stat::Value::BytesValue(vec![1, 2, 3]), ArgValue::Bytes(3)),
            (
                x_stat::Value::RefValue(1000),
                ArgValue::Str(s.intern("ref")),
            ),
        ];
        for (v, want) in cases {
            let st = XStat {
                metadata_id: -1,
                value: Some(v),
            };
            let b = st.encode_to_vec();
            let (mid, raw) = read_stat(Reader::new(&b, 0)).unwrap();
            assert_eq!(mid, -1);
            assert_eq!(raw, raw_of(&st));
            assert_eq!(resolve(raw, &t, &mut s), want);
        }
        // compressed string: valid gzip inflates, garbage stays opaque bytes
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, b"hello").unwrap();
        let gz = gz.finish().unwrap();
        let v = resolve(RawValue::Compressed(&gz), &t, &mut s);
        assert_eq!(v.display(&s), "hello");
        assert_eq!(
            resolve(RawValue::Compressed(b"nope"), &t, &mut s),
            ArgValue::Bytes(4)
        );
        // the fast reader agrees with the general one on every shape
        for b in [
            &[0x08, 0x05, 0x38, 0x96, 0x01][..],
            &[0x08, 0x05, 0x38, 0x96, 0x01, 0x00],
            &[0x08, 0x05, 0x38, 0x96],
            &[
                0x08, 0x05, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
            ],
            &[
                0x08, 0x05, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02,
            ],
            &[0x08, 0x05, 0x20, 0x7f],
            &[0x08, 0x05, 0x11, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f],
            &[0x08, 0x05, 0x11, 0, 0, 0, 0, 0, 0xf8, 0x3f],
            &[0x08, 0x05, 0x2a, 0x02, b'h', b'i'],
            &[0x08, 0x05, 0x2a, 0x03, b'h', b'i'],
            &[0x08, 0x05, 0x2a, 0x01, b'h', b'i'],
            &[0x08, 0x85, 0x01, 0x38, 0x01],
        ] {
            let fast = read_stat_fast(Reader::new(b, 0));
            assert_eq!(fast, read_stat(Reader::new(b, 0)), "{b:?}");
        }
        // unknown field 9 (varint) is skipped
        let b = [0x08, 0x01, 0x48, 0x05, 0x20, 0x07];
        assert_eq!(
            read_stat(Reader::new(&b, 0)).unwrap(),
            (1, RawValue::I64(7))
        );
    }

    #[test]
    fn id_table_dense_and_sparse() {
        let t = IdTable::from_pairs(vec![(0, 1u8), (3, 2)]);
        assert_eq!(
            (t.get(0), t.get(3), t.get(2), t.get(-1)),
            (Some(1), Some(2), None, None)
        );
        let t = IdTable::from_pairs(vec![(-5, 1u8), (1 << 40, 2)]);
        assert_eq!(
            (t.get(-5), t.get(1 << 40), t.get(0)),
            (Some(1), Some(2), None)
        );
    }
}
