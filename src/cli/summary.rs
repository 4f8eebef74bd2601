//! `tracetui summary`: what each capture holds (span, events, tracks, warnings).

use super::report::report;
use clap::Args;
use std::path::PathBuf;

use super::text::{self, Align, clean};
use crate::discover::CaptureFile;
use crate::formats::LoadError;
use crate::model::{Capture, ProcessKind, Ps};
use serde::Serialize;

pub const SUMMARY_AFTER: &str = "\
Examples:
  tracetui summary logs/                      every capture below logs/
  tracetui summary vm.xplane.pb --json | jq '.captures[0].tracks'

For each capture: run, host/worker, format, time span, event totals, every process and track
(kind, events, max nesting depth) and load warnings. When a host has both an .xplane.pb and JSON
exports of the same capture, only the XPlane is loaded; the JSON files are listed under `also:`.";

/// Arguments of `summary`.
#[derive(Args, Debug)]
pub struct SummaryArgs {
    /// Log dir or capture file
    pub path: PathBuf,
    /// Print JSON (stable shape, see docs/cli.md) instead of text
    #[arg(long)]
    pub json: bool,
    /// Keep at most N events per capture (reported as a `capped` warning; large captures are
    /// capped automatically to the available memory)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_events: Option<u64>,
}

pub fn cmd_summary(a: &SummaryArgs) -> i32 {
    report(&a.path, a.json, summarize, render_text, |s| {
        (s.path.as_str(), s.error.as_ref())
    })
}

/// One track of a capture summary (JSON shape documented in docs/cli.md).
#[derive(Serialize, Clone, Debug)]
pub struct TrackSummary {
    /// Process / plane display name.
    pub process: String,
    /// Track display name.
    pub name: String,
    /// Stable name (`pid 12/thread:tid 7`).
    pub id: String,
    /// Track kind (`thread`, `gpu_stream`, `xline`, ...).
    pub kind: &'static str,
    /// Slices + instants + counter samples + aggregated events on the track.
    pub events: u64,
    /// Slices on the track.
    pub slices: u64,
    /// Deepest nesting depth.
    pub max_depth: u16,
}

/// A load warning.
#[derive(Serialize, Clone, Debug)]
pub struct WarningSummary {
    /// Stable kind (`truncated`, `unmatched_end`, ...).
    pub kind: &'static str,
    /// Occurrences.
    pub count: u64,
    /// First occurrence, for people.
    pub message: String,
}

/// One capture of `summary --json`.
#[derive(Serialize, Clone, Debug)]
pub struct CaptureSummary {
    /// File read.
    pub path: String,
    /// Run name.
    pub run: String,
    /// Host / worker.
    pub host: String,
    /// Format (`xplane`, `kineto`, `xprof-json`, `chrome-json`).
    pub format: &'static str,
    /// File size in bytes.
    pub bytes: u64,
    /// Rank of a distributed run (Kineto `distributedInfo.rank`), when the file says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<i64>,
    /// Other files with the same capture, not loaded.
    pub alternates: Vec<String>,
    /// Why loading failed (the other fields but `path`..`alternates` are then absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Kind of the load error (`io`, `not_a_trace`, `truncated`, `corrupt`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<&'static str>,
    /// Set when the capture was loaded with an event cap (`--max-events` or the memory budget):
    /// what was kept and why. The same text is in `warnings` (kind `capped`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capped: Option<String>,
    /// Earliest start and latest end, ns from the capture's zero (its earliest event): the
    /// first is 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub span_ns: Option<[i64; 2]>,
    /// Wall-clock epoch ns of the origin, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin_epoch_ns: Option<i64>,
    /// Wall-clock epoch ns of the first event (the zero of displayed times), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zero_epoch_ns: Option<i64>,
    /// Total events (slices, instants, counter samples, aggregated events).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub events: Option<u64>,
    /// Slices only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slices: Option<u64>,
    /// Processes / planes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub processes: Option<u64>,
    /// Processes / planes without any event (e.g. idle GPUs, `/host:metadata`), by display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub empty_processes: Option<Vec<String>>,
    /// The device processes among them (Kineto writes one per GPU of the machine), by label
    /// (`GPU 1`), else name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub empty_device_processes: Option<Vec<String>>,
    /// The other processes without events (text output), by display name.
    #[serde(skip)]
    pub empty_other_processes: Vec<String>,
    /// Tracks in display order (process sort index, then track sort index).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tracks: Option<Vec<TrackSummary>>,
    /// Everything skipped or repaired while loading.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warnings: Option<Vec<WarningSummary>>,
    /// Graph capture merge: one line per replayed graph launch (docs/graphs.md).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub graphs: Vec<String>,
}

