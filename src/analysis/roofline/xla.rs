//! XPlane (JAX / TensorFlow on GPU and TPU): the FLOPs and bytes XLA records per HLO op, as
//! XProf's roofline reads them — the `flops` (else `model_flops`) and `bytes_accessed` stats
//! of the events on a device's `XLA Ops` line (any device line when none is named so), one row
//! per (op, program: the `XLA Modules` event around it), each op timed by its
//! `device_duration_ps` stat where it has one (TPU), as XProf's op profile. XProf has one peak
//! per device; here the device's BF16 matrix peak is the compute roof (TPU generations:
//! [`super::tpu_peaks`]).
//!
//! A capture whose HLO ops carry no such stats (JAX on GPU): XProf derives them from the HLO
//! modules of `/host:metadata` with XLA's GPU cost analysis; the XPlane loader does the same
//! (`formats/xplane/hlo_cost.rs`) and leaves per-module tables in the capture's metadata
//! ([`hlo_costs`]): an `XLA Ops` event is looked up under the module of the `XLA Modules`
//! event around it. Ops without a figure are counted as not modelled.

use super::cost::{Cost, Family};
use super::dtype::Precision;
use super::row::Row;
use crate::analysis::stats::is_device_process;
use crate::model::{Capture, Category, Ps, StrId};
use rustc_hash::FxHashMap;
use std::fmt::Write as _;

/// What [`collect`] finds.
#[derive(Debug)]
pub struct Collected {
    /// One row per HLO op name with cost stats.
    pub rows: Vec<Row>,
    /// The ids of those events, sorted.
    pub ids: Vec<u32>,
    /// Per HLO op name without cost stats: (name, ps, count), most time first.
    pub other: Vec<(StrId, Ps, u64)>,
    /// Σ durations of the lines read (and of the device copies counted as ops), ps.
    pub total: Ps,
    /// True when the figures come from the HLO cost model ([`hlo_costs`]), not from stats.
    pub from_hlo: bool,
    /// Device time counted apart from the rows: XLA async start / done ops and host ↔ device
    /// copies, one entry per event: (name, link, ps, bytes the event records). Its time is in
    /// `total`.
    pub apart: Vec<(StrId, super::Link, Ps, Option<f64>)>,
}

/// Capture metadata key prefix of a module's cost table (the XPlane loader's
/// `hlo_cost::META_PREFIX`; analysis does not import formats).
pub const META_PREFIX: &str = "hlo_costs:";

/// Capture metadata key of the number of HLO protos the loader could not decode.
pub const META_MALFORMED: &str = "hlo_costs_malformed";

/// HLO protos of the capture that could not be decoded (skipped).
pub fn malformed_modules(c: &Capture) -> u64 {
    let mut n = 0;
    c.args.for_each(c.metadata, &c.strings, |k, v| {
        if c.strings.get(k) == META_MALFORMED {
            n = v.as_i64(&c.strings).unwrap_or(0).max(0) as u64;
        }
    });
    n
}

/// One instruction of a module's cost table.
#[derive(Clone, Debug, PartialEq)]
pub struct HloCost {
    /// FLOPs per execution.
    pub flops: f64,
    /// Bytes accessed per execution.
    pub bytes: f64,
    /// Result element type (`f32`, `bf16`, …).
    pub dtype: String,
    /// Precision whose peak applies (`None`: none known).
    pub precision: Option<Precision>,
    /// On matrix units (a GEMM).
    pub matrix: bool,
    /// Where the precision comes from (HLO precision config, operand type, …).
    pub from: String,
}

fn precision_named(n: &str) -> Option<Precision> {
    Some(match n {
        "fp64" => Precision::Fp64,
        "fp32" => Precision::Fp32,
        "tf32" => Precision::Tf32,
        "bf16" => Precision::Bf16,
        "fp16" => Precision::Fp16,
        "fp8" => Precision::Fp8,
        "int8" => Precision::Int8,
        _ => return None,
    })
}

