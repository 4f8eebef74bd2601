//! End-to-end: the real binary in a pseudo-terminal opens a rank of a hand-made 4-rank run from
//! the picker, opens the run overview (`R`), moves to rank 2's step 3 and `Enter` opens rank 2's
//! timeline zoomed to that step.

#![cfg(unix)]

mod common;
use common::pty::Session;
use common::run::write_run;

#[test]
fn overview_opens_and_enter_on_a_cell_opens_the_rank_at_the_step() {
    let d = tempfile::tempdir().expect("tempdir");
    write_run(d.path(), 4);
    let dir = d.path().to_str().expect("utf-8 temp path");
    let mut s = Session::start(dir);
    s.wait_for("node_103");
    // The picker lists the ranks by host; open the first one listed.
    s.press("\r");
    s.wait_for(" Steps ");
    s.press("R");
    // Every rank summarized (three of them loaded from their files in the background).
    let screen = s.wait_for("stragglers (HTA)");
    assert!(screen.contains("4 ranks · 6 steps"), "{screen}");
    // To rank 2 (third row), step 3 (fourth column).
    s.press("g");
    for k in ["k", "k", "k", "j", "j", "l", "l", "l"] {
        s.press(k);
    }
    s.wait_for("rank 2 step 3:");
    s.press("\r");
    let screen = s.wait_for("node_102 ·");
    assert!(screen.contains("step 3"), "{screen}");
    assert!(!screen.contains("run overview"), "{screen}");
    s.quit();
}
