//! Views: each screen or popup is one [`View`] on the app's stack. A view owns its own state,
//! turns keys (already mapped to [`Action`]s by the key table) into [`Msg`]s that
//! [`App::update`](super::app::App::update) applies to the shared state, and draws itself
//! from `&self` and `&App` — drawing never mutates. See `docs/architecture.md` ("Adding a
//! view") for the smallest example, [`help::HelpView`].

pub mod gpu;
pub mod heatmap;
pub mod help;
pub mod overview;
pub mod picker;
pub mod rank;
pub mod search;
pub mod stats;
pub mod table;
pub mod timeline;

use super::action::Action;
use super::app::{App, Msg};
use super::keymap::ViewKind;
use crate::index::Cell;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyEvent, MouseEvent};
use ratatui::layout::Rect;
use std::any::Any;

/// One screen or popup on the view stack.
pub trait View: std::fmt::Debug + Send {
    /// Which bindings of the key table apply.
    fn kind(&self) -> ViewKind;

    /// Popups are drawn over the view below them; full views hide what is below.
    fn is_popup(&self) -> bool {
        false
    }

    /// A key press: `action` is its binding in this view (or a global one), `None` when the
    /// key is unbound (text prompts read `key` itself).
    fn on_key(&mut self, key: &KeyEvent, action: Option<Action>, app: &App) -> Vec<Msg>;

    /// A mouse event (ignored by default).
    fn on_mouse(&mut self, _m: MouseEvent, _app: &App) -> Vec<Msg> {
        Vec::new()
    }

    /// Draws the view into `area` of `buf`; `cells` is reusable scratch for the timeline.
    fn draw(&self, app: &App, buf: &mut Buffer, area: Rect, cells: &mut Vec<Cell>);

    /// For tests and the app to reach a concrete view.
    fn as_any(&self) -> &dyn Any;

    /// Mutable [`View::as_any`].
    fn as_any_mut(&mut self) -> &mut dyn Any;
}
