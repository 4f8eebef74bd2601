//! The merged call tree (`analysis::flame`): against a brute-force path count on random nestings
//! (whole capture, ranges, tracks, ancestors of a slice list), and GPU attribution on hand-made
//! traces.

use proptest::prelude::*;
use std::collections::BTreeMap;
use tracetui::analysis::flame::{
    DEVICE, DeviceLinks, FlameTree, Metric, ROOT, Scope, UNLINKED, build, build_ancestors, sandwich,
};
use tracetui::model::{
    ArgsRef, Capture, CaptureBuilder, Format, Key, NO_SLICE, ProcessKind, Ps, SourceInfo, StrId,
    TrackKind,
};

/// (track, start, dur, name) → capture on up to 3 thread tracks, names `n0..n3`.
fn capture(spec: &[(u8, i64, i64, u8)]) -> Capture {
    let mut b = CaptureBuilder::new();
    let p = b.process(Key::Int(1));
    let tracks: Vec<u32> = (0..3)
        .map(|k| b.track(p, Key::Int(k), TrackKind::Thread))
        .collect();
    let names: Vec<StrId> = (0..4).map(|k| b.intern(&format!("n{k}"))).collect();
    for &(t, s, d, n) in spec {
        b.add_slice(
            tracks[usize::from(t % 3)],
            s,
            d,
            names[usize::from(n % 4)],
            StrId::EMPTY,
            ArgsRef::NONE,
            0,
        );
    }
    b.finish(SourceInfo::default(), Format::Chrome)
}

#[derive(Default, Debug, PartialEq, Eq)]
struct Fig {
    total: Ps,
    self_time: Ps,
    count: u64,
    inst: Vec<u32>,
}

/// Containment parent of every slice (torch's rule, written out with a plain stack per track:
/// pop while the slice starts at or after the top's end or ends after it).
fn cparents(c: &Capture) -> Vec<u32> {
    let s = &c.slices;
    let mut out = vec![NO_SLICE; s.len()];
    for tr in &c.tracks {
        let mut st: Vec<u32> = Vec::new();
        for id in tr.slices.0..tr.slices.1 {
            let i = id as usize;
            while let Some(&t) = st.last() {
                let te = s.end(t as usize);
                if s.start[i] >= te || s.end(i) > te {
                    st.pop();
                } else {
                    break;
                }
            }
            out[i] = st.last().copied().unwrap_or(NO_SLICE);
            st.push(id);
        }
    }
    out
}

/// The part of each slice the tree counts, clipped to `[a, z)`: inside its parent's counted
/// part, after the counted parts of its earlier siblings (roots: after earlier roots of the
/// track). Returns (from, to); the counted time is `max(0, to - from)`.
fn counted(c: &Capture, a: Ps, z: Ps) -> Vec<(Ps, Ps)> {
    let s = &c.slices;
    let par = cparents(c);
    let mut out: Vec<(Ps, Ps)> = vec![(0, 0); s.len()];
    for id in 0..s.len() {
        let p = par[id];
        let earlier = (0..id)
            .filter(|&j| par[j] == p && c.track_of(j as u32) == c.track_of(id as u32))
            .map(|j| out[j].1)
            .max()
            .unwrap_or(Ps::MIN);
        let (pf, pt) = if p == NO_SLICE {
            (Ps::MIN, Ps::MAX)
        } else {
            out[p as usize]
        };
        let from = s.start[id].max(a).max(pf).max(earlier);
        let to = s.end(id).min(z).min(pt);
        out[id] = (from, to.max(from));
    }
    out
}

fn path_of(c: &Capture, id: u32) -> Vec<StrId> {
    let par = cparents(c);
    let mut p = Vec::new();
    let mut k = id;
    while k != NO_SLICE {
        p.push(c.slices.name[k as usize]);
        k = par[k as usize];
    }
    p.reverse();
    p
}

/// Brute force: every kept slice's path of names (containment parents), figures summed per
/// path; self = counted time minus the counted times of its kept children.
fn brute(
    c: &Capture,
    keep: &dyn Fn(u32) -> bool,
    clip: &dyn Fn(u32) -> Ps,
) -> BTreeMap<Vec<StrId>, Fig> {
    let par = cparents(c);
    let mut m: BTreeMap<Vec<StrId>, Fig> = BTreeMap::new();
    let n = c.slices.len() as u32;
    for id in (0..n).filter(|&i| keep(i)) {
        let kids: Ps = (0..n)
            .filter(|&j| keep(j) && par[j as usize] == id)
            .map(clip)
            .sum();
        let f = m.entry(path_of(c, id)).or_default();
        f.total += clip(id);
        f.self_time += clip(id) - kids;
        f.count += 1;
        f.inst.push(id);
    }
    m
}

