//! Search speed: re-ranking 100 k unique names per keystroke (queries typed char by char, each
//! step narrowing the previous hits), the first results of a one-letter query on a 10 M-slice
//! capture, and next / previous occurrence jumps.
//!
//! `TRACETUI_BENCH_NAMES` (default 100,000) and `TRACETUI_BENCH_SLICES` (default 10,000,000) set
//! the sizes. Run: `cargo bench --bench search`.

use std::time::Instant;
use tracetui::analysis::search::{EventFilter, Mode, Occurrences, Query, Results, SearchEngine};
use tracetui::index::CaptureIndex;
use tracetui::index::postings::Postings;
use tracetui::model::*;
use tracetui::synth::slices::{Rng, SliceSpec, nested_capture};

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `n` distinct op / kernel / XLA names, one to a few slices each.
fn names_capture(n: usize) -> Capture {
    const OPS: [&str; 12] = [
        "aten::mm",
        "aten::addmm",
        "aten::add_",
        "aten::conv2d",
        "aten::layer_norm",
        "aten::softmax",
        "aten::copy_",
        "nccl:all_reduce",
        "ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
        "elementwise_kernel",
        "fusion",
        "cudaLaunchKernel",
    ];
    const KERNELS: [&str; 6] = [
        "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64_32x3_nn_align4>",
        "ampere_sgemm_128x64_tn",
        "void at::native::elementwise_kernel<128, 4, add_functor>",
        "void at::native::vectorized_elementwise_kernel<4, mul_functor>",
        "sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize96x128x32",
        "triton_poi_fused_add_native_layer_norm",
    ];
    let mut b = CaptureBuilder::new();
    let mut rng = Rng::new(7);
    let p = b.process(Key::Int(1));
    let t = b.track(p, Key::Int(1), TrackKind::Thread);
    let cat = b.intern("cpu_op");
    let mut at = 0;
    for i in 0..n {
        let name = match i % 3 {
            0 => format!("{}_{i}", OPS[(rng.next_u64() % 12) as usize]),
            1 => format!("{} [{i}]", KERNELS[(rng.next_u64() % 6) as usize]),
            _ => format!(
                "fusion.{i}/while/body/dot_general.{}",
                rng.next_u64() % 1000
            ),
        };
        let id = b.intern(&name);
        for _ in 0..1 + rng.next_u64() % 3 {
            let d = rng.range(1_000, 1_000_000);
            b.add_slice(t, at, d, id, cat, ArgsRef::NONE, 0);
            at += d + 10;
        }
    }
    b.finish(SourceInfo::default(), Format::Chrome)
}

/// Types each query char by char (each step narrows the previous results); returns per-step
/// best-of-`reps` times in ms and hit counts.
fn typing(
    c: &Capture,
    e: &SearchEngine,
    p: &Postings,
    text: &str,
    reps: usize,
) -> Vec<(String, f64, usize)> {
    let prefixes: Vec<String> = text
        .char_indices()
        .map(|(i, ch)| text[..i + ch.len_utf8()].to_string())
        .collect();
    let mut best = vec![f64::INFINITY; prefixes.len()];
    let mut hits = vec![0; prefixes.len()];
    for _ in 0..reps {
        let mut prev: Option<Results> = None;
        for (k, q) in prefixes.iter().enumerate() {
            let q = Query::parse(q, Mode::Fuzzy);
            let t = Instant::now();
            let r = e.search(c, p, &q, prev.as_ref(), 50);
            let ms = t.elapsed().as_secs_f64() * 1e3;
            best[k] = best[k].min(ms);
            if let Ok(r) = r {
                hits[k] = r.hits.len();
                prev = Some(r);
            }
        }
    }
    prefixes
        .into_iter()
        .zip(best)
        .zip(hits)
        .map(|((q, ms), h)| (q, ms, h))
        .collect()
}

/// True when ASCII `pat` (folded unless case-sensitive) is a subsequence of `hay`: the byte
/// pre-test the engine ran before skim.
fn subsequence(hay: &[u8], pat: &[u8], case_sensitive: bool) -> bool {
    let mut it = pat.iter().peekable();
    for &b in hay {
        let b = if case_sensitive {
            b
        } else {
            b.to_ascii_lowercase()
        };
        if it.peek() == Some(&&b) {
            it.next();
        }
    }
    it.peek().is_none()
}

