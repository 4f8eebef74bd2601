//! `tracetui stats`: per-name statistics tables (see [`crate::analysis::stats`]).

use super::parse::parse_regex;
use super::parse::parse_time;
use super::report::report;
use crate::model::Ps;
use clap::Args;
use clap::ValueEnum;
use regex::Regex;
use std::path::PathBuf;

use super::text::{self, Align, clean};
use crate::analysis::memory::key_averages::{self, MemColumns};
use crate::analysis::stats::{
    EventKind, GroupBy, SortKey, StatsOptions, categories, compute, profiler_events, resolve,
    shows_profiler, sort_rows,
};
use crate::discover::CaptureFile;
use crate::formats::LoadError;
use crate::model::Capture;
use serde::Serialize;

pub const STATS_AFTER: &str = "\
Examples:
  tracetui stats trace.pt.trace.json
        torch key_averages(): count, self / total CPU, Self / Total CUDA, memory per op (the
        default on a PyTorch capture, whatever torch version wrote it)
  tracetui stats trace.pt.trace.json --sort self_device --limit 20
        which ops launched the GPU time: SELF DEV / DEV TOTAL, torch's Self CUDA / CUDA total
  tracetui stats trace.pt.trace.json --all-events
        every event with a row: python frames, instants and flows' categories too
  tracetui stats logs/ --cat kernel --sort total --limit 10
        the ten GPU kernels with the most time
  tracetui stats vm.xplane.pb --plane GPU --line 'XLA Ops' --json
  tracetui stats vm.xplane.pb --plane TPU --unified

On a PyTorch capture the default table is torch's key_averages(): its categories (cpu_op,
user_annotation, cuda_runtime, cuda_driver, kernel, gpu_memcpy, gpu_memset, gpu_user_annotation),
with python frames nesting without rows where the torch version that wrote the file keeps them in
its event list (the header says which). Other captures: every event. --cat / --nest-cat /
--all-events choose the events instead.
Self time = duration minus the durations of direct children on the same track, children found
with torch's containment rule among the kept events. ProfilerStep#N rows group as ProfilerStep*.
Rows of different kinds (CPU ops, GPU kernels, runtime calls, memory copies, annotations, instant
events) are kept apart, each kind with its own total: the sum over every thread or stream it ran
on (said under the table), so it can exceed the capture's span. Instant events are counted, with
no duration. The profiler's own spans (PyTorch Profiler (0)) are left out unless --with-profiler;
the header says so. Times are shown in ps/ns/µs/ms/s; --json gives integer ns.";

/// Arguments of `stats`.
#[derive(Args, Debug)]
pub struct StatsArgs {
    /// Log dir or capture file
    pub path: PathBuf,
    /// Print JSON (stable shape, see docs/cli.md) instead of text
    #[arg(long)]
    pub json: bool,
    /// Only events of these categories (comma-separated; raw `cat` or canonical name, so `cpu_op`
    /// also matches legacy `Operator`) [default: torch's key_averages() set on a PyTorch
    /// capture, every event elsewhere]
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub cat: Option<Vec<String>>,
    /// Categories that count as children for self time without rows of their own
    /// (e.g. python_function)
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub nest_cat: Vec<String>,
    /// Row order
    #[arg(long, value_enum, default_value = "self")]
    pub sort: SortArg,
    /// Show at most N rows per capture [default: 40 for text, all for --json]
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Only processes / XPlane planes whose name matches this regex
    #[arg(long, value_name = "REGEX", value_parser = parse_regex)]
    pub plane: Option<Regex>,
    /// Only tracks / XPlane lines whose name matches this regex
    #[arg(long, value_name = "REGEX", value_parser = parse_regex)]
    pub line: Option<Regex>,
    /// Group device events by the ejkernel unified name hlo_module(program_id-scope_range_id)
    #[arg(long)]
    pub unified: bool,
    /// What a row groups (not with --unified, which is a grouping by name)
    #[arg(long, value_enum, default_value = "name", conflicts_with = "unified")]
    pub group_by: GroupArg,
    /// Only events starting at or after TIME, relative to each capture's first event
    /// (e.g. 1.5ms, 200us, 3s; a bare number is ns). Durations are not clipped.
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub from: Option<i64>,
    /// Only events starting before TIME (relative to the first event, like --from)
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub to: Option<i64>,
    /// Keep at most N events per capture (reported as a `capped` warning; large captures are
    /// capped automatically to the available memory)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_events: Option<u64>,
    /// Include the profiler's own spans (Kineto `PyTorch Profiler (0)` on `Spans`, ...), left
    /// out by default as in torch's key_averages()
    #[arg(long)]
    pub with_profiler: bool,
    /// Every event of every category: on a PyTorch capture the default table is torch's
    /// key_averages() (its categories; python frames nested where torch's event list has them)
    #[arg(long, conflicts_with_all = ["cat", "nest_cat"])]
    pub all_events: bool,
    /// Device time per kernel launcher instead: the first cpu_op above each launch call, Python
    /// frames skipped (TraceLens's direct kernel time), and the share launched by a cpu_op
    #[arg(long)]
    pub launchers: bool,
}

