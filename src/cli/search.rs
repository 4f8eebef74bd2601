//! `tracetui search`: names matching a query in each capture, ranked as in the explorer (see
//! [`crate::analysis::search`]), with count / total / self, the tracks they occur on and their
//! first occurrences.

use super::report::report;
use clap::Args;
use std::path::PathBuf;

use super::text::{self, Align, clean};
use crate::analysis::search::{
    EventFilter, Hit, Occurrence, Occurrences, Query, SearchEngine, first_of_names, pattern_group,
};
use crate::discover::CaptureFile;
use crate::formats::LoadError;
use crate::index::postings::Postings;
use crate::model::Capture;
use serde::Serialize;

pub const SEARCH_AFTER: &str = "\
Examples:
  tracetui search trace.pt.trace.json gemm              fuzzy (fzf-style), ranked by score then total
  tracetui search logs/ 'mm cat:kernel track:stream'    with prefix filters
  tracetui search vm.xplane.pb 'proc:GPU arg:hlo_op=fusion' --limit 5
  tracetui search trace.json '^aten::(mm|addmm)$' --regex --json

Filters: cat:TEXT track:TEXT proc:TEXT (case-insensitive substrings), arg:KEY or arg:KEY=TEXT;
quote values with spaces: track:\"stream 7\". Every track, all time is searched. Query syntax and
ranking: docs/search.md. No match exits 0; an invalid regex exits 2.";

/// Arguments of `search`.
#[derive(Args, Debug)]
pub struct SearchArgs {
    /// Log dir or capture file
    pub path: PathBuf,
    /// Text to match plus optional filters (cat:, track:, proc:, arg:KEY=VALUE)
    pub query: String,
    /// Match the text as a regular expression instead of fuzzily
    #[arg(long)]
    pub regex: bool,
    /// Print JSON (stable shape, see docs/cli.md) instead of text
    #[arg(long)]
    pub json: bool,
    /// Show at most N names per capture [default: 20 for text, all for --json]
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
}

pub fn cmd_search(a: &SearchArgs) -> i32 {
    use crate::analysis::search::{Matcher, Mode, Query};
    let mode = if a.regex { Mode::Regex } else { Mode::Fuzzy };
    let query = Query::parse(&a.query, mode);
    if let Err(e) = Matcher::new(&query) {
        // The regex crate's message spans lines (pattern, caret, reason): keep them as lines.
        let text = e.to_string();
        let lines: Vec<_> = text.lines().map(clean).collect();
        eprintln!("tracetui: error: {}", lines.join("\n"));
        return 2;
    }
    let limit = a.limit.or(if a.json { None } else { Some(20) });
    report(
        &a.path,
        a.json,
        |cap, loaded| capture_search(cap, loaded, &query, limit),
        render_text,
        |s| (s.path.as_str(), s.error.as_ref()),
    )
}

/// First occurrences listed per name.
pub const FIRST_SHOWN: usize = 3;

/// One occurrence of `search --json`.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct OccurrenceJson {
    /// Slice id (`tracetui event PATH ID` gives its details); absent for an instant event.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<u32>,
    /// `process / track` display names.
    pub track: String,
    /// Start, integer ns from the capture's zero (its earliest event; never negative).
    pub start_ns: i64,
    /// Duration, ns (0 for an instant event).
    pub dur_ns: i64,
}

/// One matching name of `search --json`.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct ResultJson {
    /// Event name.
    pub name: String,
    /// Match score (higher is better; 0 in regex mode and for an empty text).
    pub score: i64,
    /// Events passing the filters (aggregated XPlane events count their occurrences; instant
    /// events count, with no duration).
    pub count: u64,
    /// Σ duration, ns.
    pub total_ns: i64,
    /// Σ self time, ns.
    pub self_ns: i64,
    /// `process / track` of every track it occurs on (track and category filters applied).
    pub tracks: Vec<String>,
    /// Its first timed occurrences (at most 3), in time order.
    pub first: Vec<OccurrenceJson>,
}

/// One capture of `search --json`.
#[derive(Serialize, Clone, Debug)]
pub struct CaptureSearch {
    /// File read.
    pub path: String,
    /// Run name.
    pub run: String,
    /// Host / worker.
    pub host: String,
    /// Why loading failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Wall-clock epoch ns of the capture's zero (its earliest event), when the file says.
    pub zero_epoch_ns: Option<i64>,
    /// When the best matches are many names of one pattern (`ProfilerStep#1009` … `#1014`):
    /// the pattern, its names and their occurrences walked as one list in time order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern: Option<PatternJson>,
    /// Distinct names in the capture.
    pub names: usize,
    /// Matching names before `--limit`.
    pub matches: usize,
    /// Ranked results, limited.
    pub results: Vec<ResultJson>,
}

/// The names of one pattern that the best matches share (`search --json` `pattern`).
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct PatternJson {
    /// The pattern: digit runs as `N` (`ProfilerStep#N`).
    pub pattern: String,
    /// Its matching names.
    pub names: usize,
    /// Their events.
    pub count: u64,
    /// Σ duration, ns.
    pub total_ns: i64,
    /// The first occurrences over all of them (at most 3), in time order.
    pub first: Vec<OccurrenceJson>,
}

use super::stats::ns;

