//! The lines XProf derives on a GPU plane (`derived_timeline.cc`, XProf 2.24): `Steps` over the
//! whole plane, and per stream line `XLA Modules`, `XLA Ops`, `Framework Name Scope`,
//! `Framework Ops`, `Source code` and `Command Buffers`, named `<line> - from #<stream id>`.
//! Rules: docs/xplane.md.

#[cfg(test)]
use super::derived::DevEvent;
use super::derived::{
    DerivedEvent, DerivedKind, DerivedLine, DevAttr, DevRec, DevRun, LineBuilder, NO_GROUP,
    NO_VALUE, NameTable,
};
use super::hlo_symbols::HloSymbols;
use super::tf_op;
use crate::model::{Ps, StrId};
use rustc_hash::FxHashMap;

/// One stream line of the plane (indexed by [`DevEvent::line`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Stream {
    /// XLine id (`from #<id>`).
    pub id: i64,
    /// Its name contains `Compute` (XProf derives compute streams first).
    pub compute: bool,
}

/// What the derivation reads besides the plane's events.
#[derive(Clone, Copy)]
pub struct DeriveCtx<'a> {
    /// The HLO modules of the capture (framework ops and source of XLA ops).
    pub symbols: &'a HloSymbols,
    /// `/host:__ScopeRangeCallStack__`: scope range id → parent id.
    pub scope_tree: &'a FxHashMap<i64, i64>,
}

impl Default for DeriveCtx<'static> {
    fn default() -> Self {
        static EMPTY_SYMBOLS: std::sync::OnceLock<HloSymbols> = std::sync::OnceLock::new();
        static EMPTY_TREE: std::sync::OnceLock<FxHashMap<i64, i64>> = std::sync::OnceLock::new();
        DeriveCtx {
            symbols: EMPTY_SYMBOLS.get_or_init(HloSymbols::default),
            scope_tree: EMPTY_TREE.get_or_init(FxHashMap::default),
        }
    }
}

/// Derives a plane's lines from one record run per stream line (`runs` in line order; each
/// run's line is described by `streams[run.line]`). Events without a group take the group of
/// the latest grouped event before them on the plane (`ProcessUngroupedEvents`). Empty lines
/// are left out. `Steps` events are named by their group id here; [`name_steps`] names them.
pub fn derive_plane(
    runs: &mut [DevRun],
    streams: &[Stream],
    ctx: DeriveCtx<'_>,
    strings: &mut impl NameTable,
) -> Vec<DerivedLine> {
    type Key = (Ps, std::cmp::Reverse<Ps>, u16);
    for r in runs.iter_mut() {
        // Stable: equal keys keep file order. Lines come sorted from profilers: no copy then.
        let key = |e: &DevRec| (e.start, std::cmp::Reverse(e.dur));
        if !r.recs.is_sorted_by_key(key) {
            r.recs.sort_by_key(key);
        }
    }
    // The plane's events in time order (start, longer first, line, then run and index): a
    // k-way merge of the sorted runs.
    let mut heap: std::collections::BinaryHeap<std::cmp::Reverse<(Key, u32)>> = runs
        .iter()
        .enumerate()
        .filter_map(|(k, r)| {
            r.recs
                .first()
                .map(|e| std::cmp::Reverse(((e.start, std::cmp::Reverse(e.dur), r.line), k as u32)))
        })
        .collect();
    let mut at: Vec<usize> = vec![0; runs.len()];
    let mut last: Option<i64> = None;
    let mut steps = LineBuilder::new(DerivedKind::Steps, None);
    while let Some(std::cmp::Reverse((_, k))) = heap.pop() {
        let k = k as usize;
        let run = &mut runs[k];
        let i = at[k];
        at[k] += 1;
        if let Some(n) = run.recs.get(at[k]) {
            heap.push(std::cmp::Reverse((
                (n.start, std::cmp::Reverse(n.dur), run.line),
                k as u32,
            )));
        }
        let e = &mut run.recs[i];
        match e.group() {
            Some(g) => last = Some(g),
            None => {
                if let Some(g) = last {
                    e.group_id = g;
                    e.grouped = true;
                }
            }
        }
        if let Some(g) = e.group() {
            // Keyed by the group alone (the name is a function of it), named afterwards.
            let ev = DerivedEvent {
                start: e.start,
                dur: e.dur,
                name: StrId::EMPTY,
                long_name: StrId::EMPTY,
                group_id: g,
            };
            steps.expand_or_add(0, StrId::EMPTY, ev, NO_VALUE, NO_VALUE);
        }
    }
    drop(at);
    let mut out = vec![steps.finish()];
    // Streams: compute streams first, then by event count (XProf's order of derivation).
    let mut idx: Vec<usize> = (0..runs.len()).collect();
    let info = |k: usize| {
        streams
            .get(usize::from(runs[k].line))
            .copied()
            .unwrap_or_default()
    };
    idx.sort_by_key(|&k| (!info(k).compute, std::cmp::Reverse(runs[k].recs.len()), k));
    let mut cache = Caches::default();
    for k in idx {
        let run = &runs[k];
        if run.recs.is_empty() {
            continue;
        }
        // What each distinct attribute set resolves to, once per run.
        let resolved: Vec<Resolved> = run
            .attrs
            .iter()
            .map(|a| cache.resolve(a, ctx, strings))
            .collect();
        let mut d = StreamDeriver::new(info(k).id);
        for e in &run.recs {
            d.push(
                e,
                &run.attrs[e.attr as usize],
                &resolved[e.attr as usize],
                ctx,
                &mut cache,
            );
        }
        out.extend(d.finish());
    }
    out.retain(|l| !l.events.is_empty());
    out
}

