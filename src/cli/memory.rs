//! `tracetui memory`: per device / allocator memory figures of captures (Kineto `[memory]`
//! events, XPlane allocator events) and of torch CUDA allocator snapshots (`*.pickle`).

use super::parse::parse_time;
use super::report::Problem;
use super::report::emit;
use super::report::finish;
use super::report::report;
use super::report::to_json;
use clap::Args;
use std::path::PathBuf;

use super::text::{self, Align, clean};
use crate::analysis::memory::summary::{live_at, top_allocators, unlisted_live};
use crate::discover::CaptureFile;
use crate::formats::LoadError;
use crate::model::memory::{LIVE_AT_END, LiveIndex, MemTrack, MemoryModel, NO_OP, NO_STACK};
use crate::model::{Capture, Ps};
use serde::Serialize;

pub const MEMORY_AFTER: &str = "\
Examples:
  tracetui memory trace.pt.trace.json             peaks, counts, live at end, top ops per device
  tracetui memory trace.pt.trace.json --at 12ms   the allocations live 12 ms after the first event
  tracetui memory snap.pickle --stacks            a CUDA allocator snapshot, with folded stack lines
  tracetui memory memory.prof                     a JAX device memory profile (pprof): bytes by
                                                  device, buffer kind and allocation stack
  tracetui memory logs/ --json | jq '.captures[].tracks[].peak_allocated'

Sources: Kineto `[memory]` / `[OutOfMemory]` events (torch.profiler with profile_memory=True),
XPlane MemoryAllocation / MemoryDeallocation events (host tracer level >= 2), snapshots from
torch.cuda.memory._dump_snapshot and pprof files from jax.profiler.save_device_memory_profile.
Allocations are matched to frees by address; each is attributed to the innermost op enclosing it
on its own thread (XPlane: its tf_op stat, as XProf). See docs/memory.md.";

/// Arguments of `memory`.
#[derive(Args, Debug)]
pub struct MemoryArgs {
    /// Log dir, capture file, allocator snapshot (*.pickle) or pprof memory profile (*.prof)
    pub path: PathBuf,
    /// Print JSON (stable shape, see docs/cli.md) instead of text
    #[arg(long)]
    pub json: bool,
    /// List the allocations live at TIME after the first event (e.g. 1.5ms, 200us; bare = ns)
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub at: Option<i64>,
    /// Show call stacks of live allocations; for snapshots also the folded `stream;state;frames
    /// bytes` lines that `python -m torch.cuda._memory_viz memory` draws
    #[arg(long)]
    pub stacks: bool,
    /// Show at most N live allocations per device with --at [default: 20 for text, all for --json]
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
}

pub fn cmd_memory(a: &MemoryArgs) -> i32 {
    let o = MemoryOptions {
        at: a.at,
        stacks: a.stacks,
        limit: a.limit.or(if a.json { None } else { Some(20) }),
    };
    // A file named like a pprof profile goes to the snapshot reader even when it does not decode:
    // its error says why, instead of "not a recognized trace file".
    let pprof_named = a.path.is_file()
        && a.path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(crate::formats::pprof::named_like_pprof);
    if pprof_named || crate::discover::is_snapshot_file(&a.path) {
        let r = snapshot_memory(&a.path, &o);
        let printed = if a.json {
            #[derive(Serialize)]
            struct Out<'a> {
                captures: [&'a CaptureMemory; 1],
                problems: [Problem; 0],
            }
            emit(&to_json(&Out {
                captures: [&r],
                problems: [],
            }))
        } else {
            emit(&render_text(&r))
        };
        if let Err(code) = printed {
            return code;
        }
        return finish(std::iter::once((r.path.as_str(), r.error.as_ref())), 1);
    }
    report(
        &a.path,
        a.json,
        |cap, loaded| capture_memory(cap, loaded, &o),
        render_text,
        |s| (s.path.as_str(), s.error.as_ref()),
    )
}

/// How many names `top_ops` lists per track.
const TOP: usize = 10;

