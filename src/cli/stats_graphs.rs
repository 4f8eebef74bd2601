//! `stats`' CUDA/HIP graph rows: one row per graph (host op around its launches + activity
//! sequence, [`GraphLaunches::groups`]) with its launches, kernels per launch, device time and
//! the host op; shown after the table in every event set, torch's default one included (torch's
//! `key_averages` has no such row: the graph's kernels are rows of their own there).

use super::text::{self, Align, clean, ns};
use crate::analysis::graphs::GraphLaunches;
use crate::model::{Capture, Ps};
use serde::Serialize;

/// One graph of `stats --json` `graphs`. Times are integer ns.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct GraphJson {
    /// `graph (N kernels) @ host op`.
    pub name: String,
    /// The CPU op or user annotation around the launches (`ProfilerStep*` for steps; empty
    /// when none).
    pub host_op: String,
    /// The launch call (`cudaGraphLaunch`, `hipGraphLaunch`, ...).
    pub launch: String,
    /// Launches (replays).
    pub launches: usize,
    /// Device activities per launch.
    pub kernels_per_launch: usize,
    /// Σ activity time over the launches, ns.
    pub device_ns: i64,
    /// Σ device span (first activity start → last end) over the launches, ns.
    pub span_ns: i64,
    /// Σ host launch-call time, ns.
    pub launch_ns: i64,
    /// Share of the capture's device activity time, percent.
    pub device_pct: f64,
}

/// The graph rows of `c`, for launches starting in `range` (all when `None`); busiest first.
pub fn rows(c: &Capture, range: Option<(Ps, Ps)>) -> Vec<GraphJson> {
    if !crate::analysis::graphs::may_have_graphs(c) {
        return Vec::new();
    }
    let links = crate::analysis::flame::DeviceLinks::of(c);
    let mut g = GraphLaunches::of_links(c, &links);
    if g.is_empty() {
        return Vec::new();
    }
    if let Some((a, z)) = range {
        g.launches.retain(|l| {
            let st = c.slices.start[l.launch as usize];
            st >= a && st < z
        });
    }
    let all_dev: Ps = device_busy(c, &links);
    let mut out: Vec<GraphJson> = g
        .groups(c)
        .into_iter()
        .map(|gr| GraphJson {
            name: gr.label(),
            host_op: gr.host_op.clone(),
            launch: gr.launch_name.clone(),
            launches: gr.launches.len(),
            kernels_per_launch: gr.kernels_per_launch,
            device_ns: ns(gr.busy_ps),
            span_ns: ns(gr.span_ps),
            launch_ns: ns(gr.launch_ps),
            device_pct: if all_dev > 0 {
                gr.busy_ps as f64 * 100.0 / all_dev as f64
            } else {
                0.0
            },
        })
        .collect();
    out.sort_by_key(|r| std::cmp::Reverse(r.device_ns));
    out
}

/// Σ duration of the capture's device activities (every linked or unlinked one), ps.
fn device_busy(c: &Capture, l: &crate::analysis::flame::DeviceLinks) -> Ps {
    l.pairs
        .iter()
        .map(|p| p.1)
        .chain(l.unlinked.iter().copied())
        .map(|a| c.slices.dur.get(a as usize).copied().unwrap_or(0))
        .sum()
}

/// The graph section of `stats`' text (empty without graphs).
pub fn render(rows: &[GraphJson]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let d = |ns: i64| text::dur(ns as f64 * 1000.0);
    let mut table: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                clean(&r.name).into_owned(),
                r.launches.to_string(),
                r.kernels_per_launch.to_string(),
                d(r.device_ns),
                format!("{:.1}%", r.device_pct),
                d(r.span_ns),
                d(r.launch_ns),
                clean(&r.launch).into_owned(),
            ]
        })
        .collect();
    text::fit_column(&mut table, 0, 60);
    let header = [
        ("GRAPH", Align::Left),
        ("LAUNCHES", Align::Right),
        ("KERNELS/LAUNCH", Align::Right),
        ("DEVICE", Align::Right),
        ("DEV %", Align::Right),
        ("SPAN", Align::Right),
        ("LAUNCH CPU", Align::Right),
        ("VIA", Align::Left),
    ];
    let mut o = String::from(
        "\n   CUDA/HIP graphs (one row per graph: host op around the launch + kernel sequence):\n",
    );
    o.push_str(&text::table("   ", &header, &table));
    o.push_str(
        "   DEVICE: Σ kernel time of its launches (DEV %: of all device activity time); SPAN: \
         first kernel start to last end\n",
    );
    o
}