/// Names the events of a plane's `Steps` line: the group's name from `names`, else its id.
pub fn name_steps(
    lines: &mut [DerivedLine],
    names: &FxHashMap<i64, StrId>,
    strings: &mut impl NameTable,
) {
    let mut made: FxHashMap<i64, StrId> = FxHashMap::default();
    for l in lines.iter_mut().filter(|l| l.kind == DerivedKind::Steps) {
        for e in &mut l.events {
            let Some(g) = e.group() else { continue };
            e.name = *made.entry(g).or_insert_with(|| {
                names
                    .get(&g)
                    .copied()
                    .unwrap_or_else(|| strings.intern(&g.to_string()))
            });
        }
    }
}

/// An XLA op's levels (key with the module prefix, display name) and the last level's text.
type OpLevels = (Vec<(StrId, StrId)>, String);

/// What one [`DevAttr`] resolves to (names built and looked up once per distinct attribute
/// set, not per event).
#[derive(Clone, Debug, Default)]
struct Resolved {
    /// `module(program id)`, empty without a module.
    module: StrId,
    /// XLA op levels (key, display name); empty without an op.
    levels: Vec<(StrId, StrId)>,
    /// Framework op (full name) from the HLO symbols, or the `tf_op` stat without an op.
    tf: StrId,
    /// Source from the HLO symbols.
    src: StrId,
    /// `Command Buffer <id>` of a kernel with a graph id, else empty.
    cmd: StrId,
}

/// Names built once per distinct input.
#[derive(Default)]
struct Caches {
    /// (module, program id) → `module(program id)`.
    modules: FxHashMap<(StrId, i64), StrId>,
    /// (hlo_op, module, program id) → per level (key with the module prefix, display name),
    /// and the last level's text (the instruction the symbol resolver looks up).
    ops: FxHashMap<(StrId, StrId, i64), OpLevels>,
    /// Framework op full name → (name scopes, display name).
    tf_ops: FxHashMap<StrId, (Vec<StrId>, StrId)>,
    /// (program id, instruction) → (framework op, source), interned.
    symbols: FxHashMap<(i64, StrId), (StrId, StrId)>,
    /// Command buffer graph id → `Command Buffer <id>`.
    graphs: FxHashMap<u64, StrId>,
    levels: Vec<(StrId, DerivedEvent)>,
    scopes: Vec<i64>,
    op_scopes: Vec<i64>,
}

