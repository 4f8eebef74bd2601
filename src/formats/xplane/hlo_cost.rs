//! FLOPs and bytes per HLO instruction from the `Hlo Proto` of `/host:metadata`, as XProf's GPU
//! cost analysis (XLA's `GpuHloCostAnalysis`) gives them for ops that carry no `flops` /
//! `bytes_accessed` stats (JAX on GPU). See docs/roofline.md (XPlane).
//!
//! Fields read on the wire (`xla/service/hlo.proto`, `xla/xla_data.proto`): `HloProto.hlo_module`
//! 1 → `computations` 3 (`id` 5, `instructions` 2) → instruction `name` 1, `opcode` 2, `shape` 3
//! (`element_type` 2, `dimensions` 3, `tuple_shapes` 4), `dimensions` 14, `custom_call_target`
//! 28, `dot_dimension_numbers` 30 (`lhs_contracting_dimensions` 1), `id` 35, `operand_ids` 36,
//! `called_computation_ids` 38, `backend_config` 43 (cuBLAS GEMM: JSON with the dot dimension
//! numbers).

use super::hlo_op_profile::{flops_per_element, is_elementwise};
use super::wire::{LEN, Reader, VARINT, WireError};
use rustc_hash::FxHashMap;

/// An array or tuple shape.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Shape {
    /// `PrimitiveType` number (11 = F32, 16 = BF16, 13 = tuple).
    pub element_type: u32,
    /// Dimensions (arrays).
    pub dims: Vec<i64>,
    /// Element shapes (tuples).
    pub tuple: Vec<Shape>,
}

impl Shape {
    /// Elements of an array shape (1 for a scalar); of a tuple, the sum over its elements.
    pub fn elements(&self) -> f64 {
        if self.element_type == TUPLE {
            return self.tuple.iter().map(Shape::elements).sum();
        }
        self.dims.iter().map(|&d| d.max(0) as f64).product()
    }

    /// Bytes of an array shape; a tuple (an opaque buffer list in XProf's size function) is 0.
    pub fn array_bytes(&self) -> f64 {
        self.elements() * element_bytes(self.element_type)
    }

    /// Σ bytes of the array leaves (a tuple's arrays counted one by one).
    pub fn leaf_bytes(&self) -> f64 {
        if self.element_type == TUPLE {
            self.tuple.iter().map(Shape::leaf_bytes).sum()
        } else {
            self.array_bytes()
        }
    }
}

const TUPLE: u32 = 13;

/// Bytes per element of a `PrimitiveType` (0 for token, opaque and tuple).
pub fn element_bytes(t: u32) -> f64 {
    match t {
        1 | 2 | 6 | 21 | 22 => 1.0,         // PRED, S8, U8, S4, U4
        3 | 7 | 10 | 16 => 2.0,             // S16, U16, F16, BF16
        4 | 8 | 11 => 4.0,                  // S32, U32, F32
        5 | 9 | 12 | 15 => 8.0,             // S64, U64, F64, C64
        18 => 16.0,                         // C128
        19 | 20 | 23..=28 | 30..=33 => 1.0, // the F8 / F4 families
        _ => 0.0,
    }
}

/// The XLA dtype name of a `PrimitiveType` (as HLO text writes it).
pub fn dtype_name(t: u32) -> &'static str {
    match t {
        1 => "pred",
        2 => "s8",
        3 => "s16",
        4 => "s32",
        5 => "s64",
        6 => "u8",
        7 => "u16",
        8 => "u32",
        9 => "u64",
        10 => "f16",
        11 => "f32",
        12 => "f64",
        15 => "c64",
        16 => "bf16",
        18 => "c128",
        19 => "f8e5m2",
        20 => "f8e4m3fn",
        _ => "",
    }
}

/// One instruction as far as the cost model reads it.
#[derive(Clone, Debug, Default)]
pub struct Instr {
    /// Instruction name (what an `XLA Ops` event is named).
    pub name: String,
    /// Opcode (`fusion`, `dot`, `add`, …).
    pub opcode: String,
    /// Result shape.
    pub shape: Shape,
    id: i64,
    parameter_number: i64,
    /// `dimensions` (14): the concatenate dimension, reduce dimensions, ….
    dims: Vec<i64>,
    operands: Vec<i64>,
    called: Vec<i64>,
    lhs_contracting: Vec<i64>,
    target: String,
    backend_config: String,
}

