//! The terminal explorer (ratatui + crossterm).

use std::path::Path;

/// Opens the interactive explorer on a log dir or file; returns when the user quits.
pub fn run(path: &Path) -> std::io::Result<()> {
    println!(
        "tracetui: the interactive explorer is not built yet ({})",
        path.display()
    );
    Ok(())
}
