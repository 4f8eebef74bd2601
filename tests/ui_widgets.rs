//! Widget tests: the timeline, ruler and details drawn straight into a `Buffer`.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier};
use std::time::Instant;
use tracetui::index::Cell;
use tracetui::model::{CaptureBuilder, Format, Key, SourceInfo, TrackKind};
use tracetui::ui::app::{App, Mark, Row};
use tracetui::ui::catalog::CaptureRef;
use tracetui::ui::colors::ColorMode;
use tracetui::ui::loader::Loaded;
use tracetui::ui::timeline::Timeline;
use tracetui::ui::{details, ruler};

/// One thread: `outer` [0, 100) with children `a` [10, 40) and `b\x1b[31m` [60, 61) (tiny),
/// all in ns (×1000 ps).
fn tiny() -> Loaded {
    let mut b = CaptureBuilder::new();
    let p = b.process(Key::Int(1));
    let t = b.track(p, Key::Int(1), TrackKind::Thread);
    let cat = b.intern("cpu_op");
    for (name, s, d) in [("outer", 0, 100), ("alpha", 10, 30), ("b\x1b[31m", 60, 1)] {
        let n = b.intern(name);
        b.add_slice(t, s * 1000, d * 1000, n, cat, Default::default(), 0);
    }
    Loaded::new(
        b.finish(SourceInfo::default(), Format::Chrome),
        Instant::now(),
    )
}

fn app_on(l: &Loaded, mode: ColorMode) -> App {
    let (mut app, _) = App::new(Vec::<CaptureRef>::new(), (70, 10), mode);
    app.state_mut().vp.t0 = 0;
    app.state_mut().vp.t1 = 100_000;
    app.state_mut().rows.list = vec![
        Row::Lane { track: 0, lane: 0 },
        Row::Lane { track: 0, lane: 1 },
    ];
    let _ = l;
    app
}

fn line(buf: &Buffer, y: u16) -> String {
    (0..buf.area.width)
        .map(|x| buf[(x, y)].symbol().to_string())
        .collect()
}

#[test]
fn slices_labels_edges_and_sanitized_names() {
    let l = tiny();
    let app = app_on(&l, ColorMode::True);
    let area = Rect::new(0, 0, 50, 2);
    let mut buf = Buffer::empty(area);
    Timeline { state: &app, l: &l }.draw(&mut buf, area, &mut Vec::<Cell>::new());
    let top = line(&buf, 0);
    let kids = line(&buf, 1);
    // 50 columns over 100 ns: 2 ns per column. `outer` fills the row, labelled.
    assert!(top.starts_with("█outer█"), "{top:?}");
    assert_eq!(top.chars().count(), 50);
    // `alpha` covers columns 5..20 with its label; the tiny slice shows as a half block.
    assert_eq!(&kids.chars().skip(5).take(7).collect::<String>(), "█alpha█");
    let c30: String = kids.chars().skip(30).take(1).collect();
    assert!(["▌", "▐"].contains(&c30.as_str()), "{kids:?}");
    assert!(kids.chars().all(|c| !c.is_control()));
    // Colours: body cells carry the name colour, label cells the contrasting text colour.
    let body = buf[(10, 0)].style();
    assert!(matches!(body.fg, Some(Color::Rgb(..))));
    let label = buf[(1, 0)].style();
    assert_eq!(label.bg, body.fg);
}

#[test]
fn narrow_window_merges_and_selection_is_reversed() {
    let l = tiny();
    let mut app = app_on(&l, ColorMode::None);
    let area = Rect::new(0, 0, 4, 2);
    app.state_mut().selected = Some(1);
    let mut buf = Buffer::empty(area);
    Timeline { state: &app, l: &l }.draw(&mut buf, area, &mut Vec::<Cell>::new());
    // Nothing silently dropped: every column with a slice draws something.
    let kids = line(&buf, 1);
    assert!(
        kids.chars().take(4).filter(|c| *c != ' ').count() >= 2,
        "{kids:?}"
    );
    // The selected child is drawn reversed (NO_COLOR: modifiers only, no colours).
    let sel = buf[(0, 1)].style();
    assert!(sel.add_modifier.contains(Modifier::REVERSED), "{sel:?}");
    assert!(buf[(0, 1)].style().fg.is_none_or(|c| c == Color::Reset));
}

