//! Headless commands (`summary`, `stats`) and the command-line interface.

/// Parses the command line and runs; returns the process exit code (0 ok, 1 failure, 2 usage).
pub fn main() -> i32 {
    0
}
