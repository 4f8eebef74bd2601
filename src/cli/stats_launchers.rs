//! `stats --launchers`: device time per kernel launcher, TraceLens's "direct kernel time"
//! (`analysis::launchers`), and the share of device time a `cpu_op` launched.

use super::report::report;
use super::text::{self, Align, clean};
use crate::analysis::launchers::launchers;
use crate::discover::CaptureFile;
use crate::formats::LoadError;
use crate::model::Capture;
use serde::Serialize;
use std::path::Path;

/// One launcher row (JSON: integer ns).
#[derive(Serialize)]
pub struct LauncherJson {
    /// Launcher name.
    pub name: String,
    /// `cpu_op`, or `runtime` for a launch call with no op above it.
    pub kind: &'static str,
    /// Launcher instances that launched something.
    pub count: u64,
    /// Σ busy time of their activities, ns.
    pub direct_ns: i64,
    /// Activities launched.
    pub kernels: u64,
}

/// The report of one capture.
#[derive(Serialize)]
pub struct LaunchersReport {
    /// The capture file.
    pub path: String,
    /// Load error, if any.
    pub error: Option<String>,
    /// Σ device activity time, ns.
    pub device_ns: i64,
    /// Of it, launched by a `cpu_op`, ns.
    pub op_ns: i64,
    /// Of it, with no host launch, ns.
    pub unlinked_ns: i64,
    /// Graph capture merge notes (one per replayed graph launch).
    pub graph_notes: Vec<String>,
    /// Rows, largest direct time first.
    pub launchers: Vec<LauncherJson>,
}

fn one(
    cap: &CaptureFile,
    loaded: Result<std::sync::Arc<Capture>, LoadError>,
    limit: Option<usize>,
) -> LaunchersReport {
    let mut out = LaunchersReport {
        path: cap.path.display().to_string(),
        error: None,
        device_ns: 0,
        op_ns: 0,
        unlinked_ns: 0,
        graph_notes: Vec::new(),
        launchers: Vec::new(),
    };
    let c = match loaded {
        Ok(c) => c,
        Err(e) => {
            out.error = Some(e.to_string());
            return out;
        }
    };
    let l = launchers(&c);
    out.device_ns = l.device_ps / 1000;
    out.op_ns = l.op_ps / 1000;
    out.unlinked_ns = l.unlinked_ps / 1000;
    out.graph_notes = c.graph_replay.notes.clone();
    out.launchers = l
        .rows
        .into_iter()
        .take(limit.unwrap_or(usize::MAX))
        .map(|r| LauncherJson {
            name: r.name,
            kind: if r.cpu_op { "cpu_op" } else { "runtime" },
            count: r.count,
            direct_ns: r.direct_ps / 1000,
            kernels: r.kernels,
        })
        .collect();
    out
}

fn render(r: &LaunchersReport) -> String {
    let mut s = format!("{}\n", clean(&r.path));
    if let Some(e) = &r.error {
        s.push_str(&format!("  error: {}\n", clean(e)));
        return s;
    }
    let pct = |n: i64| {
        if r.device_ns > 0 {
            100.0 * n as f64 / r.device_ns as f64
        } else {
            0.0
        }
    };
    s.push_str(&format!(
        "  device time {}: launched by a cpu_op {} ({:.1} %), no host launch {} ({:.1} %)\n",
        text::dur(r.device_ns as f64 * 1e3),
        text::dur(r.op_ns as f64 * 1e3),
        pct(r.op_ns),
        text::dur(r.unlinked_ns as f64 * 1e3),
        pct(r.unlinked_ns)
    ));
    for n in &r.graph_notes {
        s.push_str(&format!("  graph: {}\n", clean(n)));
    }
    let rows: Vec<Vec<String>> = r
        .launchers
        .iter()
        .map(|l| {
            vec![
                clean(&l.name).into_owned(),
                l.kind.to_string(),
                l.count.to_string(),
                l.kernels.to_string(),
                text::dur(l.direct_ns as f64 * 1e3),
            ]
        })
        .collect();
    s.push_str(&text::table(
        "  ",
        &[
            ("launcher", Align::Left),
            ("kind", Align::Left),
            ("count", Align::Right),
            ("kernels", Align::Right),
            ("direct device", Align::Right),
        ],
        &rows,
    ));
    s
}

/// Runs `stats --launchers` on the captures under `path`, at most `limit` rows each (text: 40).
pub fn cmd_launchers(path: &Path, json: bool, limit: Option<usize>) -> i32 {
    let limit = limit.or(if json { None } else { Some(40) });
    report(
        path,
        json,
        |cap, loaded| one(cap, loaded, limit),
        render,
        |r| (r.path.as_str(), r.error.as_ref()),
    )
}