/// Options of one `memory` run.
#[derive(Clone, Copy, Debug, Default)]
pub struct MemoryOptions {
    /// List the allocations live at this time (relative to the first event), ps.
    pub at: Option<Ps>,
    /// Include call stacks (and, for snapshots, the folded stack lines).
    pub stacks: bool,
    /// Most live allocations listed per track with `at` (None = all).
    pub limit: Option<usize>,
}

/// Bytes allocated under one op / call site.
#[derive(Serialize, Clone, Debug)]
pub struct OpJson {
    /// Op name (innermost enclosing op; XPlane: the `tf_op` stat; `(no op)` without) or
    /// innermost frame (snapshots, pprof).
    pub name: String,
    /// Allocations.
    pub count: u64,
    /// Σ bytes allocated.
    pub bytes: i64,
    /// Of them, bytes never freed.
    pub live_bytes: i64,
}

/// An out-of-memory event.
#[derive(Serialize, Clone, Debug)]
pub struct OomJson {
    /// Time from the first event, ns.
    pub time_ns: i64,
    /// Bytes requested.
    pub bytes: i64,
    /// Free device memory the allocator saw, when known.
    pub device_free: Option<i64>,
    /// Allocated bytes at the time, when known.
    pub allocated: Option<i64>,
    /// Reserved bytes at the time, when known.
    pub reserved: Option<i64>,
}

/// One live allocation.
#[derive(Serialize, Clone, Debug)]
pub struct AllocJson {
    /// Size.
    pub bytes: i64,
    /// Address.
    pub addr: u64,
    /// Allocation time from the first event, ns.
    pub start_ns: i64,
    /// Release time from the first event, ns (null: never freed).
    pub end_ns: Option<i64>,
    /// Innermost op enclosing it on its thread (null: none).
    pub op: Option<String>,
    /// Call stack, innermost frame first (with `--stacks`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stack: Option<Vec<String>>,
}

/// The allocations live at one time.
#[derive(Serialize, Clone, Debug)]
pub struct LiveJson {
    /// The time asked, from the first event, ns.
    pub time_ns: i64,
    /// Live allocations.
    pub count: usize,
    /// Their bytes.
    pub bytes: i64,
    /// Allocated / reserved bytes of the counter series at that time.
    pub allocated: i64,
    /// Reserved bytes at that time.
    pub reserved: i64,
    /// `allocated` − `bytes` when positive: memory allocated before the capture began and still
    /// live (the allocator's counter holds it; no event of the capture lists it).
    pub before_capture_bytes: i64,
    /// Largest first (limited by `--limit`).
    pub allocations: Vec<AllocJson>,
}

/// One device / allocator.
#[derive(Serialize, Clone, Debug)]
pub struct TrackJson {
    /// Device (`cpu`, `cuda:0`, an XPlane allocator name, ...).
    pub device: String,
    /// Allocator ("" when the source names none).
    pub allocator: String,
    /// Most allocated bytes.
    pub peak_allocated: i64,
    /// When first reached, ns from the first event.
    pub peak_allocated_ns: i64,
    /// Most reserved bytes (null when the source does not record them).
    pub peak_reserved: Option<i64>,
    /// When first reached.
    pub peak_reserved_ns: Option<i64>,
    /// Allocation events.
    pub allocs: u64,
    /// Free events.
    pub frees: u64,
    /// Frees of memory allocated before recording started.
    pub unmatched_frees: u64,
    /// Allocations at a still-live address (the earlier one is closed there).
    pub addr_reuse: u64,
    /// Events of 0 bytes.
    pub zero_size: u64,
    /// Allocations never freed.
    pub live_at_end_count: u64,
    /// Their bytes.
    pub live_at_end_bytes: i64,
    /// Names with the most bytes allocated.
    pub top_ops: Vec<OpJson>,
    /// Out-of-memory events.
    pub ooms: Vec<OomJson>,
    /// Allocations live at `--at`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub live: Option<LiveJson>,
}

