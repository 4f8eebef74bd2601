//! Live bytes grouped by call stack as a merged tree (a bytes [`FlameTree`], drawn by the flame
//! view): the allocations of one memory track live at a time (the peak, the cursor), each under
//! the path of its call stack, outermost frame at the root — frames as memory_viz writes them
//! (`file:line:name`, interpreter frames left out) — or, without a stack, under its enclosing op
//! chain; and the tree of folded lines, for an allocator snapshot's blocks at snapshot time the
//! lines `python -m torch.cuda._memory_viz memory` writes. Node names live in the tree's own
//! [`Interner`] (snapshot frames are not capture strings).

use crate::analysis::flame::{FlameTree, ROOT, TreeBuilder, Unit};
use crate::model::memory::{Frame, MemoryModel, NO_OP, NO_STACK};
use crate::model::{Capture, Interner, StrId};
use rustc_hash::FxHashMap;

/// Name of the path of an allocation with neither a call stack nor an enclosing op.
pub const NO_CONTEXT: &str = "(no stack, no enclosing op)";

/// A bytes tree and the names of its nodes.
#[derive(Clone, Debug, Default)]
pub struct BytesTree {
    /// The merged tree: total = live bytes at or below a node, self = bytes whose path ends
    /// there, count = allocations (or folded lines) ending there; instances are allocation
    /// ids of the track (none for snapshot blocks).
    pub tree: FlameTree,
    /// Node names.
    pub names: Interner,
    /// Allocations (or blocks' folded lines) in the tree.
    pub items: usize,
    /// Their bytes.
    pub bytes: i64,
}

/// The path of an allocation, as names: memoized per stack and per op.
struct Paths<'a> {
    kept: &'a dyn Fn(&Frame) -> bool,
    cap: &'a Capture,
    model: &'a MemoryModel,
    frame_name: Vec<Option<StrId>>,
    stack_leaf: FxHashMap<u32, u32>,
    op_leaf: FxHashMap<u32, u32>,
    path: Vec<StrId>,
}

impl Paths<'_> {
    /// Frame names of `stack`, outermost first (kept frames only), into `self.path`.
    fn stack_path(&mut self, names: &mut Interner, stack: u32) {
        self.path.clear();
        let s = &self.model.stacks;
        for &f in s.get(stack).iter().rev() {
            let Some(fr) = s.frames.get(f as usize) else {
                continue;
            };
            let slot = f as usize;
            if self.frame_name.len() <= slot {
                self.frame_name.resize(slot + 1, None);
            }
            let id = match self.frame_name[slot] {
                Some(id) => id,
                None => {
                    if !(self.kept)(fr) {
                        continue;
                    }
                    let id = names.intern(&fr.short());
                    self.frame_name[slot] = Some(id);
                    id
                }
            };
            self.path.push(id);
        }
    }

    /// Names of `op` and its enclosing ops on its track, outermost first, into `self.path`.
    fn op_path(&mut self, names: &mut Interner, op: u32) {
        self.path.clear();
        let sl = &self.cap.slices;
        let mut k = op;
        // Nesting is strict, so the chain ends; the bound guards a damaged parent column.
        while (k as usize) < sl.len() && self.path.len() < u16::MAX as usize {
            self.path.push(names.intern(self.cap.slice_name(k)));
            k = sl.parent.get(k as usize).copied().unwrap_or(NO_OP);
        }
        self.path.reverse();
    }

    /// The leaf node of allocation `i` of `track`, created with its path when missing.
    fn leaf(&mut self, b: &mut TreeBuilder, names: &mut Interner, track: usize, i: usize) -> u32 {
        let Some(tr) = self.model.tracks.get(track) else {
            return ROOT;
        };
        let (stack, op) = (tr.allocs.stack[i], tr.allocs.op[i]);
        if stack != NO_STACK {
            if let Some(&n) = self.stack_leaf.get(&stack) {
                return n;
            }
            self.stack_path(names, stack);
        } else if op != NO_OP {
            if let Some(&n) = self.op_leaf.get(&op) {
                return n;
            }
            self.op_path(names, op);
        } else {
            self.path.clear();
        }
        if self.path.is_empty() {
            self.path.push(names.intern(NO_CONTEXT));
        }
        let mut n = ROOT;
        for &name in &self.path {
            n = b.child(n, name);
        }
        if stack != NO_STACK {
            self.stack_leaf.insert(stack, n);
        } else if op != NO_OP {
            self.op_leaf.insert(op, n);
        }
        n
    }
}

