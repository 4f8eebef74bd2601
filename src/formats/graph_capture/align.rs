//! Pairing the launch calls recorded while a graph was captured with the kernels its replay
//! ran, by name — TraceLens's rules (`trace_capture_merge_experimental.py`), then a partial
//! fallback where they fail:
//!
//! - kernels on several streams: per-stream FIFO queues, each capture call taking the head of
//!   a stream whose kernel has its name (ties: the stream matching the longest run ahead);
//! - one stream, as many calls as kernels: position by position (`exact`); when a name differs,
//!   by name groups in order (`grouped`, the replay reordered kernels of equal counts);
//! - one stream, counts differ: each kernel takes the next call of its name, calls in between
//!   are skipped (`greedy`);
//! - where those leave a kernel unpaired: the greedy scan that skips the kernels it cannot find
//!   instead of giving up (`partial`); the caller warns and lists what did not match.
//!
//! Memcpy/Memset calls carry no kernel name: they pair with a replayed copy/set (or `fillBuffer`).

use rustc_hash::FxHashMap;

/// One launch call of a capture trace (`cudaLaunchKernel`, `hipModuleLaunchKernel`, a memcpy…).
#[derive(Clone, Copy, Debug)]
pub struct CaptureCall<'a> {
    /// The call's own name.
    pub call: &'a str,
    /// The kernel it launched (`args.kernel`), when the profiler recorded it.
    pub kernel: Option<&'a str>,
}

impl CaptureCall<'_> {
    /// The name the call is matched by: its kernel's, else its own.
    pub fn name(&self) -> &str {
        self.kernel.unwrap_or(self.call)
    }

    /// True when this call can have launched the replayed activity named `g`.
    pub fn matches(&self, g: &str) -> bool {
        (self.call.contains("Memcpy") && g.contains("Memcpy"))
            || (self.call.contains("Memset") && (g.contains("Memset") || g.contains("fillBuffer")))
            || self.name() == g
    }

    fn unnamed(&self) -> bool {
        self.kernel.is_none()
    }

    fn copy_or_set(&self) -> bool {
        self.call.contains("Memcpy") || self.call.contains("Memset")
    }
}

/// One replayed device activity of a graph launch, in start order.
#[derive(Clone, Copy, Debug)]
pub struct Replayed<'a> {
    /// Kernel (or copy/set) name.
    pub name: &'a str,
    /// Its stream (track) id.
    pub stream: u32,
}

/// Which rule paired the sequences.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Same length, same names position by position.
    Exact,
    /// Counts differed; extra capture calls skipped.
    Greedy,
    /// Same counts per name, replay order differs.
    Grouped,
    /// Several streams: per-stream FIFO queues.
    Streams,
    /// No rule paired every kernel: those found in order are paired, the rest left out.
    Partial,
}

impl Method {
    /// Short lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Method::Exact => "exact",
            Method::Greedy => "greedy",
            Method::Grouped => "grouped",
            Method::Streams => "streams",
            Method::Partial => "partial",
        }
    }
}

/// The result of [`align`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alignment {
    /// (capture call index, replayed activity index) pairs, one per paired replayed activity.
    pub pairs: Vec<(u32, u32)>,
    /// The rule that made them.
    pub method: Method,
    /// Where the sequences first differ (only when a rule other than `exact` was needed).
    pub first_difference: Option<String>,
}

/// A kernel name for a message: control characters replaced, cut to 100 columns.
fn short(s: &str) -> String {
    crate::text::fit(&crate::text::sanitize(s), 100).into_owned()
}

/// Pairs capture calls with replayed activities (see the module doc).
pub fn align(capture: &[CaptureCall], graph: &[Replayed]) -> Alignment {
    let multistream = graph.windows(2).any(|w| w[0].stream != w[1].stream)
        && graph.iter().any(|g| g.stream != graph[0].stream);
    let diff = || first_difference(capture, graph);
    if multistream {
        let all_named = capture.iter().all(|c| c.copy_or_set() || !c.unnamed());
        if all_named && let Some(pairs) = by_streams(capture, graph) {
            return done(pairs, Method::Streams, None);
        }
    } else if capture.len() != graph.len() {
        if let Some(pairs) = greedy(capture, graph) {
            return done(pairs, Method::Greedy, diff());
        }
    } else {
        let same = capture
            .iter()
            .zip(graph)
            .all(|(c, g)| c.unnamed() || c.name() == g.name);
        if same {
            let pairs = (0..graph.len() as u32).map(|i| (i, i)).collect();
            return done(pairs, Method::Exact, None);
        }
        if let Some(pairs) = grouped(capture, graph) {
            return done(pairs, Method::Grouped, diff());
        }
    }
    done(partial(capture, graph), Method::Partial, diff())
}