/// One capture or snapshot of `memory --json`.
#[derive(Serialize, Clone, Debug, Default)]
pub struct CaptureMemory {
    /// File read.
    pub path: String,
    /// Run name.
    pub run: String,
    /// Host / worker.
    pub host: String,
    /// `trace`, `snapshot` or `pprof`.
    pub kind: &'static str,
    /// Why loading failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Kind of the load error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<&'static str>,
    /// Per device / allocator.
    pub tracks: Vec<TrackJson>,
    /// Snapshot totals (`_memory_viz stats`), for snapshots.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub segments: Option<crate::formats::snapshot::SegmentTotals>,
    /// Folded `stream_N;state;frames bytes` lines of the blocks at snapshot time (what
    /// `python -m torch.cuda._memory_viz memory` feeds to flamegraph.pl), with `--stacks`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub folded: Option<Vec<String>>,
    /// The folded lines of `_memory_viz segments` (`stream_N;seg_ADDR;state;frames bytes`), with
    /// `--stacks` (JSON only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub folded_segments: Option<Vec<String>>,
    /// Things to know (ring-buffer truncation, ...).
    pub notes: Vec<String>,
}

use super::stats::ns;

/// Per-track figures; `name_of(track, alloc)` names an allocation's op, `stack_of` its frames.
pub fn tracks_json(
    m: &MemoryModel,
    zero: Ps,
    o: &MemoryOptions,
    name_of: &dyn Fn(&MemTrack, usize) -> Option<String>,
) -> Vec<TrackJson> {
    let stack_of = |id: u32| -> Vec<String> {
        m.stacks
            .get(id)
            .iter()
            .filter_map(|&f| m.stacks.frames.get(f as usize))
            .map(|f| f.short())
            .collect()
    };
    m.tracks
        .iter()
        .map(|tr| {
            let (pt, pb) = tr.peak_allocated().unwrap_or((zero, 0));
            let pr = tr.peak_reserved().filter(|_| tr.has_reserved);
            let (n_end, b_end) = tr.live_at_end();
            let top = top_allocators(tr, TOP, |i| {
                name_of(tr, i).unwrap_or_else(|| "(no op)".to_string())
            });
            let live = o.at.map(|at| {
                let t = zero.saturating_add(at);
                let ids = live_at(tr, &LiveIndex::new(&tr.allocs), t);
                let (allocated, reserved) = tr.at(t);
                let bytes: i64 = ids.iter().map(|&i| tr.allocs.bytes[i as usize]).sum();
                LiveJson {
                    time_ns: ns(at),
                    count: ids.len(),
                    bytes,
                    allocated,
                    reserved,
                    before_capture_bytes: unlisted_live(tr, t, bytes),
                    allocations: ids
                        .iter()
                        .take(o.limit.unwrap_or(usize::MAX))
                        .map(|&i| {
                            let i = i as usize;
                            let a = &tr.allocs;
                            AllocJson {
                                bytes: a.bytes[i],
                                addr: a.addr[i],
                                start_ns: ns(a.start[i] - zero),
                                end_ns: (a.end[i] != LIVE_AT_END).then(|| ns(a.end[i] - zero)),
                                op: name_of(tr, i),
                                stack: (o.stacks && a.stack[i] != NO_STACK)
                                    .then(|| stack_of(a.stack[i])),
                            }
                        })
                        .collect(),
                }
            });
            TrackJson {
                device: tr.device.clone(),
                allocator: tr.allocator.clone(),
                peak_allocated: pb,
                peak_allocated_ns: ns(pt - zero),
                peak_reserved: pr.map(|p| p.1),
                peak_reserved_ns: pr.map(|p| ns(p.0 - zero)),
                allocs: tr.counts.allocs,
                frees: tr.counts.frees,
                unmatched_frees: tr.counts.unmatched_frees,
                addr_reuse: tr.counts.addr_reuse,
                zero_size: tr.counts.zero_size,
                live_at_end_count: n_end,
                live_at_end_bytes: b_end,
                top_ops: top
                    .into_iter()
                    .map(|t| OpJson {
                        name: t.name,
                        count: t.count,
                        bytes: t.bytes,
                        live_bytes: t.live_bytes,
                    })
                    .collect(),
                ooms: tr
                    .ooms
                    .iter()
                    .map(|x| OomJson {
                        time_ns: ns(x.ts - zero),
                        bytes: x.bytes,
                        device_free: x.device_free,
                        allocated: x.allocated,
                        reserved: x.reserved,
                    })
                    .collect(),
                live,
            }
        })
        .collect()
}