/// A decoded module: computations by id, instruction index by id.
#[derive(Debug, Default)]
pub struct Module {
    comps: FxHashMap<i64, Vec<Instr>>,
    /// Computation id → root instruction id.
    roots: FxHashMap<i64, i64>,
    /// id → (computation id, index).
    by_id: FxHashMap<i64, (i64, usize)>,
}

/// FLOPs and bytes of one instruction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OpCost {
    /// FLOPs per execution.
    pub flops: f64,
    /// Bytes accessed per execution (operands + result at the op's boundary).
    pub bytes: f64,
    /// Result element type (`PrimitiveType`).
    pub element_type: u32,
}

fn packed(r: &mut Reader<'_>, wt: u8, out: &mut Vec<i64>) -> Result<(), Box<WireError>> {
    if wt == LEN {
        let mut p = r.sub()?;
        while !p.is_empty() {
            out.push(p.varint()? as i64);
        }
    } else if wt == VARINT {
        out.push(r.varint()? as i64);
    } else {
        r.skip(wt)?;
    }
    Ok(())
}

fn read_shape(mut r: Reader<'_>, depth: u32) -> Result<Shape, Box<WireError>> {
    let mut s = Shape::default();
    while !r.is_empty() {
        let (f, wt) = r.key()?;
        match (f, wt) {
            (2, VARINT) => s.element_type = r.varint()? as u32,
            (3, _) => packed(&mut r, wt, &mut s.dims)?,
            (4, LEN) if depth < 16 => s.tuple.push(read_shape(r.sub()?, depth + 1)?),
            _ => r.skip(wt)?,
        }
    }
    Ok(s)
}

fn read_instr(mut r: Reader<'_>) -> Result<Instr, Box<WireError>> {
    let mut i = Instr::default();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    while !r.is_empty() {
        let (f, wt) = r.key()?;
        match (f, wt) {
            (1, LEN) => i.name = text(r.bytes()?),
            (2, LEN) => i.opcode = text(r.bytes()?),
            (3, LEN) => i.shape = read_shape(r.sub()?, 0)?,
            (9, VARINT) => i.parameter_number = r.varint()? as i64,
            (14, _) => packed(&mut r, wt, &mut i.dims)?,
            (28, LEN) => i.target = text(r.bytes()?),
            (30, LEN) => {
                let mut d = r.sub()?;
                while !d.is_empty() {
                    let (f, wt) = d.key()?;
                    if f == 1 {
                        packed(&mut d, wt, &mut i.lhs_contracting)?;
                    } else {
                        d.skip(wt)?;
                    }
                }
            }
            (35, VARINT) => i.id = r.varint()? as i64,
            (36, _) => packed(&mut r, wt, &mut i.operands)?,
            (38, _) => packed(&mut r, wt, &mut i.called)?,
            (43, LEN) => i.backend_config = text(r.bytes()?),
            _ => r.skip(wt)?,
        }
    }
    Ok(i)
}

impl Module {
    /// Decodes an `HloProto`.
    pub fn decode(bytes: &[u8]) -> Result<Module, Box<WireError>> {
        let mut out = Module::default();
        let mut r = Reader::new(bytes, 0);
        while !r.is_empty() {
            let (f, wt) = r.key()?;
            if f != 1 || wt != LEN {
                r.skip(wt)?;
                continue;
            }
            let mut m = r.sub()?;
            while !m.is_empty() {
                let (f, wt) = m.key()?;
                if f != 3 || wt != LEN {
                    m.skip(wt)?;
                    continue;
                }
                let mut c = m.sub()?;
                let (mut id, mut root, mut instrs) = (0i64, None, Vec::new());
                while !c.is_empty() {
                    let (f, wt) = c.key()?;
                    match (f, wt) {
                        (2, LEN) => instrs.push(read_instr(c.sub()?)?),
                        (5, VARINT) => id = c.varint()? as i64,
                        (6, VARINT) => root = Some(c.varint()? as i64),
                        _ => c.skip(wt)?,
                    }
                }
                if let Some(r) = root {
                    out.roots.insert(id, r);
                }
                for (k, ins) in instrs.iter().enumerate() {
                    out.by_id.insert(ins.id, (id, k));
                }
                out.comps.insert(id, instrs);
            }
        }
        Ok(out)
    }

