//! `tracetui diff A B --align STREAM`: one stream (or thread) of A aligned with its partner in B
//! by event-name sequence (the explorer's aligned timelines, headless): matched / added /
//! removed counts and the matched pairs with the largest Δ.

use super::text::{self, Align, clean};
use crate::analysis::diff::align::AlignOptions;
use crate::analysis::diff::align_tracks::{
    PairStatus, TrackPair, align_pair, pair_status, slice_name, track_pairs,
};
use crate::discover::CaptureFile;
use crate::model::Capture;
use serde::Serialize;

/// One matched pair of `diff --align --json`.
#[derive(Serialize, Clone, Debug)]
pub struct PairJson {
    /// Aligned row (0-based).
    pub row: u32,
    /// Event name.
    pub name: String,
    /// Start of A's event, ns from A's zero.
    pub start_a_ns: f64,
    /// Start of B's event, ns from B's zero.
    pub start_b_ns: f64,
    /// A's duration, ns.
    pub dur_a_ns: f64,
    /// B's duration, ns.
    pub dur_b_ns: f64,
    /// dur_b − dur_a, ns.
    pub delta_ns: f64,
    /// Δ / dur_a × 100 (null when A's event has no duration).
    pub delta_pct: Option<f64>,
}

/// The `diff --align --json` answer.
#[derive(Serialize, Clone, Debug)]
pub struct AlignJson {
    /// Baseline file.
    pub a: String,
    /// Compared file.
    pub b: String,
    /// The aligned tracks (`process / track`; `A ↔ B` when their titles differ).
    pub stream: String,
    /// A GPU stream or device line.
    pub device: bool,
    /// Events (root slices) of A's track.
    pub events_a: usize,
    /// Events of B's track.
    pub events_b: usize,
    /// Aligned pairs with the same name.
    pub matched: usize,
    /// Events only in B.
    pub added: usize,
    /// Events only in A.
    pub removed: usize,
    /// Matched pairs where B takes longer (beyond 2 % of the longer and 100 ns).
    pub slower: usize,
    /// Matched pairs where B is quicker.
    pub faster: usize,
    /// Matched pairs within the noise threshold.
    pub same: usize,
    /// Windows aligned with Myers.
    pub windows: usize,
    /// Windows that needed more than the edit cap and were aligned greedily.
    pub fallback_windows: usize,
    /// Events (A + B) aligned in those windows.
    pub fallback_events: usize,
    /// Matched pairs with the largest |Δ|, largest first.
    pub top: Vec<PairJson>,
    /// Every track pair that could be aligned, in `--align busiest` order.
    pub streams: Vec<String>,
}

/// The pair `want` names: `busiest` (or empty) the first, else an exact title, else the first
/// whose title contains `want` (case-insensitive).
fn choose<'p>(pairs: &'p [TrackPair], want: &str) -> Option<&'p TrackPair> {
    let w = want.trim();
    if w.is_empty() || w.eq_ignore_ascii_case("busiest") {
        return pairs.first();
    }
    let lw = w.to_lowercase();
    pairs
        .iter()
        .find(|p| p.title == w)
        .or_else(|| pairs.iter().find(|p| p.title.to_lowercase().contains(&lw)))
}

