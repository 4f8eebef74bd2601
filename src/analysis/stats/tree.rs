//! torch's event-tree rules applied while one track is nested (torch/autograd/profiler_util.py):
//!
//! - **Same-name merge** (`EventList._remove_dup_nodes`): an event whose parent has the same
//!   (rewritten) name and no other child is removed; its children and its kernels move to the
//!   parent (the parent's own kernels are replaced, not added to). Chains collapse to the
//!   outermost event. Deciding it bottom-up — when a parent closes with exactly one child of
//!   its key — gives torch's fixed point: a merge never changes how many children the
//!   grandparent has.
//! - **Device time** (`FunctionEvent.device_time_total` / `self_device_time_total`): a device
//!   activity belongs to the event that launched it — the op whose `External id` its runtime
//!   launch call carries, when that op is open around the call (torch links by that id: under
//!   `torch.compile` the call sits in a `## Call CompiledFxGraph` annotation inside
//!   `CompiledFunction`, and the id is the op's); else the innermost event around the call
//!   (the launch itself when it is not a runtime or driver call); total = own + the children's
//!   totals, self = own.
//!
//! A removed event contributes nothing ([`Done::removed`]); the parent takes torch's figures:
//! self' = self + the child's self (its children are now the child's children), own device
//! time = the child's own (replaced), device total unchanged. "Same name" is the grouped name (`ProfilerStep*`) and the
//! same [`EventKind`](super::EventKind) (torch compares names only; a CPU op and an annotation
//! of one name are never merged here).

use crate::model::{Capture, Category, NO_SLICE, Ps};

/// One open event on the containment stack.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Open {
    /// Slice id.
    pub id: u32,
    /// Caller data (the stats row, or `NONE`).
    pub row: u32,
    /// Takes part in the same-name merge (a kept event; nesting-only events do not).
    pub named: bool,
    /// Duration, ps.
    pub dur: Ps,
    /// Duration minus the direct children's durations, ps.
    pub self_ps: Ps,
    /// Device time of the activities it launched itself, ps.
    pub own_dev: Ps,
    /// Σ device totals of the direct children, ps.
    kids_dev: Ps,
    /// Direct children closed so far.
    kids: u32,
    /// The first child, held back until it is known whether it merges into this event.
    first: Option<Done>,
}

impl Open {
    /// A new open event.
    pub(crate) fn new(id: u32, row: u32, named: bool, dur: Ps) -> Open {
        Open {
            id,
            row,
            named,
            dur,
            self_ps: dur,
            own_dev: 0,
            kids_dev: 0,
            kids: 0,
            first: None,
        }
    }
}

/// One event, final.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Done {
    /// Slice id.
    pub id: u32,
    /// Its caller data ([`Open::row`]).
    pub row: u32,
    /// Takes part in the merge ([`Open::named`]).
    pub named: bool,
    /// Duration, ps.
    pub dur: Ps,
    /// Self time, ps.
    pub self_ps: Ps,
    /// Device time launched by the event itself (a merged child's, when it took one over), ps.
    pub self_dev: Ps,
    /// Device time launched by it or any event below it, ps.
    pub total_dev: Ps,
    /// Merged into its parent by `_remove_dup_nodes`.
    pub removed: bool,
}

/// True when the merge applies on track `t` of `c`: torch's rule, so Kineto captures only
/// (an XPlane host line nests same-name events of its own), and never on a device track.
pub(crate) fn merges(c: &Capture, t: u32) -> bool {
    c.format == Some(crate::model::Format::Kineto) && !super::is_device_process(c, t)
}

/// Same grouped name and kind of slices `a` and `b` (the merge's test).
pub(crate) fn same_name(c: &Capture, a: u32, b: u32) -> bool {
    let s = &c.slices;
    let (a, b) = (a as usize, b as usize);
    if s.kind(a) != s.kind(b) {
        return false;
    }
    s.name[a] == s.name[b]
        || super::group_name(c.strings.get(s.name[a]))
            == super::group_name(c.strings.get(s.name[b]))
}

/// Opens `o` (a slice that launched `launched` device work) below the stack's top: the parent
/// loses `o`'s duration from its self time, and a runtime launch call hands its device work up
/// ([`launch_goes_up`], [`give_up`]) while any other slice keeps it.
pub(crate) fn enter(
    stack: &mut crate::analysis::nesting::ContainmentStack<Open>,
    mut o: Open,
    end: Ps,
    goes_up: bool,
    launched: Launched,
) {
    if let Some(p) = stack.top_mut() {
        p.self_ps -= o.dur;
    }
    if goes_up {
        give_up(stack, launched, |s| s.top_mut());
    } else {
        o.own_dev = launched.ps;
    }
    stack.enter(end, o);
}

