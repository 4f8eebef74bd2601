//! The critical path of the step under the cursor (`W`): the events the path passes, in path
//! order (`#`), with their time on the path, kind, track and start (each gap between operators
//! its own row, with the gap's own start); sort by "on path" for the top
//! contributors. `Enter` makes the path the hit list — drawn, the rest dimmed (`D` undims) —
//! and jumps to the row's event; `n` / `N` then walk along the path (docs/critical-path.md).

use super::table::{Column, Key, Row, Source, TableView, Target};
use crate::analysis::critical::{self, Mode, Options, StepPath, bounds_sentence};
use crate::analysis::steps::{StepSource, Steps};
use crate::model::{Capture, NO_SLICE, Ps};
use crate::text::sanitize;
use crate::ui::action::Action;
use crate::ui::hits::HitList;
use crate::ui::keymap::ViewKind;
use crate::ui::msg::Msg;
use crate::ui::ruler::format_dur;
use crate::ui::state::State;
use crate::ui::steps_row::at_or_before;
use rustc_hash::FxHashSet;

/// The critical path of the step at time `t` of `c` (the whole capture when it has no steps).
pub fn path_at(c: &Capture, steps: &Steps, t: Ps) -> Option<StepPath> {
    let k = steps.at(t).or_else(|| at_or_before(steps, t)).unwrap_or(0);
    let step = *steps.steps.get(k)?;
    let one = Steps {
        source: steps.source,
        steps: vec![step],
    };
    let opts = Options {
        mode: Mode::Full,
        zero_weight_launch_edges: false,
        top: 10,
    };
    critical::analyze(c, &one, &opts, None).into_iter().next()
}

/// The events of a path in path order with their time on it: (event, ps, kind name). Each gap
/// between operators is its own entry (its event: the slice around it, or `NO_SLICE`); see
/// [`StepPath::rows`].
pub fn path_events(c: &Capture, p: &StepPath) -> Vec<(u32, Ps, &'static str)> {
    p.rows(c)
        .into_iter()
        .map(|r| (r.event, r.ps, r.kind.name()))
        .collect()
}

/// Enter on a row: the path's events (in path order) become the dimmed hit list, positioned at
/// the row's event; a gap row shows the gap itself.
#[derive(Debug)]
struct PathSource {
    /// Per row: its event (`NO_SLICE` for a gap around no slice), start and end, and whether
    /// it is a gap.
    rows: Vec<(u32, Ps, Ps, bool)>,
}

impl PathSource {
    /// The distinct events of the rows, in path order.
    fn ids(&self) -> Vec<u32> {
        let mut seen = FxHashSet::default();
        self.rows
            .iter()
            .filter(|r| r.0 != NO_SLICE && seen.insert(r.0))
            .map(|r| r.0)
            .collect()
    }
}

impl Source for PathSource {
    fn on_action(&mut self, _action: Action, _st: &State) -> Option<Result<TableView, String>> {
        None
    }

    fn confirm(&self, row: &Row, st: &State) -> Option<Vec<Msg>> {
        let l = st.loaded()?;
        let Key::Num(k) = row.keys.get(1)? else {
            return None;
        };
        let &(id, start, end, gap) = self.rows.get(*k as usize)?;
        let ids = self.ids();
        let mut hits = HitList::in_order(&l.cap, "critical path", ids.clone());
        hits.dim = true;
        hits.pos = ids.iter().position(|&x| x == id);
        let mut out = vec![Msg::Pop, Msg::SetHits(hits)];
        if gap {
            // The gap itself, with as much again on each side.
            let pad = (end - start).max(1);
            out.push(Msg::SetWindow(start - pad, end + pad));
        } else if id != NO_SLICE {
            out.push(Msg::JumpTo(id));
        }
        Some(out)
    }
}

/// The critical-path table of the step under the cursor.
pub fn critical_view(st: &State) -> Result<TableView, String> {
    let l = st.loaded().ok_or("nothing loaded")?;
    let cap = &l.cap;
    let p = path_at(cap, &l.steps, st.cursor_time()).ok_or("no step here")?;
    let z = st.time_zero(l);
    let events = p.rows(cap);
    let mut rows = Vec::with_capacity(events.len());
    for (k, e) in events.iter().enumerate() {
        let (id, ps, kind, start) = (e.event, e.ps, e.kind.name(), e.start);
        let (name, track) = if id == NO_SLICE {
            ("(between ops)".to_string(), String::new())
        } else {
            (
                sanitize(cap.slice_name(id)).into_owned(),
                sanitize(&cap.track_name(cap.track_of(id))).into_owned(),
            )
        };
        let share = if p.path > 0 {
            100.0 * ps as f64 / p.path as f64
        } else {
            0.0
        };
        rows.push(Row {
            cells: vec![
                name.clone(),
                (k + 1).to_string(),
                format_dur(ps),
                format!("{share:.1}%"),
                kind.to_string(),
                track.clone(),
                format_dur(start - z),
            ],
            keys: vec![
                Key::Text(name),
                Key::Num(k as f64),
                Key::Num(ps as f64),
                Key::Num(share),
                Key::Text(kind.to_string()),
                Key::Text(track),
                Key::Num(start as f64),
            ],
            target: Target::None,
            bar: None,
        });
    }
    let col = |name, width, right| Column { name, width, right };
    let step = if l.steps.source == StepSource::Whole {
        "whole capture".to_string()
    } else {
        format!("step {}", p.step.number)
    };
    let site = p
        .wait_site
        .map(|id| sanitize(cap.slice_name(id)).into_owned());
    let mut t = TableView::new(
        ViewKind::Table,
        format!(
            "critical path · {step} · path {} of {} · {} events",
            format_dur(p.path),
            format_dur(p.step.dur()),
            events.len()
        ),
        // The name first: it takes the spare width and the filter (`/`) reads it.
        vec![
            col("name", 0, false),
            col("#", 5, true),
            col("on path", 10, true),
            col("share", 7, true),
            col("kind", 12, false),
            col("track", 12, false),
            col("start", 10, true),
        ],
        rows,
    );
    t.legend = bounds_sentence(&p, site.as_deref());
    t.note =
        "Enter: the path becomes the hits, the rest dimmed (D: undim) · n / N: along the path \
              · sort by \"on path\" for the top contributors"
            .into();
    t.hits_label = "critical path".into();
    t.source = Some(Box::new(PathSource {
        rows: events
            .iter()
            .map(|e| (e.event, e.start, e.end, e.is_gap()))
            .collect(),
    }));
    Ok(t)
}
