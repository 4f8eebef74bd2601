//! The optimizable-events ranking (`o`): torch's `BasicEvaluation` over the open capture (see
//! `docs/analysis.md`): rank, name, score, idle %, self time, queue depth, track and source
//! location (enclosing python frame, else the `Call stack` arg), sorted by score with a legend
//! saying what the score means,
//! scoped to the marked range when one is marked. `Enter` jumps to the event and makes the whole
//! ranking the hit list, so `n` / `N` walk the ranked events in rank order on the timeline.

use super::table::{Column, Key, Row, TableView, Target, scope};
use crate::analysis::rank::callstack::call_stack_frame;
use crate::ui::keymap::ViewKind;
use crate::ui::ruler::format_dur;
use crate::ui::state::State;

/// Builds the ranking table of the open capture (`None` when nothing is loaded).
pub fn rank_view(st: &State) -> Option<TableView> {
    let l = st.loaded()?;
    let cap = &l.cap;
    let r = l.ranking();
    let (range, scope) = scope(st);
    let z = st.time_zero(l);
    let mut rows = Vec::new();
    for (pos, (id, i, score)) in r.ranked().enumerate() {
        let start = cap.slices.start[id as usize];
        if range.is_some_and(|(a, b)| start < a || start >= b) {
            continue;
        }
        let Some(info) = r.info(cap, id) else {
            continue;
        };
        // The enclosing python frame, else the innermost user frame of the `Call stack` arg.
        let source = r
            .source(cap, i)
            .map(|s| cap.slice_name(s).to_string())
            .or_else(|| call_stack_frame(cap, id))
            .unwrap_or_default();
        let track = cap.track_name(cap.track_of(id));
        rows.push(Row {
            cells: vec![
                cap.slice_name(id).to_string(),
                (pos + 1).to_string(),
                format!("{score:.2}"),
                format!("{:.0}%", info.idle_fraction * 100.0),
                format_dur(info.self_ps),
                info.queue_depth.to_string(),
                format_dur(start - z),
                track.clone(),
                source.clone(),
            ],
            keys: vec![
                Key::Text(cap.slice_name(id).to_string()),
                Key::Num(-(pos as f64)),
                Key::Num(score),
                Key::Num(info.idle_fraction),
                Key::Num(info.self_ps as f64),
                Key::Num(f64::from(info.queue_depth)),
                Key::Num(-(start as f64)),
                Key::Text(track),
                Key::Text(source),
            ],
            target: Target::Slice(id),
            bar: None,
        });
    }
    let col = |name, width, right| Column { name, width, right };
    let mut t = TableView::new(
        ViewKind::Table,
        format!(
            "optimizable events · {scope} · {} launches, {} kernels, queue depth max {}",
            r.launches,
            r.kernels,
            r.eval.queue_depth_max()
        ),
        vec![
            col("name", 0, false),
            col("rank", 5, true),
            col("score", 7, true),
            col("idle", 5, true),
            col("self", 9, true),
            col("queue", 5, true),
            col("start", 9, true),
            col("track", 16, false),
            col("source", 28, false),
        ],
        rows,
    );
    if r.kernels == 0 {
        t.note = "no GPU kernels in this capture: nothing to rank".into();
    } else if t.rows.is_empty() {
        // Say why the heuristic found nothing, and what the critical path says instead.
        let max = r.eval.queue_depth_max();
        t.legend = if max < 4 {
            format!(
                "0 candidates: torch's heuristic ranks CPU events overlapping a drop of the GPU \
                 queue from depth ≥ 4 to 0, and the queue never got deeper than {max} here"
            )
        } else {
            format!(
                "0 candidates: no CPU event overlaps a drop of the GPU queue from depth ≥ 4 to 0 \
                 (deepest: {max})"
            )
        };
        t.note = super::critical::path_at(cap, &l.steps, st.cursor_time())
            .map(|p| {
                let site = p
                    .wait_site
                    .map(|id| crate::text::sanitize(cap.slice_name(id)).into_owned());
                format!(
                    "critical path of step {}: {} · W: show the path",
                    p.step.number,
                    crate::analysis::critical::bounds_sentence(&p, site.as_deref())
                )
            })
            .unwrap_or_default();
    } else {
        t.legend = crate::analysis::rank::explain::SCORE_MEANING.to_string();
        t.note = "idle: GPU idle share of the event's duration · queue: GPU queue depth at its \
                  start"
            .into();
        // Ranked, as the legend says: by score, best first.
        t.sort_by(2, false);
    }
    t.hits_label = "ranking".into();
    t.hits_from_rows = true;
    Some(t)
}
