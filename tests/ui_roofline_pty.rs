//! End-to-end: the real binary in a pseudo-terminal (100×24) opens the roofline chart of the
//! bf16 H200 capture (`L`), lists its keys (`?`), switches to the selected op's roof (`m`) and
//! goes back (`Esc`).

#![cfg(unix)]

mod common;
use common::pty::Session;

#[test]
fn roofline_keys_in_a_terminal() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/torch_gpu/worker0.1795882105227733644.pt.trace.json.gz"
    );
    let mut s = Session::start(path);
    s.wait_for("w/s zoom");
    // The loading screen shows the hints too: wait for the capture (keys before it are dropped).
    s.wait_for("tracks");
    s.press("L");
    let screen = s.wait_for("roofs: every precision present (2)");
    assert!(
        screen.contains("bf16 matrix 989") && screen.contains("fp32 vector 67"),
        "{screen}"
    );
    assert!(screen.contains("j/k op"), "{screen}");
    s.press("?");
    s.wait_for("roofs: every precision present / the selected op's only");
    s.press("x");
    s.wait_for("j/k op");
    s.press("m");
    s.wait_for("roof: the selected op's (bf16 matrix)");
    s.press("\x1b");
    s.wait_for("w/s zoom");
    s.quit();
}