/// Per `program_id/instruction`: its [`HloCost`] from the capture's `hlo_costs:<id>` metadata
/// (the loader's HLO cost model, `formats/xplane/hlo_cost.rs`); empty without any.
pub fn hlo_costs(c: &Capture) -> FxHashMap<String, HloCost> {
    let mut out = FxHashMap::default();
    c.args.for_each(c.metadata, &c.strings, |k, v| {
        let Some(pid) = c.strings.get(k).strip_prefix(META_PREFIX) else {
            return;
        };
        let crate::model::ArgValue::Str(t) = v else {
            return;
        };
        for line in c.strings.get(t).lines() {
            let mut f = line.split('\t');
            let (Some(n), Some(fl), Some(b), d) = (f.next(), f.next(), f.next(), f.next()) else {
                continue;
            };
            let (p, unit, from) = (f.next(), f.next(), f.next());
            if let (Ok(fl), Ok(b)) = (fl.parse::<f64>(), b.parse::<f64>()) {
                let dtype = d.unwrap_or("").to_string();
                // Tables without the precision columns: the result type, vector.
                let precision = match p {
                    Some(p) => precision_named(p),
                    None => super::dtype::precision(match dtype.as_str() {
                        "f32" => "float",
                        "bf16" => "c10::BFloat16",
                        "f16" => "c10::Half",
                        "f64" => "double",
                        _ => "",
                    }),
                };
                let from = from.map_or_else(|| format!("{dtype} result"), str::to_string);
                let cost = HloCost {
                    flops: fl,
                    bytes: b,
                    dtype,
                    precision,
                    matrix: unit == Some("matrix"),
                    from,
                };
                out.insert(format!("{pid}/{n}"), cost);
            }
        }
    });
    out
}

/// Rows from the HLO ops with cost stats and what the rest of their lines holds; `None` when
/// no device event records any.
/// Without such stats, the figures of the capture's HLO cost tables ([`hlo_costs`]).
pub fn collect(c: &Capture) -> Option<Collected> {
    // (Event-level cost stats, else the HLO cost tables: XLA's GPU cost analysis, which XProf
    // never applies to TPU ops.)
    collect_with(c, None).or_else(|| {
        if has_tpu_ops(c) {
            return None;
        }
        let h = hlo_costs(c);
        (!h.is_empty()).then(|| collect_with(c, Some(h))).flatten()
    })
}

/// The roofline note of a TPU capture whose `XLA Ops` carry no cost stats.
pub const NOTE_NO_TPU_COSTS: &str = "the TPU's XLA Ops carry no flops / bytes_accessed stats (the plane's HLO op metadata is missing): no FLOPs, bytes or roofline; their times are in stats --group-by hlo_op";

/// True when a TPU plane has an `XLA Ops` line with events.
pub fn has_tpu_ops(c: &Capture) -> bool {
    c.tracks.iter().enumerate().any(|(t, tr)| {
        tr.slices.1 > tr.slices.0
            && c.processes
                .get(tr.process as usize)
                .is_some_and(|p| p.kind == crate::model::ProcessKind::Tpu)
            && c.track_name(t as u32) == "XLA Ops"
    })
}

/// The `XLA Modules` events beside `XLA Ops` line `t` (same stream): (start, end, name), by
/// start.
fn module_spans(c: &Capture, t: u32) -> Vec<(Ps, Ps, StrId)> {
    let name = c.track_name(t);
    let suffix = name.strip_prefix("XLA Ops").unwrap_or("");
    let proc_ = c.tracks[t as usize].process;
    let s = &c.slices;
    let mut out = Vec::new();
    for (m, tr) in c.tracks.iter().enumerate() {
        if tr.process != proc_ || c.track_name(m as u32).strip_prefix("XLA Modules") != Some(suffix)
        {
            continue;
        }
        for i in tr.slices.0 as usize..(tr.slices.1 as usize).min(s.len()) {
            out.push((s.start[i], s.start[i] + s.dur[i], s.name[i]));
        }
    }
    out.sort_unstable_by_key(|m| m.0);
    out
}

/// The program id in an `XLA Modules` event name, `jit_f(7)` → `7`.
fn program_of(module: &str) -> &str {
    module
        .rsplit_once('(')
        .map_or("", |(_, p)| p.trim_end_matches(')'))
}

/// The cost table entry of `program id/op name`, looked up in one buffer reused for every event.
fn cost_of<'h>(
    h: &'h FxHashMap<String, HloCost>,
    buf: &mut String,
    pid: &str,
    op: &str,
) -> Option<&'h HloCost> {
    buf.clear();
    buf.push_str(pid);
    buf.push('/');
    buf.push_str(op);
    h.get(buf.as_str())
}