impl Caches {
    /// Resolves one attribute set (module name, op levels, framework op and source, command
    /// buffer name).
    fn resolve(
        &mut self,
        a: &DevAttr,
        ctx: DeriveCtx<'_>,
        strings: &mut impl NameTable,
    ) -> Resolved {
        let mut r = Resolved::default();
        if !a.kernel && !a.graph_exec {
            return r;
        }
        if a.hlo_module != StrId::EMPTY {
            r.module = *self
                .modules
                .entry((a.hlo_module, a.program_id))
                .or_insert_with(|| {
                    let m = strings.text(a.hlo_module);
                    if a.program_id == NO_VALUE {
                        strings.intern(&m)
                    } else {
                        strings.intern(&format!("{m}({})", a.program_id))
                    }
                });
        }
        if a.hlo_op != StrId::EMPTY {
            let (levels, last) = self
                .ops
                .entry((a.hlo_op, a.hlo_module, a.program_id))
                .or_insert_with(|| {
                    let full = strings.text(a.hlo_op);
                    let prefix = if a.program_id == NO_VALUE {
                        strings.text(a.hlo_module)
                    } else {
                        a.program_id.to_string()
                    };
                    let parts: Vec<&str> = full.split("::").collect();
                    let levels = parts
                        .iter()
                        .map(|p| (strings.intern(&format!("{prefix}/{p}")), strings.intern(p)))
                        .collect();
                    (levels, parts.last().copied().unwrap_or("").to_string())
                });
            r.levels = levels.clone();
            let instr = strings.intern(last);
            let (tf, src) = *self
                .symbols
                .entry((a.program_id, instr))
                .or_insert_with(|| {
                    let pid = (a.program_id != NO_VALUE).then_some(a.program_id as u64);
                    match ctx.symbols.get(pid, last) {
                        Some(s) => (strings.intern(&s.tf_op), strings.intern(&s.source)),
                        None => (StrId::EMPTY, StrId::EMPTY),
                    }
                });
            r.tf = tf;
            r.src = src;
        } else {
            r.tf = a.tf_op;
        }
        if r.tf != StrId::EMPTY {
            let full = r.tf;
            self.tf_ops.entry(full).or_insert_with(|| {
                let text = strings.text(full);
                let op = tf_op::parse(&text);
                let scopes = op.scopes().map(|p| strings.intern(p)).collect();
                let name = op.event_name();
                // An empty type (`:` of an instruction without metadata) shows the full name.
                let display = if name.is_empty() {
                    full
                } else {
                    strings.intern(&name)
                };
                (scopes, display)
            });
        }
        if a.kernel && a.graph_id != 0 {
            r.cmd = *self
                .graphs
                .entry(a.graph_id)
                .or_insert_with(|| strings.intern(&format!("Command Buffer {}", a.graph_id)));
        }
        r
    }
}

/// The per-stream lines of one stream (`DeriveEventsFromAnnotationsForLines`).
struct StreamDeriver {
    modules: LineBuilder,
    ops: LineBuilder,
    scope: LineBuilder,
    fw: LineBuilder,
    source: LineBuilder,
    cmd: LineBuilder,
}

impl StreamDeriver {
    fn new(from: i64) -> Self {
        let b = |k| LineBuilder::new(k, Some(from));
        StreamDeriver {
            modules: b(DerivedKind::XlaModules),
            ops: b(DerivedKind::XlaOps),
            scope: b(DerivedKind::NameScope),
            fw: b(DerivedKind::FrameworkOps),
            source: b(DerivedKind::Source),
            cmd: b(DerivedKind::CommandBuffers),
        }
    }

    /// Modules → {Name Scope → Framework Ops, XLA Ops, Command Buffers}: a new module event
    /// closes them (XProf 2.24 splits a command buffer event where the module changes).
    fn reset_after_module(&mut self) {
        self.scope.reset_from(0);
        self.fw.reset_from(0);
        self.ops.reset_from(0);
        self.cmd.reset_from(0);
    }