fn ps_to_ns(ps: Ps) -> i64 {
    ps.div_euclid(1000)
}

fn base(cap: &CaptureFile) -> CaptureSummary {
    CaptureSummary {
        path: cap.path.display().to_string(),
        run: cap.run.clone(),
        host: cap.host.clone(),
        format: crate::formats::pprof::format_label(cap.format, &cap.path),
        bytes: cap.bytes,
        rank: None,
        alternates: cap
            .alternates
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        error: None,
        error_kind: None,
        capped: None,
        span_ns: None,
        origin_epoch_ns: None,
        zero_epoch_ns: None,
        events: None,
        slices: None,
        processes: None,
        empty_processes: None,
        empty_device_processes: None,
        empty_other_processes: Vec::new(),
        tracks: None,
        warnings: None,
        graphs: Vec::new(),
    }
}

/// Summarizes a loaded capture (or its load error).
pub fn summarize(
    cap: &CaptureFile,
    loaded: Result<std::sync::Arc<Capture>, LoadError>,
) -> CaptureSummary {
    crate::timings::mark("load");
    let mut out = base(cap);
    let c = match loaded {
        Ok(c) => c,
        Err(e) => {
            out.error = Some(e.to_string());
            out.error_kind = Some(e.kind.name());
            return out;
        }
    };
    if let Some(f) = c.format {
        out.format = crate::formats::pprof::format_label(f, &cap.path);
    }
    out.capped = c
        .warnings
        .iter()
        .find(|w| w.kind == "capped")
        .map(|w| w.message.clone());
    out.span_ns = Some([0, ps_to_ns(c.span.1 - c.span.0)]);
    out.origin_epoch_ns = c.origin_epoch_ns;
    out.zero_epoch_ns = c.zero_epoch_ns();
    out.events = Some(c.event_count());
    out.slices = Some(c.slices.len() as u64);
    out.processes = Some(c.processes.len() as u64);
    out.rank = c.rank();
    let mut agg_per_track = vec![0u64; c.tracks.len()];
    for a in &c.aggregated {
        if let Some(n) = agg_per_track.get_mut(a.track as usize) {
            *n += 1;
        }
    }
    let events_of = |t: usize| -> u64 {
        let tr = &c.tracks[t];
        let samples = tr
            .counter
            .and_then(|k| c.counters.get(k as usize))
            .map_or(0, |s| s.ts.len() as u64);
        tr.slice_count() as u64
            + u64::from(tr.instants.1.saturating_sub(tr.instants.0))
            + samples
            + agg_per_track[t]
    };
    let mut has_events = vec![false; c.processes.len()];
    for (t, tr) in c.tracks.iter().enumerate() {
        if let Some(h) = has_events.get_mut(tr.process as usize)
            && !*h
        {
            *h = events_of(t) > 0;
        }
    }
    let empty: Vec<usize> = (0..c.processes.len())
        .filter(|&p| !has_events[p] && !c.processes[p].hidden)
        .collect();
    out.empty_processes = Some(empty.iter().map(|&p| c.process_title(p as u32)).collect());
    let device = |p: usize| {
        matches!(
            c.processes[p].kind,
            ProcessKind::Gpu | ProcessKind::Tpu | ProcessKind::Device
        )
    };
    out.empty_other_processes = empty
        .iter()
        .filter(|&&p| !device(p))
        .map(|&p| c.process_title(p as u32))
        .collect();
    out.empty_device_processes = Some(
        empty
            .iter()
            .filter(|&&p| device(p))
            .map(|&p| {
                let l = c.strings.get(c.processes[p].label).trim();
                if l.is_empty() {
                    c.process_title(p as u32)
                } else {
                    l.to_string()
                }
            })
            .collect(),
    );
    let mut order: Vec<usize> = (0..c.tracks.len()).collect();
    order.sort_by_key(|&t| {
        let tr = &c.tracks[t];
        let p = c.processes.get(tr.process as usize);
        (p.map_or(0, |p| p.sort_index), tr.process, tr.sort_index, t)
    });
    out.tracks = Some(
        order
            .into_iter()
            .map(|t| {
                let tr = &c.tracks[t];
                let slices = tr.slice_count() as u64;
                let id = c.track_stable_name(t as u32);
                let name = c.track_name(t as u32);
                let process = c.process_title(tr.process);
                let or_unnamed = |s: String| {
                    if s.is_empty() {
                        "(unnamed)".to_string()
                    } else {
                        s
                    }
                };
                TrackSummary {
                    process: or_unnamed(process),
                    name: or_unnamed(name),
                    id,
                    kind: tr.kind.name(),
                    events: events_of(t),
                    slices,
                    max_depth: tr.max_depth,
                }
            })
            .collect(),
    );
    out.warnings = Some(
        c.warnings
            .iter()
            .map(|w| WarningSummary {
                kind: w.kind,
                count: w.count,
                message: w.message.clone(),
            })
            .collect(),
    );
    out.graphs = c.graph_replay.notes.clone();
    crate::timings::mark("summary");
    out
}

