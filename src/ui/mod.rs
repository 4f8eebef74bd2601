//! The terminal explorer (ratatui + crossterm).
