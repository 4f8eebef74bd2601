//! The key table drives the docs and can be remapped from a config file: the generated keys
//! section of `docs/ui.md` is current, and a remapped key drives the real app.

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use std::sync::Arc;
use std::time::Instant;
use tracetui::ui::app::{App, Cmd, Msg};
use tracetui::ui::catalog::CaptureRef;
use tracetui::ui::colors::ColorMode;
use tracetui::ui::config;
use tracetui::ui::demo;
use tracetui::ui::keymap::{Keymap, ViewKind};
use tracetui::ui::loader::{LoadDone, Loaded};

mod common;
use common::{key, screen};

const BEGIN: &str = "<!-- keys:begin (generated from src/ui/keymap.rs) -->";
const END: &str = "<!-- keys:end -->";

#[test]
fn docs_keys_section_is_generated_from_the_table() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/ui.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let a = doc.find(BEGIN).expect("begin marker") + BEGIN.len();
    let b = doc.find(END).expect("end marker");
    let want = Keymap::default().markdown();
    if std::env::var_os("TRACETUI_BLESS_DOCS").is_some() {
        let fresh = format!("{}{want}{}", &doc[..a], &doc[b..]);
        std::fs::write(path, fresh).unwrap();
        return;
    }
    assert_eq!(
        &doc[a..b],
        want,
        "docs/ui.md keys section is stale: run TRACETUI_BLESS_DOCS=1 cargo test --test ui_keys"
    );
}

fn demo_app(cfg: &config::Config) -> App {
    let cap = CaptureRef {
        source: tracetui::model::SourceInfo {
            path: "demo.pt.trace.json".into(),
            run: "demo".into(),
            host: "worker0".into(),
            file_bytes: 0,
        },
        format: Some(tracetui::model::Format::Kineto),
        modified: None,
        span: None,
    };
    let (mut app, cmds) = App::with_config(vec![cap], (120, 40), ColorMode::Ansi256, cfg);
    let Some(Cmd::Load { generation, .. }) = cmds.first() else {
        panic!("expected a load")
    };
    let generation = *generation;
    let loaded = Loaded::new(demo::capture(6, 4, true), Instant::now());
    app.update(Msg::Load(LoadDone::finished(
        generation,
        0,
        Ok(Arc::new(loaded)),
    )));
    app
}

#[test]
fn a_config_file_remaps_keys_and_the_app_follows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(
        &path,
        "# my keys\n[keys.timeline]\nzoom_in = [\"i\"]\nzoom_out = \"o\"\nfrobnicate = \"x\"\n\n[keys.global]\nquit = [\"Ctrl-q\"]\n",
    )
    .unwrap();
    let (cfg, errors) = config::load(Some(&path));
    // The bad line is reported with its number; the rest applies.
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].line, Some(5));
    assert!(
        errors[0]
            .to_string()
            .contains("unknown action `frobnicate`")
    );

    let mut app = demo_app(&cfg);
    let w0 = app.vp.width();
    app.update(key('w'));
    assert_eq!(app.vp.width(), w0, "w is no longer bound");
    app.update(key('i'));
    assert!(app.vp.width() < w0, "i zooms in");
    app.update(key('o'));
    assert_eq!(app.vp.width(), w0, "o zooms out");
    // Hints and help show the new keys.
    let s = screen(&app);
    assert!(s.contains("i/o zoom"), "{s}");
    app.update(key('?'));
    assert_eq!(app.top(), ViewKind::Help);
    let s = screen(&app);
    assert!(s.contains("Ctrl-Q") && s.contains(" i "), "{s}");
    app.update(key('z'));
    // q no longer quits; Ctrl-Q does.
    assert!(app.update(key('q')).is_empty());
    let ctrl_q = KeyEvent::new(
        KeyCode::Char('q'),
        ratatui::crossterm::event::KeyModifiers::CONTROL,
    );
    assert!(matches!(
        app.update(Msg::Key(ctrl_q)).as_slice(),
        [Cmd::Quit]
    ));
}

#[test]
fn print_config_lists_every_action_and_parses_back() {
    let out = assert_cmd::Command::cargo_bin("tracetui")
        .unwrap()
        .arg("--print-config")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for a in tracetui::ui::action::Action::ALL {
        assert!(text.contains(&format!("{} = [", a.name())), "{}", a.name());
    }
    let (_, errors) = config::parse(&text, std::path::Path::new("printed"));
    assert!(errors.is_empty(), "{errors:?}");
}