/// Renders one capture summary for people.
pub fn render_text(s: &CaptureSummary) -> String {
    let mut o = String::new();
    o.push_str(&format!(
        "== {}{}  ({}){}\n",
        clean(&s.path),
        super::text::run_host(&s.run, &s.host),
        s.format,
        s.rank.map_or(String::new(), |r| format!("  rank {r}"))
    ));
    if !s.alternates.is_empty() {
        let names: Vec<String> = s
            .alternates
            .iter()
            .map(|p| {
                let n = std::path::Path::new(p)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| p.clone());
                clean(&n).into_owned()
            })
            .collect();
        o.push_str(&format!(
            "   also:     {} (same capture, not loaded)\n",
            names.join(", ")
        ));
    }
    if let Some(e) = &s.error {
        o.push_str(&format!("   error:    {}\n", clean(e)));
        return o;
    }
    if let Some(c) = &s.capped {
        o.push_str(&format!("   CAPPED:   {}\n", clean(c)));
    }
    if let Some([a, b]) = s.span_ns {
        // Times are relative to the first event; its wall-clock time when the file gives one.
        let zero = s.zero_epoch_ns.map_or(String::new(), |ns| {
            format!(" from {} UTC", crate::model::clock::format_clock(ns))
        });
        o.push_str(&format!(
            "   span:     {}{zero}\n",
            text::dur((b - a) as f64 * 1e3),
        ));
    }
    o.push_str(&format!(
        "   events:   {} ({} slices) in {} processes, {} tracks; file {}\n",
        s.events.unwrap_or(0),
        s.slices.unwrap_or(0),
        s.processes.unwrap_or(0),
        s.tracks.as_ref().map_or(0, |t| t.len()),
        text::bytes(s.bytes)
    ));
    if let Some(tracks) = &s.tracks
        && !tracks.is_empty()
    {
        let rows: Vec<Vec<String>> = tracks
            .iter()
            .map(|t| {
                vec![
                    text::fit(&clean(&t.process), 40).into_owned(),
                    text::fit(&clean(&t.name), 48).into_owned(),
                    t.kind.to_string(),
                    t.events.to_string(),
                    t.max_depth.to_string(),
                ]
            })
            .collect();
        o.push_str(&text::table(
            "   ",
            &[
                ("PROCESS", Align::Left),
                ("TRACK", Align::Left),
                ("KIND", Align::Left),
                ("EVENTS", Align::Right),
                ("DEPTH", Align::Right),
            ],
            &rows,
        ));
    }
    let devices = s.empty_device_processes.as_deref().unwrap_or(&[]);
    if !devices.is_empty() {
        o.push_str(&format!(
            "   {} device process{} without events ({})\n",
            devices.len(),
            if devices.len() == 1 { "" } else { "es" },
            clean(&compress_labels(devices))
        ));
    }
    let rest: Vec<String> = s
        .empty_other_processes
        .iter()
        .map(|n| clean(n).into_owned())
        .collect();
    if !rest.is_empty() {
        o.push_str(&format!(
            "   {} {}process{} without events: {}\n",
            rest.len(),
            if devices.is_empty() { "" } else { "other " },
            if rest.len() == 1 { "" } else { "es" },
            rest.join(", ")
        ));
    }
    if !s.graphs.is_empty() {
        o.push_str("   graphs (capture traces merged, docs/graphs.md):\n");
        for g in &s.graphs {
            o.push_str(&format!("     {}\n", clean(g)));
        }
    }
    match &s.warnings {
        Some(w) if !w.is_empty() => {
            o.push_str("   warnings:\n");
            for w in w {
                // Messages that state their count ("11 797 flow ends ...") stand alone.
                let counted = w.message.starts_with(|c: char| c.is_ascii_digit());
                o.push_str(&match counted {
                    true => format!("     {} ({})\n", clean(&w.message), w.kind),
                    false => format!("     {} ×{}: {}\n", w.kind, w.count, clean(&w.message)),
                });
            }
        }
        _ => o.push_str("   warnings: none\n"),
    }
    o
}