/// The memory report of one loaded capture.
pub fn capture_memory(
    cap: &CaptureFile,
    loaded: Result<std::sync::Arc<Capture>, LoadError>,
    o: &MemoryOptions,
) -> CaptureMemory {
    let mut out = CaptureMemory {
        path: cap.path.display().to_string(),
        run: cap.run.clone(),
        host: cap.host.clone(),
        kind: "trace",
        ..CaptureMemory::default()
    };
    let c = match loaded {
        Ok(c) => c,
        Err(e) => {
            out.error = Some(e.to_string());
            out.error_kind = Some(e.kind.name());
            return out;
        }
    };
    let m = crate::analysis::memory::build(&c);
    // The enclosing op; XPlane: the allocation's `tf_op` stat (its one-frame stack), as XProf.
    let name_of = |tr: &MemTrack, i: usize| -> Option<String> {
        let op = tr.allocs.op[i];
        if op != NO_OP {
            return Some(c.slice_name(op).to_string());
        }
        let f = *m.stacks.get(tr.allocs.stack[i]).first()?;
        m.stacks.frames.get(f as usize).map(|f| f.name.clone())
    };
    out.tracks = tracks_json(&m, c.time_zero(), o, &name_of);
    out
}

/// The memory report of an allocator snapshot file.
pub fn snapshot_memory(path: &std::path::Path, o: &MemoryOptions) -> CaptureMemory {
    let mut out = CaptureMemory {
        path: path.display().to_string(),
        kind: "snapshot",
        ..CaptureMemory::default()
    };
    let snap = match crate::formats::snapshot::load(path) {
        Ok(s) => s,
        Err(e) => {
            out.error = Some(e.to_string());
            out.error_kind = Some(e.kind.name());
            return out;
        }
    };
    let m = &snap.model;
    let name_of =
        |tr: &MemTrack, i: usize| -> Option<String> { snap.call_site(tr.allocs.stack[i]) };
    out.tracks = tracks_json(m, snap.time_zero(), o, &name_of);
    // A pprof profile (no segments, no allocator state) reports its tracks only.
    let pprof = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(crate::formats::pprof::named_like_pprof)
        && snap.segments.is_empty();
    if pprof {
        out.kind = "pprof";
    } else {
        out.segments = Some(snap.totals.clone());
    }
    out.notes = snap.notes.clone();
    if o.stacks {
        out.folded = Some(snap.folded_memory());
        out.folded_segments = Some(snap.folded_segments());
    }
    out
}

fn b(v: i64) -> String {
    if v < 0 {
        format!("-{}", text::bytes(v.unsigned_abs()))
    } else {
        text::bytes(v as u64)
    }
}