fn figures(t: &FlameTree) -> BTreeMap<Vec<StrId>, Fig> {
    let mut m = BTreeMap::new();
    for n in t.nodes() {
        m.insert(
            t.path_names(n),
            Fig {
                total: t.total(n),
                self_time: t.self_time(n),
                count: t.count(n),
                inst: t.instances(n).to_vec(),
            },
        );
        // Lookup by name finds the same node.
        assert_eq!(t.child(t.parent(n), t.name(n)), Some(n));
    }
    m
}

fn spec() -> impl Strategy<Value = Vec<(u8, i64, i64, u8)>> {
    proptest::collection::vec((0u8..3, 0i64..60, 0i64..25, 0u8..4), 0..60)
}

proptest! {
    #[test]
    fn whole_capture_matches_brute_force(s in spec()) {
        let c = capture(&s);
        let t = build(&c, &Scope::all(), None);
        let cnt = counted(&c, Ps::MIN, Ps::MAX);
        let want = brute(&c, &|_| true, &|i| cnt[i as usize].1 - cnt[i as usize].0);
        prop_assert_eq!(figures(&t), want);
        let roots: Ps = t.children(ROOT).iter().map(|&n| t.total(n)).sum();
        prop_assert_eq!(t.total(ROOT), roots);
    }

    #[test]
    fn range_matches_brute_force(s in spec(), a in 0i64..70, w in 0i64..40) {
        let c = capture(&s);
        let b = a + w;
        let t = build(&c, &Scope::range(a, b), None);
        let sl = &c.slices;
        let keep = |i: u32| {
            let (st, en) = (sl.start[i as usize], sl.end(i as usize));
            (st >= a && st < b) || (st < a && en > a)
        };
        let cnt = counted(&c, a, b);
        let clip = |i: u32| cnt[i as usize].1 - cnt[i as usize].0;
        prop_assert_eq!(figures(&t), brute(&c, &keep, &clip));
    }

    #[test]
    fn tracks_and_ancestors_match_brute_force(s in spec(), pick in 0u32..3, hits in proptest::collection::vec(0u32..60, 0..6)) {
        let c = capture(&s);
        let t = build(&c, &Scope::tracks(vec![pick]), None);
        let keep = |i: u32| c.track_of(i) == pick;
        let cnt = counted(&c, Ps::MIN, Ps::MAX);
        prop_assert_eq!(figures(&t), brute(&c, &keep, &|i| cnt[i as usize].1 - cnt[i as usize].0));
        let par = cparents(&c);
        let n = c.slices.len() as u32;
        let hits: Vec<u32> = hits.into_iter().filter(|&h| h < n).collect();
        let mut set = std::collections::BTreeSet::new();
        for &h in &hits {
            let mut k = h;
            while k != NO_SLICE {
                set.insert(k);
                k = par[k as usize];
            }
        }
        let t = build_ancestors(&c, &hits, None);
        prop_assert_eq!(figures(&t), brute(&c, &|i| set.contains(&i), &|i| c.slices.dur[i as usize]));
    }

    #[test]
    fn sandwich_callees_total_is_the_outermost_occurrences(s in spec()) {
        let c = capture(&s);
        let t = build(&c, &Scope::all(), None);
        let name = c.strings.lookup("n1").unwrap_or_default();
        let sw = sandwich(&t, name);
        let cnt = counted(&c, Ps::MIN, Ps::MAX);
        let outer: Ps = (0..c.slices.len() as u32)
            .filter(|&i| c.slices.name[i as usize] == name && !path_of(&c, i)[..path_of(&c, i).len() - 1].contains(&name))
            .map(|i| cnt[i as usize].1 - cnt[i as usize].0)
            .sum();
        let top = sw.callees.child(ROOT, name);
        prop_assert_eq!(top.map_or(0, |n| sw.callees.total(n)), outer);
        let top = sw.callers.child(ROOT, name);
        prop_assert_eq!(top.map_or(0, |n| sw.callers.total(n)), outer);
    }
}

