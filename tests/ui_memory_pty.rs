//! End-to-end: the real binary in a pseudo-terminal opens a Kineto capture with `[memory]`
//! events, shows its memory rows, `^` jumps to the allocated peak, `M` lists the allocations live
//! there and `Enter` jumps to the op that allocated the largest; `F` on the memory row opens the
//! bytes flame of the live allocations at the peak, by call stack.

#![cfg(unix)]

mod common;
use common::pty::Session;

#[test]
fn memory_rows_peak_and_live_allocations() {
    let mut s = Session::start("tests/fixtures/memory/kineto_memory.json");
    let screen = s.wait_for("cuda:0 alloc ~");
    assert!(screen.contains("cpu alloc ~"), "{screen}");
    // The rows are there (they arrive with the derived rows): `^` finds them.
    s.press("^");
    s.wait_for("peak of cuda:0");
    s.press("M");
    s.wait_for("memory · cuda:0 · live at +420");
    let screen = s.wait_for("aten::relu");
    assert!(screen.contains("4.0 MiB"), "{screen}");
    assert!(screen.contains("model.py(12): forward"), "{screen}");
    // Enter on the first row (largest: 4 MiB by aten::mm) selects that op on the timeline.
    s.press("\r");
    let screen = s.wait_for("aten::mm  · dur");
    assert!(!screen.contains("memory · cuda:0"), "{screen}");
    s.quit();
}

#[test]
fn bytes_flame_from_the_memory_row() {
    let mut s = Session::start("tests/fixtures/memory/kineto_memory.json");
    s.wait_for("cuda:0 alloc ~");
    s.press("^");
    s.wait_for("peak of cuda:0");
    // The cursor is on cuda:0's allocated row: F draws its live bytes by call stack.
    s.press("F");
    let screen = s.wait_for("live at the peak");
    assert!(screen.contains("cuda:0"), "{screen}");
    s.wait_for("forward");
    // `c`: live at the cursor time instead; Esc back to the timeline.
    s.press("c");
    s.wait_for("live at +420");
    s.press("\x1b");
    let screen = s.wait_for("cuda:0 reserved ~");
    assert!(!screen.contains("live at +420"), "{screen}");
    s.quit();
}
