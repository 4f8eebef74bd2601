//! Load warnings where the user looks (issue 53 §4): the status line counts them on the first
//! screen, `!` lists them with file and offsets; a failed load's error is not cut.

use ratatui::crossterm::event::KeyCode;
use tracetui::ui::keymap::ViewKind;

mod common;
use common::{code, key, open_file, screen};

const CUT: &str = "tests/fixtures/ui/alexnet.truncated.pt.trace.json.gz";
const WHOLE: &str = "tests/fixtures/ui/alexnet.pt.trace.json.gz";
const CLEAN: &str = "tests/fixtures/chrome/tall_trace.json";

fn status_line(s: &str) -> &str {
    s.lines().last().unwrap_or("")
}

#[test]
fn the_first_screen_counts_the_warnings_and_bang_lists_them() {
    for (w, h) in [(80, 24), (120, 40)] {
        let mut app = open_file(CUT, (w, h));
        assert!(app.loaded().is_some());
        let s = screen(&app);
        assert!(
            status_line(&s).contains("⚠ 3 load warnings (!)"),
            "no marker at {w}×{h}:\n{s}"
        );
        insta::assert_snapshot!(format!("truncated_first_screen_{w}x{h}"), s);
        // `!` is the attention view (issue 56): its second tab, the load warnings.
        app.update(key('!'));
        app.update(code(KeyCode::Tab));
        let s = screen(&app);
        for want in [
            "load warnings",
            "alexnet.truncated.pt.trace.json.gz (15000 bytes)",
            "truncated ×1",
            "decompressed text ends at byte 185449",
            "gzip_error ×1",
        ] {
            assert!(s.contains(want), "{want} at {w}×{h}:\n{s}");
        }
        insta::assert_snapshot!(format!("truncated_warnings_{w}x{h}"), s);
        // Esc closes it.
        app.update(code(KeyCode::Esc));
        assert!(!screen(&app).contains("truncated ×1"));
    }
}

#[test]
fn a_whole_capture_has_no_marker_and_bang_says_so() {
    let mut app = open_file(CLEAN, (120, 40));
    let s = screen(&app);
    assert!(!s.contains("load warning"), "{s}");
    // `!` is the attention view: findings (issue 56), then "none" for the load warnings.
    app.update(key('!'));
    app.update(code(KeyCode::Tab));
    let s = screen(&app);
    assert!(s.contains("load warnings: none"), "{s}");
}

#[test]
fn help_lists_the_key() {
    let km = tracetui::ui::keymap::Keymap::default();
    let rows = km.help_rows(ViewKind::Timeline);
    assert!(
        rows.iter()
            .any(|(k, what)| k == "!" && what.contains("load warnings")),
        "{rows:?}"
    );
}

#[test]
fn a_failed_load_shows_its_whole_error() {
    let d = tempfile::tempdir().expect("tempdir");
    let bytes = std::fs::read(WHOLE).expect("read");
    let f = d.path().join("w.100.pt.trace.json.gz");
    std::fs::write(&f, &bytes[..100]).expect("write");
    for (w, h) in [(80, 24), (120, 40)] {
        let app = open_file(f.to_str().expect("utf-8"), (w, h));
        let s = screen(&app);
        let flat: String = s.lines().map(str::trim).collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains("before the first complete event (incomplete deflate stream)"),
            "error cut at {w}×{h}:\n{s}"
        );
        assert!(flat.contains("truncated gzip"), "{s}");
    }
}