#[test]
fn ruler_ticks_are_round() {
    let area = Rect::new(0, 0, 60, 1);
    let mut buf = Buffer::empty(area);
    ruler::draw(&mut buf, area, (0, 100_000), 0, &Mark::None);
    let s = line(&buf, 0);
    assert!(s.contains("│0 ns") && s.contains("│20 ns"), "{s:?}");
}

#[test]
fn ruler_labels_are_whole_or_absent() {
    // Every window and width: each label is a complete time with its unit, never cut.
    for cols in [20u16, 37, 61, 80, 113] {
        for (t0, t1) in [
            (0, 100_000),
            (596_790_000_000, 603_090_000_000),
            (-7, 1_000_003),
        ] {
            let area = Rect::new(0, 0, cols, 1);
            let mut buf = Buffer::empty(area);
            ruler::draw(&mut buf, area, (t0, t1), 0, &Mark::None);
            let s = line(&buf, 0);
            for part in s.split('│').skip(1) {
                let p = part.trim();
                assert!(
                    p.is_empty() || p.ends_with('s'),
                    "{cols} cols {t0}..{t1}: cut label {p:?} in {s:?}"
                );
            }
        }
    }
}

#[test]
fn details_show_self_time_and_breadcrumb() {
    let l = tiny();
    let mut app = app_on(&l, ColorMode::None);
    let alpha = (0..l.cap.slices.len() as u32)
        .find(|&i| l.cap.slice_name(i) == "alpha")
        .unwrap();
    let outer = l.index.parent(&l.cap, alpha).unwrap();
    assert_eq!(details::self_time(&l, outer), 100_000 - 30_000 - 1_000);
    app.state_mut().selected = Some(alpha);
    let text: Vec<String> = details::lines(&app, &l).into_iter().map(|x| x.0).collect();
    assert!(
        text[0].starts_with("alpha") && text[0].contains("dur 30.00 ns"),
        "{text:?}"
    );
    assert!(text.iter().any(|t| t == "outer › alpha"), "{text:?}");
}

mod never_drops {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Every column that some slice of a lane overlaps draws a non-blank cell (brute force).
        #[test]
        fn every_occupied_column_draws_something(
            slices in prop::collection::vec((0i64..10_000, 0i64..500), 1..60),
            t0 in -1_000i64..9_000,
            w in 1i64..20_000,
            cols in 1u16..120,
        ) {
            let mut b = CaptureBuilder::new();
            let p = b.process(Key::Int(1));
            let t = b.track(p, Key::Int(1), TrackKind::Thread);
            let n = b.intern("x");
            for (s, d) in &slices {
                b.add_slice(t, *s, *d, n, StrIdEmpty::E, Default::default(), 0);
            }
            let l = Loaded::new(b.finish(SourceInfo::default(), Format::Chrome), Instant::now());
            let lanes = l.index.lane_count(0);
            let (mut app, _) = App::new(Vec::<CaptureRef>::new(), (cols + 20, 10), ColorMode::None);
            app.state_mut().vp.t0 = t0;
            app.state_mut().vp.t1 = t0 + w;
            app.state_mut().rows.list = (0..lanes as u16).map(|lane| Row::Lane { track: 0, lane }).collect();
            let area = Rect::new(0, 0, cols, lanes as u16);
            let mut buf = Buffer::empty(area);
            Timeline { state: &app, l: &l }.draw(&mut buf, area, &mut Vec::<Cell>::new());
            let s = &l.cap.slices;
            for lane in 0..lanes {
                for k in 0..cols as usize {
                    let a = tracetui::index::column_edge(app.vp.t0, app.vp.t1, cols as usize, k);
                    let bb = tracetui::index::column_edge(app.vp.t0, app.vp.t1, cols as usize, k + 1).max(a + 1);
                    let occupied = (0..s.len()).any(|i| {
                        s.lane[i] as usize == lane
                            && ((s.start[i] < bb && s.end(i) > a)
                                || (s.dur[i] == 0 && s.start[i] >= a && s.start[i] < bb))
                    });
                    let sym = buf[(k as u16, lane as u16)].symbol().to_string();
                    if occupied {
                        prop_assert!(sym != " ", "lane {} col {} blank", lane, k);
                    } else {
                        prop_assert_eq!(sym, " ", "lane {} col {} drawn but empty", lane, k);
                    }
                }
            }
        }
    }

    /// The empty category id.
    struct StrIdEmpty;
    impl StrIdEmpty {
        const E: tracetui::model::StrId = tracetui::model::StrId::EMPTY;
    }
}
