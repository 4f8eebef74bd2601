//! The spans of CUDA/HIP graph launches per GPU stream ([`crate::analysis::graphs`]), computed
//! once at load for the explorer's `graphs` rows (`super::graph_row` draws them).

use crate::analysis::graphs::GraphLaunches;
use crate::model::{Capture, Ps};

/// One graph launch's span on a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// First activity start, ps.
    pub start: Ps,
    /// Last activity end, ps.
    pub end: Ps,
    /// Activities of the launch.
    pub kernels: u32,
}

/// The graph spans of each stream that ran graphs: (track, spans by start), sorted by track.
#[derive(Clone, Debug, Default)]
pub struct GraphSpans(pub Vec<(u32, Vec<Span>)>);

impl GraphSpans {
    /// The spans of `c`'s graph launches, per stream they ran on.
    pub fn of(c: &Capture) -> GraphSpans {
        let g = GraphLaunches::of(c);
        let mut v: Vec<(u32, Span)> = Vec::new();
        for l in &g.launches {
            for &t in &l.streams {
                v.push((
                    t,
                    Span {
                        start: l.span.0,
                        end: l.span.1,
                        kernels: l.kernel_count() as u32,
                    },
                ));
            }
        }
        v.sort_unstable_by_key(|e| (e.0, e.1.start, e.1.end));
        let mut out: Vec<(u32, Vec<Span>)> = Vec::new();
        for (t, s) in v {
            match out.last_mut() {
                Some((lt, spans)) if *lt == t => spans.push(s),
                _ => out.push((t, vec![s])),
            }
        }
        GraphSpans(out)
    }

    /// The spans of track `t` (empty when it ran no graph).
    pub fn of_track(&self, t: u32) -> &[Span] {
        self.0
            .binary_search_by_key(&t, |e| e.0)
            .map_or(&[], |k| self.0[k].1.as_slice())
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.0.capacity() * std::mem::size_of::<(u32, Vec<Span>)>()
            + self
                .0
                .iter()
                .map(|e| e.1.capacity() * std::mem::size_of::<Span>())
                .sum::<usize>()
    }
}
