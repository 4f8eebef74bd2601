//! Views: each screen or popup is one [`View`] on the app's stack. A view owns its own state,
//! turns keys (already mapped to [`Action`](super::action::Action)s by the key table) into
//! [`Msg`](super::msg::Msg)s that [`App::update`](super::app::App::update) applies, and draws
//! itself from `&self` and `&State` — drawing never mutates. See `docs/architecture.md`
//! ("Adding a view") for the smallest example, [`help::HelpView`].

pub mod aligned;
pub mod capture_form;
pub mod critical;
pub mod details_view;
pub mod diff_align;
pub mod diff_table;
pub mod findings;
pub mod flame;
pub mod flame_table;
pub mod flame_view;
pub mod full_details;
pub mod gpu;
pub mod heatmap;
pub mod help;
pub mod memory;
pub mod memory_flame;
pub mod overview;
pub mod overview_view;
pub mod picker;
pub mod rank;
pub mod roofline;
pub mod search;
pub mod segments;
pub mod stats;
pub mod table;
pub mod table_layout;
pub mod table_view;
pub mod timeline;

pub use super::msg::View;
