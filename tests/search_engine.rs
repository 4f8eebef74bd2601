//! Search engine: ranking, aggregates under filters, incremental narrowing, highlight positions,
//! regex errors, and occurrence order against a brute-force scan over random captures.

use proptest::prelude::*;
use tracetui::analysis::search::*;
use tracetui::analysis::stats::{StatsOptions, compute};
use tracetui::index::CaptureIndex;
use tracetui::model::*;

/// Host thread (pid 1, "python") and a GPU process (pid 2, "GPU 0") with stream 7.
fn capture() -> Capture {
    let mut b = CaptureBuilder::new();
    let host = b.process(Key::Int(1));
    let gpu = b.process(Key::Int(2));
    let gname = b.intern("GPU 0");
    b.process_mut(gpu).name = gname;
    b.process_mut(gpu).kind = ProcessKind::Gpu;
    let th = b.track(host, Key::Int(10), TrackKind::Thread);
    let st = b.track(gpu, Key::Int(7), TrackKind::GpuStream);
    let [mm, add, gemm, step, cpu, kern, dims, hlo] = [
        "aten::mm",
        "aten::add",
        "sgemm_128x64",
        "ProfilerStep#1",
        "cpu_op",
        "kernel",
        "Input Dims",
        "hlo_op",
    ]
    .map(|s| b.intern(s));
    let fusion = b.intern("fusion.12");
    b.args.begin();
    let json = b.intern("[[2, 3]]");
    b.args.push(dims, ArgValue::Json(json));
    let a23 = b.args.finish();
    b.args.begin();
    b.args.push(dims, ArgValue::I64(42));
    let a42 = b.args.finish();
    b.args.begin();
    b.args.push(hlo, ArgValue::Str(fusion));
    let ah = b.args.finish();
    // host: step [0,1000) ⊃ mm [100,400) ⊃ add [150,200); mm [500,600); add [700,710)
    b.add_slice(th, 0, 1000, step, cpu, ArgsRef::NONE, 0);
    b.add_slice(th, 100, 300, mm, cpu, a23, 0);
    b.add_slice(th, 150, 50, add, cpu, a42, 0);
    b.add_slice(th, 500, 100, mm, cpu, a42, 0);
    b.add_slice(th, 700, 10, add, cpu, ArgsRef::NONE, 0);
    // stream: gemm kernels, one with an hlo_op stat
    b.add_slice(st, 120, 80, gemm, kern, ah, 0);
    b.add_slice(st, 520, 40, gemm, kern, ArgsRef::NONE, 0);
    b.add_slice(st, 600, 5, mm, kern, ArgsRef::NONE, 0);
    b.add_aggregated(st, gemm, 3, 30);
    b.finish(SourceInfo::default(), Format::Kineto)
}

fn run(c: &Capture, idx: &CaptureIndex, q: &str, mode: Mode) -> Results {
    SearchEngine::build(c)
        .search(c, idx, &Query::parse(q, mode), None, usize::MAX)
        .expect("valid query")
}

fn names(c: &Capture, r: &Results) -> Vec<String> {
    r.hits
        .iter()
        .map(|h| c.strings.get(h.name).to_string())
        .collect()
}

fn hit<'a>(c: &Capture, r: &'a Results, name: &str) -> &'a Hit {
    r.hits
        .iter()
        .find(|h| c.strings.get(h.name) == name)
        .expect("hit")
}

#[test]
fn aggregates_match_stats_and_rank_by_total() {
    let c = capture();
    let idx = CaptureIndex::build(&c);
    let r = run(&c, &idx, "", Mode::Fuzzy);
    // Empty text: every name, by total time.
    assert_eq!(
        names(&c, &r),
        ["ProfilerStep#1", "aten::mm", "sgemm_128x64", "aten::add"]
    );
    // Every event (search covers them all; a PyTorch capture's default table is torch's set).
    let table = compute(
        &c,
        &StatsOptions {
            every: true,
            ..StatsOptions::default()
        },
    );
    for h in &r.hits {
        let n = tracetui::analysis::stats::group_name(c.strings.get(h.name));
        // Stats keeps kinds apart (aten::mm as a CPU op and as a kernel): the hit sums them.
        let rows: Vec<_> = table.rows.iter().filter(|x| x.name == n).collect();
        assert!(!rows.is_empty(), "{n}");
        assert_eq!(
            (h.count, h.total, h.self_ps),
            (
                rows.iter().map(|r| r.count).sum::<u64>(),
                rows.iter().map(|r| r.total_ps).sum::<Ps>(),
                rows.iter().map(|r| r.self_ps).sum::<Ps>()
            ),
            "{n}"
        );
    }
    let mm = hit(&c, &r, "aten::mm");
    assert_eq!((mm.count, mm.total, mm.self_ps), (3, 405, 355));
    let g = hit(&c, &r, "sgemm_128x64");
    assert_eq!((g.count, g.total, g.self_ps), (5, 150, 150));
}

