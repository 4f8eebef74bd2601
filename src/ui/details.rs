//! The details panel: the selected slice (name, category, track, times, self time, depth, parent
//! chain, args, flow partner) or the aggregate of a marked range.

use super::loader::Loaded;
use super::ruler::{format_dur, format_time, format_time_res};
use super::state::{Mark, State};
use super::text;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};

/// Self time of slice `id`: its duration minus its direct children's.
pub fn self_time(l: &Loaded, id: u32) -> i64 {
    super::event_info::self_time(l, id)
}

/// ejkernel's nested time of a `jit_*` slice (analysis::nested, default prefix and minimum):
/// the union of the slices of its plane it fully contains, found through the index.
fn nested_line(l: &Loaded, id: u32) -> Option<String> {
    use crate::analysis::nested::{NestedOptions, contained_time_of};
    let cap = &l.cap;
    let s = &cap.slices;
    let i = id as usize;
    // Cheap test first: only slices whose name or stats can give a `jit_` unified name.
    let o = NestedOptions::default();
    if s.dur[i] < o.min_dur {
        return None;
    }
    let (a, b) = (s.start[i], s.end(i).max(s.start[i].saturating_add(1)));
    let process = cap.tracks[cap.track_of(id) as usize].process;
    let mut cands: Vec<u32> = Vec::new();
    for (t, tr) in cap.tracks.iter().enumerate() {
        if tr.process != process {
            continue;
        }
        for lane in 0..l.index.lane_count(t as u32) {
            cands.extend_from_slice(l.index.window(cap, t as u32, lane, a, b));
        }
    }
    let v = contained_time_of(cap, &o, id, cands)?;
    Some(format!(
        "nested time (jit_, contained events merged): {}",
        format_dur(v)
    ))
}

/// Parent chain from the root down to (excluding) `id`, at most 32 deep.
pub fn breadcrumb(l: &Loaded, id: u32) -> Vec<u32> {
    super::event_info::parents(l, id)
}

/// The lines describing the selection (most important first).
pub fn lines(st: &State, l: &Loaded) -> Vec<(String, Style)> {
    lines_at(st, l, usize::MAX)
}

