//! Sandwich view of one function name: its callers (every path from the root to an occurrence,
//! merged bottom-up, the function at the top) and its callees (the subtrees below every
//! occurrence, merged under one node). Recursive occurrences count once: only occurrences with
//! no ancestor of the same name contribute.

use super::tree::{FlameTree, ROOT, TreeBuilder};
use crate::model::StrId;

/// Callers and callees of one name.
#[derive(Clone, Debug, Default)]
pub struct Sandwich {
    /// Root → the function → its callers, innermost first (an inverted tree).
    pub callers: FlameTree,
    /// Root → the function → its callees, merged over all occurrences.
    pub callees: FlameTree,
    /// Occurrences merged (outermost per path).
    pub occurrences: usize,
}

fn outermost(t: &FlameTree, name: StrId) -> Vec<u32> {
    t.nodes()
        .filter(|&n| t.name(n) == name)
        .filter(|&n| {
            let mut p = t.parent(n);
            while p != ROOT {
                if t.name(p) == name {
                    return false;
                }
                p = t.parent(p);
            }
            true
        })
        .collect()
}

fn copy_figures(b: &mut TreeBuilder, to: u32, t: &FlameTree, from: u32) {
    b.add_merged(to, t.total(from), t.self_time(from), t.count(from));
    b.add_device(to, t.device_self(from));
    for &s in t.instances(from) {
        b.add_instance(to, s);
    }
}

/// Builds the sandwich of `name` in `t`.
pub fn sandwich(t: &FlameTree, name: StrId) -> Sandwich {
    let occ = outermost(t, name);
    // Callers: the function node carries the occurrence's inclusive figures; each caller
    // above it carries them too (the time it spends in the function).
    let mut cb = TreeBuilder::new();
    for &n in &occ {
        let mut k = n;
        let mut at = ROOT;
        while k != ROOT {
            at = cb.child(at, t.name(k));
            cb.add_merged(at, t.total(n), t.self_time(n), t.count(n));
            cb.add_device(at, if k == n { t.device(n) } else { 0 });
            k = t.parent(k);
        }
        for &s in t.instances(n) {
            cb.add_instance(at, s);
        }
    }
    // Callees: merge the subtrees.
    let mut eb = TreeBuilder::new();
    let top = eb.child(ROOT, name);
    let mut stack: Vec<(u32, u32)> = Vec::new();
    for &n in &occ {
        copy_figures(&mut eb, top, t, n);
        stack.clear();
        stack.extend(t.children(n).iter().map(|&c| (c, top)));
        while let Some((src, parent)) = stack.pop() {
            let to = eb.child(parent, t.name(src));
            copy_figures(&mut eb, to, t, src);
            stack.extend(t.children(src).iter().map(|&c| (c, to)));
        }
    }
    let callers = cb.finish();
    let callees = if occ.is_empty() {
        TreeBuilder::new().finish()
    } else {
        eb.finish()
    };
    Sandwich {
        callers,
        callees,
        occurrences: occ.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callers_and_callees_merge_all_occurrences() {
        // main;a;f;x  main;b;f;x  main;b;f;y  f;f(recursive);z
        let (main, a, b, f, x, y, z) = (
            StrId(1),
            StrId(2),
            StrId(3),
            StrId(4),
            StrId(5),
            StrId(6),
            StrId(7),
        );
        let mut tb = TreeBuilder::new();
        let m = tb.child(ROOT, main);
        let ma = tb.child(m, a);
        let maf = tb.child(ma, f);
        let mafx = tb.child(maf, x);
        let mb = tb.child(m, b);
        let mbf = tb.child(mb, f);
        let mbfx = tb.child(mbf, x);
        let mbfy = tb.child(mbf, y);
        let rf = tb.child(ROOT, f);
        let rff = tb.child(rf, f);
        let rffz = tb.child(rff, z);
        for (n, tot, slf) in [
            (m, 100, 10),
            (ma, 40, 10),
            (maf, 30, 20),
            (mafx, 10, 10),
            (mb, 50, 0),
            (mbf, 50, 20),
            (mbfx, 20, 20),
            (mbfy, 10, 10),
            (rf, 9, 1),
            (rff, 8, 3),
            (rffz, 5, 5),
        ] {
            tb.add(n, tot, slf, None);
        }
        let t = tb.finish();
        let s = sandwich(&t, f);
        assert_eq!(s.occurrences, 3);
        let ce = &s.callees;
        let top = ce.child(ROOT, f).unwrap_or(ROOT);
        assert_eq!(ce.total(top), 30 + 50 + 9);
        let cx = ce.child(top, x).unwrap_or(ROOT);
        assert_eq!(ce.total(cx), 30);
        let cff = ce.child(top, f).unwrap_or(ROOT);
        assert_eq!(ce.total(cff), 8);
        let cr = &s.callers;
        let top = cr.child(ROOT, f).unwrap_or(ROOT);
        assert_eq!(cr.total(top), 89);
        assert_eq!(cr.total(cr.find_path(&[f, a, main]).unwrap_or(ROOT)), 30);
        assert_eq!(cr.total(cr.find_path(&[f, b]).unwrap_or(ROOT)), 50);
        assert_eq!(cr.children(top).len(), 2);
    }
}
