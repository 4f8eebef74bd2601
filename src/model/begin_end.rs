//! Begin/End (`B`/`E`) pairing. The Trace Event Format does not require events in time order,
//! so the builder logs every `B` and `E` of a thread and pairs them in `finish`: each thread's
//! events ordered by timestamp (file order breaks ties); an `E` with a name closes the innermost
//! open `B` of that name, an `E` without one the innermost open slice; an `E` that matches
//! nothing is skipped and counted. Closing a slice that is not the innermost open one leaves the
//! slices opened inside it partly overlapping it (drawn on extra lanes, counted).

use super::args::ArgsRef;
use super::capture::{Key, Ps};
use super::strings::StrId;
use rustc_hash::FxHashMap;

/// One logged `B` or `E`.
#[derive(Clone, Copy, Debug)]
struct Mark {
    ts: Ps,
    /// `E` when true.
    end: bool,
    name: StrId,
    cat: StrId,
    args: ArgsRef,
    /// Track the slice is drawn on (a `B`'s; unused for an `E`).
    track: u32,
}

/// A paired (or still open) `B`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Begun {
    /// Track it is drawn on.
    pub track: u32,
    /// Start, ps.
    pub ts: Ps,
    /// Name.
    pub name: StrId,
    /// Category.
    pub cat: StrId,
    /// Args of the `B`.
    pub args: ArgsRef,
}

/// What pairing produced.
#[derive(Debug, Default)]
pub struct Paired {
    /// Closed slices: the `B` and the end time.
    pub closed: Vec<(Begun, Ps)>,
    /// `B`s never closed, in thread then time order.
    pub open: Vec<Begun>,
    /// `E`s that matched no open `B`.
    pub unmatched_end: u64,
    /// `E`s that closed a slice with other slices still open inside it.
    pub out_of_order: u64,
}

/// The `B`/`E` log of a capture, grouped by thread (process, thread key).
#[derive(Debug, Default)]
pub struct BeginEndLog {
    groups: FxHashMap<(u32, Key), u32>,
    marks: Vec<Vec<Mark>>,
    /// The thread of the previous mark and its group (B/E come in runs of one thread).
    last: Option<((u32, Key), u32)>,
}

impl BeginEndLog {
    fn group(&mut self, thread: (u32, Key)) -> &mut Vec<Mark> {
        let g = match self.last {
            Some((t, g)) if t == thread => g,
            _ => {
                let next = self.marks.len() as u32;
                let g = *self.groups.entry(thread).or_insert(next);
                if g == next {
                    self.marks.push(Vec::new());
                }
                self.last = Some((thread, g));
                g
            }
        };
        &mut self.marks[g as usize]
    }

    /// Logs a `B` of `thread` drawn on `track`.
    pub fn begin(
        &mut self,
        thread: (u32, Key),
        track: u32,
        ts: Ps,
        name: StrId,
        cat: StrId,
        args: ArgsRef,
    ) {
        self.group(thread).push(Mark {
            ts,
            end: false,
            name,
            cat,
            args,
            track,
        });
    }

    /// Logs an `E` of `thread`; `name` is `StrId::EMPTY` when the event has none.
    pub fn end(&mut self, thread: (u32, Key), ts: Ps, name: StrId) {
        self.group(thread).push(Mark {
            ts,
            end: true,
            name,
            cat: StrId::EMPTY,
            args: ArgsRef::NONE,
            track: 0,
        });
    }

    /// True when nothing was logged.
    pub fn is_empty(&self) -> bool {
        self.marks.is_empty()
    }