/// `GPU 1`, `GPU 2`, `GPU 3`, `GPU 5` → `GPU 1–3, 5`: labels ending in a number grouped by the
/// text before it, runs of consecutive numbers written as ranges; others listed as they are.
pub fn compress_labels(labels: &[String]) -> String {
    let mut groups: Vec<(&str, Vec<i64>)> = Vec::new();
    let mut plain: Vec<&str> = Vec::new();
    for l in labels {
        let digits = l.bytes().rev().take_while(u8::is_ascii_digit).count();
        let (head, num) = l.split_at(l.len() - digits);
        match num.parse::<i64>() {
            Ok(n) if digits > 0 && digits <= 18 => match groups.iter_mut().find(|g| g.0 == head) {
                Some(g) => g.1.push(n),
                None => groups.push((head, vec![n])),
            },
            _ => plain.push(l),
        }
    }
    let mut parts: Vec<String> = Vec::new();
    for (head, mut nums) in groups {
        nums.sort_unstable();
        nums.dedup();
        let mut runs: Vec<String> = Vec::new();
        let mut k = 0;
        while k < nums.len() {
            let mut j = k;
            while j + 1 < nums.len() && nums[j + 1] == nums[j] + 1 {
                j += 1;
            }
            runs.push(if j > k {
                format!("{}–{}", nums[k], nums[j])
            } else {
                nums[k].to_string()
            });
            k = j + 1;
        }
        parts.push(format!("{head}{}", runs.join(", ")));
    }
    parts.extend(plain.iter().map(|p| p.to_string()));
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::compress_labels;

    #[test]
    fn labels_compress_to_ranges() {
        let v: Vec<String> = [7, 1, 2, 3, 5, 6]
            .iter()
            .map(|n| format!("GPU {n}"))
            .collect();
        assert_eq!(compress_labels(&v), "GPU 1–3, 5–7");
        let v = vec!["TPU 0".to_string(), "GPU 2".into(), "weird".into()];
        assert_eq!(compress_labels(&v), "TPU 0, GPU 2, weird");
    }
}
