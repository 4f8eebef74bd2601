//! The statistics table (`t`): per name count, total, self, avg, min, max and % of the scope —
//! the marked range when one is marked, else the whole capture — computed with
//! `analysis::stats` (torch's `key_averages` rules). Range rule: an event counts when it
//! *starts* inside the range; durations are not clipped and self times are those of the whole
//! capture (the same rule as `tracetui stats --from/--to`).

use super::table::{Column, Key, Row, TableView, Target, scope};
use crate::analysis::stats::{StatsOptions, compute};
use crate::model::Ps;
use crate::ui::app::App;
use crate::ui::keymap::ViewKind;
use crate::ui::ruler::format_dur;

/// Builds the statistics table of the open capture (`None` when nothing is loaded).
pub fn stats_view(app: &App) -> Option<TableView> {
    let l = app.loaded()?;
    let cap = &l.cap;
    let (range, scope) = scope(app);
    let opts = StatsOptions {
        range,
        ..StatsOptions::default()
    };
    let table = compute(cap, &opts);
    let width: Ps = range.map_or(cap.span.1 - cap.span.0, |(a, b)| b - a).max(1);
    let rows = table
        .rows
        .iter()
        .map(|r| {
            let avg = r.avg_ps();
            let pct = r.total_ps as f64 * 100.0 / width as f64;
            let target = cap
                .strings
                .lookup(&r.name)
                .map_or(Target::None, Target::Name);
            Row {
                cells: vec![
                    r.name.clone(),
                    r.count.to_string(),
                    format_dur(r.total_ps),
                    format_dur(r.self_ps),
                    format_dur(avg as Ps),
                    r.min_ps.map_or("-".into(), format_dur),
                    r.max_ps.map_or("-".into(), format_dur),
                    format!("{pct:.1}%"),
                ],
                keys: vec![
                    Key::Text(r.name.clone()),
                    Key::Num(r.count as f64),
                    Key::Num(r.total_ps as f64),
                    Key::Num(r.self_ps as f64),
                    Key::Num(avg),
                    Key::Num(r.min_ps.unwrap_or(0) as f64),
                    Key::Num(r.max_ps.unwrap_or(0) as f64),
                    Key::Num(pct),
                ],
                target,
                bar: None,
            }
        })
        .collect();
    let col = |name, width, right| Column { name, width, right };
    let mut t = TableView::new(
        ViewKind::Table,
        format!("statistics · {scope} · {} names", table.rows.len()),
        vec![
            col("name", 0, false),
            col("count", 9, true),
            col("total", 9, true),
            col("self", 9, true),
            col("avg", 9, true),
            col("min", 9, true),
            col("max", 9, true),
            col("% scope", 8, true),
        ],
        rows,
    );
    t.note = "events starting in the scope".into();
    // By self time, like key_averages.
    t.sort_by(3, false);
    Some(t)
}