/// Host: main [0,100) ⊃ aten::mm [10,50) ⊃ cudaLaunchKernel [20,25) corr 7, and a second
/// launch [60,62) corr 8 directly under main. GPU stream: gemm [30,60) corr 7, copy [65,70)
/// corr 8, orphan [80,90) corr 99 (no launch).
fn gpu_capture() -> Capture {
    let mut b = CaptureBuilder::new();
    let host = b.process(Key::Int(1));
    let th = b.track(host, Key::Int(1), TrackKind::Thread);
    let gpu = b.process(Key::Int(2));
    b.process_mut(gpu).kind = ProcessKind::Gpu;
    let st = b.track(gpu, Key::Int(7), TrackKind::GpuStream);
    let cpu_op = b.intern("cpu_op");
    let runtime = b.intern("cuda_runtime");
    let kernel = b.intern("kernel");
    let memcpy = b.intern("gpu_memcpy");
    let py = b.intern("python_function");
    let n = |b: &mut CaptureBuilder, s: &str| b.intern(s);
    let (main, mm, launch, gemm, copy, orphan) = (
        n(&mut b, "main.py(1): main"),
        n(&mut b, "aten::mm"),
        n(&mut b, "cudaLaunchKernel"),
        n(&mut b, "gemm"),
        n(&mut b, "Memcpy HtoD"),
        n(&mut b, "orphan_kernel"),
    );
    b.add_slice(th, 0, 100, main, py, ArgsRef::NONE, 0);
    b.add_slice(th, 10, 40, mm, cpu_op, ArgsRef::NONE, 0);
    b.add_slice(th, 20, 5, launch, runtime, ArgsRef::NONE, 7);
    b.add_slice(th, 60, 2, launch, runtime, ArgsRef::NONE, 8);
    b.add_slice(st, 30, 30, gemm, kernel, ArgsRef::NONE, 7);
    b.add_slice(st, 65, 5, copy, memcpy, ArgsRef::NONE, 8);
    b.add_slice(st, 80, 10, orphan, kernel, ArgsRef::NONE, 99);
    b.finish(SourceInfo::default(), Format::Kineto)
}

fn node(t: &FlameTree, c: &Capture, path: &[&str]) -> u32 {
    let ids: Vec<StrId> = path
        .iter()
        .map(|p| {
            if *p == "(unlinked)" {
                UNLINKED
            } else if *p == "(device)" {
                DEVICE
            } else {
                c.strings.lookup(p).unwrap_or(StrId(u32::MAX - 1))
            }
        })
        .collect();
    t.find_path(&ids)
        .unwrap_or_else(|| panic!("no node {path:?}"))
}

#[test]
fn device_time_goes_to_the_launching_stack() {
    let c = gpu_capture();
    let links = DeviceLinks::of(&c);
    let t = build(&c, &Scope::all(), Some(&links));
    let main = node(&t, &c, &["main.py(1): main"]);
    let mm = node(&t, &c, &["main.py(1): main", "aten::mm"]);
    let l1 = node(
        &t,
        &c,
        &["main.py(1): main", "aten::mm", "cudaLaunchKernel"],
    );
    let l2 = node(&t, &c, &["main.py(1): main", "cudaLaunchKernel"]);
    assert_eq!(t.device(main), 35);
    assert_eq!(t.device_self(main), 0);
    assert_eq!(t.device(mm), 30);
    assert_eq!(t.device_self(l1), 30);
    assert_eq!(t.device(l2), 5);
    let un = node(&t, &c, &["(unlinked)", "orphan_kernel"]);
    assert_eq!(t.device(un), 10);
    assert_eq!(t.instances(un).len(), 1);
    assert_eq!(t.name_str(t.parent(un), &c.strings), "(unlinked)");
    assert_eq!((t.linked, t.unlinked), (2, 1));
    // The root sums every device activity; the stream's own slices are roots under the
    // `(device)` root (device scope), whose total is theirs.
    assert_eq!(t.device(ROOT), 45);
    assert_eq!(t.total(node(&t, &c, &["(device)", "gemm"])), 30);
    assert_eq!(t.total(node(&t, &c, &["(device)"])), 45);
    assert!(
        c.strings
            .lookup("gemm")
            .is_none_or(|g| t.child(ROOT, g).is_none())
    );
    assert_eq!(t.value(mm, Metric::Device), 30);
}

#[test]
fn device_time_in_a_range_is_clipped_and_keeps_the_launch_path() {
    let c = gpu_capture();
    let links = DeviceLinks::of(&c);
    // [55, 100): gemm contributes 5, its launch (at 20) is outside the range.
    let t = build(&c, &Scope::range(55, 100), Some(&links));
    let l1 = node(
        &t,
        &c,
        &["main.py(1): main", "aten::mm", "cudaLaunchKernel"],
    );
    assert_eq!(t.device(l1), 5);
    assert_eq!(t.count(l1), 0);
    let mm = node(&t, &c, &["main.py(1): main", "aten::mm"]);
    assert_eq!((t.count(mm), t.total(mm)), (0, 0));
    let main = node(&t, &c, &["main.py(1): main"]);
    assert_eq!((t.count(main), t.total(main), t.device(main)), (1, 45, 10));
    // Only the GPU stream: launches are not in scope, so only the orphan is counted.
    let gpu_only = build(&c, &Scope::tracks(vec![1]), Some(&links));
    assert_eq!((gpu_only.linked, gpu_only.unlinked), (0, 1));
}
