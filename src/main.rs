//! `tracetui` binary: argument parsing and dispatch. Everything else lives in the library.

fn main() {
    std::process::exit(tracetui::cli::main());
}