/// Rows being summed: one per (op name, module).
#[derive(Default)]
struct Rows {
    rows: Vec<Row>,
    by_name: FxHashMap<(StrId, StrId), usize>,
    /// Per row: Σ FLOPs, Σ bytes, whether any event had bytes.
    sums: Vec<(f64, f64, bool)>,
    ids: Vec<u32>,
}

impl Rows {
    /// Adds event `i` to the row of `key` (op name, module), made on first use.
    fn add(
        &mut self,
        c: &Capture,
        i: usize,
        key: (StrId, StrId),
        h: Option<&HloCost>,
        (flops, bytes, dur): (f64, Option<f64>, Ps),
    ) {
        let rows = &mut self.rows;
        let sums = &mut self.sums;
        let r = *self.by_name.entry(key).or_insert_with(|| {
            // Cost stats on the event (TPU): XProf's one peak per device, the BF16 matrix
            // peak; the HLO cost table says the op's own precision.
            let (precision, matrix, from) = match h {
                Some(h) => (h.precision, h.matrix, h.from.clone()),
                None => (
                    Some(Precision::Bf16),
                    true,
                    "the trace's cost stats name no type: XProf's one peak per device (BF16 matrix)"
                        .to_string(),
                ),
            };
            let cost = Cost {
                flops: 0.0,
                bytes: None,
                precision,
                matrix,
            };
            let mut row = Row::new(
                c.strings.get(key.0),
                c.strings.get(key.1),
                h.map_or("", |h| h.dtype.as_str()),
                "",
                Family::Hlo,
                cost,
            );
            row.precision_from = from;
            rows.push(row);
            sums.push((0.0, 0.0, false));
            rows.len() - 1
        });
        rows[r].count += 1;
        rows[r].device_ps += dur;
        rows[r].slices.push(i as u32);
        sums[r].0 += flops;
        if let Some(b) = bytes {
            sums[r].1 += b;
            sums[r].2 = true;
        }
        self.ids.push(i as u32);
    }
}

/// The copies and memsets XLA runs for an HLO op (`copy.N` as a `MemcpyD2D` on the stream,
/// with `hlo_op` and `program_id` stats): XProf's op profile counts them with the op's cost,
/// but the `XLA Ops` line, derived from kernels alone, leaves them out. Those the cost tables
/// know become rows under the module of their program id on an `XLA Modules` line;
/// the rest (copies of a command buffer, inside its span on `XLA Ops`) are not read. Returns
/// their summed duration (ps).
fn device_copies(
    c: &Capture,
    device_tracks: &[u32],
    h: &FxHashMap<String, HloCost>,
    acc: &mut Rows,
    apart: &mut Vec<(StrId, super::Link, Ps, Option<f64>)>,
) -> Ps {
    let (Some(k_op), Some(k_pid)) = (c.strings.lookup("hlo_op"), c.strings.lookup("program_id"))
    else {
        return 0;
    };
    let k_mod = c.strings.lookup("hlo_module");
    let s = &c.slices;
    let mut module_of: FxHashMap<&str, StrId> = FxHashMap::default();
    for &t in device_tracks {
        if c.track_name(t).starts_with("XLA Modules") {
            let tr = &c.tracks[t as usize];
            for i in tr.slices.0 as usize..(tr.slices.1 as usize).min(s.len()) {
                module_of.insert(program_of(c.strings.get(s.name[i])), s.name[i]);
            }
        }
    }
    let (mut total, mut buf, mut pid_buf) = (0, String::new(), String::new());
    for &t in device_tracks {
        let tr = &c.tracks[t as usize];
        for i in tr.slices.0 as usize..(tr.slices.1 as usize).min(s.len()) {
            if !matches!(s.kind(i), Category::Memcpy | Category::Memset) {
                continue;
            }
            let (mut op, mut pid, mut raw_module) = (None, None, StrId::EMPTY);
            c.args.for_each(s.args[i], &c.strings, |k, v| {
                if k == k_op {
                    op = Some(v);
                } else if k == k_pid {
                    pid = v.as_i64(&c.strings);
                } else if Some(k) == k_mod
                    && let crate::model::ArgValue::Str(m) = v
                {
                    raw_module = m;
                }
            });
            let (Some(crate::model::ArgValue::Str(op)), Some(pid)) = (op, pid) else {
                continue;
            };
            pid_buf.clear();
            let _ = write!(pid_buf, "{pid}");
            let Some(hc) = cost_of(h, &mut buf, &pid_buf, c.strings.get(op)) else {
                continue;
            };
            total += s.dur[i];
            // A host ↔ device copy is bounded by the host link, not HBM: counted apart.
            if let Some(link) = super::copy_link(c.strings.get(s.name[i])) {
                apart.push((s.name[i], link, s.dur[i], None));
                continue;
            }
            // A module with no kernel has no `XLA Modules` event: its own name then.
            let module = module_of
                .get(pid_buf.as_str())
                .copied()
                .unwrap_or(raw_module);
            acc.add(
                c,
                i,
                (op, module),
                Some(hc),
                (hc.flops, Some(hc.bytes), s.dur[i]),
            );
        }
    }
    total
}