    fn instr(&self, id: i64) -> Option<&Instr> {
        let &(c, k) = self.by_id.get(&id)?;
        self.comps.get(&c)?.get(k)
    }

    fn operand_shape(&self, i: &Instr, k: usize) -> Option<&Shape> {
        Some(&self.instr(*i.operands.get(k)?)?.shape)
    }

    /// Every instruction of the module with its cost; `None` for the ops the model does not
    /// cover (opaque custom calls, control flow, collectives).
    pub fn costs(&self) -> Vec<(&Instr, Option<OpCost>)> {
        // Computations run as a unit of another op (fused bodies, reducers) hold no op of
        // their own; control flow (`while`, `conditional`, `call`) runs its bodies' ops.
        let nested: rustc_hash::FxHashSet<i64> = self
            .comps
            .values()
            .flatten()
            .filter(|i| !matches!(i.opcode.as_str(), "while" | "conditional" | "call"))
            .flat_map(|i| i.called.iter().copied())
            .collect();
        let mut ids: Vec<i64> = self
            .comps
            .keys()
            .copied()
            .filter(|c| !nested.contains(c))
            .collect();
        ids.sort_unstable();
        let mut out = Vec::new();
        for c in ids {
            for i in self.comps.get(&c).map_or(&[][..], |v| v.as_slice()) {
                let structural = matches!(
                    i.opcode.as_str(),
                    "parameter" | "constant" | "get-tuple-element" | "tuple" | "bitcast"
                );
                if !structural {
                    out.push((i, self.cost(i)));
                }
            }
        }
        out
    }

    /// The cost of one instruction at its boundary.
    pub fn cost(&self, i: &Instr) -> Option<OpCost> {
        let (flops, operands) = if i.opcode == "fusion" {
            let f = self.fused(*i.called.first()?, 0)?;
            (f.flops, f.param_bytes)
        } else {
            let operands: f64 = (0..i.operands.len())
                .filter_map(|k| self.operand_shape(i, k))
                .map(Shape::leaf_bytes)
                .sum();
            (self.flops(i, 0)?, operands)
        };
        let out = if i.opcode == "fusion" {
            i.shape.leaf_bytes()
        } else {
            i.shape.array_bytes()
        };
        let element_type = if i.shape.element_type == TUPLE {
            i.shape.tuple.first().map_or(0, |s| s.element_type)
        } else {
            i.shape.element_type
        };
        Some(OpCost {
            flops,
            bytes: operands + out,
            element_type,
        })
    }

    /// FLOPs of the computation `id` (Σ of its instructions).
    fn comp_flops(&self, id: i64, depth: u32) -> Option<f64> {
        let mut sum = 0.0;
        for i in self.comps.get(&id)? {
            sum += self.flops(i, depth + 1)?;
        }
        Some(sum)
    }

    fn flops(&self, i: &Instr, depth: u32) -> Option<f64> {
        if depth > 32 {
            return None;
        }
        let op = i.opcode.as_str();
        match op {
            "parameter"
            | "constant"
            | "get-tuple-element"
            | "tuple"
            | "bitcast"
            | "broadcast"
            | "reshape"
            | "transpose"
            | "copy"
            | "slice"
            | "dynamic-slice"
            | "dynamic-update-slice"
            | "pad"
            | "iota"
            | "reverse"
            | "gather"
            | "scatter"
            | "copy-start"
            | "copy-done"
            | "partition-id"
            | "replica-id" => Some(0.0),
            "fusion" => Some(self.fused(*i.called.first()?, depth + 1)?.flops),
            "concatenate" => Some(self.concat_flops(i)),
            "dot" => {
                let lhs = self.operand_shape(i, 0)?;
                Some(dot_flops(lhs, &i.shape, &i.lhs_contracting))
            }
            "reduce" => {
                let input = self.operand_shape(i, 0)?;
                let out = match i.shape.tuple.first() {
                    Some(s) => s.elements(),
                    None => i.shape.elements(),
                };
                let per = self.comp_flops(*i.called.first()?, depth)?;
                Some((input.elements() - out).max(0.0) * per)
            }
            "custom-call" if i.target.contains("cublas") => {
                let lhs = self.operand_shape(i, 0)?;
                let out = i.shape.tuple.first().unwrap_or(&i.shape);
                let contracting = json_ints(&i.backend_config, "lhs_contracting_dimensions")?;
                Some(dot_flops(lhs, out, &contracting))
            }
            _ if is_elementwise(op) => {
                Some(flops_per_element(op, i.shape.element_type) * i.shape.elements())
            }
            _ => None,
        }
    }
}

