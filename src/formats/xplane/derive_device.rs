//! `Steps`, `XLA Modules`, `XLA Ops`, `Framework Name Scope`, `Framework Ops` and `Source code`
//! derived from one GPU plane's events (TensorFlow's `DeriveEventsFromAnnotations`).

use super::derived::{
    DerivedEvent, DerivedKind, DerivedLine, DevEvent, LineBuilder, NO_GROUP, NameTable, parse_tf_op,
};
use crate::model::{Ps, StrId};
use rustc_hash::FxHashMap;

/// Derives `Steps`, `XLA Modules`, `XLA Ops`, `Framework Name Scope`, `Framework Ops` and
/// `Source code` from one GPU plane's events. Empty lines are left out. Steps carry no step
/// name here: host planes may still be loading; the loader adds it as the `step_name` arg.
pub fn derive_device_lines(
    events: &mut [DevEvent],
    strings: &mut impl NameTable,
) -> Vec<DerivedLine> {
    derive_device_runs(&mut [events], strings)
}

/// [`derive_device_lines`] over the records of several lines, each in its own vector (no
/// concatenation: the runs are sorted one by one and merged by start, longer first, then line
/// index, which is the order one stable sort of the concatenation would give).
pub fn derive_device_runs<R: AsMut<[DevEvent]>>(
    runs: &mut [R],
    strings: &mut impl NameTable,
) -> Vec<DerivedLine> {
    use std::cmp::Reverse;
    type Key = (Ps, Reverse<Ps>, u16);
    let key = |e: &DevEvent| -> Key { (e.start, Reverse(e.dur), e.line) };
    for r in runs.iter_mut() {
        // Stable and adaptive: a line's records are usually in order already.
        r.as_mut().sort_by_key(key);
    }
    let runs: Vec<&[DevEvent]> = runs.iter_mut().map(|r| &*r.as_mut()).collect();
    let mut d = Deriver::default();
    if let [one] = runs[..] {
        for e in one {
            d.push(e, strings);
        }
    } else if runs.len() <= 8 {
        // Few lines (GPU streams): pick the smallest head by a linear scan.
        let mut pos = vec![0usize; runs.len()];
        loop {
            let mut best: Option<(usize, Key)> = None;
            for (k, r) in runs.iter().enumerate() {
                if let Some(e) = r.get(pos[k]) {
                    let kk = key(e);
                    if best.is_none_or(|(_, b)| kk < b) {
                        best = Some((k, kk));
                    }
                }
            }
            let Some((k, _)) = best else { break };
            d.push(&runs[k][pos[k]], strings);
            pos[k] += 1;
        }
    } else {
        let mut heap = std::collections::BinaryHeap::with_capacity(runs.len());
        for (k, r) in runs.iter().enumerate() {
            if let Some(e) = r.first() {
                heap.push(Reverse((key(e), k, 0usize)));
            }
        }
        while let Some(Reverse((_, k, i))) = heap.pop() {
            let e = &runs[k][i];
            d.push(e, strings);
            if let Some(n) = runs[k].get(i + 1) {
                heap.push(Reverse((key(n), k, i + 1)));
            }
        }
    }
    d.finish()
}

/// The state of one plane's derivation, fed its events in time order.
struct Deriver {
    steps: LineBuilder,
    modules: LineBuilder,
    ops: LineBuilder,
    scope: LineBuilder,
    fw: LineBuilder,
    source: LineBuilder,
    group_names: FxHashMap<i64, StrId>,
    levels: Vec<(StrId, DerivedEvent)>,
    // Split names cached per interned op string (no per-event allocation).
    op_levels: FxHashMap<StrId, Vec<StrId>>,
    tf_ops: FxHashMap<StrId, (Vec<StrId>, StrId)>,
    buf: String,
}

impl Default for Deriver {
    fn default() -> Self {
        Deriver {
            steps: LineBuilder::new(DerivedKind::Steps),
            modules: LineBuilder::new(DerivedKind::XlaModules),
            ops: LineBuilder::new(DerivedKind::XlaOps),
            scope: LineBuilder::new(DerivedKind::NameScope),
            fw: LineBuilder::new(DerivedKind::FrameworkOps),
            source: LineBuilder::new(DerivedKind::Source),
            group_names: FxHashMap::default(),
            levels: Vec::new(),
            op_levels: FxHashMap::default(),
            tf_ops: FxHashMap::default(),
            buf: String::new(),
        }
    }
}