/// Row order of `stats`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortArg {
    /// Self time, largest first
    #[value(name = "self")]
    SelfTime,
    /// Total time, largest first
    Total,
    /// Number of events, largest first
    Count,
    /// Average duration, largest first
    Avg,
    /// Name, ascending
    Name,
    /// Device time launched by the row's events themselves (torch's Self CUDA), largest first
    #[value(name = "self_device")]
    SelfDevice,
    /// Device time launched by them or below them (torch's CUDA total), largest first
    #[value(name = "device_total")]
    DeviceTotal,
}

impl From<SortArg> for SortKey {
    fn from(s: SortArg) -> SortKey {
        match s {
            SortArg::SelfTime => SortKey::SelfTime,
            SortArg::Total => SortKey::Total,
            SortArg::Count => SortKey::Count,
            SortArg::Avg => SortKey::Avg,
            SortArg::Name => SortKey::Name,
            SortArg::SelfDevice => SortKey::SelfDevice,
            SortArg::DeviceTotal => SortKey::DeviceTotal,
        }
    }
}

pub fn cmd_stats(a: &StatsArgs) -> i32 {
    if a.launchers {
        return super::stats_launchers::cmd_launchers(&a.path, a.json, a.limit);
    }
    let opts = StatsOptions {
        cats: a.cat.clone(),
        nest_cats: a.nest_cat.clone(),
        plane: a.plane.clone(),
        line: a.line.clone(),
        unified: a.unified,
        range: None,
        group: a.group_by.into(),
        track: None,
        process: None,
        profiler: a.with_profiler,
        every: a.all_events,
    };
    let (from, to) = (a.from, a.to);
    let limit = a.limit.or(if a.json { None } else { Some(40) });
    let sort = SortKey::from(a.sort);
    let per_capture = |cap: &CaptureFile, loaded: Result<std::sync::Arc<Capture>, LoadError>| {
        // --from / --to are relative to each capture's first event.
        let mut o = opts.clone();
        if (from.is_some() || to.is_some())
            && let Ok(c) = &loaded
        {
            let z = c.time_zero();
            o.range = Some((
                from.map_or(Ps::MIN, |f| z.saturating_add(f)),
                to.map_or(Ps::MAX, |t| z.saturating_add(t)),
            ));
        }
        capture_stats(cap, loaded, &o, sort, limit)
    };
    report(&a.path, a.json, per_capture, render_text, |s| {
        (s.path.as_str(), s.error.as_ref())
    })
}

/// `stats --group-by`: what one row groups.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum GroupArg {
    /// Event name (`ProfilerStep#N` as `ProfilerStep*`)
    #[default]
    Name,
    /// Event kind: CPU ops, GPU kernels, runtime calls, memory copies, annotations, ...
    Kind,
    /// Raw category string
    Category,
    /// XPlane `hlo_op` stat ("(none)" row for events without it); on a TPU plane its `XLA Ops`
    /// events by name, as XProf's hlo_stats
    #[value(name = "hlo_op")]
    HloOp,
    /// XPlane `tf_op` stat ("(none)" row for events without it)
    #[value(name = "tf_op")]
    TfOp,
}

impl From<GroupArg> for GroupBy {
    fn from(g: GroupArg) -> GroupBy {
        match g {
            GroupArg::Name => GroupBy::Name,
            GroupArg::Kind => GroupBy::Kind,
            GroupArg::Category => GroupBy::Category,
            GroupArg::HloOp => GroupBy::HloOp,
            GroupArg::TfOp => GroupBy::TfOp,
        }
    }
}

