//! `tracetui stats`: per-name statistics tables (see [`crate::analysis::stats`]).

use super::text::{self, Align, clean};
use crate::analysis::memory::key_averages::{self, MemColumns};
use crate::analysis::stats::{GroupBy, SortKey, StatsOptions, compute, sort_rows};
use crate::discover::CaptureFile;
use crate::formats::LoadError;
use crate::model::Capture;
use serde::Serialize;

/// `stats --group-by`: what one row groups.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum GroupArg {
    /// Event name (`ProfilerStep#N` as `ProfilerStep*`)
    #[default]
    Name,
    /// Raw category string
    Category,
    /// XPlane `hlo_op` stat ("(none)" row for events without it)
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
            GroupArg::Category => GroupBy::Category,
            GroupArg::HloOp => GroupBy::HloOp,
            GroupArg::TfOp => GroupBy::TfOp,
        }
    }
}

/// One row of `stats --json`.
#[derive(Serialize, Clone, Debug)]
pub struct StatJson {
    /// Name (or unified name / `ProfilerStep*` group).
    pub name: String,
    /// Events (aggregated events count their occurrences).
    pub count: u64,
    /// Σ duration, ns.
    pub total_ns: f64,
    /// Σ self time, ns.
    pub self_ns: f64,
    /// total / count, ns.
    pub avg_ns: f64,
    /// Shortest timed event, ns (null when only aggregated events).
    pub min_ns: Option<f64>,
    /// Longest timed event, ns.
    pub max_ns: Option<f64>,
    /// Share of all self time of the capture, percent.
    pub self_pct: f64,
    /// torch's memory columns `self_cpu_mem`, `cpu_mem`, `self_device_mem`, `device_mem` (bytes;
    /// captures with `[memory]` events, name grouping only; docs/stats.md).
    #[serde(flatten)]
    pub memory: Option<MemColumns>,
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
    /// What a row groups: `name`, `category`, `hlo_op` or `tf_op` (`--group-by`).
    pub group_by: &'static str,
    /// Σ self time over all rows (before `--limit`), ns.
    pub total_self_ns: f64,
    /// Number of rows before `--limit`.
    pub names: usize,
    /// Rows, sorted and limited.
    pub stats: Vec<StatJson>,
}

fn ns(ps: i64) -> f64 {
    ps as f64 / 1000.0
}

/// Computes the (sorted, limited) table of one capture.
pub fn capture_stats(
    cap: &CaptureFile,
    loaded: Result<Capture, LoadError>,
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
        group_by: opts.group.name(),
        total_self_ns: 0.0,
        names: 0,
        stats: Vec::new(),
    };
    let c = match loaded {
        Ok(c) => c,
        Err(e) => {
            out.error = Some(e.to_string());
            out.error_kind = Some(e.kind.name());
            return out;
        }
    };
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
    if let Some(m) = &mem {
        for (name, count, _) in &m.extra_rows {
            t.rows.push(crate::analysis::stats::StatRow {
                name: name.clone(),
                count: *count,
                total_ps: 0,
                self_ps: 0,
                min_ps: None,
                max_ps: None,
            });
        }
    }
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
    drop(c);
    sort_rows(&mut t.rows, sort);
    out.total_self_ns = ns(t.total_self_ps);
    out.names = t.rows.len();
    out.stats = t
        .rows
        .iter()
        .take(limit.unwrap_or(usize::MAX))
        .map(|r| StatJson {
            name: r.name.clone(),
            count: r.count,
            total_ns: ns(r.total_ps),
            self_ns: ns(r.self_ps),
            avg_ns: r.avg_ps() / 1000.0,
            min_ns: r.min_ps.map(ns),
            max_ns: r.max_ps.map(ns),
            self_pct: t.self_pct(r),
            memory: mem_of(&r.name),
        })
        .collect();
    out
}

/// Renders one capture's table for people.
pub fn render_text(s: &CaptureStats) -> String {
    let mut o = match text::capture_head(&s.path, &s.run, &s.host, "", s.error.as_ref()) {
        Ok(o) => o,
        Err(failed) => return failed,
    };
    if s.stats.is_empty() {
        o.push_str("   no events match the filters\n");
        return o;
    }
    let d = |v: f64| text::dur(v * 1000.0);
    let head = s.group_by.to_uppercase();
    let with_mem = s.stats.iter().any(|r| r.memory.is_some());
    let b = |v: i64| {
        if v < 0 {
            format!("-{}", text::bytes(v.unsigned_abs()))
        } else {
            text::bytes(v as u64)
        }
    };
    let rows: Vec<Vec<String>> =
        s.stats
            .iter()
            .map(|r| {
                vec![
                    text::fit(&clean(&r.name), 60).into_owned(),
                    r.count.to_string(),
                    d(r.total_ns),
                    d(r.self_ns),
                    format!("{:.2}%", r.self_pct),
                    d(r.avg_ns),
                    r.min_ns.map_or("-".into(), d),
                    r.max_ns.map_or("-".into(), d),
                ]
                .into_iter()
                .chain(r.memory.filter(|_| with_mem).iter().flat_map(|m| {
                    [m.self_cpu_mem, m.cpu_mem, m.self_device_mem, m.device_mem].map(b)
                }))
                .collect()
            })
            .collect();
    let mut header = vec![
        (head.as_str(), Align::Left),
        ("COUNT", Align::Right),
        ("TOTAL", Align::Right),
        ("SELF", Align::Right),
        ("SELF %", Align::Right),
        ("AVG", Align::Right),
        ("MIN", Align::Right),
        ("MAX", Align::Right),
    ];
    if with_mem {
        header.extend([
            ("SELF CPU MEM", Align::Right),
            ("CPU MEM", Align::Right),
            ("SELF DEV MEM", Align::Right),
            ("DEV MEM", Align::Right),
        ]);
    }
    o.push_str(&text::table("   ", &header, &rows));
    o.push_str(&format!(
        "   self time total: {}; {} {}{}\n",
        d(s.total_self_ns),
        s.names,
        match s.group_by {
            "name" => "names".to_string(),
            "category" => "categories".to_string(),
            g => format!("{g} groups"),
        },
        if s.names > s.stats.len() {
            format!(" (showing {}; --limit to change)", s.stats.len())
        } else {
            String::new()
        }
    ));
    o
}
