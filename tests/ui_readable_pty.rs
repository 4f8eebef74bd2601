//! End-to-end (issue 53 §1, §5, §6): the real binary at 80×24 in a pseudo-terminal opens the bf16
//! H200 capture on a screen with its GPU stream and `x device` on the status line; `/gemm` says
//! no name holds the text; `W` lists the critical path with its names first.

#![cfg(unix)]

mod common;
use common::pty::Session;
use portable_pty::PtySize;

#[test]
fn a_gpu_capture_at_80x24_shows_its_stream_and_search_says_how_it_matched() {
    let mut s =
        Session::start("tests/fixtures/torch_gpu/worker0.1795882105227733644.pt.trace.json.gz");
    s.master
        .resize(PtySize {
            rows: 24,
            cols: 80,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("resize");
    // The first screen: the GPU process and its stream lead, no key pressed.
    let first = s.wait_for("x device");
    let first = if first.contains(" stream 7") {
        first
    } else {
        s.wait_for(" stream 7")
    };
    assert!(first.contains("GPU 0"), "{first}");
    s.press("/gemm");
    let found = s.wait_for("no name contains “gemm”");
    assert!(found.contains("fuzzy matches"), "{found}");
    s.press("\x1b");
    std::thread::sleep(std::time::Duration::from_millis(300));
    s.press("W");
    let crit = s.wait_for("critical path · ");
    assert!(crit.contains("│name "), "{crit}");
    s.press("\x1b");
    std::thread::sleep(std::time::Duration::from_millis(300));
    s.quit();
}