/// One row of `stats --json`. Times are integer ns.
#[derive(Serialize, Clone, Debug)]
pub struct StatJson {
    /// Name (or unified name / `ProfilerStep*` group).
    pub name: String,
    /// Event kind (`cpu_op`, `kernel`, `runtime`, `memcpy`, `memset`, `annotation`,
    /// `instant`, ...): rows of different kinds never merge.
    pub kind: &'static str,
    /// Events (aggregated events count their occurrences).
    pub count: u64,
    /// Σ duration, ns (0 for instant events).
    pub total_ns: i64,
    /// Σ self time, ns.
    pub self_ns: i64,
    /// total / count, ns (rounded).
    pub avg_ns: i64,
    /// Shortest timed event, ns (null for aggregated or instant events only).
    pub min_ns: Option<i64>,
    /// Longest timed event, ns.
    pub max_ns: Option<i64>,
    /// Share of the self time of its kind, percent.
    pub self_pct: f64,
    /// Device time launched by the row's events themselves, ns (torch's Self CUDA; device
    /// activities: their duration; device annotations: 0, docs/stats.md).
    pub self_device_ns: i64,
    /// Device time launched by them or any event below them, ns (torch's CUDA total; device
    /// activities and annotations: their duration).
    pub device_total_ns: i64,
    /// torch's memory columns `self_cpu_mem`, `cpu_mem`, `self_device_mem`, `device_mem` (bytes;
    /// captures with `[memory]` events, name grouping only; docs/stats.md).
    #[serde(flatten)]
    pub memory: Option<MemColumns>,
}

/// What the rows of one kind add up to (`stats --json` `kinds`).
#[derive(Serialize, Clone, Debug)]
pub struct KindJson {
    /// Event kind.
    pub kind: &'static str,
    /// Label for people (`GPU kernels`).
    pub label: &'static str,
    /// Rows of this kind (before `--limit`).
    pub names: usize,
    /// Events.
    pub count: u64,
    /// Σ duration, ns, each thread / stream summed separately.
    pub total_ns: i64,
    /// Σ self time, ns, each thread / stream summed separately.
    pub self_ns: i64,
    /// CPU threads summed over.
    pub threads: usize,
    /// GPU streams summed over.
    pub streams: usize,
    /// Other tracks summed over (XPlane lines, async lanes).
    pub other_tracks: usize,
}

/// Events the table leaves out by default (`stats --json` `left_out`).
#[derive(Serialize, Clone, Debug)]
pub struct LeftOutJson {
    /// The profiler's own events (Kineto `PyTorch Profiler (0)` on `Spans`, ...).
    pub profiler_events: u64,
    /// Their names (at most 4).
    pub names: Vec<String>,
    /// How to include them.
    pub include_with: &'static str,
}

/// The event set a PyTorch capture's default table takes (`stats --json` `event_set`): torch's
/// `key_averages()`.
#[derive(Serialize, Clone, Debug)]
pub struct EventSetJson {
    /// `torch_key_averages`.
    pub preset: &'static str,
    /// Categories with rows.
    pub cats: Vec<String>,
    /// Categories nested without rows (`python_function` where torch's event list has them).
    pub nest_cats: Vec<String>,
    /// The capture's other categories and their events: not in the table.
    pub left_out: Vec<CategoryJson>,
    /// How to see every event.
    pub include_with: &'static str,
}

/// A category of the capture and its events (`stats --json` `categories`, listed when `--cat`
/// matched nothing).
#[derive(Serialize, Clone, Debug)]
pub struct CategoryJson {
    /// Raw category string.
    pub cat: String,
    /// Events of it.
    pub events: u64,
}