/// Gives device work launched by a call to the open op of its `External id`, else to the event
/// `around` picks from the stack (none: the work belongs to no event).
pub(crate) fn give_up(
    stack: &mut crate::analysis::nesting::ContainmentStack<Open>,
    launched: Launched,
    around: impl FnOnce(&mut crate::analysis::nesting::ContainmentStack<Open>) -> Option<&mut Open>,
) {
    if launched.ps == 0 {
        return;
    }
    if launched.op != NO_SLICE
        && let Some(p) = stack.innermost_mut(|o| o.id == launched.op)
    {
        p.own_dev += launched.ps;
    } else if let Some(p) = around(stack) {
        p.own_dev += launched.ps;
    }
}

/// Device work launched by one host slice.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Launched {
    /// Σ durations of its kernels, copies and sets, ps.
    pub ps: Ps,
    /// The op (or annotation) around the slice whose `External id` the slice carries, or
    /// `NO_SLICE`.
    pub op: u32,
}

/// Closes `o` (popped from the stack; `parent` is the event below it): settles its held-back
/// first child, then hands `o` to its parent or, at the top, to `emit`. `same`: the merge's
/// name test ([`same_name`]); `None` turns the merge off.
pub(crate) fn close<S: Fn(u32, u32) -> bool>(
    mut o: Open,
    parent: Option<&mut Open>,
    same: Option<&S>,
    emit: &mut impl FnMut(Done),
) {
    let mut own = o.own_dev;
    // Σ device totals of the children: a merged child's children become this event's.
    let mut kids_dev = o.kids_dev;
    if let Some(mut first) = o.first.take() {
        if o.kids == 1 && o.named && first.named && same.is_some_and(|f| f(first.id, o.id)) {
            o.self_ps += first.self_ps;
            own = first.self_dev;
            kids_dev = first.total_dev - first.self_dev;
            first.removed = true;
            first.self_ps = 0;
            first.self_dev = 0;
            first.total_dev = 0;
        }
        emit(first);
    }
    let done = Done {
        id: o.id,
        row: o.row,
        named: o.named,
        dur: o.dur,
        self_ps: o.self_ps,
        self_dev: own,
        total_dev: own + kids_dev,
        removed: false,
    };
    match parent {
        Some(p) => {
            p.kids_dev += done.total_dev;
            p.kids += 1;
            if p.kids == 1 {
                p.first = Some(done);
            } else {
                if let Some(f) = p.first.take() {
                    emit(f);
                }
                emit(done);
            }
        }
        None => emit(done),
    }
}

/// The first host slice (not a device activity or GPU annotation) of each correlation id: the
/// launch that the device activities of that id belong to. Id 0 (no correlation) is never a key.
pub(crate) fn launch_by_corr(c: &Capture) -> rustc_hash::FxHashMap<u64, u32> {
    let s = &c.slices;
    let mut by_corr = rustc_hash::FxHashMap::default();
    for i in 0..s.len() {
        if s.kind(i).is_device() {
            continue;
        }
        let corr = s.corr(i);
        if corr != 0 {
            by_corr.entry(corr).or_insert(i as u32);
        }
    }
    by_corr
}

/// Device time launched per host slice: (launch slice id, Σ durations of the kernels, copies
/// and sets whose correlation id is the launch's, the op of its `External id`), sorted by id.
/// Activities whose launch is not in the capture are left out (torch has no event to put them
/// on either).
pub(crate) fn launched_device_time(c: &Capture) -> Vec<(u32, Launched)> {
    launched_device_time_of(c, |_| true)
}

/// [`launched_device_time`] over the activities `keep` accepts (slice ids).
pub(crate) fn launched_device_time_of(
    c: &Capture,
    keep: impl Fn(usize) -> bool,
) -> Vec<(u32, Launched)> {
    let s = &c.slices;
    let is_act = |i: usize| s.kind(i).is_activity() && keep(i);
    if !(0..s.len()).any(is_act) {
        return Vec::new();
    }
    let by_corr = launch_by_corr(c);
    let mut out: Vec<(u32, Launched)> = (0..s.len())
        .filter(|&i| is_act(i))
        .filter_map(|i| {
            let ps = s.dur[i];
            Some((*by_corr.get(&s.corr(i))?, Launched { ps, op: NO_SLICE }))
        })
        .collect();
    out.sort_unstable_by_key(|p| p.0);
    out.dedup_by(|b, a| {
        if a.0 == b.0 {
            a.1.ps += b.1.ps;
            true
        } else {
            false
        }
    });
    if let Some(ext) = c.strings.lookup("External id") {
        for (l, d) in &mut out {
            d.op = external_op(c, *l, ext);
        }
    }
    out
}