/// One full scan of every name per query: fuzzy-matcher skim with the byte pre-test (the engine's
/// matcher before the switch) against the engine's matcher now (nucleo-matcher, one fuzzy atom,
/// smart case, smart normalization), same names, same queries.
fn compare_matchers(c: &Capture, e: &SearchEngine, reps: usize) {
    use fuzzy_matcher::FuzzyMatcher;
    use fuzzy_matcher::skim::SkimMatcherV2;
    use tracetui::analysis::search::Matcher;
    let names: Vec<&str> = (0..e.len() as u32)
        .map(|i| c.strings.get(e.name(i)))
        .collect();
    println!("  matcher scan of {} names (best of {reps}):", names.len());
    for q in [
        "s",
        "a",
        "mm",
        "sgemm128",
        "allred",
        "elementwise add",
        "zzzq",
    ] {
        let m = Matcher::new(&Query::parse(q, Mode::Fuzzy)).ok();
        let skim = SkimMatcherV2::default().smart_case();
        let case_sensitive = q.bytes().any(|b| b.is_ascii_uppercase());
        let folded: Vec<u8> = if case_sensitive {
            q.as_bytes().to_vec()
        } else {
            q.bytes().map(|b| b.to_ascii_lowercase()).collect()
        };
        let (mut skim_ms, mut skim_hits) = (f64::INFINITY, 0);
        let (mut nuc_ms, mut nuc_hits) = (f64::INFINITY, 0);
        for _ in 0..reps {
            let t = Instant::now();
            skim_hits = names
                .iter()
                .filter(|n| {
                    subsequence(n.as_bytes(), &folded, case_sensitive)
                        && skim.fuzzy_match(n, q).is_some()
                })
                .count();
            skim_ms = skim_ms.min(t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            nuc_hits = names
                .iter()
                .filter(|n| m.as_ref().and_then(|m| m.score(n)).is_some())
                .count();
            nuc_ms = nuc_ms.min(t.elapsed().as_secs_f64() * 1e3);
        }
        println!(
            "    {q:?}: fuzzy-matcher {skim_ms:.2} ms ({skim_hits} hits), engine (nucleo-matcher) {nuc_ms:.2} ms ({nuc_hits} hits)"
        );
    }
}

fn main() {
    let reps = 5;
    // 1. Keystrokes over 100 k unique names.
    let n = env("TRACETUI_BENCH_NAMES", 100_000);
    let c = names_capture(n);
    let t = Instant::now();
    let e = SearchEngine::build(&c);
    let build = t.elapsed().as_secs_f64() * 1e3;
    let p = Postings::build(&c.slices, c.strings.len());
    println!(
        "names capture: {} names, {} slices; engine built in {build:.1} ms",
        e.len(),
        c.slices.len()
    );
    let mut worst = 0f64;
    for text in [
        "sgemm128",
        "allred",
        "elementwise add",
        "mm",
        "zzzq",
        "fusion.99",
    ] {
        let steps = typing(&c, &e, &p, text, reps);
        let line: Vec<String> = steps
            .iter()
            .map(|(q, ms, h)| format!("{q:?} {ms:.2} ms/{h}"))
            .collect();
        worst = steps.iter().map(|s| s.1).fold(worst, f64::max);
        println!("  typing {text:?}: {}", line.join(", "));
        // The last step again without narrowing, for comparison.
        let q = Query::parse(text, Mode::Fuzzy);
        let t = Instant::now();
        let _ = e.search(&c, &p, &q, None, 50);
        println!(
            "    whole query from scratch: {:.2} ms",
            t.elapsed().as_secs_f64() * 1e3
        );
    }
    println!("keystroke worst step (best of {reps}): {worst:.2} ms (target <= 10 ms)");
    compare_matchers(&c, &e, reps);

    // 2. One-letter query on a large capture.
    let slices = env("TRACETUI_BENCH_SLICES", 10_000_000);
    let spec = SliceSpec {
        slices,
        names: 100_000,
        ..SliceSpec::default()
    };
    let t = Instant::now();
    let c = nested_capture(&spec);
    println!(
        "\nlarge capture: {} slices, {} tracks (generated in {:.1} s)",
        c.slices.len(),
        c.tracks.len(),
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    let idx = CaptureIndex::build(&c);
    println!("  index build: {:.0} ms", t.elapsed().as_secs_f64() * 1e3);
    let t = Instant::now();
    let e = SearchEngine::build(&c);
    println!(
        "  engine build (once per capture, on the loader thread): {:.0} ms, {} names",
        t.elapsed().as_secs_f64() * 1e3,
        e.len()
    );
    for q in ["k", "o", "z", "kernel_123"] {
        let mut best = f64::INFINITY;
        let mut hits = 0;
        for _ in 0..reps {
            let t = Instant::now();
            let r = e.search(&c, &idx, &Query::parse(q, Mode::Fuzzy), None, 50);
            best = best.min(t.elapsed().as_secs_f64() * 1e3);
            hits = r.map_or(0, |r| r.hits.len());
        }
        println!("  first results for {q:?}: {best:.2} ms ({hits} names; target <= 50 ms)");
    }

    // 3. Occurrence jumps.
    let r = e
        .search(&c, &idx, &Query::parse("kernel_1", Mode::Fuzzy), None, 50)
        .unwrap_or_default();
    let names: Vec<StrId> = r.hits.iter().map(|h| h.name).collect();
    let t = Instant::now();
    let occ = Occurrences::of_names(&c, &idx, &names, &EventFilter::default());
    println!(
        "  occurrences of {} names: {} in time order, merged in {:.1} ms",
        names.len(),
        occ.len(),
        t.elapsed().as_secs_f64() * 1e3
    );
    let top = r.hits.first().map_or(StrId::EMPTY, |h| h.name);
    let one = Occurrences::of_names(&c, &idx, &[top], &EventFilter::default());
    let mut rng = Rng::new(3);
    for (label, o) in [("result set", &occ), ("top name", &one)] {
        let jumps = 100_000;
        let probes: Vec<u32> = (0..jumps)
            .map(|_| (rng.next_u64() % c.slices.len() as u64) as u32)
            .collect();
        let t = Instant::now();
        let mut sink = 0usize;
        for &id in &probes {
            sink += o.next_after(&c, id).map_or(0, |x| x.0);
            sink += o.prev_before(&c, id).map_or(0, |x| x.0);
        }
        let us = t.elapsed().as_secs_f64() * 1e6 / (2 * jumps) as f64;
        println!(
            "  next/prev jump ({label}, {} occurrences): {us:.3} µs per jump (target <= 1 ms) [{sink}]",
            o.len()
        );
    }
}