fn done(pairs: Vec<(u32, u32)>, method: Method, first_difference: Option<String>) -> Alignment {
    Alignment {
        pairs,
        method,
        first_difference,
    }
}

/// A line naming the first position where the two sequences differ, or the count difference.
pub fn first_difference(capture: &[CaptureCall], graph: &[Replayed]) -> Option<String> {
    let at = capture
        .iter()
        .zip(graph)
        .position(|(c, g)| !c.matches(g.name));
    match at {
        Some(i) => Some(format!(
            "kernel #{i}: replay ran `{}`, capture launched `{}`",
            short(graph[i].name),
            short(capture[i].name())
        )),
        None if capture.len() != graph.len() => Some(format!(
            "{} replayed kernels, {} capture launch calls (first {} agree)",
            graph.len(),
            capture.len(),
            capture.len().min(graph.len())
        )),
        None => None,
    }
}

/// Each replayed activity takes the next capture call that matches it; `None` when one finds none.
fn greedy(capture: &[CaptureCall], graph: &[Replayed]) -> Option<Vec<(u32, u32)>> {
    let mut ci = 0;
    let mut pairs = Vec::with_capacity(graph.len());
    for (gi, g) in graph.iter().enumerate() {
        let k = capture[ci..].iter().position(|c| c.matches(g.name))?;
        pairs.push(((ci + k) as u32, gi as u32));
        ci += k + 1;
    }
    Some(pairs)
}

/// Like [`greedy`], but a replayed activity with no matching call ahead is left unpaired.
fn partial(capture: &[CaptureCall], graph: &[Replayed]) -> Vec<(u32, u32)> {
    let mut ci = 0;
    let mut pairs = Vec::new();
    for (gi, g) in graph.iter().enumerate() {
        if let Some(k) = capture[ci..].iter().position(|c| c.matches(g.name)) {
            pairs.push(((ci + k) as u32, gi as u32));
            ci += k + 1;
        }
    }
    pairs
}

/// Positional pairing within each name; `None` when a name's counts differ.
fn grouped(capture: &[CaptureCall], graph: &[Replayed]) -> Option<Vec<(u32, u32)>> {
    let mut groups: FxHashMap<&str, (Vec<u32>, usize)> = FxHashMap::default();
    for (gi, g) in graph.iter().enumerate() {
        groups.entry(g.name).or_default().0.push(gi as u32);
    }
    let mut counts: FxHashMap<&str, usize> = FxHashMap::default();
    for c in capture {
        *counts.entry(c.name()).or_default() += 1;
    }
    if counts.len() != groups.len()
        || counts
            .iter()
            .any(|(n, &k)| groups.get(n).is_none_or(|g| g.0.len() != k))
    {
        return None;
    }
    let mut pairs = Vec::with_capacity(graph.len());
    for (ci, c) in capture.iter().enumerate() {
        let g = groups.get_mut(c.name())?;
        pairs.push((ci as u32, *g.0.get(g.1)?));
        g.1 += 1;
    }
    pairs.sort_unstable_by_key(|p| p.1);
    Some(pairs)
}

