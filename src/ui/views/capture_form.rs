//! The capture form (`C`): address(es) of the profiler server, trace time and tracer levels,
//! prefilled from the config file (and the last capture). `Tab` / `↓` / `↑` move between
//! fields, typing edits the focused one, `Enter` starts the capture (the status line counts it
//! down; the capture opens when it lands), `Esc` closes.

use super::View;
use crate::index::Cell;
use crate::ui::action::Action;
use crate::ui::capture::CaptureSettings;
use crate::ui::keymap::ViewKind;
use crate::ui::msg::Msg;
use crate::ui::state::State;
use crate::ui::text;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::widgets::{Block, Borders, Clear, Widget};

/// The form's fields, in order.
const FIELDS: [&str; 5] = [
    "address",
    "duration (ms)",
    "host tracer level (0-3)",
    "device tracer level (0-1)",
    "python tracer level (0-1)",
];

/// The capture form popup.
#[derive(Debug)]
pub struct CaptureForm {
    /// The values being edited, as text (numbers are parsed on `Enter`).
    pub values: [String; 5],
    /// Focused field.
    pub field: usize,
    /// Why `Enter` did not start (shown under the fields).
    pub problem: Option<String>,
}

impl CaptureForm {
    /// A form prefilled with `s`.
    pub fn new(s: &CaptureSettings) -> CaptureForm {
        CaptureForm {
            values: [
                s.address.clone(),
                s.duration_ms.to_string(),
                s.host_level.to_string(),
                s.device_level.to_string(),
                s.python_level.to_string(),
            ],
            field: 0,
            problem: None,
        }
    }

    /// The settings typed, or what is wrong with them.
    pub fn settings(&self) -> Result<CaptureSettings, String> {
        let num = |i: usize| -> Result<u64, String> {
            self.values[i]
                .trim()
                .parse::<u64>()
                .map_err(|_| format!("{}: not a number", FIELDS[i]))
        };
        let level = |i: usize| num(i).map(|n| n.min(u64::from(u32::MAX)) as u32);
        let s = CaptureSettings {
            address: self.values[0].trim().to_string(),
            duration_ms: num(1)?,
            host_level: level(2)?,
            device_level: level(3)?,
            python_level: level(4)?,
        };
        match s.problem() {
            Some(p) => Err(p),
            None => Ok(s),
        }
    }
}

impl View for CaptureForm {
    fn kind(&self) -> ViewKind {
        // A text prompt like the search's: keys are read as text, not through the key table.
        ViewKind::Search
    }

    fn is_popup(&self) -> bool {
        true
    }

    fn on_key(&mut self, key: &KeyEvent, _action: Option<Action>, st: &State) -> Vec<Msg> {
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
            return vec![Msg::Quit];
        }
        match key.code {
            KeyCode::Esc => return vec![Msg::Pop],
            KeyCode::Tab | KeyCode::Down => self.field = (self.field + 1) % FIELDS.len(),
            KeyCode::BackTab | KeyCode::Up => {
                self.field = (self.field + FIELDS.len() - 1) % FIELDS.len()
            }
            KeyCode::Backspace => {
                self.values[self.field].pop();
            }
            // Numbers take digits only; the address any printable text.
            KeyCode::Char(c) if !c.is_control() && (self.field == 0 || c.is_ascii_digit()) => {
                self.values[self.field].push(c);
            }
            KeyCode::Enter => {
                if st.capture.running.is_some() {
                    self.problem = Some("a capture is already running".into());
                    return Vec::new();
                }
                return match self.settings() {
                    Ok(s) => vec![Msg::Pop, Msg::StartCapture(s)],
                    Err(p) => {
                        self.problem = Some(p);
                        Vec::new()
                    }
                };
            }
            _ => {}
        }
        Vec::new()
    }

    fn draw(&self, st: &State, buf: &mut Buffer, area: Rect, _cells: &mut Vec<Cell>) {
        let w = 64.min(area.width);
        let h = (FIELDS.len() as u16 + 6).min(area.height);
        let r = Rect::new(
            area.x + (area.width - w) / 2,
            area.y + (area.height - h) / 2,
            w,
            h,
        );
        Clear.render(r, buf);
        let block = Block::default()
            .borders(Borders::ALL)
            .title(" capture from a profiler server ");
        let inner = block.inner(r);
        block.render(r, buf);
        let iw = inner.width as usize;
        if iw == 0 || inner.height == 0 {
            return;
        }
        let label_w = FIELDS.iter().map(|f| text::width(f)).max().unwrap_or(0) + 1;
        let mut y = inner.y;
        let bottom = inner.y + inner.height;
        for (i, name) in FIELDS.iter().enumerate() {
            if y >= bottom {
                return;
            }
            let focused = i == self.field;
            let value = text::sanitize(&self.values[i]);
            let room = iw.saturating_sub(label_w + 2);
            // The end of a long value stays visible while typing.
            let shown = if text::width(&value) > room {
                format!("…{}", crate::text::tail(&value, room.saturating_sub(1)))
            } else {
                value.into_owned()
            };
            let line = format!(
                "{}{:<label_w$} {shown}{}",
                if focused { "›" } else { " " },
                name,
                if focused { "▏" } else { "" }
            );
            let style = if focused {
                Style::default().add_modifier(Modifier::BOLD)
            } else {
                Style::default()
            };
            buf.set_stringn(inner.x, y, text::fit(&line, iw), iw, style);
            y += 1;
        }
        let dir = text::sanitize(&st.capture.logdir.display().to_string()).into_owned();
        let notes = [
            self.problem.clone().map(|p| format!("! {p}")),
            Some(format!(
                "into {}",
                crate::text::fit_middle(&dir, iw.saturating_sub(5))
            )),
            Some("Enter starts · Tab next field · Esc closes".to_string()),
        ];
        y += 1;
        for n in notes.into_iter().flatten() {
            if y >= bottom {
                return;
            }
            buf.set_stringn(
                inner.x,
                y,
                text::fit(&n, iw),
                iw,
                Style::default().add_modifier(Modifier::DIM),
            );
            y += 1;
        }
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}
