//! The selection's full details on their own screen (issue 22 §4): every arg, the whole
//! `Call stack` one frame per line, the full breadcrumb and every fact the panel shortens —
//! a [`FullDetails`] built from the state, scrolled with `j`/`k`, `PgDn`/`PgUp`.

use super::View;
use super::full_details::FullDetails;
use super::help::help_for;
use crate::index::Cell;
use crate::ui::action::Action;
use crate::ui::details::{breadcrumb, self_time};
use crate::ui::keymap::ViewKind;
use crate::ui::loader::Loaded;
use crate::ui::msg::Msg;
use crate::ui::ruler::{format_dur, format_time_res};
use crate::ui::state::State;
use crate::ui::text;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};

/// The full-details screen of one slice.
#[derive(Debug)]
pub struct DetailsView {
    /// What is shown, with its scroll position.
    pub details: FullDetails,
}

impl DetailsView {
    /// The full details of the selection, when a slice is selected.
    pub fn open(st: &State) -> Option<DetailsView> {
        let l = st.loaded()?;
        let id = st.selected?;
        Some(DetailsView {
            details: full_details(l, id, st.time_zero(l))?,
        })
    }
}

/// Everything known about slice `id`: name, parents (root first, whole), facts and args;
/// times from `z` ([`State::time_zero`]).
pub fn full_details(l: &Loaded, id: u32, z: crate::model::Ps) -> Option<FullDetails> {
    let cap = &l.cap;
    let s = &cap.slices;
    let i = id as usize;
    if i >= s.len() {
        return None;
    }
    let track = cap.track_of(id);
    let res = (s.dur[i] / 10).max(1000);
    let mut facts: Vec<(String, String)> = vec![
        ("dur".into(), format_dur(s.dur[i])),
        ("self".into(), format_dur(self_time(l, id))),
        ("start".into(), format_time_res(s.start[i] - z, res)),
        ("end".into(), format_time_res(s.end(i) - z, res)),
        ("track".into(), cap.track_name(track)),
        (
            "process".into(),
            cap.process_title(cap.tracks[track as usize].process),
        ),
        ("category".into(), cap.strings.get(s.cat(i)).to_string()),
        ("depth".into(), cap.depth(id).to_string()),
    ];
    if let Some(r) = l.ranking_if_ready()
        && r.kernels > 0
        && let Some(info) = r.info(cap, id)
    {
        facts.push((
            "GPU".into(),
            crate::analysis::rank::explain::describe(&info, s.dur[i], format_dur),
        ));
    }
    for (k, &(_, p)) in l.partners_of(id).iter().enumerate() {
        facts.push((
            format!("partner {}", k + 1),
            format!(
                "{} on {} · {}",
                cap.slice_name(p),
                cap.track_name(cap.track_of(p)),
                format_dur(s.dur[p as usize])
            ),
        ));
    }
    if s.corr[i] != 0 {
        facts.push(("correlation".into(), s.corr(i).to_string()));
    }
    // Lazily read args of a file rewritten since loading are not shown (the panel says so).
    let args = if cap.source_changed() {
        vec![(
            "⚠".to_string(),
            "the file changed on disk since loading: its args are not shown".to_string(),
        )]
    } else {
        let mut a: Vec<(String, String)> = cap
            .args
            .iter(s.args[i], &cap.strings)
            .map(|(k, v)| (cap.strings.get(k).to_string(), v.display(&cap.strings)))
            .collect();
        // The call stack (long) after the other args, which keep their order.
        a.sort_by_key(|(k, _)| k == "Call stack");
        a
    };
    Some(FullDetails {
        title: cap.slice_name(id).to_string(),
        chain: breadcrumb(l, id)
            .into_iter()
            .map(|p| cap.slice_name(p).to_string())
            .collect(),
        facts,
        args,
        scroll: 0,
    })
}

/// The area the rows are drawn in, inside a screen of `size`: below the title line, one
/// column of margin each side.
fn body(area: Rect) -> Rect {
    Rect::new(
        area.x + 1,
        area.y + 1,
        area.width.saturating_sub(2),
        area.height.saturating_sub(2),
    )
}

impl View for DetailsView {
    fn kind(&self) -> ViewKind {
        ViewKind::Details
    }

    fn on_key(&mut self, _key: &KeyEvent, action: Option<Action>, st: &State) -> Vec<Msg> {
        let b = body(Rect::new(0, 0, st.size.0, st.size.1));
        let (w, h) = (b.width as usize, b.height as usize);
        let page = h.saturating_sub(1).max(1) as isize;
        let d = &mut self.details;
        match action {
            Some(Action::Down) => d.scroll_by(1, w, h),
            Some(Action::Up) => d.scroll_by(-1, w, h),
            Some(Action::PageDown) => d.scroll_by(page, w, h),
            Some(Action::PageUp) => d.scroll_by(-page, w, h),
            Some(Action::Top) => d.scroll = 0,
            Some(Action::Bottom) => d.scroll_by(isize::MAX / 2, w, h),
            Some(Action::Help) => return vec![help_for(ViewKind::Details)],
            Some(Action::Quit) => return vec![Msg::Quit],
            Some(Action::Back) => return vec![Msg::Pop],
            _ => {}
        }
        Vec::new()
    }

    fn draw(&self, st: &State, buf: &mut Buffer, area: Rect, _cells: &mut Vec<Cell>) {
        let _ = st;
        buf.set_stringn(
            area.x,
            area.y,
            text::fit(
                " details of the selection — j/k PgDn/PgUp scroll · Esc back",
                area.width as usize,
            ),
            area.width as usize,
            Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED),
        );
        self.details.render(body(area), buf);
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}