#[test]
fn fuzzy_ranking_and_highlight() {
    let c = capture();
    let idx = CaptureIndex::build(&c);
    let r = run(&c, &idx, "mm", Mode::Fuzzy);
    // `mm` consecutive in aten::mm scores above sgemm's; ProfilerStep has no two m's.
    assert_eq!(names(&c, &r), ["aten::mm", "sgemm_128x64"]);
    assert!(r.hits[0].score > r.hits[1].score);
    let m = Matcher::new(&r.query).expect("fuzzy");
    assert_eq!(m.indices("sgemm_128x64"), vec![3, 4]);
    // Equal scores fall back to total time: `a` starts both aten names.
    let r = run(&c, &idx, "aten", Mode::Fuzzy);
    assert_eq!(names(&c, &r), ["aten::mm", "aten::add"]);
    assert_eq!(r.hits[0].score, r.hits[1].score);
}

#[test]
fn filters_resum_groups_and_read_args_lazily() {
    let c = capture();
    let idx = CaptureIndex::build(&c);
    let r = run(&c, &idx, "mm cat:kernel", Mode::Fuzzy);
    assert_eq!(names(&c, &r), ["aten::mm", "sgemm_128x64"]);
    assert_eq!(hit(&c, &r, "aten::mm").count, 1);
    // Aggregated events have no category: cat: leaves them out.
    assert_eq!(hit(&c, &r, "sgemm_128x64").count, 2);
    let r = run(&c, &idx, "proc:gpu track:\"stream 7\"", Mode::Fuzzy);
    assert_eq!(names(&c, &r), ["sgemm_128x64", "aten::mm"]);
    let r = run(&c, &idx, "proc:python", Mode::Fuzzy);
    assert!(r.hits.is_empty());
    let r = run(&c, &idx, "proc:pid track:tid cat:cpu_op", Mode::Fuzzy);
    assert_eq!(r.hits.len(), 3);
    // arg: with a value (JSON text, numbers as displayed) and key only.
    let r = run(&c, &idx, "arg:\"Input Dims=2, 3\"", Mode::Fuzzy);
    let mm = hit(&c, &r, "aten::mm");
    assert_eq!(
        (r.hits.len(), mm.count, mm.total, mm.self_ps),
        (1, 1, 300, 250)
    );
    let r = run(&c, &idx, "arg:Input\\ Dims", Mode::Fuzzy);
    assert!(
        r.hits.is_empty(),
        "backslash is not an escape outside quotes"
    );
    let r = run(&c, &idx, "\"arg:Input\" arg:\"Input Dims=4\"", Mode::Fuzzy);
    assert!(r.hits.is_empty(), "text `arg:Input` matches no name");
    let r = run(&c, &idx, "arg:\"Input Dims=4\"", Mode::Fuzzy);
    assert_eq!(names(&c, &r), ["aten::mm", "aten::add"]);
    let r = run(&c, &idx, "arg:hlo_op=FUSION", Mode::Fuzzy);
    assert_eq!(names(&c, &r), ["sgemm_128x64"]);
    assert_eq!(hit(&c, &r, "sgemm_128x64").count, 1);
    let r = run(&c, &idx, "arg:nope", Mode::Fuzzy);
    assert!(r.hits.is_empty());
}

#[test]
fn narrowing_reuses_previous_hits() {
    let c = capture();
    let idx = CaptureIndex::build(&c);
    let e = SearchEngine::build(&c);
    let q = |s: &str| Query::parse(s, Mode::Fuzzy);
    let a = e.search(&c, &idx, &q("a"), None, 10).expect("ok");
    assert_eq!(a.scanned, 4);
    let b = e.search(&c, &idx, &q("at"), Some(&a), 10).expect("ok");
    assert_eq!(b.scanned, a.hits.len());
    let full = e.search(&c, &idx, &q("at"), None, 10).expect("ok");
    assert_eq!(b.hits, full.hits);
    // Shrinking or a new filter scans everything again.
    let d = e
        .search(&c, &idx, &q("at cat:kernel"), Some(&b), 10)
        .expect("ok");
    assert_eq!(d.scanned, 4);
}