impl Module {
    /// `GpuHloCostAnalysis::HandleConcatenate`: 6 per result element (compare and branch);
    /// along a dimension other than 0, 400 when an operand's size there is not a multiple of
    /// the warp (32), XLA's deterrent against fusing such a concat into a reduction.
    fn concat_flops(&self, i: &Instr) -> f64 {
        let n = i.shape.elements();
        let dim = i.dims.first().copied().unwrap_or(0);
        let Ok(d) = usize::try_from(dim) else {
            return 6.0 * n;
        };
        let ragged = d != 0
            && (0..i.operands.len())
                .filter_map(|k| self.operand_shape(i, k))
                .any(|s| s.dims.get(d).is_some_and(|&x| x % 32 != 0));
        if ragged { 400.0 * n } else { 6.0 * n }
    }
}

/// What a fused computation costs at its boundary.
struct Fused {
    flops: f64,
    /// Σ parameter bytes × min(utilization, 1) (`FusionParameterReadBytes`).
    param_bytes: f64,
}

impl Module {
    /// `GpuHloCostAnalysis::FusionCalculateUtilizations`: walking from the root to the
    /// parameters (consumers first), an instruction's utilization is the sum of the
    /// utilizations of the roots its elementwise uses reach; a non-elementwise use makes the
    /// operand a root of its own, with the user's utilization × the operand's utilization by
    /// that user, rounded up to whole elements. FLOPs = Σ utilization × the instruction's own
    /// FLOPs.
    fn fused(&self, comp: i64, depth: u32) -> Option<Fused> {
        if depth > 32 {
            return None;
        }
        let instrs = self.comps.get(&comp)?;
        let n = instrs.len();
        let local: FxHashMap<i64, usize> =
            instrs.iter().enumerate().map(|(k, i)| (i.id, k)).collect();
        let root = match self.roots.get(&comp) {
            Some(r) => *local.get(r)?,
            None => n.checked_sub(1)?,
        };
        let mut roots: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut root_util = vec![0.0f64; n];
        let mut util = vec![0.0f64; n];
        root_util[root] = 1.0;
        roots[root].push(root);
        // The proto lists a computation's instructions in post order (operands first).
        let mut order: Vec<usize> = (0..n).collect();
        order.retain(|&k| k != root);
        order.push(root);
        let (mut flops, mut param_bytes) = (0.0, 0.0);
        for &k in order.iter().rev() {
            let i = &instrs[k];
            util[k] = roots[k].iter().map(|&r| root_util[r]).sum();
            let own = if i.opcode == "fusion" {
                self.fused(*i.called.first()?, depth + 1)?.flops
            } else {
                self.flops(i, depth + 1).unwrap_or(0.0)
            };
            flops += util[k] * own;
            if i.opcode == "parameter" {
                param_bytes += i.shape.leaf_bytes() * util[k].min(1.0);
            }
            let passes = is_elementwise(&i.opcode)
                || matches!(i.opcode.as_str(), "tuple" | "get-tuple-element" | "copy");
            for (j, op) in i.operands.iter().enumerate() {
                let Some(&o) = local.get(op) else {
                    continue;
                };
                if passes {
                    let add: Vec<usize> = roots[k].clone();
                    for r in add {
                        if !roots[o].contains(&r) {
                            roots[o].push(r);
                        }
                    }
                } else {
                    if !roots[o].contains(&o) {
                        roots[o].push(o);
                    }
                    let elements = instrs[o].shape.elements();
                    let u = util[k] * operand_utilization(i, j, elements);
                    root_util[o] += if elements > 0.0 {
                        (u * elements).ceil() / elements
                    } else {
                        0.0
                    };
                }
            }
        }
        Some(Fused { flops, param_bytes })
    }
}