impl Deriver {
    fn push(&mut self, e: &DevEvent, strings: &mut impl NameTable) {
        let base = DerivedEvent {
            start: e.start,
            dur: e.dur,
            name: StrId::EMPTY,
            long_name: StrId::EMPTY,
            group_id: e.group().unwrap_or(NO_GROUP),
        };
        if let Some(g) = e.group() {
            let buf = &mut self.buf;
            let name = *self.group_names.entry(g).or_insert_with(|| {
                use std::fmt::Write;
                buf.clear();
                let _ = write!(buf, "{g}");
                strings.intern(buf)
            });
            let ev = DerivedEvent { name, ..base };
            if self.steps.expand_or_add(0, name, ev, StrId::EMPTY, true) {
                // Steps → XLA Modules → {Name Scope → Ops, XLA Ops}
                for l in [
                    &mut self.modules,
                    &mut self.ops,
                    &mut self.scope,
                    &mut self.fw,
                ] {
                    l.reset_from(0);
                }
            }
        }
        if !e.kernel {
            return;
        }
        if e.hlo_module != StrId::EMPTY {
            let ev = DerivedEvent {
                name: e.hlo_module,
                ..base
            };
            if self
                .modules
                .expand_or_add(0, e.hlo_module, ev, StrId::EMPTY, false)
            {
                for l in [&mut self.ops, &mut self.scope, &mut self.fw] {
                    l.reset_from(0);
                }
            }
        }
        if e.hlo_op != StrId::EMPTY {
            let parts = self.op_levels.entry(e.hlo_op).or_insert_with(|| {
                let full = strings.text(e.hlo_op);
                full.split("::")
                    .filter(|p| !p.is_empty())
                    .map(|p| strings.intern(p))
                    .collect()
            });
            self.levels.clear();
            self.levels.extend(
                parts
                    .iter()
                    .map(|&id| (id, DerivedEvent { name: id, ..base })),
            );
            self.ops
                .expand_or_add_levels(&self.levels, StrId::EMPTY, true);
        }
        if e.tf_op != StrId::EMPTY {
            let (scopes, ty) = self.tf_ops.entry(e.tf_op).or_insert_with(|| {
                let full = strings.text(e.tf_op);
                let (name, ty) = parse_tf_op(&full);
                let mut parts: Vec<StrId> = name
                    .split('/')
                    .filter(|p| !p.is_empty())
                    .map(|p| strings.intern(p))
                    .collect();
                parts.pop();
                (parts, strings.intern(ty))
            });
            let ty = *ty;
            self.levels.clear();
            self.levels.extend(
                scopes
                    .iter()
                    .map(|&id| (id, DerivedEvent { name: id, ..base })),
            );
            if self.scope.expand_or_add_levels(&self.levels, e.name, true) {
                self.fw.reset_from(0);
            }
            let ev = DerivedEvent {
                name: ty,
                long_name: if ty == e.tf_op { StrId::EMPTY } else { e.tf_op },
                ..base
            };
            self.fw.expand_or_add(0, e.tf_op, ev, e.name, true);
        }
        if e.source != StrId::EMPTY {
            let ev = DerivedEvent {
                name: e.source,
                ..base
            };
            self.source
                .expand_or_add(0, e.source, ev, StrId::EMPTY, false);
        }
    }