fn collect_with(c: &Capture, hlo: Option<FxHashMap<String, HloCost>>) -> Option<Collected> {
    let key = |s: &str| c.strings.lookup(s);
    let (kf, km, kb) = (key("flops"), key("model_flops"), key("bytes_accessed"));
    // A TPU op's own time (XProf's op profile and hlo_stats time it by this stat).
    let kdd = key("device_duration_ps");
    if hlo.is_none() && kf.is_none() && km.is_none() && kb.is_none() {
        return None;
    }
    let s = &c.slices;
    let device_tracks: Vec<u32> = (0..c.tracks.len() as u32)
        .filter(|&t| is_device_process(c, t))
        .collect();
    let named: Vec<u32> = device_tracks
        .iter()
        .copied()
        .filter(|&t| c.track_name(t).starts_with("XLA Ops"))
        .collect();
    let tracks = if named.is_empty() {
        device_tracks.clone()
    } else {
        named
    };
    let mut acc = Rows::default();
    let mut apart = Vec::new();
    let mut other: FxHashMap<StrId, (Ps, u64)> = FxHashMap::default();
    let mut total: Ps = 0;
    let mut key_buf = String::new();
    for &t in &tracks {
        let tr = &c.tracks[t as usize];
        // Rows are per (op, program), as XProf's: the `XLA Modules` event around each op.
        let modules = module_spans(c, t);
        for i in tr.slices.0 as usize..(tr.slices.1 as usize).min(s.len()) {
            let (mut f, mut mf, mut b, mut dd) = (None, None, None, None);
            let mut module = StrId::EMPTY;
            let mut hc = None;
            let at = modules.partition_point(|m| m.0 <= s.start[i]);
            if let Some(&(_, end, m)) = at.checked_sub(1).and_then(|k| modules.get(k))
                && end >= s.start[i] + s.dur[i]
            {
                module = m;
                if let Some(h) = &hlo {
                    let pid = program_of(c.strings.get(m));
                    if let Some(x) = cost_of(h, &mut key_buf, pid, c.strings.get(s.name[i])) {
                        (f, b, hc) = (Some(x.flops), Some(x.bytes), Some(x));
                    }
                }
            }
            c.args.for_each(s.args[i], &c.strings, |k, v| {
                let k = Some(k);
                let x = v.as_i64(&c.strings).map(|x| x as f64).or(match v {
                    crate::model::ArgValue::F64(x) => Some(x),
                    _ => None,
                });
                if k == kf {
                    f = x;
                } else if k == km {
                    mf = x;
                } else if k == kb {
                    b = x;
                } else if k == kdd {
                    dd = v.as_i64(&c.strings).filter(|&d| d >= 0);
                }
            });
            let dur = dd.unwrap_or(s.dur[i]);
            total += dur;
            // An async start / done op starts or waits for a transfer: not compute, never a
            // row (its bytes over its few cycles, or its wait against HBM, mean nothing).
            if super::is_async_half(c.strings.get(s.name[i])) {
                apart.push((s.name[i], super::Link::Async, dur, b));
                continue;
            }
            let flops = f.or(mf);
            if flops.is_none() && b.is_none() {
                let e = other.entry(s.name[i]).or_default();
                e.0 += dur;
                e.1 += 1;
                continue;
            }
            acc.add(
                c,
                i,
                (s.name[i], module),
                hc,
                (flops.unwrap_or(0.0), b, dur),
            );
        }
    }
    if let Some(h) = &hlo {
        total += device_copies(c, &device_tracks, h, &mut acc, &mut apart);
    }
    let Rows {
        mut rows,
        sums,
        mut ids,
        ..
    } = acc;
    // Per call: the mean over the calls (XLA records one figure per op; equal across calls).
    for (r, (f, b, has_b)) in rows.iter_mut().zip(sums) {
        let n = r.count.max(1) as f64;
        r.cost.flops = f / n;
        r.cost.bytes = has_b.then_some(b / n);
    }
    ids.sort_unstable();
    let mut other: Vec<(StrId, Ps, u64)> = other.into_iter().map(|(k, (d, n))| (k, d, n)).collect();
    other.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.0.cmp(&b.0.0)));
    (!rows.is_empty()).then_some(Collected {
        rows,
        ids,
        other,
        total,
        from_hlo: hlo.is_some(),
        apart,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_keys_are_the_loaders() {
        use crate::formats::xplane::hlo_cost;
        assert_eq!(META_PREFIX, hlo_cost::META_PREFIX);
        assert_eq!(META_MALFORMED, hlo_cost::META_MALFORMED);
    }
    use crate::model::*;

    /// A `/device:TPU:0` plane with an `XLA Ops` line: (its track, the `flops` and
    /// `bytes_accessed` keys, the empty category).
    fn tpu_ops_line(b: &mut CaptureBuilder) -> (u32, StrId, StrId, StrId) {
        let pn = b.intern("/device:TPU:0");
        let p = b.process(Key::Str(pn));
        b.process_mut(p).name = pn;
        b.process_mut(p).kind = ProcessKind::Tpu;
        let t = b.track(p, Key::Int(1), TrackKind::Thread);
        let ln = b.intern("XLA Ops");
        b.track_mut(t).name = ln;
        let (kf, kb) = (b.intern("flops"), b.intern("bytes_accessed"));
        (t, kf, kb, b.intern(""))
    }

    #[test]
    fn hlo_ops_with_cost_stats_become_rows() {
        let mut b = CaptureBuilder::new();
        let (t, kf, kb, cat) = tpu_ops_line(&mut b);
        let add = |b: &mut CaptureBuilder, start: Ps, name: &str, f: Option<i64>, by: i64| {
            b.args.begin();
            if let Some(f) = f {
                b.args.push(kf, ArgValue::I64(f));
                b.args.push(kb, ArgValue::I64(by));
            }
            let a = b.args.finish();
            let n = b.intern(name);
            b.add_slice(t, start, 1_000_000, n, cat, a, 0);
        };
        add(&mut b, 0, "fusion.1", Some(2_000_000), 4_000);
        add(&mut b, 2_000_000, "fusion.1", Some(2_000_000), 4_000);
        add(&mut b, 4_000_000, "copy.2", None, 0);
        let c = b.finish(SourceInfo::default(), Format::XPlane);
        let Collected {
            rows,
            ids,
            other,
            total,
            ..
        } = collect(&c).expect("rows");
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].count, rows[0].device_ps), (2, 2_000_000));
        assert_eq!((rows[0].cost.flops, rows[0].cost.bytes), (2e6, Some(4e3)));
        assert_eq!(ids.len(), 2);
        assert_eq!((other.len(), other[0].1, total), (1, 1_000_000, 3_000_000));
        // 2 MFLOP per µs = 2 TFLOP/s.
        assert!((rows[0].tflops().unwrap() - 2.0).abs() < 1e-12);
    }

    #[test]
    fn async_start_and_done_ops_are_counted_apart_not_rows() {
        // A TPU `XLA Ops` line as the inference capture has it: `copy-start` a few cycles
        // with the whole copy's bytes, `copy-done` the wait, and a fusion.
        let mut b = CaptureBuilder::new();
        let (t, kf, kb, cat) = tpu_ops_line(&mut b);
        for (start, dur, name, f, by) in [
            (0, 2, "copy-start.4", 0, 5_000_000_000),
            (10, 1_000, "fusion.1", 2_000, 4_000),
            (2_000, 900_000, "copy-done.4", 0, 5_000_000_000),
            (1_000_000, 50, "all-gather-start", 0, 64),
            (1_000_100, 70, "all-gather-done.1", 0, 64),
        ] {
            b.args.begin();
            b.args.push(kf, ArgValue::I64(f));
            b.args.push(kb, ArgValue::I64(by));
            let a = b.args.finish();
            let n = b.intern(name);
            b.add_slice(t, start, dur, n, cat, a, 0);
        }
        let c = b.finish(SourceInfo::default(), Format::XPlane);
        let got = collect(&c).expect("rows");
        let names: Vec<&str> = got.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["fusion.1"]);
        let apart: Vec<(&str, Ps, Option<f64>)> = got
            .apart
            .iter()
            .map(|(n, l, d, b)| {
                assert_eq!(*l, super::super::Link::Async);
                (c.strings.get(*n), *d, *b)
            })
            .collect();
        assert_eq!(
            apart,
            [
                ("copy-start.4", 2, Some(5e9)),
                ("copy-done.4", 900_000, Some(5e9)),
                ("all-gather-start", 50, Some(64.0)),
                ("all-gather-done.1", 70, Some(64.0))
            ]
        );
        assert_eq!(got.total, 2 + 1_000 + 900_000 + 50 + 70);
        let r = super::super::compute(&c);
        assert_eq!(
            r.modelled_ps() + r.transfer_ps() + r.unmodelled_ps(),
            r.total_device_ps
        );
        let t: Vec<(&str, u64)> = r
            .transfers
            .iter()
            .map(|t| (t.name.as_str(), t.count))
            .collect();
        assert_eq!(
            t,
            [
                ("copy-done", 1),
                ("all-gather-done", 1),
                ("all-gather-start", 1),
                ("copy-start", 1)
            ]
        );
        // Their bytes are shown, never as a rate.
        let done = &r.transfers[0];
        assert_eq!((done.bytes, done.gbps()), (Some(5e9), None));
    }

    /// A builder with process `/device:GPU:0` holding one track per name, in order.
    fn gpu_lines<const N: usize>(names: [&str; N]) -> (CaptureBuilder, [u32; N]) {
        let mut b = CaptureBuilder::new();
        let pn = b.intern("/device:GPU:0");
        let p = b.process(Key::Str(pn));
        b.process_mut(p).name = pn;
        b.process_mut(p).kind = ProcessKind::Gpu;
        let mut key = 0;
        let tracks = names.map(|n| {
            key += 1;
            let t = b.track(p, Key::Int(key), TrackKind::Thread);
            let n = b.intern(n);
            b.track_mut(t).name = n;
            t
        });
        (b, tracks)
    }

    #[test]
    fn gpu_ops_costed_from_the_module_tables_of_their_module() {
        let (mut b, [mods, ops]) = gpu_lines(["XLA Modules - from #7", "XLA Ops - from #7"]);
        let cat = b.intern("");
        let slice = |b: &mut CaptureBuilder, t: u32, start: Ps, dur: Ps, name: &str| {
            let n = b.intern(name);
            b.add_slice(t, start, dur, n, cat, ArgsRef::NONE, 0);
        };
        slice(&mut b, mods, 0, 10_000, "jit_f(7)");
        slice(&mut b, mods, 20_000, 10_000, "jit_g(8)");
        slice(&mut b, ops, 1_000, 2_000, "fusion.1");
        slice(&mut b, ops, 21_000, 4_000, "fusion.1");
        slice(&mut b, ops, 26_000, 1_000, "custom-call.3");
        // Two modules with a `fusion.1` each, of different costs; `custom-call.3` has none.
        let (k7, k8, kbad) = (
            b.intern("hlo_costs:7"),
            b.intern("hlo_costs:8"),
            b.intern(META_MALFORMED),
        );
        let (v7, v8) = (
            b.intern("fusion.1\t100\t40\tf32\n"),
            b.intern("fusion.1\t300\t80\tbf16\n"),
        );
        b.args.begin();
        b.args.push(k7, ArgValue::Str(v7));
        b.args.push(k8, ArgValue::Str(v8));
        b.args.push(kbad, ArgValue::U64(2));
        b.metadata = b.args.finish();
        let c = b.finish(SourceInfo::default(), Format::XPlane);
        assert_eq!(malformed_modules(&c), 2);
        let got = collect(&c).expect("rows");
        assert!(got.from_hlo);
        let mut rows: Vec<(String, String, String, f64, Option<f64>, Ps)> = got
            .rows
            .iter()
            .map(|r| {
                (
                    r.name.clone(),
                    r.input_dims.clone(),
                    r.dtype.clone(),
                    r.cost.flops,
                    r.cost.bytes,
                    r.device_ps,
                )
            })
            .collect();
        rows.sort_by(|a, b| a.1.cmp(&b.1));
        assert_eq!(
            rows,
            [
                (
                    "fusion.1".into(),
                    "jit_f(7)".into(),
                    "f32".into(),
                    100.0,
                    Some(40.0),
                    2_000
                ),
                (
                    "fusion.1".into(),
                    "jit_g(8)".into(),
                    "bf16".into(),
                    300.0,
                    Some(80.0),
                    4_000
                ),
            ]
        );
        assert_eq!(
            (got.other.len(), got.other[0].1, got.total),
            (1, 1_000, 7_000)
        );
    }

    #[test]
    fn device_copies_of_hlo_ops_are_rows_of_their_module() {
        let (mut b, [mods, ops, stream]) = gpu_lines([
            "XLA Modules - from #7",
            "XLA Ops - from #7",
            "Stream #7(Compute,MemcpyD2D)",
        ]);
        let (none, kernel, memcpy) = (b.intern(""), b.intern("kernel"), b.intern("gpu_memcpy"));
        let (k_op, k_pid, k_mod) = (
            b.intern("hlo_op"),
            b.intern("program_id"),
            b.intern("hlo_module"),
        );
        let n = b.intern("jit_f(7)");
        b.add_slice(mods, 0, 10_000, n, none, ArgsRef::NONE, 0);
        let n = b.intern("fusion.1");
        b.add_slice(ops, 1_000, 2_000, n, none, ArgsRef::NONE, 0);
        b.add_slice(stream, 1_000, 2_000, n, kernel, ArgsRef::NONE, 0);
        // (start, dur, hlo_op, program id, module): two copies of jit_f's `copy.4`, one of a
        // command buffer (no cost: left to its span), one of a module without kernels.
        for (start, dur, op, pid, module) in [
            (4_000, 500, "copy.4", 7, "jit_f"),
            (5_000, 700, "copy.4", 7, "jit_f"),
            (6_000, 900, "command_buffer_3", 7, "jit_f"),
            (20_000, 300, "copy.2", 9, "jit_h"),
        ] {
            let (o, m) = (b.intern(op), b.intern(module));
            b.args.begin();
            b.args.push(k_op, ArgValue::Str(o));
            b.args.push(k_pid, ArgValue::I64(pid));
            b.args.push(k_mod, ArgValue::Str(m));
            let a = b.args.finish();
            let n = b.intern("MemcpyD2D");
            b.add_slice(stream, start, dur, n, memcpy, a, 0);
        }
        let (k7, k9) = (b.intern("hlo_costs:7"), b.intern("hlo_costs:9"));
        let (v7, v9) = (
            b.intern("fusion.1\t100\t40\tf32\ncopy.4\t0\t160\tbf16\n"),
            b.intern("copy.2\t0\t64\tf32\n"),
        );
        b.args.begin();
        b.args.push(k7, ArgValue::Str(v7));
        b.args.push(k9, ArgValue::Str(v9));
        b.metadata = b.args.finish();
        let c = b.finish(SourceInfo::default(), Format::XPlane);
        let got = collect(&c).expect("rows");
        let mut rows: Vec<(String, String, u64, f64, Option<f64>, Ps)> = got
            .rows
            .iter()
            .map(|r| {
                let (n, m) = (r.name.clone(), r.input_dims.clone());
                (n, m, r.count, r.cost.flops, r.cost.bytes, r.device_ps)
            })
            .collect();
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            rows,
            [
                ("copy.2".into(), "jit_h".into(), 1, 0.0, Some(64.0), 300),
                (
                    "copy.4".into(),
                    "jit_f(7)".into(),
                    2,
                    0.0,
                    Some(160.0),
                    1_200
                ),
                (
                    "fusion.1".into(),
                    "jit_f(7)".into(),
                    1,
                    100.0,
                    Some(40.0),
                    2_000
                ),
            ]
        );
        // The `XLA Ops` line (2 000) and the costed copies (1 500); not the command buffer's.
        assert_eq!(got.total, 3_500);
        assert_eq!(got.ids.len(), 4);
    }
}