/// Per-stream FIFO pairing; `None` when a replayed activity stays unpaired.
fn by_streams(capture: &[CaptureCall], graph: &[Replayed]) -> Option<Vec<(u32, u32)>> {
    // Streams in order of first appearance, each a queue of replayed indices.
    let mut order: Vec<u32> = Vec::new();
    let mut queues: Vec<(Vec<u32>, usize)> = Vec::new();
    for (gi, g) in graph.iter().enumerate() {
        let s = match order.iter().position(|&s| s == g.stream) {
            Some(s) => s,
            None => {
                order.push(g.stream);
                queues.push((Vec::new(), 0));
                order.len() - 1
            }
        };
        queues[s].0.push(gi as u32);
    }
    let head = |q: &(Vec<u32>, usize), k: usize| q.0.get(q.1 + k).map(|&g| graph[g as usize].name);
    let mut pairs = Vec::with_capacity(graph.len());
    for (ci, c) in capture.iter().enumerate() {
        let mut best: Option<(usize, usize)> = None;
        for (s, q) in queues.iter().enumerate() {
            if !head(q, 0).is_some_and(|n| c.matches(n)) {
                continue;
            }
            // The run of calls from `ci` that this stream's queue matches in order.
            let run = (0..)
                .take_while(|&k| {
                    capture
                        .get(ci + k)
                        .zip(head(q, k))
                        .is_some_and(|(c, n)| c.matches(n))
                })
                .count();
            if best.is_none_or(|b| run > b.1) {
                best = Some((s, run));
            }
        }
        if let Some((s, _)) = best {
            let q = &mut queues[s];
            pairs.push((ci as u32, q.0[q.1]));
            q.1 += 1;
        }
    }
    if pairs.len() != graph.len() {
        return None;
    }
    pairs.sort_unstable_by_key(|p| p.1);
    Some(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calls<'a>(names: &[&'a str]) -> Vec<CaptureCall<'a>> {
        names
            .iter()
            .map(|&n| match n {
                "memcpy" => CaptureCall {
                    call: "hipMemcpyAsync",
                    kernel: None,
                },
                _ => CaptureCall {
                    call: "hipLaunchKernel",
                    kernel: Some(n),
                },
            })
            .collect()
    }

    fn replay<'a>(names: &[(&'a str, u32)]) -> Vec<Replayed<'a>> {
        names
            .iter()
            .map(|&(name, stream)| Replayed { name, stream })
            .collect()
    }

    #[test]
    fn exact_when_names_agree() {
        let a = align(
            &calls(&["a", "b", "memcpy"]),
            &replay(&[("a", 0), ("b", 0), ("Memcpy DtoD", 0)]),
        );
        assert_eq!(a.method, Method::Exact);
        assert_eq!(a.pairs, vec![(0, 0), (1, 1), (2, 2)]);
        assert_eq!(a.first_difference, None);
    }

    #[test]
    fn greedy_skips_extra_capture_calls() {
        let a = align(
            &calls(&["a", "x", "b", "c"]),
            &replay(&[("a", 0), ("b", 0), ("c", 0)]),
        );
        assert_eq!(a.method, Method::Greedy);
        assert_eq!(a.pairs, vec![(0, 0), (2, 1), (3, 2)]);
        assert!(a.first_difference.unwrap().contains("kernel #1"));
    }

    #[test]
    fn grouped_when_order_differs() {
        let a = align(
            &calls(&["a", "b", "a"]),
            &replay(&[("b", 0), ("a", 0), ("a", 0)]),
        );
        assert_eq!(a.method, Method::Grouped);
        assert_eq!(a.pairs, vec![(1, 0), (0, 1), (2, 2)]);
    }

    #[test]
    fn streams_fifo_with_run_tie_break() {
        // Two streams both starting with `a`: the one whose queue continues with `b` wins.
        let g = replay(&[("a", 1), ("a", 2), ("c", 1), ("b", 2)]);
        let a = align(&calls(&["a", "b", "a", "c"]), &g);
        assert_eq!(a.method, Method::Streams);
        assert_eq!(a.pairs, vec![(2, 0), (0, 1), (3, 2), (1, 3)]);
    }

    #[test]
    fn partial_leaves_unknown_kernels_out() {
        let a = align(
            &calls(&["a", "b"]),
            &replay(&[("a", 0), ("z", 0), ("b", 0)]),
        );
        assert_eq!(a.method, Method::Partial);
        assert_eq!(a.pairs, vec![(0, 0), (1, 2)]);
        assert!(a.first_difference.unwrap().contains("`z`"));
    }

    /// Every method pairs each replayed index at most once and each call at most once, and
    /// paired names match: checked on all short sequences over a 3-letter alphabet.
    #[test]
    fn pairs_are_a_matching_of_equal_names() {
        let alpha = ["a", "b", "c"];
        let seqs: Vec<Vec<&str>> = (0..4)
            .flat_map(|len| {
                (0..3usize.pow(len)).map(move |mut k| {
                    (0..len)
                        .map(|_| {
                            let s = alpha[k % 3];
                            k /= 3;
                            s
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for c in &seqs {
            for g in &seqs {
                for streams in [false, true] {
                    let cc = calls(c);
                    let gg: Vec<Replayed> = g
                        .iter()
                        .enumerate()
                        .map(|(i, &name)| Replayed {
                            name,
                            stream: if streams { (i % 2) as u32 } else { 0 },
                        })
                        .collect();
                    let a = align(&cc, &gg);
                    let mut used_c = vec![false; cc.len()];
                    let mut used_g = vec![false; gg.len()];
                    for &(ci, gi) in &a.pairs {
                        assert!(!used_c[ci as usize] && !used_g[gi as usize]);
                        used_c[ci as usize] = true;
                        used_g[gi as usize] = true;
                        assert!(cc[ci as usize].matches(gg[gi as usize].name));
                    }
                    if c == g {
                        assert_eq!(a.pairs.len(), g.len(), "{c:?}");
                    }
                }
            }
        }
    }
}