/// The fraction of operand `k`'s elements that `i` reads (`HloCostAnalysis`'s operand
/// utilization): a slice reads its result's worth, everything else all of it.
fn operand_utilization(i: &Instr, k: usize, elements: f64) -> f64 {
    match i.opcode.as_str() {
        "slice" | "dynamic-slice" | "gather" if k == 0 && elements > 0.0 => {
            (i.shape.elements() / elements).min(1.0)
        }
        _ => 1.0,
    }
}

/// 2 × result elements × Π lhs contracting dims (`HloCostAnalysis::GetDotFlops`).
fn dot_flops(lhs: &Shape, out: &Shape, contracting: &[i64]) -> f64 {
    let k: f64 = contracting
        .iter()
        .filter_map(|&d| lhs.dims.get(usize::try_from(d).ok()?))
        .map(|&d| d.max(0) as f64)
        .product();
    2.0 * out.elements() * k
}

/// The precision an instruction's compute peak is taken at: (precision name as the roofline
/// names it — `fp64`, `fp32`, `tf32`, `bf16`, `fp16`, `fp8`, `int8`, or `""` for none —, on
/// matrix units, where that comes from). GEMMs (`dot`, cuBLAS custom calls, fusions around a
/// `dot`) run on tensor cores at their operand type; an f32 cuBLAS GEMM follows its
/// `precision_config`: an explicit `algorithm` (`ALG_DOT_TF32_TF32_F32`, …), else operand
/// precision DEFAULT or HIGH lets cuBLAS use TF32 (jax's "tensorfloat32") and HIGHEST keeps
/// full FP32. Everything else is vector work at its result type.
pub fn precision_of(m: &Module, i: &Instr) -> (&'static str, bool, String) {
    let gemm = m.gemm_of(i, 0);
    let Some(g) = gemm else {
        let t = if i.shape.element_type == TUPLE {
            i.shape.tuple.first().map_or(0, |s| s.element_type)
        } else {
            i.shape.element_type
        };
        let p = precision_name(t);
        let from = format!("{} result: vector op", dtype_name(t));
        return (p, false, from);
    };
    let t = m.operand_shape(g, 0).map_or(0, |s| s.element_type);
    let what = if g.opcode == "dot" {
        "dot"
    } else {
        "cuBLAS GEMM"
    };
    let inner = if std::ptr::eq(g, i) {
        ""
    } else {
        " in the fusion"
    };
    let algo = json_str(&g.backend_config, "algorithm").filter(|a| a != "ALG_UNSET");
    if let Some(a) = algo {
        let p = if a.contains("TF32") {
            "tf32"
        } else if a.contains("BF16") {
            "bf16"
        } else if a.contains("F16") {
            "fp16"
        } else if a.contains("F8") {
            "fp8"
        } else if a.contains("F64") {
            "fp64"
        } else {
            "fp32"
        };
        return (
            p,
            true,
            format!("{what}{inner}: precision_config algorithm {a}"),
        );
    }
    if t != 11 {
        let p = precision_name(t);
        return (
            p,
            true,
            format!("{} operands of the {what}{inner}", dtype_name(t)),
        );
    }
    let ops = json_strs(&g.backend_config, "operand_precision").unwrap_or_default();
    let highest = ops.iter().any(|o| o == "HIGHEST");
    let named = if ops.is_empty() {
        "not recorded (DEFAULT)".to_string()
    } else {
        ops.join("/")
    };
    if g.opcode == "dot" && ops.is_empty() {
        return (
            "fp32",
            true,
            format!("f32 dot{inner}: precision config not read, FP32 assumed"),
        );
    }
    if highest {
        (
            "fp32",
            true,
            format!("f32 {what}{inner}, operand precision {named}: full FP32"),
        )
    } else {
        (
            "tf32",
            true,
            format!("f32 {what}{inner}, operand precision {named}: XLA lets cuBLAS use TF32"),
        )
    }
}

