//! The columnar, interned trace model shared by every loader, the index, the analyses and the UI.

pub mod args;
pub mod begin_end;
pub mod builder;
pub mod capture;
pub mod category;
pub mod clock;
mod finish;
mod flow_link;
pub mod graph_replay;
pub mod memory;
pub mod nesting;
pub mod order;
pub mod slots;
pub mod snapshot;
pub mod strings;
pub mod track_of;
pub mod warning_text;

pub use args::{ArgValue, ArgsArena, ArgsRef, LazyArgs};
pub use builder::{CaptureBuilder, FlowPhase};
pub use capture::*;
pub use category::Category;
pub use graph_replay::GraphReplay;
pub use slots::{FilledRun, SliceSlots};
pub use strings::{Interner, StrId};