#[test]
fn regex_mode_and_errors() {
    let c = capture();
    let idx = CaptureIndex::build(&c);
    let r = run(&c, &idx, "^aten::", Mode::Regex);
    assert_eq!(names(&c, &r), ["aten::mm", "aten::add"]);
    let e = SearchEngine::build(&c)
        .search(&c, &idx, &Query::parse("(", Mode::Regex), None, 5)
        .expect_err("bad regex");
    assert!(matches!(e, SearchError::Regex { .. }));
    assert!(e.to_string().contains("unclosed group"), "{e}");
}

#[test]
fn occurrences_step_and_count() {
    let c = capture();
    let idx = CaptureIndex::build(&c);
    let r = run(&c, &idx, "mm", Mode::Fuzzy);
    let ns: Vec<StrId> = r.hits.iter().map(|h| h.name).collect();
    let occ = Occurrences::of_names(&c, &idx, &ns, &r.filter);
    let starts: Vec<i64> = occ
        .ids()
        .iter()
        .map(|&i| c.slices.start[i as usize])
        .collect();
    assert_eq!(starts, [100, 120, 500, 520, 600]);
    let (k, id) = occ.next_after(&c, occ.ids()[1]).expect("next");
    assert_eq!((k, c.slices.start[id as usize]), (2, 500));
    let (k, _) = occ.prev_before(&c, occ.ids()[1]).expect("prev");
    assert_eq!(k, 0);
    assert!(occ.prev_before(&c, occ.ids()[0]).is_none());
    assert!(occ.next_after(&c, occ.ids()[4]).is_none());
    assert_eq!(occ.position(&c, occ.ids()[3]), Some(3));
    assert_eq!(occ.count_in(&c, 110, 520), 2);
    let gpu = c.track_of(occ.ids()[1]);
    assert_eq!(occ.within_track(&c, gpu).len(), 3);
    let first = first_occurrences(&c, &idx, r.hits[0].name, &r.filter, 2);
    assert_eq!(first.len(), 2);
}

type Spec = (u8, i64, i64, u8);

fn build(spec: &[Spec]) -> Capture {
    let mut b = CaptureBuilder::new();
    let names: Vec<StrId> = (0..40).map(|i| b.intern(&format!("name{i}"))).collect();
    let p = b.process(Key::Int(1));
    let tracks: Vec<u32> = (0..3)
        .map(|t| b.track(p, Key::Int(t), TrackKind::Thread))
        .collect();
    for &(t, s, d, n) in spec {
        b.add_slice(
            tracks[t as usize % 3],
            s,
            d,
            names[n as usize % 40],
            StrId::EMPTY,
            ArgsRef::NONE,
            0,
        );
    }
    b.finish(SourceInfo::default(), Format::Chrome)
}

proptest! {
    /// Occurrences of any name set (up to 40 names: both the merge of posting lists and the scan
    /// over tracks) equal a brute-force scan sorted by (start, id); next / prev /
    /// position / range counts equal linear searches over it.
    #[test]
    fn occurrence_order_matches_brute_force(
        spec in prop::collection::vec((0u8..3, -50i64..50, 0i64..30, 0u8..40), 0..80),
        pick in prop::collection::vec(0u8..40, 1..40),
        probe in -60i64..60,
        width in 0i64..40,
    ) {
        let c = build(&spec);
        let idx = CaptureIndex::build(&c);
        let want: Vec<StrId> = pick.iter().filter_map(|i| c.strings.lookup(&format!("name{i}"))).collect();
        let s = &c.slices;
        let mut brute: Vec<u32> = (0..s.len() as u32).filter(|&i| want.contains(&s.name[i as usize])).collect();
        brute.sort_by_key(|&i| (s.start[i as usize], i));
        brute.dedup();
        let mut names = want.clone();
        names.sort();
        names.dedup();
        let occ = Occurrences::of_names(&c, &idx, &names, &EventFilter::default());
        prop_assert_eq!(occ.ids(), brute.as_slice());
        for id in 0..s.len() as u32 {
            let key = (s.start[id as usize], id);
            let next = brute.iter().position(|&x| (s.start[x as usize], x) > key);
            prop_assert_eq!(occ.next_after(&c, id).map(|p| p.0), next);
            let prev = brute.iter().rposition(|&x| (s.start[x as usize], x) < key);
            prop_assert_eq!(occ.prev_before(&c, id).map(|p| p.0), prev);
            prop_assert_eq!(occ.position(&c, id), brute.iter().position(|&x| x == id));
        }
        let n = brute.iter().filter(|&&x| (probe..probe + width).contains(&s.start[x as usize])).count();
        prop_assert_eq!(occ.count_in(&c, probe, probe + width), n);
        for t in 0..c.tracks.len() as u32 {
            let (a, b) = c.tracks[t as usize].slices;
            let on: Vec<u32> = brute.iter().copied().filter(|&x| x >= a && x < b).collect();
            let within = occ.within_track(&c, t);
            prop_assert_eq!(within.ids(), on.as_slice());
        }
    }
}