/// The roofline's name of a `PrimitiveType`'s compute precision (`""`: none).
fn precision_name(t: u32) -> &'static str {
    match t {
        12 => "fp64",
        11 => "fp32",
        16 => "bf16",
        10 => "fp16",
        19 | 20 | 23..=28 => "fp8",
        2 | 6 => "int8",
        _ => "",
    }
}

/// The string after `"key":` (`None` when absent or not a string).
fn json_str(text: &str, key: &str) -> Option<String> {
    let at = text.find(&format!("\"{key}\""))?;
    let rest = text[at + key.len() + 2..].trim_start().strip_prefix(':')?;
    let rest = rest.trim_start().strip_prefix('"')?;
    Some(rest[..rest.find('"')?].to_string())
}

/// The strings of the JSON list after `"key":`.
fn json_strs(text: &str, key: &str) -> Option<Vec<String>> {
    let at = text.find(&format!("\"{key}\""))?;
    let rest = &text[at + key.len() + 2..];
    let open = rest.find('[')?;
    let close = rest[open..].find(']')? + open;
    Some(
        rest[open + 1..close]
            .split(',')
            .map(|s| s.trim().trim_matches('"').to_string())
            .filter(|s| !s.is_empty())
            .collect(),
    )
}

impl Module {
    /// The GEMM an instruction runs: itself (`dot`, a cuBLAS custom call) or the first `dot`
    /// of the computation a fusion calls.
    fn gemm_of<'a>(&'a self, i: &'a Instr, depth: u32) -> Option<&'a Instr> {
        if i.opcode == "dot" || (i.opcode == "custom-call" && i.target.contains("cublas")) {
            return Some(i);
        }
        if i.opcode != "fusion" || depth > 8 {
            return None;
        }
        self.comps
            .get(i.called.first()?)?
            .iter()
            .find_map(|x| self.gemm_of(x, depth + 1))
    }
}

/// The integers of the JSON list after `"key":` (proto JSON writes int64 as strings).
fn json_ints(text: &str, key: &str) -> Option<Vec<i64>> {
    let at = text.find(&format!("\"{key}\""))?;
    let rest = &text[at + key.len() + 2..];
    let open = rest.find('[')?;
    let close = rest[open..].find(']')? + open;
    rest[open + 1..close]
        .split(',')
        .map(|s| s.trim().trim_matches('"'))
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().ok())
        .collect()
}

/// Capture metadata key prefix of a module's cost table (`hlo_costs:<program id>`).
pub const META_PREFIX: &str = "hlo_costs:";
/// Capture metadata key of the number of HLO protos that could not be decoded.
pub const META_MALFORMED: &str = "hlo_costs_malformed";

/// Per-module cost tables of a capture, keyed `program_id/instruction`.
#[derive(Debug, Default)]
pub struct HloCosts {
    /// Per program id: `name\tflops\tbytes\tdtype\tprecision\tmatrix|vector\tfrom` lines
    /// ([`precision_of`]), as stored in the capture.
    pub tables: Vec<(u64, String)>,
    /// Modules whose proto could not be decoded.
    pub malformed: u64,
}

impl HloCosts {
    /// Adds the module of one `Hlo Proto` stat.
    pub fn add(&mut self, program_id: u64, bytes: &[u8]) {
        if self.tables.iter().any(|(p, _)| *p == program_id) {
            return;
        }
        let Ok(m) = Module::decode(bytes) else {
            self.malformed += 1;
            return;
        };
        let mut t = String::new();
        for (i, c) in m.costs() {
            let Some(c) = c else {
                continue;
            };
            use std::fmt::Write;
            let (prec, matrix, from) = precision_of(&m, i);
            let _ = writeln!(
                t,
                "{}\t{}\t{}\t{}\t{}\t{}\t{}",
                i.name.replace(['\t', '\n'], " "),
                c.flops,
                c.bytes,
                dtype_name(c.element_type),
                prec,
                if matrix { "matrix" } else { "vector" },
                from.replace(['\t', '\n'], " ")
            );
        }
        self.tables.push((program_id, t));
    }
}
#[cfg(test)]
mod tests;
