//! End-to-end: the real binary in a pseudo-terminal opens the flame view (`F`), moves to a node,
//! zooms into it, and `Enter` returns to the timeline with the node's instances as the hits.

#![cfg(unix)]

mod common;
use common::pty::Session;

#[test]
fn flame_view_opens_zooms_and_enter_jumps_to_an_instance() {
    let mut s = Session::start("tests/fixtures/ui/alexnet.pt.trace.json.gz");
    s.wait_for("tracks");
    s.press("F");
    s.wait_for("flame · whole capture (profiler spans left out) · total");
    // The profiler's own span is left out: the widest root child is `[param|cuda]`, whose
    // widest child is `aten::to`.
    s.wait_for("[param|cuda] · total");
    s.press("j");
    s.wait_for("aten::to · total");
    s.press("w");
    s.wait_for(" · zoom: aten::to");
    s.press("\r");
    // Back on the timeline at the first instance: the status counts it.
    let screen = s.wait_for("flame “aten::to” 1/16");
    assert!(
        !screen.contains(" · zoom: "),
        "still in the flame view:\n{screen}"
    );
    // `n` steps to the next instance.
    s.press("n");
    s.wait_for("flame “aten::to” 2/16");
    s.quit();
}