    fn push(&mut self, e: &DevRec, a: &DevAttr, r: &Resolved, ctx: DeriveCtx<'_>, c: &mut Caches) {
        // Only kernels (and whole CUDA graph executions) feed these lines.
        if !a.kernel && !a.graph_exec {
            return;
        }
        let base = DerivedEvent {
            start: e.start,
            dur: e.dur,
            name: StrId::EMPTY,
            long_name: StrId::EMPTY,
            group_id: e.group().unwrap_or(NO_GROUP),
        };
        // Scope range ids: the event's, then its ancestors' (the root is the module run's).
        c.scopes.clear();
        if e.scope != NO_VALUE && (a.hlo_module != StrId::EMPTY || a.hlo_op != StrId::EMPTY) {
            c.scopes.push(e.scope);
            let mut at = e.scope;
            while let Some(&p) = ctx.scope_tree.get(&at) {
                if c.scopes.contains(&p) {
                    break;
                }
                c.scopes.push(p);
                at = p;
            }
        }
        if a.hlo_module != StrId::EMPTY {
            let name = r.module;
            let root = c.scopes.last().copied().unwrap_or(NO_VALUE);
            let ev = DerivedEvent { name, ..base };
            if self.modules.expand_or_add(0, name, ev, root, NO_VALUE) {
                self.reset_after_module();
            }
        }
        if a.hlo_op != StrId::EMPTY {
            c.levels.clear();
            c.levels.extend(
                r.levels
                    .iter()
                    .map(|&(k, d)| (k, DerivedEvent { name: d, ..base })),
            );
            // Scope ids go with the levels only when there is one per level (root first).
            c.op_scopes.clear();
            if c.scopes.len() == c.levels.len() {
                c.op_scopes.extend(c.scopes.iter().rev());
            }
            self.ops.expand_or_add_levels(&c.levels, &c.op_scopes);
            if r.tf != StrId::EMPTY {
                self.tf_op(r.tf, base, c);
            }
            if r.src != StrId::EMPTY {
                let ev = DerivedEvent {
                    name: r.src,
                    ..base
                };
                self.source.expand_or_add(0, r.src, ev, NO_VALUE, NO_VALUE);
            }
        } else if r.tf != StrId::EMPTY {
            self.tf_op(r.tf, base, c);
        }
        if r.cmd != StrId::EMPTY {
            let name = r.cmd;
            let ev = DerivedEvent { name, ..base };
            let root = c.scopes.last().copied().unwrap_or(e.scope);
            self.cmd.expand_or_add(0, name, ev, root, e.corr);
        }
    }

    /// `ProcessTfOpEvent`: name scopes (TensorFlow and JAX ops), then the op, shown by its type
    /// (`full` was resolved by [`Caches::resolve`]).
    fn tf_op(&mut self, full: StrId, base: DerivedEvent, c: &mut Caches) {
        let Some((scopes, display)) = c.tf_ops.get(&full) else {
            return;
        };
        let display = *display;
        if !scopes.is_empty() {
            c.levels.clear();
            c.levels.extend(
                scopes
                    .iter()
                    .map(|&id| (id, DerivedEvent { name: id, ..base })),
            );
            if self.scope.expand_or_add_levels(&c.levels, &[]) {
                self.fw.reset_from(0);
            }
        }
        let ev = DerivedEvent {
            name: display,
            long_name: if display == full { StrId::EMPTY } else { full },
            ..base
        };
        self.fw.expand_or_add(0, full, ev, NO_VALUE, NO_VALUE);
    }

