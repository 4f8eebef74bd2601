//! torch's containment rule (`EventList._populate_cpu_children`, analysis.md §a) over any subset
//! of one track's slices.
//!
//! Events are visited in (start asc, end desc) order — the order slices are stored in per track.
//! A stack holds the open ancestors; before an event is pushed, the stack is popped while
//! `e.start >= top.end || e.end > top.end`; the remaining top, if any, is its parent. A partial
//! overlap therefore makes siblings, not parent and child.

use crate::model::Ps;

/// One open ancestor on the containment stack, with a caller-owned payload.
#[derive(Clone, Copy, Debug)]
pub struct Open<T> {
    /// End time of the open event.
    pub end: Ps,
    /// Caller data (accumulators, ids).
    pub data: T,
}

/// Reusable containment stack: feed events in (start asc, end desc) order with [`push`].
///
/// [`push`]: ContainmentStack::push
#[derive(Clone, Debug, Default)]
pub struct ContainmentStack<T> {
    stack: Vec<Open<T>>,
}

impl<T> ContainmentStack<T> {
    /// An empty stack.
    pub fn new() -> Self {
        ContainmentStack { stack: Vec::new() }
    }

    /// Enters the event `[start, end)`: pops closed or partially overlapped ancestors (handing each
    /// to `closed`), lets `with_parent` see the parent's data (if any), then pushes the event.
    pub fn push(
        &mut self,
        start: Ps,
        end: Ps,
        data: T,
        mut closed: impl FnMut(T),
        with_parent: impl FnOnce(&mut T),
    ) {
        while let Some(top) = self.stack.last() {
            if start >= top.end || end > top.end {
                if let Some(o) = self.stack.pop() {
                    closed(o.data);
                }
            } else {
                break;
            }
        }
        if let Some(top) = self.stack.last_mut() {
            with_parent(&mut top.data);
        }
        self.stack.push(Open { end, data });
    }

    /// Closes everything still open (end of the track), innermost first.
    pub fn drain(&mut self, mut closed: impl FnMut(T)) {
        while let Some(o) = self.stack.pop() {
            closed(o.data);
        }
    }

    /// Pops the ancestors that cannot contain `[start, end)` (the rule of [`push`]), handing each
    /// to `closed` together with the data of the ancestor below it (its parent), if any.
    ///
    /// [`push`]: ContainmentStack::push
    pub fn close_before(&mut self, start: Ps, end: Ps, mut closed: impl FnMut(T, Option<&mut T>)) {
        while let Some(top) = self.stack.last() {
            if start >= top.end || end > top.end {
                if let Some(o) = self.stack.pop() {
                    closed(o.data, self.stack.last_mut().map(|p| &mut p.data));
                }
            } else {
                break;
            }
        }
    }

    /// Pushes an event after [`close_before`](ContainmentStack::close_before) was called with
    /// its bounds; the current top (if any) is its parent.
    pub fn enter(&mut self, end: Ps, data: T) {
        self.stack.push(Open { end, data });
    }

    /// The data of the innermost open event.
    pub fn top_mut(&mut self) -> Option<&mut T> {
        self.stack.last_mut().map(|o| &mut o.data)
    }

    /// The innermost open event that contains `[start, end)` by the containment rule, without
    /// closing anything (for an event that is looked up, not nested).
    pub fn containing_mut(&mut self, start: Ps, end: Ps) -> Option<&mut T> {
        self.stack
            .iter_mut()
            .rev()
            .find(|o| start < o.end && end <= o.end)
            .map(|o| &mut o.data)
    }

    /// The innermost open event whose data satisfies `pred`.
    pub fn innermost_mut(&mut self, pred: impl Fn(&T) -> bool) -> Option<&mut T> {
        self.stack
            .iter_mut()
            .rev()
            .find(|o| pred(&o.data))
            .map(|o| &mut o.data)
    }

    /// Closes everything still open, innermost first, each with its parent's data.
    pub fn drain_linked(&mut self, mut closed: impl FnMut(T, Option<&mut T>)) {
        while let Some(o) = self.stack.pop() {
            closed(o.data, self.stack.last_mut().map(|p| &mut p.data));
        }
    }

    /// Current depth.
    pub fn depth(&self) -> usize {
        self.stack.len()
    }
}

/// Direct parent (index into `events`) of each event under the torch rule; `events` must be sorted
/// by (start asc, end desc). Reference implementation used by tests.
pub fn parents(events: &[(Ps, Ps)]) -> Vec<Option<usize>> {
    let mut out = vec![None; events.len()];
    let mut st: ContainmentStack<usize> = ContainmentStack::new();
    for (i, &(s, e)) in events.iter().enumerate() {
        st.push(s, e, i, |_| {}, |p| out[i] = Some(*p));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn partial_overlap_makes_siblings() {
        // a [0,100) ⊃ b [10,50) ⊃ c [20,30); d [40,70) overlaps b partially → child of a.
        let ev = [(0, 100), (10, 50), (20, 30), (40, 70)];
        assert_eq!(parents(&ev), vec![None, Some(0), Some(1), Some(0)]);
    }

    #[test]
    fn touching_and_zero_length() {
        // [0,10) then [10,20): touching → siblings; zero-length at 10 is not inside [0,10).
        let ev = [(0, 10), (10, 10), (10, 20)];
        assert_eq!(parents(&ev), vec![None, None, None]);
        // identical intervals: the first is the parent of the second.
        assert_eq!(parents(&[(0, 5), (0, 5)]), vec![None, Some(0)]);
    }

    /// The rule written out with a plain vector, as in torch, to check the closure-based stack.
    fn plain_stack(ev: &[(Ps, Ps)]) -> Vec<Option<usize>> {
        let mut out = vec![None; ev.len()];
        let mut st: Vec<usize> = Vec::new();
        for (i, &(s, e)) in ev.iter().enumerate() {
            while let Some(&t) = st.last() {
                let te = ev[t].1;
                if s >= te || e > te {
                    st.pop();
                } else {
                    break;
                }
            }
            out[i] = st.last().copied();
            st.push(i);
        }
        out
    }

    proptest! {
        #[test]
        fn parent_contains_child(mut v in proptest::collection::vec((0i64..200, 0i64..50), 0..60)) {
            let mut ev: Vec<(Ps, Ps)> = v.drain(..).map(|(s, d)| (s, s + d)).collect();
            ev.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
            let p = parents(&ev);
            prop_assert_eq!(&p, &plain_stack(&ev));
            for (i, par) in p.iter().enumerate() {
                if let Some(j) = *par {
                    prop_assert!(j < i);
                    prop_assert!(ev[j].0 <= ev[i].0 && ev[i].1 <= ev[j].1);
                    prop_assert!(ev[i].0 < ev[j].1);
                }
            }
        }
    }
}
