//! Analyses over a loaded capture: statistics tables and (later) rankings.