/// Renders one report for people.
pub fn render_text(s: &CaptureMemory) -> String {
    let mut o = match text::capture_head(&s.path, &s.run, &s.host, "", s.error.as_ref()) {
        Ok(o) => o,
        Err(failed) => return failed,
    };
    if s.tracks.is_empty() {
        o.push_str(
            "   no memory events (record with profile_memory=True, or a host tracer level ≥ 2)\n",
        );
    }
    let d = |ns: i64| text::dur(ns as f64 * 1000.0);
    for t in &s.tracks {
        let label = if t.allocator.is_empty() {
            clean(&t.device).into_owned()
        } else {
            format!("{} {}", clean(&t.device), clean(&t.allocator))
        };
        o.push_str(&format!("   {label}\n"));
        o.push_str(&format!(
            "     peak allocated {} at {}",
            b(t.peak_allocated),
            d(t.peak_allocated_ns)
        ));
        if let (Some(r), Some(rt)) = (t.peak_reserved, t.peak_reserved_ns) {
            o.push_str(&format!("; peak reserved {} at {}", b(r), d(rt)));
        }
        o.push('\n');
        o.push_str(&format!(
            "     {} allocs, {} frees; live at end: {} ({})\n",
            t.allocs,
            t.frees,
            t.live_at_end_count,
            b(t.live_at_end_bytes)
        ));
        if t.unmatched_frees + t.addr_reuse + t.zero_size > 0 {
            o.push_str(&format!(
                "     {} frees of memory allocated before recording, {} address reuses, {} zero-size events\n",
                t.unmatched_frees, t.addr_reuse, t.zero_size
            ));
        }
        for x in &t.ooms {
            o.push_str(&format!(
                "     OUT OF MEMORY at {}: {} requested{}\n",
                d(x.time_ns),
                b(x.bytes),
                x.device_free
                    .map_or(String::new(), |f| format!(", {} free on the device", b(f)))
            ));
        }
        if !t.top_ops.is_empty() {
            let rows: Vec<Vec<String>> = t
                .top_ops
                .iter()
                .map(|r| {
                    vec![
                        text::fit(&clean(&r.name), 60).into_owned(),
                        r.count.to_string(),
                        b(r.bytes),
                        b(r.live_bytes),
                    ]
                })
                .collect();
            o.push_str(&text::table(
                "     ",
                &[
                    ("ALLOCATED BY", Align::Left),
                    ("COUNT", Align::Right),
                    ("BYTES", Align::Right),
                    ("LIVE AT END", Align::Right),
                ],
                &rows,
            ));
        }
        if let Some(l) = &t.live {
            o.push_str(&format!(
                "     live at {}: {} allocations, {} (allocated {}, reserved {})\n",
                d(l.time_ns),
                l.count,
                b(l.bytes),
                b(l.allocated),
                b(l.reserved)
            ));
            if l.before_capture_bytes > 0 {
                o.push_str(&format!(
                    "       {} of the allocated bytes were allocated before the capture began (not listed)\n",
                    b(l.before_capture_bytes)
                ));
            }
            let rows: Vec<Vec<String>> = l
                .allocations
                .iter()
                .map(|a| {
                    vec![
                        b(a.bytes),
                        format!("{:#x}", a.addr),
                        d(a.start_ns),
                        d(l.time_ns - a.start_ns),
                        text::fit(&clean(a.op.as_deref().unwrap_or("-")), 50).into_owned(),
                        a.stack.as_ref().map_or(String::new(), |s| {
                            text::fit(&clean(&s.join(" ← ")), 80).into_owned()
                        }),
                    ]
                })
                .collect();
            if !rows.is_empty() {
                o.push_str(&text::table(
                    "       ",
                    &[
                        ("BYTES", Align::Right),
                        ("ADDR", Align::Left),
                        ("AT", Align::Right),
                        ("AGE", Align::Right),
                        ("OP", Align::Left),
                        ("STACK", Align::Left),
                    ],
                    &rows,
                ));
            }
            if l.allocations.len() < l.count {
                o.push_str(&format!(
                    "       (showing {} of {}; --limit to change)\n",
                    l.allocations.len(),
                    l.count
                ));
            }
        }
    }
    if let Some(seg) = &s.segments {
        o.push_str(&format!(
            "   snapshot: {} segments, reserved {}, allocated {}, free {} ({} internal)\n",
            seg.segments,
            b(seg.total_reserved),
            b(seg.total_allocated),
            b(seg.free_external + seg.free_internal),
            b(seg.free_internal)
        ));
    }
    for n in &s.notes {
        o.push_str(&format!("   note: {}\n", clean(n)));
    }
    if let Some(f) = &s.folded {
        for l in f {
            o.push_str(&clean(l));
            o.push('\n');
        }
    }
    o
}