fn track_label(c: &Capture, t: u32) -> String {
    match c.tracks.get(t as usize) {
        Some(tr) => format!("{} / {}", c.process_title(tr.process), c.track_name(t)),
        None => String::new(),
    }
}

/// Tracks of a hit: from the engine's groups, or from its events when `arg:` filters apply.
fn tracks_of(
    c: &Capture,
    engine: &SearchEngine,
    postings: &Postings,
    filter: &EventFilter,
    h: &Hit,
) -> Vec<u32> {
    if !filter.has_args() {
        return engine.tracks(h.entry, filter);
    }
    let occ = Occurrences::of_names(c, postings, &[h.name], filter);
    let mut t: Vec<u32> = occ.ids().iter().map(|&id| c.track_of(id)).collect();
    t.sort_unstable();
    t.dedup();
    t
}

/// Runs `query` (already checked to compile) on one loaded capture.
pub fn capture_search(
    cap: &CaptureFile,
    loaded: Result<std::sync::Arc<Capture>, LoadError>,
    query: &Query,
    limit: Option<usize>,
) -> CaptureSearch {
    let mut out = CaptureSearch {
        path: cap.path.display().to_string(),
        run: cap.run.clone(),
        host: cap.host.clone(),
        error: None,
        zero_epoch_ns: None,
        pattern: None,
        names: 0,
        matches: 0,
        results: Vec::new(),
    };
    let c = match loaded {
        Ok(c) => c,
        Err(e) => {
            out.error = Some(e.to_string());
            return out;
        }
    };
    let engine = SearchEngine::build(&c);
    let postings = Postings::build(&c.slices, c.strings.len());
    let limit = limit.unwrap_or(usize::MAX);
    let mut r = match engine.search(&c, &postings, query, None, limit) {
        Ok(r) => r,
        Err(e) => {
            out.error = Some(e.to_string());
            return out;
        }
    };
    out.zero_epoch_ns = c.zero_epoch_ns();
    out.names = engine.len();
    out.matches = r.hits.len();
    let z = c.time_zero();
    let occurrence = |o: Occurrence| OccurrenceJson {
        id: o.slice,
        track: track_label(&c, o.track),
        start_ns: ns(o.start - z),
        dur_ns: ns(o.dur),
    };
    r.rank_top(&c, r.hits.len());
    if let Some(p) = pattern_group(&c, &r.hits) {
        out.pattern = Some(PatternJson {
            pattern: p.pattern.clone(),
            names: p.names.len(),
            count: p.count,
            total_ns: ns(p.total),
            first: first_of_names(&c, &postings, &p.names, &r.filter, FIRST_SHOWN)
                .into_iter()
                .map(occurrence)
                .collect(),
        });
    }
    let top = r.top(&c, limit).to_vec();
    out.results = top
        .iter()
        .map(|h| ResultJson {
            name: c.strings.get(h.name).to_string(),
            score: h.score,
            count: h.count,
            total_ns: ns(h.total),
            self_ns: ns(h.self_ps),
            tracks: tracks_of(&c, &engine, &postings, &r.filter, h)
                .into_iter()
                .map(|t| track_label(&c, t))
                .collect(),
            first: first_of_names(&c, &postings, &[h.name], &r.filter, FIRST_SHOWN)
                .into_iter()
                .map(occurrence)
                .collect(),
        })
        .collect();
    out
}

/// Renders one capture's results for people.
pub fn render_text(s: &CaptureSearch) -> String {
    let mut o = match text::capture_head(&s.path, &s.run, &s.host, "", s.error.as_ref()) {
        Ok(o) => o,
        Err(failed) => return failed,
    };
    if s.results.is_empty() {
        o.push_str(&format!("   no match among {} names\n", s.names));
        return o;
    }
    let d = |v: i64| text::dur(v as f64 * 1000.0);
    let at =
        |f: &OccurrenceJson| format!("{} @ {} ({})", clean(&f.track), d(f.start_ns), d(f.dur_ns));
    if let Some(p) = &s.pattern {
        o.push_str(&format!(
            "   {} names match the pattern {} ({} events, total {}): walked as one list in \
             time order, first {}\n",
            p.names,
            clean(&p.pattern),
            p.count,
            d(p.total_ns),
            p.first.first().map_or("-".to_string(), at)
        ));
    }
    let mut rows: Vec<Vec<String>> = s
        .results
        .iter()
        .map(|r| {
            let first = r.first.first().map_or("-".to_string(), at);
            vec![
                clean(&r.name).into_owned(),
                r.count.to_string(),
                d(r.total_ns),
                d(r.self_ns),
                r.tracks.len().to_string(),
                first,
            ]
        })
        .collect();
    text::fit_column(&mut rows, 0, 60);
    o.push_str(&text::table(
        "   ",
        &[
            ("NAME", Align::Left),
            ("COUNT", Align::Right),
            ("TOTAL", Align::Right),
            ("SELF", Align::Right),
            ("TRACKS", Align::Right),
            ("FIRST", Align::Left),
        ],
        &rows,
    ));
    o.push_str(&format!(
        "   {} of {} names match{}\n",
        s.matches,
        s.names,
        if s.matches > s.results.len() {
            format!(" (showing {}; --limit to change)", s.results.len())
        } else {
            String::new()
        }
    ));
    o
}
