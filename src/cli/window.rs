//! `tracetui window PATH --from T --to T [--track REGEX]`: the events (slices) of a capture, or
//! of the tracks whose `process / track` name matches, that overlap a time range, in time order,
//! found through the explorer's index. The MCP `window` tool prints its `--json`, paged.

use super::parse::{parse_regex, parse_time};
use super::report::{emit, fail, one_loaded, to_json};
use super::text::clean;
use crate::model::Ps;
use crate::ui::loader::Loaded;
use clap::Args;
use regex::Regex;
use serde::Serialize;
use std::path::PathBuf;

pub const WINDOW_AFTER: &str = "\
Examples:
  tracetui window run.pt.trace.json.gz --from 10ms --to 12ms        every event in 10–12 ms
  tracetui window run.pt.trace.json.gz --track 'stream 7' --from 10ms --to 12ms --json
  tracetui window run.pt.trace.json.gz --from 0 --to 1s --min-dur 1ms --max-depth 0

Times are from the capture's zero (its earliest event), as `search` and `event` print them;
a bare number is ns. Events overlapping the range are listed (slices; counters and instant
events are not). `tracetui event PATH ID` gives one event's details.";

/// Arguments of `window`.
#[derive(Args, Debug)]
pub struct WindowArgs {
    /// Capture file (or a dir holding one capture)
    pub path: PathBuf,
    /// Start of the range, from the capture's zero (1.5ms, 200us; bare numbers are ns) [default: 0]
    #[arg(long, value_name = "TIME", value_parser = parse_time, allow_hyphen_values = true)]
    pub from: Option<i64>,
    /// End of the range, from the capture's zero [default: the capture's end]
    #[arg(long, value_name = "TIME", value_parser = parse_time, allow_hyphen_values = true)]
    pub to: Option<i64>,
    /// Only tracks whose `process / track` name matches this regex [default: every track]
    #[arg(long, value_name = "REGEX", value_parser = parse_regex)]
    pub track: Option<Regex>,
    /// Only events at most this deep on their track (0: outermost)
    #[arg(long, value_name = "N")]
    pub max_depth: Option<u16>,
    /// Only events lasting at least this long (1ms, 50us; bare numbers are ns)
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub min_dur: Option<i64>,
    /// Print at most N events [default: all]
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Print JSON instead of text
    #[arg(long)]
    pub json: bool,
}

/// One event of `window --json`.
#[derive(Serialize, Debug, PartialEq)]
pub struct WindowEvent {
    /// Slice id (`tracetui event PATH ID` gives its details).
    pub id: u32,
    /// Name.
    pub name: String,
    /// `process / track`.
    pub track: String,
    /// Nesting depth on its track (0: outermost).
    pub depth: u16,
    /// Start, integer ns from the capture's zero.
    pub start_ns: i64,
    /// Duration, ns.
    pub dur_ns: i64,
}

/// `window --json`.
#[derive(Serialize, Debug)]
pub struct WindowJson {
    /// File read.
    pub path: String,
    /// Run name.
    pub run: String,
    /// Host / worker.
    pub host: String,
    /// The range, ns from the capture's zero.
    pub from_ns: i64,
    /// End of the range, ns from the capture's zero.
    pub to_ns: i64,
    /// Tracks looked at (matching `--track`, with slices).
    pub tracks_matched: usize,
    /// Events overlapping the range (filters applied) before `--limit`.
    pub total: usize,
    /// The events in time order (then track, then id).
    pub events: Vec<WindowEvent>,
}

fn ns(ps: Ps) -> i64 {
    ps.saturating_add(500).div_euclid(1000)
}

/// The slices of `l` overlapping `[from, to)` (model ps; an empty range `[t, t]` finds the
/// slices around `t`) on the tracks whose `process / track` name matches `track`, at most
/// `max_depth` deep and lasting at least `min_dur` ps, in time order (then track, then id);
/// with the number of tracks looked at. Found through the explorer's interval index.
pub fn select(
    l: &Loaded,
    from: Ps,
    to: Ps,
    track: Option<&Regex>,
    max_depth: Option<u16>,
    min_dur: Option<Ps>,
) -> (usize, Vec<u32>) {
    let c = &l.cap;
    let mut ids: Vec<u32> = Vec::new();
    let mut matched = 0;
    for (t, tr) in c.tracks.iter().enumerate() {
        if tr.slices.0 == tr.slices.1 {
            continue;
        }
        let t = t as u32;
        let label = format!("{} / {}", c.process_title(tr.process), c.track_name(t));
        if track.is_some_and(|re| !re.is_match(&label)) {
            continue;
        }
        matched += 1;
        let end = to.max(from.saturating_add(1));
        for lane in 0..l.index.lane_count(t) {
            ids.extend(
                l.index
                    .window(c, t, lane, from, end)
                    .iter()
                    .copied()
                    .filter(|&id| {
                        max_depth.is_none_or(|m| c.depth(id) <= m)
                            && min_dur.is_none_or(|m| c.slices.dur[id as usize] >= m)
                    }),
            );
        }
    }
    let s = &c.slices;
    ids.sort_unstable_by_key(|&id| (s.start[id as usize], c.track_of(id), id));
    ids.dedup();
    (matched, ids)
}

/// Runs `window`.
pub fn cmd_window(a: &WindowArgs) -> i32 {
    let (cap, l) = match one_loaded("window", &a.path) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let c = &l.cap;
    let z = c.time_zero();
    let span_end = (0..c.slices.len())
        .map(|i| c.slices.end(i))
        .max()
        .unwrap_or(z);
    let from = z.saturating_add(a.from.unwrap_or(0));
    let to = a.to.map_or(span_end, |t| z.saturating_add(t));
    if to < from {
        return fail("window: --to is before --from");
    }
    let (matched, mut ids) = select(&l, from, to, a.track.as_ref(), a.max_depth, a.min_dur);
    let total = ids.len();
    ids.truncate(a.limit.unwrap_or(usize::MAX));
    let out = WindowJson {
        path: cap.path.display().to_string(),
        run: cap.run.clone(),
        host: cap.host.clone(),
        from_ns: ns(from - z),
        to_ns: ns(to - z),
        tracks_matched: matched,
        total,
        events: ids
            .iter()
            .map(|&id| {
                let r = crate::ui::event_info::event_ref(c, id);
                WindowEvent {
                    id,
                    name: r.name,
                    track: r.track,
                    depth: c.depth(id),
                    start_ns: r.start_ns,
                    dur_ns: r.dur_ns,
                }
            })
            .collect(),
    };
    let printed = if a.json {
        emit(&to_json(&out))
    } else {
        emit(&render_text(&out))
    };
    match printed {
        Ok(()) => 0,
        Err(code) => code,
    }
}

/// The events for people: one a line, indented by depth.
pub fn render_text(o: &WindowJson) -> String {
    let d = |v: i64| super::text::dur(v as f64 * 1000.0);
    let mut s = format!(
        "{}\n   {} events in {} → {} on {} tracks{}\n",
        clean(&o.path),
        o.total,
        d(o.from_ns),
        d(o.to_ns),
        o.tracks_matched,
        if o.events.len() < o.total {
            format!(" (first {} shown)", o.events.len())
        } else {
            String::new()
        }
    );
    for e in &o.events {
        s.push_str(&format!(
            "   {:>12} {:>10}  #{:<8} {}{} · {}\n",
            d(e.start_ns),
            d(e.dur_ns),
            e.id,
            "  ".repeat(usize::from(e.depth.min(16))),
            clean(&e.name),
            clean(&e.track)
        ));
    }
    s
}