/// [`lines`] for a panel `w` columns wide: the breadcrumb keeps the nearest parents whole and
/// shortens the far ones to fit one line (the full chain is in the full-details view).
pub fn lines_at(st: &State, l: &Loaded, w: usize) -> Vec<(String, Style)> {
    let cap = &l.cap;
    // Times are shown relative to the capture's first event.
    let z = st.time_zero(l);
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let mut out = Vec::new();
    if let Mark::Range(a, b, agg) = &st.mark {
        let busy: Vec<String> = agg
            .busy
            .iter()
            .take(6)
            .map(|&(t, busy)| {
                let pct = busy as f64 * 100.0 / (b - a).max(1) as f64;
                format!("{} {pct:.0}%", text::sanitize(&cap.track_name(t)))
            })
            .collect();
        out.push((
            format!(
                "mark {} → {} · {} · {} slices",
                format_time(*a - z),
                format_time(*b - z),
                format_dur(b - a),
                agg.slices
            ),
            bold,
        ));
        out.push((format!("busy: {}", busy.join(" · ")), Style::default()));
    } else if let Mark::Start(a) = st.mark {
        out.push((
            format!(
                "mark from {} — press m again at the other end",
                format_time(a - z)
            ),
            bold,
        ));
    }
    let Some(id) = st.selected.filter(|&i| (i as usize) < cap.slices.len()) else {
        if out.is_empty() {
            out.push((
                "no selection — j/k pick a lane, h/l or Enter select a slice".into(),
                Style::default(),
            ));
        }
        return out;
    };
    let s = &cap.slices;
    let i = id as usize;
    let track = cap.track_of(id);
    // Start / end resolve a tenth of the slice (at least 1 ns).
    let res = (s.dur[i] / 10).max(1000);
    let full_name = text::sanitize(cap.slice_name(id)).into_owned();
    // Long C++ names are folded on the first line; the full name follows the args.
    let name = text::fold(&full_name).into_owned();
    let cat = text::sanitize(cap.strings.get(s.cat(i))).into_owned();
    out.push((
        format!(
            "{name}  · dur {} · self {} · {}",
            format_dur(s.dur[i]),
            format_dur(self_time(l, id)),
            text::sanitize(&cap.track_name(track))
        ),
        bold,
    ));
    if let Some(line) = nested_line(l, id) {
        out.push((line, Style::default()));
    }
    out.push((
        format!(
            "{} · depth {} · start {} · end {} · {}",
            if cat.is_empty() { "-".to_string() } else { cat },
            cap.depth(id),
            format_time_res(s.start[i] - z, res),
            format_time_res(s.end(i) - z, res),
            text::sanitize(&cap.process_title(cap.tracks[track as usize].process))
        ),
        Style::default(),
    ));
    let chain = breadcrumb(l, id);
    if !chain.is_empty() {
        let names: Vec<String> = chain
            .iter()
            .map(|&p| text::fold(cap.slice_name(p)).into_owned())
            .collect();
        out.push((
            super::views::full_details::breadcrumb_text(&names, &text::fold(&name), w),
            Style::default(),
        ));
    }
    // GPU starvation facts of CPU events, once the ranking is computed (in the background
    // after loading).
    if let Some(r) = l.ranking_if_ready()
        && r.kernels > 0
        && let Some(info) = r.info(cap, id)
    {
        // Each figure with what it was measured over (depth at the start, idle over the
        // event's duration).
        out.push((
            crate::analysis::rank::explain::describe(
                &info,
                cap.slices.dur[id as usize],
                format_dur,
            ),
            Style::default(),
        ));
    }
    // The same args and call stack as `tracetui event` (ui::event_info), sanitized here.
    let (raw_args, frames) = super::event_info::args_of(cap, id);
    let mut long_name = None;
    let mut stack = (!frames.is_empty())
        .then(|| format!("call stack: {}", text::sanitize(&frames.join(" ; "))));
    let mut args = Vec::new();
    for (key, val) in raw_args {
        if key == "long_name" {
            long_name = Some(val.clone());
        }
        args.push(format!("{}={}", text::sanitize(&key), text::sanitize(&val)));
    }
    // Lazily read args may come from a file rewritten meanwhile: checked after reading, so
    // nothing read from a changed file is shown.
    if cap.source_changed() {
        args.clear();
        long_name = None;
        stack = None;
    }
    if !args.is_empty() {
        out.push((args.join("  "), Style::default()));
    }
    let ps = l.partners_of(id);
    if !ps.is_empty() {
        let ix = st.partner_ix.min(ps.len() - 1);
        let p = ps[ix].1;
        let pt = cap.track_of(p);
        out.push((
            format!(
                "⇄ {} on {} · {}  [{}/{}]  p jump  >/< next/prev",
                text::fold(cap.slice_name(p)),
                text::sanitize(&cap.track_name(pt)),
                format_dur(s.dur[p as usize]),
                ix + 1,
                ps.len()
            ),
            Style::default(),
        ));
    }
    if let Some(line) = graph_line(cap, id, &ps) {
        out.push((line, Style::default()));
    }
    if name != full_name && long_name.as_deref() != Some(full_name.as_str()) {
        out.push((format!("full name: {full_name}"), Style::default()));
    }
    if let Some(ln) = long_name {
        out.push((
            format!("long name: {}", text::sanitize(&ln)),
            Style::default(),
        ));
    }
    if s.corr[i] != 0 && ps.is_empty() {
        out.push((format!("correlation {}", s.corr(i)), Style::default()));
    }
    if let Some(st) = stack {
        out.push((st, Style::default()));
    }
    out
}

