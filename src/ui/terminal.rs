//! Terminal set-up and tear-down: raw mode + alternate screen, restored on exit, on error and on
//! panic (ratatui's panic hook restores before the message is printed).

use ratatui::DefaultTerminal;

/// Enters raw mode and the alternate screen and installs the restoring panic hook.
pub fn init() -> std::io::Result<DefaultTerminal> {
    ratatui::try_init()
}

/// Leaves the alternate screen and raw mode; safe to call more than once.
pub fn restore() {
    ratatui::restore();
}