/// The op or annotation around launch call `l` whose `External id` is the call's (up to 256
/// levels up: python frames lie between), or `NO_SLICE`.
fn external_op(c: &Capture, l: u32, ext: crate::model::StrId) -> u32 {
    let s = &c.slices;
    if !launch_goes_up(s.kind(l as usize)) {
        return NO_SLICE;
    }
    let id_of = |i: u32| c.args.get(s.args[i as usize], ext, &c.strings);
    let Some(want) = id_of(l) else {
        return NO_SLICE;
    };
    let mut p = s.parent[l as usize];
    for _ in 0..256 {
        if p == NO_SLICE {
            break;
        }
        if matches!(
            s.kind(p as usize),
            Category::CpuOp | Category::UserAnnotation
        ) && id_of(p) == Some(want)
        {
            return p;
        }
        p = s.parent[p as usize];
    }
    NO_SLICE
}

/// True when the device time a slice of `cat` launched belongs to the event around it (runtime
/// and driver calls: torch puts kernels on the op, never on `cudaLaunchKernel`).
#[inline]
pub(crate) fn launch_goes_up(cat: Category) -> bool {
    matches!(cat, Category::Runtime | Category::Driver)
}

/// Walks a track's slice ids in increasing order and answers the device time each launched.
pub(crate) struct LaunchCursor<'a> {
    launches: &'a [(u32, Launched)],
    at: usize,
}

impl<'a> LaunchCursor<'a> {
    /// A cursor over `launches` (sorted by id) starting at slice `from`.
    pub(crate) fn new(launches: &'a [(u32, Launched)], from: u32) -> Self {
        LaunchCursor {
            launches,
            at: launches.partition_point(|p| p.0 < from),
        }
    }

    /// Device work launched by slice `id` (ids asked in increasing order).
    #[inline]
    pub(crate) fn get(&mut self, id: u32) -> Launched {
        while let Some(&(l, d)) = self.launches.get(self.at) {
            if l < id {
                self.at += 1;
            } else if l == id {
                return d;
            } else {
                break;
            }
        }
        Launched {
            ps: 0,
            op: NO_SLICE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::nesting::ContainmentStack;

    const NO_KEY: u32 = u32::MAX;

    /// Runs the tree over `(start, end, key, own device)` events of one track (`NO_KEY`:
    /// nesting-only).
    fn run(ev: &[(Ps, Ps, u32, Ps)], merge: bool) -> Vec<Done> {
        let mut out = Vec::new();
        let mut emit = |d: Done| out.push(d);
        let same = |a: u32, b: u32| ev[a as usize].2 == ev[b as usize].2;
        let same = merge.then_some(&same);
        let mut st: ContainmentStack<Open> = ContainmentStack::new();
        for (i, &(s, e, k, dev)) in ev.iter().enumerate() {
            st.close_before(s, e, |o, p| close(o, p, same, &mut emit));
            if let Some(p) = st.top_mut() {
                p.self_ps -= e - s;
            }
            let mut o = Open::new(i as u32, k, k != NO_KEY, e - s);
            o.own_dev = dev;
            st.enter(e, o);
        }
        st.drain_linked(|o, p| close(o, p, same, &mut emit));
        out.sort_by_key(|d| d.id);
        out
    }

    #[test]
    fn chain_collapses_to_the_outer_event_with_the_inner_kernels() {
        // a(0..100, own 1) ⊃ a(10..90, own 2) ⊃ a(20..80, own 4) ⊃ b(30..40, own 8)
        let ev = [
            (0, 100, 1, 1),
            (10, 90, 1, 2),
            (20, 80, 1, 4),
            (30, 40, 2, 8),
        ];
        let d = run(&ev, true);
        assert_eq!(
            d.iter().map(|d| d.removed).collect::<Vec<_>>(),
            vec![false, true, true, false]
        );
        // torch: the outer event's children are b's siblings: self 100 − 10.
        assert_eq!(d[0].self_ps, 90);
        assert_eq!((d[1].self_ps, d[2].self_ps, d[1].self_dev), (0, 0, 0));
        // torch: outer.kernels = the innermost's (4); total = 4 + 8.
        assert_eq!((d[0].self_dev, d[0].total_dev), (4, 12));
        // Without the merge each keeps its own.
        let d = run(&ev, false);
        assert!(d.iter().all(|d| !d.removed));
        assert_eq!(d[0].total_dev, 15);
        assert_eq!(d[1].self_dev, 2);
    }

    #[test]
    fn two_children_or_other_names_do_not_merge() {
        let ev = [(0, 100, 1, 0), (10, 20, 1, 0), (30, 40, 1, 0)];
        assert!(run(&ev, true).iter().all(|d| !d.removed));
        let ev = [(0, 100, 1, 0), (10, 20, 2, 0)];
        assert!(run(&ev, true).iter().all(|d| !d.removed));
        let ev = [(0, 100, NO_KEY, 0), (10, 20, NO_KEY, 0)];
        assert!(run(&ev, true).iter().all(|d| !d.removed));
    }
}