/// Aligns `stream` of loaded captures `ca` and `cb` (files `a`, `b`); `top` pairs listed.
pub fn align_streams(
    a: &CaptureFile,
    b: &CaptureFile,
    ca: &Capture,
    cb: &Capture,
    stream: &str,
    top: usize,
) -> Result<AlignJson, String> {
    let pairs = track_pairs(ca, cb);
    let Some(pair) = choose(&pairs, stream).cloned() else {
        let list: Vec<&str> = pairs.iter().take(12).map(|p| p.title.as_str()).collect();
        return Err(if pairs.is_empty() {
            "A and B have no stream or thread in common".to_string()
        } else {
            format!(
                "no stream of A and B matches {stream:?}; they share: {}",
                list.join("; ")
            )
        });
    };
    let sa = align_pair(ca, cb, pair, AlignOptions::default());
    let mut counts = [0usize; 3];
    for op in sa.al.ops() {
        if let crate::analysis::diff::align::Op::Match(x, y) = op {
            let (da, db) = sa.durs(ca, cb, x, y);
            counts[match pair_status(da, db) {
                PairStatus::Same => 0,
                PairStatus::Slower => 1,
                PairStatus::Faster => 2,
            }] += 1;
        }
    }
    let rel = |c: &Capture, i: u32| {
        c.slices
            .start
            .get(i as usize)
            .map_or(0.0, |&s| (s - c.span.0) as f64 / 1e3)
    };
    let top = sa
        .top_deltas(ca, cb, top)
        .into_iter()
        .map(|p| PairJson {
            row: p.row,
            name: slice_name(ca, p.a).to_string(),
            start_a_ns: rel(ca, p.a),
            start_b_ns: rel(cb, p.b),
            dur_a_ns: p.dur_a as f64 / 1e3,
            dur_b_ns: p.dur_b as f64 / 1e3,
            delta_ns: (p.dur_b - p.dur_a) as f64 / 1e3,
            delta_pct: (p.dur_a > 0).then(|| (p.dur_b - p.dur_a) as f64 * 100.0 / p.dur_a as f64),
        })
        .collect();
    let al = &sa.al;
    Ok(AlignJson {
        a: a.path.display().to_string(),
        b: b.path.display().to_string(),
        stream: sa.pair.title.clone(),
        device: sa.pair.device,
        events_a: sa.a_ids.len(),
        events_b: sa.b_ids.len(),
        matched: al.matched,
        added: al.inserted,
        removed: al.deleted,
        slower: counts[1],
        faster: counts[2],
        same: counts[0],
        windows: al.windows,
        fallback_windows: al.fallback_windows,
        fallback_events: al.fallback_events,
        top,
        streams: pairs.iter().map(|p| p.title.clone()).collect(),
    })
}

/// Renders the answer for people.
pub fn render_text(j: &AlignJson) -> String {
    let mut o = format!(
        "A: {}\nB: {}\nstream: {}{}\nevents: A {}  B {}\nmatched {} ({} slower, {} faster, {} same)  added {}  removed {}\n",
        clean(&j.a),
        clean(&j.b),
        clean(&j.stream),
        if j.device { " (device)" } else { "" },
        j.events_a,
        j.events_b,
        j.matched,
        j.slower,
        j.faster,
        j.same,
        j.added,
        j.removed,
    );
    if j.fallback_windows > 0 {
        o.push_str(&format!(
            "{} of {} windows needed more than {} edits: {} events there aligned greedily (valid, maybe not minimal)\n",
            j.fallback_windows,
            j.windows,
            AlignOptions::default().max_d,
            j.fallback_events
        ));
    }
    if j.top.is_empty() {
        return o;
    }
    let d = |ns: f64| text::dur(ns * 1e3);
    let signed = |ns: f64| {
        if ns > 0.0 {
            format!("+{}", d(ns))
        } else if ns < 0.0 {
            format!("-{}", d(-ns))
        } else {
            "0".into()
        }
    };
    let rows: Vec<Vec<String>> = j
        .top
        .iter()
        .map(|p| {
            vec![
                p.row.to_string(),
                text::fit(&clean(&p.name), 60).into_owned(),
                d(p.start_a_ns),
                d(p.dur_a_ns),
                d(p.dur_b_ns),
                signed(p.delta_ns),
                p.delta_pct.map_or("-".into(), |x| format!("{x:+.1}%")),
            ]
        })
        .collect();
    o.push_str("largest Δ of the matched pairs:\n");
    o.push_str(&text::table(
        "   ",
        &[
            ("ROW", Align::Right),
            ("NAME", Align::Left),
            ("AT (A)", Align::Right),
            ("DUR A", Align::Right),
            ("DUR B", Align::Right),
            ("DELTA", Align::Right),
            ("DELTA %", Align::Right),
        ],
        &rows,
    ));
    o
}

/// Loads `a` and `b` (two at a time) and aligns `stream` of them.
pub fn compute(
    a: &CaptureFile,
    b: &CaptureFile,
    stream: &str,
    top: usize,
) -> Result<AlignJson, String> {
    let caps = [a, b];
    let mut loaded = super::load::map_loaded(&caps, 2, |cap, l| {
        l.map_err(|e| format!("{}: {e}", cap.path.display()))
    });
    let cb = loaded.pop().ok_or("B was not loaded")??;
    let ca = loaded.pop().ok_or("A was not loaded")??;
    align_streams(a, b, &ca, &cb, stream, top)
}