/// A capture with `n` distinct names, one slice each (1 µs apart).
fn many_names(n: usize) -> Capture {
    let mut b = CaptureBuilder::new();
    let p = b.process(Key::Int(1));
    let t = b.track(p, Key::Int(1), TrackKind::Thread);
    let cat = b.intern("cpu_op");
    for i in 0..n {
        let name = b.intern(&format!(
            "op_{}_{i}",
            ["mm", "add", "fusion", "copy"][i % 4]
        ));
        b.add_slice(
            t,
            i as i64 * 2_000_000,
            1_000_000,
            name,
            cat,
            ArgsRef::NONE,
            0,
        );
    }
    b.finish(SourceInfo::default(), Format::Chrome)
}

#[test]
fn large_searches_split_over_cores_find_exactly_the_matching_names() {
    // Above the parallel threshold (16 k candidates): the split scan must equal a brute force.
    let cap = many_names(40_000);
    let idx = CaptureIndex::build(&cap);
    let e = SearchEngine::build(&cap);
    let mut prev: Option<Results> = None;
    for text in ["f", "fu", "fus", "fusion_1"] {
        let q = Query::parse(text, Mode::Fuzzy);
        let m = Matcher::new(&q).unwrap();
        let mut want: Vec<StrId> = (0..cap.slices.len())
            .map(|i| cap.slices.name[i])
            .filter(|&n| m.score(cap.strings.get(n)).is_some())
            .collect();
        want.sort_unstable();
        let r = e.search(&cap, &idx, &q, prev.as_ref(), 50).unwrap();
        let mut got: Vec<StrId> = r.hits.iter().map(|h| h.name).collect();
        got.sort_unstable();
        assert_eq!(got, want, "{text}");
        // Same ranking as a search from scratch.
        let fresh = e.search(&cap, &idx, &q, None, 50).unwrap();
        let top = |r: &Results| r.hits[..r.ranked().min(50)].to_vec();
        assert_eq!(top(&r), top(&fresh), "{text}");
        prev = Some(r);
    }
}

/// Issue 53 §6: a name holding the text as typed ranks above names that only hold its letters
/// apart, even where nucleo scores the scattered letters higher (word starts); `only_scattered`
/// says when no name holds it.
#[test]
fn contiguous_matches_rank_above_scattered_ones() {
    let mut b = CaptureBuilder::new();
    let p = b.process(Key::Int(1));
    let th = b.track(p, Key::Int(1), TrackKind::Thread);
    let ids = [
        "GeneratorMM",
        "Gelu_Elementwise_Mul_Mean",
        "ampere_sgemm_128x64",
    ]
    .map(|s| b.intern(s));
    // The scattered names are the longest: total time alone would rank them first too.
    for (k, &n) in ids.iter().enumerate() {
        b.add_slice(
            th,
            1000 * k as i64,
            500 - 100 * k as i64,
            n,
            StrId::EMPTY,
            ArgsRef::NONE,
            0,
        );
    }
    let c = b.finish(SourceInfo::default(), Format::Chrome);
    let idx = CaptureIndex::build(&c);
    let m = Matcher::new(&Query::parse("gemm", Mode::Fuzzy)).expect("fuzzy");
    let score = |n: &str| m.score(n).expect("match");
    assert!(score("GeneratorMM") > score("ampere_sgemm_128x64"));
    let r = run(&c, &idx, "gemm", Mode::Fuzzy);
    assert_eq!(names(&c, &r)[0], "ampere_sgemm_128x64");
    assert!(r.hits[0].contiguous && !r.hits[1].contiguous && !r.hits[2].contiguous);
    assert!(!r.only_scattered());
    let r = run(&c, &idx, "gmm", Mode::Fuzzy);
    assert_eq!(r.hits.len(), 3);
    assert!(r.only_scattered(), "no name holds \"gmm\"");
    // Regex hits are what was asked: never "scattered".
    assert!(!run(&c, &idx, "G.*M", Mode::Regex).only_scattered());
}
