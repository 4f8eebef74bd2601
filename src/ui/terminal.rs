//! Terminal set-up and tear-down: raw mode + alternate screen + mouse capture, restored on exit,
//! on error and on panic (ratatui's panic hook restores before the message is printed; ours then
//! turns mouse reporting off).

use ratatui::DefaultTerminal;
use ratatui::crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use ratatui::crossterm::execute;

/// Enters raw mode, the alternate screen and mouse capture, and installs the restoring panic hook.
pub fn init() -> std::io::Result<DefaultTerminal> {
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ = execute!(std::io::stdout(), DisableMouseCapture);
        prev(info);
    }));
    let terminal = ratatui::try_init()?;
    // Mouse support is a bonus: a terminal refusing it is not an error.
    let _ = execute!(std::io::stdout(), EnableMouseCapture);
    Ok(terminal)
}

/// Leaves mouse capture, the alternate screen and raw mode; safe to call more than once.
pub fn restore() {
    let _ = execute!(std::io::stdout(), DisableMouseCapture);
    ratatui::restore();
}
