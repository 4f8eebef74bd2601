//! The `!` popup: the open capture's load warnings (truncated, repaired, dropped or capped
//! events, unresolved flows), each with its kind, count and message (byte offsets included),
//! under the file they are about. The status line counts them ([`marker`]). `j`/`k` scroll; any
//! other key closes it, as the help popup.

use super::View;
use crate::index::Cell;
use crate::model::Warning;
use crate::ui::action::Action;
use crate::ui::keymap::ViewKind;
use crate::ui::msg::Msg;
use crate::ui::state::{Screen, State};
use crate::ui::text;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};

/// The warnings popup of the shown capture.
#[derive(Debug, Default)]
pub struct WarningsView {
    /// First line shown.
    pub scroll: usize,
}

/// The message that opens the warnings popup, or a notice when the capture has none.
pub fn open(st: &State) -> Msg {
    match st.loaded() {
        Some(l) if !l.cap.warnings.is_empty() => Msg::Push(Box::new(WarningsView::default())),
        Some(_) => Msg::Notice("no load warnings: the capture was read whole".into()),
        None => Msg::Notice("no capture loaded".into()),
    }
}

/// The status-line marker of the shown capture's warnings (`⚠ 2 load warnings (!)`), when it has
/// any and the timeline is shown.
pub fn marker(st: &State) -> Option<String> {
    if st.screen() != Screen::Timeline {
        return None;
    }
    let n = st.loaded()?.cap.warnings.len();
    if n == 0 {
        return None;
    }
    let key = st
        .keymap
        .keys(ViewKind::Timeline, Action::OpenWarnings)
        .first()
        .map_or(String::new(), |k| format!(" ({})", k.hint()));
    let s = if n == 1 { "" } else { "s" };
    Some(format!("⚠ {n} load warning{s}{key}"))
}

/// Popup width at most: wide enough for the long messages (file offsets, sizes).
const POPUP_W: u16 = 110;

/// The popup's lines (text, bold) for an inner width `w`: the file, then each warning's kind and
/// count, and its message wrapped below.
fn lines(st: &State, w: usize) -> Vec<(String, bool)> {
    let Some(l) = st.loaded() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let src = &l.cap.source;
    let file = format!(
        "{} ({} bytes)",
        text::sanitize(&src.path.display().to_string()),
        src.file_bytes
    );
    for part in super::full_details::wrap(&file, w) {
        out.push((part, true));
    }
    let intro = "What was skipped, repaired or capped while loading (byte offsets are of this \
                 file, or of its decompressed text for a .gz):";
    for part in super::full_details::wrap(intro, w) {
        out.push((part, false));
    }
    for Warning {
        kind,
        count,
        message,
    } in &l.cap.warnings
    {
        out.push((String::new(), false));
        out.push((format!("{kind} ×{count}"), true));
        for part in super::full_details::wrap(&format!("  {}", text::sanitize(message)), w) {
            out.push((part, false));
        }
    }
    out
}

impl WarningsView {
    fn inner_w(area_w: u16) -> usize {
        POPUP_W.min(area_w).saturating_sub(4) as usize
    }
}

impl View for WarningsView {
    fn kind(&self) -> ViewKind {
        // The help popup's keys: j/k scroll, any other key closes.
        ViewKind::Help
    }

    fn is_popup(&self) -> bool {
        true
    }

    fn on_key(&mut self, _key: &KeyEvent, action: Option<Action>, st: &State) -> Vec<Msg> {
        match action {
            Some(Action::Down) => {
                let n = lines(st, Self::inner_w(st.size.0)).len();
                let inner_h = st.size.1.saturating_sub(2) as usize;
                self.scroll = (self.scroll + 1).min(n.saturating_sub(inner_h));
                Vec::new()
            }
            Some(Action::Up) => {
                self.scroll = self.scroll.saturating_sub(1);
                Vec::new()
            }
            Some(Action::Quit) => vec![Msg::Pop, Msg::Quit],
            _ => vec![Msg::Pop],
        }
    }

    fn draw(&self, st: &State, buf: &mut Buffer, area: Rect, _cells: &mut Vec<Cell>) {
        let iw = Self::inner_w(area.width);
        let lines = lines(st, iw);
        let inner = super::help::scroll_popup(buf, area, POPUP_W, lines.len(), "load warnings");
        let inner_h = inner.height as usize;
        let scroll = self.scroll.min(lines.len().saturating_sub(inner_h));
        for (i, (line, bold)) in lines.iter().skip(scroll).take(inner_h).enumerate() {
            let style = if *bold {
                Style::default().add_modifier(Modifier::BOLD)
            } else {
                Style::default()
            };
            buf.set_stringn(inner.x + 1, inner.y + i as u16, line, iw, style);
        }
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}