    fn finish(self) -> Vec<DerivedLine> {
        [
            self.modules,
            self.ops,
            self.scope,
            self.fw,
            self.source,
            self.cmd,
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

    fn kernel(s: &mut Interner, start: Ps, name: &str) -> DevEvent {
        DevEvent {
            start,
            dur: 1000,
            name: s.intern(name),
            kernel: true,
            ..DevEvent::default()
        }
    }

    type Events = Vec<(String, Ps, Ps)>;

    fn lines(s: &Interner, out: &[DerivedLine]) -> Vec<(String, Events)> {
        out.iter()
            .map(|l| {
                let name = match l.from {
                    Some(id) => format!("{} - from #{id}", l.kind.name()),
                    None => l.kind.name().to_string(),
                };
                let evs = l
                    .events
                    .iter()
                    .map(|e| (s.get(e.name).to_string(), e.start, e.dur))
                    .collect();
                (name, evs)
            })
            .collect()
    }

    /// Two launches of one command buffer (one group each), then an ungrouped module run:
    /// module runs split by scope range id, the command buffer line by launch, the ungrouped
    /// run joins the last step.
    #[test]
    fn command_buffer_runs_split_by_launch_and_scope() {
        let mut s = Interner::new();
        let (m, op, other) = (
            s.intern("jit_step"),
            s.intern("command_buffer_1"),
            s.intern("jit_f"),
        );
        let f_op = s.intern("fusion.1");
        let run = |s: &mut Interner, t0: Ps, corr: i64, scope: i64, g: i64| -> Vec<DevEvent> {
            ["k1", "k2"]
                .iter()
                .enumerate()
                .map(|(i, k)| DevEvent {
                    hlo_module: m,
                    hlo_op: op,
                    program_id: 7,
                    corr,
                    scope,
                    graph_id: 5,
                    group_id: g,
                    grouped: true,
                    ..kernel(s, t0 + 2000 * i as Ps, k)
                })
                .collect()
        };
        let mut evs = run(&mut s, 0, 1, 100, 0);
        evs.extend(run(&mut s, 10_000, 2, 200, 1));
        evs.push(DevEvent {
            hlo_module: other,
            hlo_op: f_op,
            program_id: 9,
            ..kernel(&mut s, 20_000, "k3")
        });
        let mut runs = vec![DevRun::from_events(0, &evs)];
        let streams = [Stream {
            id: 14,
            compute: true,
        }];
        let mut out = derive_plane(&mut runs, &streams, DeriveCtx::default(), &mut s);
        name_steps(&mut out, &FxHashMap::default(), &mut s);
        let got = lines(&s, &out);
        let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            vec![
                "Steps",
                "XLA Modules - from #14",
                "XLA Ops - from #14",
                "Command Buffers - from #14"
            ]
        );
        assert_eq!(
            got[0].1,
            vec![("0".into(), 0, 3000), ("1".into(), 10_000, 11_000)]
        );
        assert_eq!(
            got[1].1,
            vec![
                ("jit_step(7)".into(), 0, 3000),
                ("jit_step(7)".into(), 10_000, 3000),
                ("jit_f(9)".into(), 20_000, 1000)
            ]
        );
        assert_eq!(
            got[3].1,
            vec![
                ("Command Buffer 5".into(), 0, 3000),
                ("Command Buffer 5".into(), 10_000, 3000)
            ]
        );
    }

    /// Framework ops from the HLO module (not the kernel's `tf_op`), name scopes for JAX ops,
    /// `:` for an instruction without metadata; nested XLA op levels of equal span shortened by
    /// 1 ns per level when closed.
    #[test]
    fn framework_ops_from_hlo_symbols_and_level_shrink() {
        let mut s = Interner::new();
        let mut symbols = HloSymbols::default();
        assert!(symbols.add(
            3,
            &super::super::hlo_symbols::tests::hlo_proto(&[
                ("custom-call.1", "jit(f)/dot_general", "", "", 0),
                ("softmax.2", "", "", "", 0),
            ])
        ));
        let (m, cc, sm, nested) = (
            s.intern("jit_f"),
            s.intern("custom-call.1"),
            s.intern("softmax.2"),
            s.intern("outer::inner"),
        );
        let xla = s.intern("XlaModule:");
        let ev = |s: &mut Interner, t: Ps, op: StrId| DevEvent {
            hlo_module: m,
            hlo_op: op,
            tf_op: xla,
            program_id: 3,
            dur: 5000,
            ..kernel(s, t, "k")
        };
        let evs = [
            ev(&mut s, 0, cc),
            ev(&mut s, 10_000, sm),
            ev(&mut s, 20_000, nested),
            ev(&mut s, 30_000, cc),
        ];
        let mut runs = vec![DevRun::from_events(0, &evs)];
        let ctx = DeriveCtx {
            symbols: &symbols,
            ..DeriveCtx::default()
        };
        let out = derive_plane(
            &mut runs,
            &[Stream {
                id: 1,
                compute: false,
            }],
            ctx,
            &mut s,
        );
        let got = lines(&s, &out);
        let line = |n: &str| got.iter().find(|(x, _)| x == n).unwrap().1.clone();
        assert_eq!(
            line("Framework Ops - from #1"),
            vec![
                ("dot_general".into(), 0, 5000),
                (":".into(), 10_000, 5000),
                ("dot_general".into(), 30_000, 5000)
            ]
        );
        assert_eq!(
            line("Framework Name Scope - from #1"),
            // `:` has no scope: the open `jit(f)` event stays open and extends (GPU plane).
            vec![("jit(f)".into(), 0, 35_000)]
        );
        // `outer` and `inner` have the same span: closing them cuts `inner` by 1 ns.
        assert_eq!(
            line("XLA Ops - from #1")[2..4],
            [
                ("outer".into(), 20_000, 5000),
                ("inner".into(), 20_000, 4000)
            ]
        );
        assert!(out.iter().all(|l| l.kind != DerivedKind::Steps));
    }
}
