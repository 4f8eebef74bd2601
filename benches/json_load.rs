//! JSON load benchmark (filled in below).
fn main() {}
