//! `event` and `window` on a real capture (tests/fixtures/torch_gpu, a cut of the shared H200
//! torch capture): the event facts against the capture itself, and the window's interval-index
//! selection against a brute-force scan of every slice.

use std::path::Path;
use std::time::Instant;
use tracetui::cli::window::select;
use tracetui::model::Category;
use tracetui::ui::event_info::{MAX_CHILDREN, event_info, on_device};
use tracetui::ui::loader::Loaded;

fn loaded() -> Loaded {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/torch_gpu/worker0.1795774111709892780.pt.trace.json.gz");
    let cap = tracetui::formats::load(
        &p,
        tracetui::model::SourceInfo::default(),
        &tracetui::formats::Progress::default(),
    )
    .expect("load fixture");
    Loaded::new_deferred(cap, Instant::now())
}

#[test]
fn event_facts_match_the_capture() {
    let l = loaded();
    let cap = &l.cap;
    let s = &cap.slices;
    let z = cap.time_zero();
    let (mut launches, mut kernels_with_op) = (0, 0);
    for id in 0..s.len() as u32 {
        let e = event_info(&l, id).expect("an event");
        let i = id as usize;
        assert_eq!(e.event.dur_ns, (s.dur[i] + 500).div_euclid(1000));
        assert_eq!(e.event.start_ns, (s.start[i] - z + 500).div_euclid(1000));
        // Parents: outermost first, each containing the event, as deep as its depth.
        assert_eq!(
            e.parents.len(),
            usize::from(cap.depth(id)).min(32),
            "event {id}"
        );
        for p in &e.parents {
            let pi = p.id as usize;
            assert!(
                s.start[pi] <= s.start[i] && s.end(pi) >= s.end(i),
                "parent {} of {id}",
                p.id
            );
        }
        // Children: direct ones, and self time is the duration minus theirs.
        let kids: Vec<u32> = (0..s.len() as u32)
            .filter(|&c| s.parent[c as usize] == id)
            .collect();
        if e.children_count <= MAX_CHILDREN {
            let listed: Vec<u32> = e.children.iter().map(|c| c.id).collect();
            let mut sorted = listed.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, kids, "children of {id}");
        }
        let kid_ps: i64 = kids.iter().map(|&c| s.dur[c as usize]).sum();
        assert_eq!(
            e.self_ns,
            ((s.dur[i] - kid_ps).max(0) + 500).div_euclid(1000)
        );
        // A launch and its kernel point at each other; the kernel names the op around the launch.
        for p in e.partners.iter().filter(|p| p.relation == "launches") {
            launches += 1;
            assert!(on_device(cap, p.event.id) && !on_device(cap, id));
            assert!(e.launched.iter().any(|k| k.id == p.event.id));
            let k = event_info(&l, p.event.id).expect("kernel");
            assert_eq!(k.launching_call.as_ref().map(|c| c.id), Some(id));
            if let Some(op) = &k.launching_op {
                kernels_with_op += 1;
                assert_eq!(s.kind(op.id as usize), Category::CpuOp);
                assert!(e.parents.iter().any(|p| p.id == op.id));
            }
        }
    }
    assert!(
        launches > 100 && kernels_with_op > 100,
        "{launches} launches, {kernels_with_op} with an op"
    );
    assert!(event_info(&l, s.len() as u32).is_none());
}

#[test]
fn window_equals_a_brute_force_scan() {
    let l = loaded();
    let cap = &l.cap;
    let s = &cap.slices;
    let z = cap.time_zero();
    let end = (0..s.len()).map(|i| s.end(i)).max().unwrap_or(z);
    let re = regex::Regex::new("stream").expect("regex");
    let steps = 37;
    for k in 0..steps {
        // Ranges of every width, from a point to the whole capture.
        let a = z + (end - z) * k / steps;
        let b = (a + (end - z) * (k % 5) / 7).min(end);
        for (track, depth, min_dur) in [
            (None, None, None),
            (Some(&re), Some(0u16), None),
            (None, Some(2), Some(5_000_000i64)),
        ] {
            let (_, got) = select(&l, a, b, track, depth, min_dur);
            let hi = b.max(a + 1);
            let mut want: Vec<u32> = (0..s.len() as u32)
                .filter(|&id| {
                    let i = id as usize;
                    let t = cap.track_of(id);
                    let label = format!(
                        "{} / {}",
                        cap.process_title(cap.tracks[t as usize].process),
                        cap.track_name(t)
                    );
                    s.start[i] < hi
                        && (s.end(i) > a || (s.dur[i] == 0 && s.start[i] >= a))
                        && track.is_none_or(|r| r.is_match(&label))
                        && depth.is_none_or(|d| cap.depth(id) <= d)
                        && min_dur.is_none_or(|m| s.dur[i] >= m)
                })
                .collect();
            want.sort_unstable_by_key(|&id| (s.start[id as usize], cap.track_of(id), id));
            assert_eq!(
                got, want,
                "range {a}..{b} track {track:?} depth {depth:?} min {min_dur:?}"
            );
        }
    }
}