    fn finish(self) -> Vec<DerivedLine> {
        [
            self.steps,
            self.modules,
            self.ops,
            self.scope,
            self.fw,
            self.source,
        ]
        .into_iter()
        .map(LineBuilder::finish)
        .filter(|l| !l.events.is_empty())
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Interner;

    fn ev(s: &mut Interner, start: Ps, dur: Ps, name: &str, group: Option<i64>) -> DevEvent {
        DevEvent {
            start,
            dur,
            name: s.intern(name),
            group_id: group.unwrap_or(0),
            grouped: group.is_some(),
            kernel: true,
            ..DevEvent::default()
        }
    }

    fn names(s: &Interner, l: &DerivedLine) -> Vec<(String, Ps, Ps)> {
        l.events
            .iter()
            .map(|e| (s.get(e.name).to_string(), e.start, e.dur))
            .collect()
    }

    #[test]
    fn merges_consecutive_ops_and_splits_levels() {
        let mut s = Interner::new();
        let (m, a, b) = (
            s.intern("jit_f"),
            s.intern("fusion::inner"),
            s.intern("dot"),
        );
        let mut evs = vec![
            DevEvent {
                hlo_module: m,
                hlo_op: a,
                ..ev(&mut s, 0, 10, "k1", Some(1))
            },
            DevEvent {
                hlo_module: m,
                hlo_op: a,
                ..ev(&mut s, 20, 10, "k2", Some(1))
            },
            DevEvent {
                hlo_module: m,
                hlo_op: b,
                ..ev(&mut s, 40, 5, "k3", Some(1))
            },
            DevEvent {
                hlo_module: m,
                hlo_op: b,
                ..ev(&mut s, 50, 5, "k3", Some(2))
            },
            // not a kernel: only the step line sees it
            DevEvent {
                hlo_module: m,
                hlo_op: b,
                kernel: false,
                ..ev(&mut s, 60, 5, "memcpy", Some(2))
            },
        ];
        let lines = derive_device_lines(&mut evs, &mut s);
        let get = |k| lines.iter().find(|l| l.kind == k).unwrap();
        assert_eq!(
            names(&s, get(DerivedKind::Steps)),
            vec![("1".into(), 0, 45), ("2".into(), 50, 15)]
        );
        // new step breaks the module merge
        assert_eq!(
            names(&s, get(DerivedKind::XlaModules)),
            vec![("jit_f".into(), 0, 45), ("jit_f".into(), 50, 5)]
        );
        assert_eq!(
            names(&s, get(DerivedKind::XlaOps)),
            vec![
                ("fusion".into(), 0, 30),
                ("inner".into(), 0, 30),
                ("dot".into(), 40, 5),
                ("dot".into(), 50, 5)
            ]
        );
        assert!(lines.iter().all(|l| l.kind != DerivedKind::FrameworkOps));
    }

    #[test]
    fn framework_ops_split_on_repeated_kernel() {
        let mut s = Interner::new();
        let op = s.intern("model/dense/MatMul:MatMul");
        let mut evs = vec![
            DevEvent {
                tf_op: op,
                ..ev(&mut s, 0, 10, "gemm", None)
            },
            DevEvent {
                tf_op: op,
                ..ev(&mut s, 10, 10, "bias", None)
            },
            DevEvent {
                tf_op: op,
                ..ev(&mut s, 20, 10, "gemm", None)
            },
        ];
        let lines = derive_device_lines(&mut evs, &mut s);
        let get = |k| lines.iter().find(|l| l.kind == k).unwrap();
        assert_eq!(
            names(&s, get(DerivedKind::FrameworkOps)),
            vec![("MatMul".into(), 0, 20), ("MatMul".into(), 20, 10)]
        );
        assert_eq!(get(DerivedKind::FrameworkOps).events[0].long_name, op);
        assert_eq!(
            names(&s, get(DerivedKind::NameScope)),
            vec![
                ("model".into(), 0, 20),
                ("dense".into(), 0, 20),
                ("model".into(), 20, 10),
                ("dense".into(), 20, 10)
            ]
        );
        assert_eq!(parse_tf_op("a/b/c"), ("a/b/c", "c"));
        assert_eq!(parse_tf_op("a/b:Conv[x]"), ("a/b", "Conv"));
    }
}

#[cfg(test)]
mod merge_props {
    use super::*;
    use crate::model::Interner;
    use proptest::prelude::*;

    proptest! {
        /// Deriving from per-line runs (linear merge for few lines, heap for many) equals
        /// deriving from the concatenation in line order.
        #[test]
        fn runs_equal_concatenation(
            evs in prop::collection::vec((0i64..40, 0i64..15, 0u16..12, 0u8..4, 0i64..3, any::<bool>()), 0..120),
        ) {
            let mut s = Interner::new();
            let ops = [s.intern("a::b"), s.intern("a::c"), s.intern("d"), StrId::EMPTY];
            let module = s.intern("jit_m");
            let mut runs: Vec<Vec<DevEvent>> = vec![Vec::new(); 12];
            for &(start, dur, line, op, group, kernel) in &evs {
                runs[usize::from(line)].push(DevEvent {
                    start,
                    dur,
                    name: ops[usize::from(op) % 3],
                    group_id: group,
                    grouped: group > 0,
                    hlo_op: ops[usize::from(op)],
                    hlo_module: module,
                    kernel,
                    line,
                    ..DevEvent::default()
                });
            }
            let mut all: Vec<DevEvent> = runs.concat();
            let want = derive_device_lines(&mut all, &mut s);
            let mut few: Vec<Vec<DevEvent>> = runs.iter().take(5).cloned().collect();
            let mut few_all: Vec<DevEvent> = few.concat();
            prop_assert_eq!(
                derive_device_runs(&mut few, &mut s),
                derive_device_lines(&mut few_all, &mut s)
            );
            prop_assert_eq!(derive_device_runs(&mut runs, &mut s), want);
        }
    }
}
