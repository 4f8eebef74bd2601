//! Two passes side by side on the machine's two cores.

/// Runs `a` here and `b` on a second thread (scoped); a panic in either is resumed here.
pub fn par2<A, B: Send>(a: impl FnOnce() -> A, b: impl FnOnce() -> B + Send) -> (A, B) {
    std::thread::scope(|sc| {
        let h = sc.spawn(b);
        let ra = a();
        match h.join() {
            Ok(rb) => (ra, rb),
            Err(e) => std::panic::resume_unwind(e),
        }
    })
}