/// One capture of `stats --json`.
#[derive(Serialize, Clone, Debug)]
pub struct CaptureStats {
    /// File read.
    pub path: String,
    /// Run name.
    pub run: String,
    /// Host / worker.
    pub host: String,
    /// Why loading failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Kind of the load error (`io`, `not_a_trace`, `truncated`, `corrupt`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<&'static str>,
    /// Wall-clock epoch ns of the capture's zero (its earliest event), when the file says.
    pub zero_epoch_ns: Option<i64>,
    /// The capture's span (earliest event to latest end), ns.
    pub span_ns: i64,
    /// What a row groups: `name`, `kind`, `category`, `hlo_op` or `tf_op` (`--group-by`).
    pub group_by: &'static str,
    /// Σ self time over all rows (before `--limit`), ns: every kind and track summed, see
    /// `kinds` for what it adds up.
    pub total_self_ns: i64,
    /// Number of rows before `--limit`.
    pub names: usize,
    /// Per kind: rows, events, totals and the threads / streams they are summed over.
    pub kinds: Vec<KindJson>,
    /// Events left out by default (absent when none or when shown).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_out: Option<LeftOutJson>,
    /// torch's event set, when the table took it by default (a PyTorch capture, no `--cat`,
    /// `--nest-cat` or `--all-events`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_set: Option<EventSetJson>,
    /// The capture's categories, when `--cat` matched none of its events.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub categories: Option<Vec<CategoryJson>>,
    /// Rows, sorted (kinds apart, in kind order) and limited per kind.
    pub stats: Vec<StatJson>,
    /// CUDA/HIP graphs: one row per graph (its launches starting in the range), absent when
    /// the capture has none (docs/stats.md, "CUDA/HIP graphs").
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub graphs: Vec<crate::cli::stats_graphs::GraphJson>,
}

pub use super::text::ns;

/// Computes the (sorted, per-kind limited) table of one capture.
pub fn capture_stats(
    cap: &CaptureFile,
    loaded: Result<std::sync::Arc<Capture>, LoadError>,
    opts: &StatsOptions,
    sort: SortKey,
    limit: Option<usize>,
) -> CaptureStats {
    let mut out = CaptureStats {
        path: cap.path.display().to_string(),
        run: cap.run.clone(),
        host: cap.host.clone(),
        error: None,
        error_kind: None,
        zero_epoch_ns: None,
        span_ns: 0,
        group_by: opts.group.name(),
        total_self_ns: 0,
        names: 0,
        kinds: Vec::new(),
        left_out: None,
        event_set: None,
        categories: None,
        stats: Vec::new(),
        graphs: Vec::new(),
    };
    let c = match loaded {
        Ok(c) => c,
        Err(e) => {
            out.error = Some(e.to_string());
            out.error_kind = Some(e.kind.name());
            return out;
        }
    };
    out.zero_epoch_ns = c.zero_epoch_ns();
    out.span_ns = ns(c.span.1 - c.span.0);
    let mut t = compute(&c, opts);
    // Lazily read details (XPlane stats, which `--unified` groups by) of a file truncated or
    // rewritten since loading read as empty: say so instead of a table computed without them.
    let reads_stats = opts.unified || matches!(opts.group, GroupBy::HloOp | GroupBy::TfOp);
    if reads_stats && c.source_changed() {
        out.error = Some(format!(
            "{}: {}",
            cap.path.display(),
            crate::formats::mapped::CHANGED_SINCE_LOADING
        ));
        return out;
    }
    // --- memory columns (torch's key_averages rule, analysis::memory::key_averages) ---
    let mem = (opts.group == GroupBy::Name && !opts.unified && opts.range.is_none())
        .then(|| key_averages::compute(&c))
        .filter(|m| m.records > 0);
    // torch's standalone `[memory]` rows: the instant events are rows of their own already
    // (kind `instant`); they get the columns of the records that lie inside no op.
    let mem_of = |name: &str| -> Option<MemColumns> {
        let m = mem.as_ref()?;
        Some(
            m.by_name
                .get(name)
                .or_else(|| m.extra_rows.iter().find(|r| r.0 == name).map(|r| &r.2))
                .copied()
                .unwrap_or_default(),
        )
    };
    // --- end memory columns ---
    if !shows_profiler(opts) {
        let p = profiler_events(&c);
        if p.events > 0 {
            out.left_out = Some(LeftOutJson {
                profiler_events: p.events,
                names: p.names,
                include_with: "--with-profiler",
            });
        }
    }
    if let Some(r) = resolve(&c, opts) {
        let kept = |cat: &str| {
            r.cats.iter().flatten().chain(&r.nest_cats).any(|w| {
                w == cat
                    || w == crate::model::Category::from_cat(cat).canonical()
                    || cat.split(',').any(|p| p.trim() == w)
            })
        };
        out.event_set = Some(EventSetJson {
            preset: "torch_key_averages",
            cats: r.cats.clone().unwrap_or_default(),
            nest_cats: r.nest_cats.clone(),
            left_out: categories(&c)
                .into_iter()
                .filter(|(cat, _)| !kept(cat))
                .map(|(cat, events)| CategoryJson { cat, events })
                .collect(),
            include_with: "--all-events",
        });
    }
    if opts.cats.is_some() && t.rows.is_empty() {
        out.categories = Some(
            categories(&c)
                .into_iter()
                .map(|(cat, events)| CategoryJson { cat, events })
                .collect(),
        );
    }
    out.graphs = crate::cli::stats_graphs::rows(&c, opts.range);
    drop(c);
    sort_rows(&mut t.rows, sort);
    out.total_self_ns = ns(t.total_self_ps);
    out.names = t.rows.len();
    out.kinds = t
        .kinds
        .iter()
        .map(|k| KindJson {
            kind: k.kind.name(),
            label: k.kind.label(),
            names: k.rows,
            count: k.count,
            total_ns: ns(k.total_ps),
            self_ns: ns(k.self_ps),
            threads: k.threads,
            streams: k.streams,
            other_tracks: k.other_tracks,
        })
        .collect();
    let limit = limit.unwrap_or(usize::MAX);
    let mut shown: Option<(EventKind, usize)> = None;
    for r in &t.rows {
        let n = match shown {
            Some((k, n)) if k == r.kind => n,
            _ => 0,
        };
        shown = Some((r.kind, n + 1));
        if n >= limit {
            continue;
        }
        out.stats.push(StatJson {
            name: r.name.clone(),
            kind: r.kind.name(),
            count: r.count,
            total_ns: ns(r.total_ps),
            self_ns: ns(r.self_ps),
            avg_ns: (r.avg_ps() / 1000.0).round() as i64,
            min_ns: r.min_ps.map(ns),
            max_ns: r.max_ps.map(ns),
            self_pct: t.self_pct(r),
            self_device_ns: ns(r.self_dev_ps),
            device_total_ns: ns(r.dev_total_ps),
            // Device rows (kernels, device annotations) allocate nothing: torch's memory
            // columns belong to the host events of the name.
            memory: if r.kind.is_device() {
                None
            } else {
                mem_of(&r.name)
            },
        });
    }
    out
}