    /// Pairs every thread's marks (threads in order of their first mark).
    pub fn pair(self) -> Paired {
        let mut out = Paired::default();
        let mut stack: Vec<Begun> = Vec::new();
        for mut marks in self.marks {
            // Stable: file order breaks ties.
            if !marks.windows(2).all(|w| w[0].ts <= w[1].ts) {
                marks.sort_by_key(|m| m.ts);
            }
            stack.clear();
            for m in marks {
                if !m.end {
                    stack.push(Begun {
                        track: m.track,
                        ts: m.ts,
                        name: m.name,
                        cat: m.cat,
                        args: m.args,
                    });
                    continue;
                }
                let k = if m.name == StrId::EMPTY {
                    stack.len().checked_sub(1)
                } else {
                    stack.iter().rposition(|b| b.name == m.name)
                };
                match k {
                    Some(k) => {
                        if k + 1 < stack.len() {
                            out.out_of_order += 1;
                        }
                        let b = stack.remove(k);
                        out.closed.push((b, m.ts));
                    }
                    None => out.unmatched_end += 1,
                }
            }
            out.open.append(&mut stack);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const T: (u32, Key) = (0, Key::Int(1));

    fn names(p: &Paired) -> Vec<(u32, Ps, Ps)> {
        let mut v: Vec<(u32, Ps, Ps)> =
            p.closed.iter().map(|(b, e)| (b.name.0, b.ts, *e)).collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn ends_listed_before_begins_pair_by_time() {
        // E alpha@10, B alpha@1, E beta@20, B beta@11: 9 µs each.
        let (a, b) = (StrId(1), StrId(2));
        let mut l = BeginEndLog::default();
        l.end(T, 10, a);
        l.begin(T, 0, 1, a, StrId::EMPTY, ArgsRef::NONE);
        l.end(T, 20, b);
        l.begin(T, 0, 11, b, StrId::EMPTY, ArgsRef::NONE);
        let p = l.pair();
        assert_eq!(names(&p), vec![(1, 1, 10), (2, 11, 20)]);
        assert_eq!((p.unmatched_end, p.out_of_order, p.open.len()), (0, 0, 0));
    }

    #[test]
    fn named_end_closes_its_own_begin() {
        // B A@0, B C@2, E C@2, E A@10: the zero-length C does not close A.
        let (a, c) = (StrId(1), StrId(3));
        let mut l = BeginEndLog::default();
        l.begin(T, 0, 0, a, StrId::EMPTY, ArgsRef::NONE);
        l.begin(T, 0, 2, c, StrId::EMPTY, ArgsRef::NONE);
        l.end(T, 2, c);
        l.end(T, 10, a);
        assert_eq!(names(&l.pair()), vec![(1, 0, 10), (3, 2, 2)]);
        // An unnamed E closes the innermost; an unknown name matches nothing.
        let mut l = BeginEndLog::default();
        l.begin(T, 0, 0, a, StrId::EMPTY, ArgsRef::NONE);
        l.begin(T, 0, 1, c, StrId::EMPTY, ArgsRef::NONE);
        l.end(T, 3, StrId(9));
        l.end(T, 4, StrId::EMPTY);
        let p = l.pair();
        assert_eq!(names(&p), vec![(3, 1, 4)]);
        assert_eq!(p.unmatched_end, 1);
        assert_eq!(p.open.len(), 1);
        // Closing the outer one first: counted, the inner stays open.
        let mut l = BeginEndLog::default();
        l.begin(T, 0, 0, a, StrId::EMPTY, ArgsRef::NONE);
        l.begin(T, 0, 1, c, StrId::EMPTY, ArgsRef::NONE);
        l.end(T, 3, a);
        l.end(T, 5, c);
        let p = l.pair();
        assert_eq!(names(&p), vec![(1, 0, 3), (3, 1, 5)]);
        assert_eq!(p.out_of_order, 1);
    }

    /// Brute force: repeatedly pick, in (ts, file order), the next mark and apply the rule.
    fn brute(marks: &[(Ps, bool, u32)]) -> (Vec<(u32, Ps, Ps)>, u64, usize) {
        let mut order: Vec<usize> = (0..marks.len()).collect();
        order.sort_by_key(|&i| (marks[i].0, i));
        let mut open: Vec<(u32, Ps)> = Vec::new();
        let (mut closed, mut unmatched) = (Vec::new(), 0);
        for i in order {
            let (ts, end, name) = marks[i];
            if !end {
                open.push((name, ts));
            } else {
                let k = if name == 0 {
                    open.len().checked_sub(1)
                } else {
                    (0..open.len()).rev().find(|&k| open[k].0 == name)
                };
                match k {
                    Some(k) => {
                        let (n, s) = open.remove(k);
                        closed.push((n, s, ts));
                    }
                    None => unmatched += 1,
                }
            }
        }
        closed.sort_unstable();
        (closed, unmatched, open.len())
    }

    proptest! {
        #[test]
        fn pairing_matches_brute_force(
            marks in proptest::collection::vec((0i64..20, any::<bool>(), 0u32..4), 0..40)
        ) {
            let mut l = BeginEndLog::default();
            for &(ts, end, name) in &marks {
                if end {
                    l.end(T, ts, StrId(name));
                } else {
                    l.begin(T, 0, ts, StrId(name), StrId::EMPTY, ArgsRef::NONE);
                }
            }
            let p = l.pair();
            let (closed, unmatched, open) = brute(&marks);
            prop_assert_eq!(names(&p), closed);
            prop_assert_eq!(p.unmatched_end, unmatched);
            prop_assert_eq!(p.open.len(), open);
            for (b, e) in &p.closed {
                prop_assert!(*e >= b.ts);
            }
        }
    }
}