/// The tree of allocations `ids` of track `track` of `model` (`cap` names their ops); frames
/// for which `kept` is false are left out of the paths (memory_viz's filter,
/// `formats::snapshot::frame_kept`).
pub fn live_tree(
    cap: &Capture,
    model: &MemoryModel,
    track: usize,
    ids: &[u32],
    kept: &dyn Fn(&Frame) -> bool,
) -> BytesTree {
    let mut acc = Acc::new();
    let Some(tr) = model.tracks.get(track) else {
        return acc.finish();
    };
    let mut paths = Paths {
        kept,
        cap,
        model,
        frame_name: Vec::new(),
        stack_leaf: FxHashMap::default(),
        op_leaf: FxHashMap::default(),
        path: Vec::new(),
    };
    acc.b.reserve_instances(ids.len());
    for &id in ids {
        let i = id as usize;
        let Some(&sz) = tr.allocs.bytes.get(i) else {
            continue;
        };
        let leaf = paths.leaf(&mut acc.b, &mut acc.names, track, i);
        acc.add(leaf, sz);
        acc.b.add_instance(leaf, id);
    }
    acc.finish()
}

/// The tree of folded lines (`frame;…;frame VALUE`), one path each: for an allocator snapshot's
/// blocks at snapshot time, the lines memory_viz writes (`stream_S;state;outer;…;inner bytes`,
/// `<gaps>` for rounding; `formats::snapshot::folded_memory`). Lines without a value are
/// skipped.
pub fn folded_tree(lines: &[String]) -> BytesTree {
    let mut acc = Acc::new();
    for line in lines {
        let Some((path, v)) = line.rsplit_once(' ') else {
            continue;
        };
        let Ok(v) = v.parse::<i64>() else { continue };
        let mut n = ROOT;
        for f in path.split(';') {
            n = acc.b.child(n, acc.names.intern(f));
        }
        acc.add(n, v);
    }
    acc.finish()
}

/// A bytes tree being built: its nodes and names, and per node the bytes and items ending there
/// (the path sums are added by [`Acc::finish`]).
struct Acc {
    b: TreeBuilder,
    names: Interner,
    own: Vec<(i64, u64)>,
    bytes: i64,
    items: usize,
}

impl Acc {
    fn new() -> Self {
        let mut b = TreeBuilder::new();
        b.set_unit(Unit::Bytes);
        Acc {
            b,
            names: Interner::new(),
            own: Vec::new(),
            bytes: 0,
            items: 0,
        }
    }

    /// One item of `v` bytes ending at node `n`.
    fn add(&mut self, n: u32, v: i64) {
        if self.own.len() < self.b.len() {
            self.own.resize(self.b.len(), (0, 0));
        }
        self.own[n as usize].0 += v;
        self.own[n as usize].1 += 1;
        self.bytes += v;
        self.items += 1;
    }

    fn finish(mut self) -> BytesTree {
        add_sums(&mut self.b, &self.own);
        BytesTree {
            tree: self.b.finish(),
            names: self.names,
            items: self.items,
            bytes: self.bytes,
        }
    }
}

/// Adds each node's own (bytes, count) as its self figures and to the totals of it and its
/// ancestors (children are created after their parents: one reverse pass).
fn add_sums(b: &mut TreeBuilder, own: &[(i64, u64)]) {
    let n = b.len();
    let mut total: Vec<i64> = (0..n).map(|k| own.get(k).map_or(0, |o| o.0)).collect();
    for k in (1..n).rev() {
        let p = b.parent(k as u32) as usize;
        if p != k {
            total[p] += total[k];
        }
    }
    for (k, &t) in total.iter().enumerate().skip(1) {
        let (sz, cnt) = own.get(k).copied().unwrap_or((0, 0));
        b.add_merged(k as u32, t, sz, cnt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::flame::{Metric, TimeUnit, fold};

    #[test]
    fn sums_run_up_the_paths() {
        let mut b = TreeBuilder::new();
        b.set_unit(Unit::Bytes);
        let a = b.child(ROOT, StrId(1));
        let ab = b.child(a, StrId(2));
        let c = b.child(ROOT, StrId(3));
        let mut own = vec![(0, 0); b.len()];
        own[ab as usize] = (100, 2);
        own[a as usize] = (10, 1);
        own[c as usize] = (5, 1);
        add_sums(&mut b, &own);
        let t = b.finish();
        assert_eq!(t.total(ROOT), 115);
        assert_eq!(t.total(a), 110);
        assert_eq!(t.self_time(a), 10);
        assert_eq!(t.width(ROOT, Metric::Count), 4);
        assert_eq!(t.unit(), Unit::Bytes);
        let names = {
            let mut s = Interner::new();
            for n in ["a", "b", "c"] {
                s.intern(n);
            }
            s
        };
        // Folded bytes are not divided into µs.
        let f = fold(&t, &names, Metric::SelfTime, TimeUnit::Us);
        assert_eq!(f.sum(), 115);
        assert_eq!(f.lines[0], ("a".to_string(), 10));
        assert_eq!(f.lines[1], ("a;b".to_string(), 100));
    }
}
