//! The picker over a run of many ranks (issue 53 §7): ranks in numeric order, the run overview
//! offered first (`R` in the picker opens it), a trace preselected over a memory profile.

mod common;
use common::run::write_run;
use common::{key, run_cmds, screen};
use tracetui::ui::app::{App, Screen};
use tracetui::ui::catalog;
use tracetui::ui::colors::ColorMode;
use tracetui::ui::keymap::ViewKind;

/// A 12-rank run whose files are named `worker0` … `worker11` (text order: 0, 1, 10, 11, 2 …).
fn twelve_workers(dir: &std::path::Path) {
    write_run(dir, 12);
    let job = dir.join("job");
    for r in 0..12 {
        std::fs::rename(
            job.join(format!("node_{}.1.pt.trace.json", 100 + r)),
            job.join(format!("worker{r}.1.pt.trace.json")),
        )
        .expect("rename");
    }
}

/// File times vary: `~2026-12-07 22:30` / `~12-07 22:30` become `[mtime]`.
fn redact(s: &str) -> String {
    let re = regex::Regex::new(r"~(\d{4}-)?\d\d-\d\d \d\d:\d\d").expect("regex");
    re.replace_all(s, "[mtime]").into_owned()
}

#[test]
fn many_ranks_in_numeric_order_with_the_overview_offered_first() {
    let d = tempfile::tempdir().expect("tempdir");
    twelve_workers(d.path());
    for (w, h) in [(80, 24), (120, 40)] {
        let caps = catalog::scan(d.path()).expect("scan");
        let (mut app, cmds) = App::new(caps, (w, h), ColorMode::None);
        run_cmds(&mut app, cmds);
        assert_eq!(app.screen(), Screen::Picker);
        let hosts: Vec<&str> = app
            .entries
            .iter()
            .map(|e| e.capture.source.host.as_str())
            .collect();
        let want: Vec<String> = (0..12).map(|r| format!("worker{r}")).collect();
        assert_eq!(hosts, want);
        let s = redact(&screen(&app));
        assert!(
            s.lines()
                .next()
                .is_some_and(|l| l.contains("12 ranks: R run overview, or pick one")),
            "{s}"
        );
        insta::assert_snapshot!(format!("twelve_ranks_picker_{w}x{h}"), s);
        let cmds = app.update(key('R'));
        run_cmds(&mut app, cmds);
        assert_eq!(app.top(), ViewKind::Overview, "{}", screen(&app));
    }
}

#[test]
fn a_two_rank_run_has_no_offer_and_r_still_opens_it() {
    let d = tempfile::tempdir().expect("tempdir");
    write_run(d.path(), 2);
    let caps = catalog::scan(d.path()).expect("scan");
    let (mut app, cmds) = App::new(caps, (120, 40), ColorMode::None);
    run_cmds(&mut app, cmds);
    let s = screen(&app);
    assert!(
        s.lines()
            .next()
            .is_some_and(|l| l.contains("captures, newest first")),
        "{s}"
    );
    // Two ranks: `R` still opens their overview.
    let cmds = app.update(key('R'));
    run_cmds(&mut app, cmds);
    assert_eq!(app.top(), ViewKind::Overview);
}
