//! Property tests: truncating a valid Kineto trace at any byte never panics and loads exactly
//! the events completed before the cut; arbitrary and mutated input never panics.

use proptest::prelude::*;
use std::sync::OnceLock;
use tracetui::formats::{Progress, chrome};
use tracetui::model::*;
use tracetui::synth::kineto::write_kineto_trace;

struct Full {
    text: Vec<u8>,
    /// Byte index of each event's closing `}` and its phase, in file order.
    ends: Vec<(usize, String)>,
    events_open: usize,
    slices: Vec<(String, Ps, Ps)>,
}

fn full() -> &'static Full {
    static F: OnceLock<Full> = OnceLock::new();
    F.get_or_init(|| {
        let mut text = Vec::new();
        let n = write_kineto_trace(&mut text, 60, 3).unwrap() as usize;
        let v: serde_json::Value = serde_json::from_slice(&text).unwrap();
        let evs = v["traceEvents"].as_array().unwrap();
        let s = std::str::from_utf8(&text).unwrap();
        let ends: Vec<(usize, String)> = s
            .match_indices("\n  }")
            .map(|(i, _)| i + 3)
            .zip(evs.iter().map(|e| e["ph"].as_str().unwrap().to_string()))
            .collect();
        assert_eq!(ends.len(), n);
        let cap = chrome::load_bytes(&text, SourceInfo::default(), &Progress::default()).unwrap();
        let slices = slice_set(&cap);
        Full {
            events_open: s.find("\"traceEvents\": [").unwrap() + 16,
            text,
            ends,
            slices,
        }
    })
}

fn slice_set(c: &Capture) -> Vec<(String, Ps, Ps)> {
    let mut v: Vec<_> = (0..c.slices.len())
        .map(|i| {
            (
                c.slice_name(i as u32).to_string(),
                c.slices.start[i],
                c.slices.dur[i],
            )
        })
        .collect();
    v.sort();
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn truncation_yields_a_prefix(frac in 0.0f64..1.0) {
        let f = full();
        let cut = (f.text.len() as f64 * frac) as usize;
        let res = chrome::load_bytes(&f.text[..cut], SourceInfo::default(), &Progress::default());
        let done: Vec<&str> = f.ends.iter().filter(|(e, _)| *e < cut).map(|(_, p)| p.as_str()).collect();
        match res {
            Err(e) => prop_assert!(cut < f.events_open, "cut {cut}: {e}"),
            Ok(c) => {
                let x = done.iter().filter(|p| **p == "X").count();
                let i = done.iter().filter(|p| **p == "i").count();
                prop_assert_eq!(c.slices.len(), x);
                prop_assert_eq!(c.instants.ts.len(), i);
                let got = slice_set(&c);
                // Every loaded slice is one of the full file's slices.
                let mut k = 0;
                for s in &got {
                    while k < f.slices.len() && &f.slices[k] < s { k += 1; }
                    prop_assert!(k < f.slices.len() && &f.slices[k] == s, "{s:?} not in full capture");
                    k += 1;
                }
                if cut < f.text.len() - 2 {
                    prop_assert!(c.warnings.iter().any(|w| w.kind == "truncated"));
                }
            }
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = chrome::load_bytes(&bytes, SourceInfo::default(), &Progress::default());
    }

    #[test]
    fn mutated_trace_never_panics(pos in 0usize..100_000, byte in any::<u8>(), cut in 0usize..100_000) {
        let f = full();
        let mut t = f.text.clone();
        let p = pos % t.len();
        t[p] = byte;
        t.truncate(t.len().min(cut.max(p + 1)));
        let _ = chrome::load_bytes(&t, SourceInfo::default(), &Progress::default());
    }
}

#[test]
fn every_cut_in_the_header_and_first_events() {
    // Exhaustive over the first few KB: never panics.
    let f = full();
    for cut in 0..f.text.len().min(4000) {
        let _ = chrome::load_bytes(&f.text[..cut], SourceInfo::default(), &Progress::default());
    }
}