/// The selection in at most 3 lines, for small terminals: name · dur · self · depth · track;
/// the flow partner (if any); args; category, start, end — the first 3 are drawn, each cut to
/// the width.
pub fn compact_lines(st: &State, l: &Loaded, w: usize) -> Vec<(String, Style)> {
    let cap = &l.cap;
    let z = st.time_zero(l);
    let Some(id) = st.selected.filter(|&i| (i as usize) < cap.slices.len()) else {
        return lines(st, l);
    };
    if st.mark != Mark::None {
        return lines(st, l);
    }
    let s = &cap.slices;
    let i = id as usize;
    let track = cap.track_of(id);
    let rest = format!(
        "  · dur {} · self {} · depth {} · {}",
        format_dur(s.dur[i]),
        format_dur(self_time(l, id)),
        cap.depth(id),
        text::sanitize(&cap.track_name(track)),
    );
    // A long name gives way so the numbers stay on screen (it is in full on a taller panel).
    let folded = text::fold(cap.slice_name(id));
    let room = w.saturating_sub(text::width(&rest) + 1).max(24);
    let mut out = vec![(
        format!("{}{rest}", text::fit(&folded, room)),
        Style::default().add_modifier(Modifier::BOLD),
    )];
    // The partner with its place and duration first, so a narrow panel keeps them.
    let ps = l.partners_of(id);
    if !ps.is_empty() {
        let ix = st.partner_ix.min(ps.len() - 1);
        let p = ps[ix].1;
        out.push((
            format!(
                "⇄ p: {} · {} · {}  [{}/{}]",
                text::sanitize(&cap.track_name(cap.track_of(p))),
                format_dur(s.dur[p as usize]),
                text::fold(cap.slice_name(p)),
                ix + 1,
                ps.len()
            ),
            Style::default(),
        ));
    }
    let args: Vec<String> = cap
        .args
        .iter(s.args[i], &cap.strings)
        .map(|(k, v)| {
            format!(
                "{}={}",
                text::sanitize(cap.strings.get(k)),
                text::sanitize(&v.display(&cap.strings))
            )
        })
        .collect();
    // Checked after reading (see `lines`).
    if !args.is_empty() && !cap.source_changed() {
        out.push((args.join("  "), Style::default()));
    }
    // Category and times fill the panel when there is room left.
    let cat = text::sanitize(cap.strings.get(s.cat(i))).into_owned();
    out.push((
        format!(
            "{} · start {} · end {}",
            if cat.is_empty() { "-".to_string() } else { cat },
            format_time_res(s.start[i] - z, (s.dur[i] / 10).max(1000)),
            format_time_res(s.end(i) - z, (s.dur[i] / 10).max(1000)),
        ),
        Style::default(),
    ));
    out
}

/// Draws the panel; a panel of 3 lines or fewer shows [`compact_lines`].
pub fn draw(st: &State, l: &Loaded, buf: &mut Buffer, area: Rect) {
    let w = area.width as usize;
    let mut all = if area.height <= 3 {
        compact_lines(st, l, w.saturating_sub(1))
    } else {
        lines_at(st, l, w.saturating_sub(1))
    };
    if st.selected.is_some() && l.cap.source_changed() {
        all.insert(
            1.min(all.len()),
            (
                "⚠ the file changed on disk since loading: its args are not shown (reopen to reload)"
                    .into(),
                Style::default().add_modifier(Modifier::BOLD),
            ),
        );
    }
    // A taller panel wraps long names, args and call stacks over the lines it has.
    if area.height > 3 {
        all = super::views::full_details::wrap_lines(&all, w.saturating_sub(1));
    }
    // More than fits: the last line says so and names the key of the full view.
    let h = area.height as usize;
    if st.selected.is_some() && all.len() > h && h > 1 {
        let more = all.len() - (h - 1);
        all.truncate(h - 1);
        let key = st
            .keymap
            .keys(
                super::keymap::ViewKind::Timeline,
                super::action::Action::OpenDetails,
            )
            .first()
            .map_or(String::new(), |k| format!(" — {k}: full details"));
        all.push((
            format!("… {more} more lines{key}"),
            Style::default().add_modifier(Modifier::DIM),
        ));
    }
    for (dy, (line, style)) in all.into_iter().take(area.height as usize).enumerate() {
        let shown = text::fit(&line, w.saturating_sub(1));
        buf.set_stringn(
            area.x + 1,
            area.y + dy as u16,
            &*shown,
            w.saturating_sub(1),
            style,
        );
    }
}

/// For a kernel replayed from a CUDA/HIP graph whose capture was merged (docs/graphs.md): the
/// op that launched it at capture time (the first `cpu_op` above its captured launch call, one
/// of `partners`) and the graph launch that replayed it.
fn graph_line(cap: &crate::model::Capture, id: u32, partners: &[(u32, u32)]) -> Option<String> {
    let graph = cap.graph_replay.launch_of(id)?;
    let call = partners.iter().map(|p| p.1).find(|&p| {
        cap.slices.flags.get(p as usize).copied().unwrap_or(0) & crate::model::slice_flags::CAPTURED
            != 0
    });
    let op = call.map(|c| crate::analysis::launchers::launcher_of(cap, c));
    let z = cap.time_zero();
    Some(format!(
        "graph replay: captured by {} · replayed by {} at {}",
        op.map_or("(no matching capture-time launch)".into(), |o| text::fold(
            cap.slice_name(o)
        )
        .into_owned()),
        text::sanitize(cap.slice_name(graph)),
        format_time(cap.slices.start[graph as usize] - z)
    ))
}