/// Renders one capture's table for people: a header line for what is left out, the table
/// (kinds apart), and per kind what its self time adds up.
pub fn render_text(s: &CaptureStats) -> String {
    let mut o = match text::capture_head(&s.path, &s.run, &s.host, "", s.error.as_ref()) {
        Ok(o) => o,
        Err(failed) => return failed,
    };
    if let Some(l) = &s.left_out {
        let names: Vec<String> = l.names.iter().map(|n| clean(n).into_owned()).collect();
        o.push_str(&format!(
            "   left out: the profiler's own spans ({} {}: {}); {} shows them\n",
            l.profiler_events,
            if l.profiler_events == 1 {
                "event"
            } else {
                "events"
            },
            names.join(", "),
            l.include_with
        ));
    }
    if let Some(e) = &s.event_set {
        let nested = if e.nest_cats.is_empty() {
            String::new()
        } else {
            format!(
                "; {} nested for self time, without rows",
                e.nest_cats.join(", ")
            )
        };
        let out: Vec<String> = e
            .left_out
            .iter()
            .take(6)
            .map(|c| {
                let name = if c.cat.is_empty() { "(none)" } else { &c.cat };
                format!("{} {}", clean(name), c.events)
            })
            .collect();
        o.push_str(&format!(
            "   torch's key_averages() table: {}{nested}\n",
            e.cats.join(", ")
        ));
        if !out.is_empty() {
            o.push_str(&format!(
                "   not in it: {}{}; {} shows every event\n",
                out.join(", "),
                if e.left_out.len() > 6 { ", …" } else { "" },
                e.include_with
            ));
        }
    }
    if s.stats.is_empty() {
        o.push_str("   no events match the filters\n");
        if let Some(cats) = &s.categories {
            let list: Vec<String> = cats
                .iter()
                .take(12)
                .map(|c| {
                    let name = if c.cat.is_empty() { "(none)" } else { &c.cat };
                    format!("{} ({})", clean(name), c.events)
                })
                .collect();
            o.push_str(&format!(
                "   categories here, most events first: {}{}\n",
                list.join(", "),
                if cats.len() > 12 { ", …" } else { "" }
            ));
        }
        return o;
    }
    let d = |ns: i64| text::dur(ns as f64 * 1000.0);
    let head = s.group_by.to_uppercase();
    let with_mem = s.stats.iter().any(|r| r.memory.is_some());
    let with_dev = s
        .stats
        .iter()
        .any(|r| r.self_device_ns != 0 || r.device_total_ns != 0);
    let b = |v: i64| {
        if v < 0 {
            format!("-{}", text::bytes(v.unsigned_abs()))
        } else {
            text::bytes(v as u64)
        }
    };
    let kinds_apart = s.kinds.len() > 1 && s.group_by != "kind";
    let mut rows: Vec<Vec<String>> = s
        .stats
        .iter()
        .map(|r| {
            let timed = r.kind != EventKind::Instant.name();
            let t = |v: i64| if timed { d(v) } else { "-".to_string() };
            let mut row = Vec::with_capacity(9);
            if kinds_apart {
                row.push(r.kind.to_string());
            }
            row.extend([
                clean(&r.name).into_owned(),
                r.count.to_string(),
                t(r.total_ns),
                t(r.self_ns),
                if timed {
                    format!("{:.2}%", r.self_pct)
                } else {
                    "-".into()
                },
                t(r.avg_ns),
                r.min_ns.map_or("-".into(), d),
                r.max_ns.map_or("-".into(), d),
            ]);
            if with_dev {
                row.extend([d(r.self_device_ns), d(r.device_total_ns)]);
            }
            if with_mem {
                match r.memory {
                    Some(m) => row.extend(
                        [m.self_cpu_mem, m.cpu_mem, m.self_device_mem, m.device_mem].map(b),
                    ),
                    None => row.extend((0..4).map(|_| "-".to_string())),
                }
            }
            row
        })
        .collect();
    text::fit_column(&mut rows, usize::from(kinds_apart), 60);
    let mut header = Vec::with_capacity(9);
    if kinds_apart {
        header.push(("KIND", Align::Left));
    }
    header.extend([
        (head.as_str(), Align::Left),
        ("COUNT", Align::Right),
        ("TOTAL", Align::Right),
        ("SELF", Align::Right),
        ("SELF %", Align::Right),
        ("AVG", Align::Right),
        ("MIN", Align::Right),
        ("MAX", Align::Right),
    ]);
    if with_dev {
        header.extend([("SELF DEV", Align::Right), ("DEV TOTAL", Align::Right)]);
    }
    if with_mem {
        header.extend([
            ("SELF CPU MEM", Align::Right),
            ("CPU MEM", Align::Right),
            ("SELF DEV MEM", Align::Right),
            ("DEV MEM", Align::Right),
        ]);
    }
    o.push_str(&text::table("   ", &header, &rows));
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    for k in &s.kinds {
        let over = crate::analysis::stats::KindTotal {
            threads: k.threads,
            streams: k.streams,
            other_tracks: k.other_tracks,
            ..Default::default()
        }
        .over();
        let shown = s.stats.iter().filter(|r| r.kind == k.kind).count();
        let rows = match s.group_by {
            "name" => plural(k.names, "name", "names"),
            "category" => plural(k.names, "category", "categories"),
            "kind" => String::new(),
            g => plural(k.names, &format!("{g} group"), &format!("{g} groups")),
        };
        let limited = if shown < k.names {
            format!(" (showing {shown}; --limit to change)")
        } else {
            String::new()
        };
        let sep = if rows.is_empty() { "" } else { "; " };
        if k.kind == EventKind::Instant.name() {
            o.push_str(&format!(
                "   {}: {} {} on {over} (no duration){sep}{rows}{limited}\n",
                k.label,
                k.count,
                if k.count == 1 { "event" } else { "events" }
            ));
        } else {
            o.push_str(&format!(
                "   {}: self time {} summed over {over}{sep}{rows}{limited}; SELF % is a share \
                 of it\n",
                k.label,
                d(k.self_ns)
            ));
        }
    }
    o.push_str(&format!(
        "   capture span {}: threads and streams that run at the same time each add their own \
         time\n",
        d(s.span_ns)
    ));
    o.push_str(&crate::cli::stats_graphs::render(&s.graphs));
    o
}
