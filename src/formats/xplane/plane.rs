//! Second pass: planes → processes, lines → tracks, events streamed from the wire straight into
//! reserved slice slots of the [`CaptureBuilder`]; metadata maps decoded with the prost types.
//!
//! Metadata is read first, on one thread (it interns names and builds the metadata args
//! blocks). Then every line with events is a unit of work: units run on all cores, largest
//! first, each filling its own run of slots that the first pass sized exactly. Event stats are
//! not copied: an event's args handle is the offset of the event in the file, decoded on demand
//! by [`super::lazy::XStats`]. The walk of one line (`walk.rs`) reads only the stats the loader interprets
//! (correlation, flow, derivation inputs) and interns string values so lazy reads find them.
//! Results are merged in file order, so the capture does not depend on the thread count. The
//! derived lines become tracks in `plane_derived.rs`; the id tables are in `tables.rs`.

use super::derive_device::{DeriveCtx, name_steps};
use super::derive_sched::Sched;
use super::derived::{self, DerivedLine, DevRun, NameTable};
use super::generated::{XEventMetadata, XStat, XStatMetadata};
use super::group::HostNodes;
use super::hlo_symbols::HloSymbols;
use super::launch_stats::Launch;
use super::scan::{PlaneScan, SpaceScan};
use super::stats::{self, IdTable, Role, StatTable};
use super::tables::{EvMeta, PlanePrep, PlaneTables, SCOPE_TREE_PLANE, plane_hidden, plane_kind};
use super::walk::{Cats, EXTRA, SharedNames, UnitOut, Walk};
use super::wire::{LEN, Reader, WireError};
use crate::formats::progress::Progress;
use crate::model::{
    ArgValue, CaptureBuilder, FilledRun, FlowPhase, Interner, Key, ProcessKind, Ps, SliceSlots,
    StrId, TrackKind,
};
use prost::Message;
use rustc_hash::FxHashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Decoder state shared across planes.
pub struct Decoder<'p> {
    /// The builder being filled.
    pub b: CaptureBuilder,
    pub(super) progress: &'p Progress,
    pub(super) origin_ns: i64,
    pub(super) meta: Vec<(StrId, ArgValue)>,
    pub(super) flows: Vec<(u64, u8, Ps, u32)>,
    pub(super) launches: Vec<Launch>,
    pub(super) step_names: FxHashMap<i64, StrId>,
    /// GPU ordinal → (process, has a Launch Stats line already).
    pub(super) gpus: FxHashMap<i64, (u32, bool)>,
    pub(super) cat_flow: StrId,
    pub(super) k_long_name: StrId,
    pub(super) threads: usize,
    /// HLO modules of `/host:metadata` (symbols of XLA ops).
    pub(super) symbols: HloSymbols,
    /// FLOPs and bytes per HLO instruction of those modules (`hlo_costs:<program id>` metadata).
    pub(super) costs: super::hlo_cost::HloCosts,
    /// Scope range id → parent (`/host:__ScopeRangeCallStack__`).
    pub(super) scope_tree: FxHashMap<i64, i64>,
}

fn perr(r: &Reader<'_>, what: &str, e: prost::DecodeError) -> Box<WireError> {
    WireError::new(r.base(), format!("{what}: {e}"))
}

/// Reads a map entry `{1: int64 key, 2: message}`: returns the key and the value's reader.
fn map_entry<'a>(mut r: Reader<'a>) -> Result<(i64, Reader<'a>), Box<WireError>> {
    let mut key = 0i64;
    let mut val = Reader::new(&[], r.offset());
    while !r.is_empty() {
        let (f, wt) = r.key()?;
        match (f, wt) {
            (1, _) if wt != LEN => key = r.scalar(wt)? as i64,
            (2, LEN) => val = r.sub()?,
            _ => r.skip(wt)?,
        }
    }
    Ok((key, val))
}

impl<'p> Decoder<'p> {
    /// The HLO cost tables as capture metadata (`hlo_costs:<program id>`, and
    /// `hlo_costs_malformed` when a module could not be decoded).
    fn push_hlo_costs(&mut self) {
        let costs = std::mem::take(&mut self.costs);
        for (pid, t) in &costs.tables {
            let k = self
                .b
                .intern(&format!("{}{pid}", super::hlo_cost::META_PREFIX));
            let v = self.b.intern(t);
            self.meta.push((k, ArgValue::Str(v)));
        }
        if costs.malformed > 0 {
            let k = self.b.intern(super::hlo_cost::META_MALFORMED);
            self.meta.push((k, ArgValue::U64(costs.malformed)));
        }
    }

    /// A decoder for a space whose times are shifted by `origin_ns`.
    pub fn new(progress: &'p Progress, origin_ns: i64) -> Self {
        let mut b = CaptureBuilder::new();
        let cat_flow = b.intern("xflow");
        let k_long_name = b.intern("long_name");
        Decoder {
            b,
            progress,
            origin_ns,
            meta: Vec::new(),
            flows: Vec::new(),
            launches: Vec::new(),
            step_names: FxHashMap::default(),
            gpus: FxHashMap::default(),
            cat_flow,
            k_long_name,
            threads: crate::threads::from_env("TRACETUI_XPLANE_THREADS"),
            symbols: HloSymbols::default(),
            costs: Default::default(),
            scope_tree: FxHashMap::default(),
        }
    }

    /// Sets the number of walking threads (1 = everything on the calling thread).
    pub fn with_threads(mut self, n: usize) -> Self {
        self.threads = n.max(1);
        self
    }

    /// Decodes the whole space into the builder; also returns each plane's id tables (what
    /// lazy args decoding needs).
    pub fn run(
        mut self,
        space: &SpaceScan<'_>,
    ) -> Result<(CaptureBuilder, Vec<PlaneTables>), Box<WireError>> {
        if self.origin_ns != 0 {
            self.b.origin_epoch_ns = Some(self.origin_ns);
        }
        let mut preps = Vec::with_capacity(space.planes.len());
        let mut tables = Vec::with_capacity(space.planes.len());
        for (i, p) in space.planes.iter().enumerate() {
            let (prep, t) = self.plane_meta(i, p)?;
            preps.push(prep);
            tables.push(t);
        }
        let mut derived = self.walk(space, &preps, &tables)?;
        // TPU TensorCore planes: the lines XProf derives from their own events' stats.
        let first_group = self
            .step_names
            .keys()
            .max()
            .map_or(0, |g| g.saturating_add(1));
        for (i, p) in space.planes.iter().enumerate() {
            if preps[i].kind == ProcessKind::Tpu && super::tpu_lines::derives(p) {
                let got = super::tpu_lines::derive(
                    p,
                    &tables[i],
                    self.origin_ns,
                    first_group,
                    &mut self.b.strings,
                )?;
                if let Some(w) = got.missing_metadata_warning(&String::from_utf8_lossy(p.name)) {
                    self.b.warn("tpu_no_hlo_metadata", w);
                }
                if let Some(d) = derived.get_mut(i) {
                    d.extend(got.lines);
                }
            }
        }
        // Derived lines after all raw tracks, plane by plane.
        let total: usize = derived
            .iter()
            .flat_map(|d| d.iter())
            .map(|l| l.events.len())
            .sum();
        self.b.reserve_slices(total);
        let jobs: Vec<(u32, DerivedLine)> = preps
            .iter()
            .zip(derived)
            .flat_map(|(prep, lines)| lines.into_iter().map(|l| (prep.proc_, l)))
            .collect();
        self.push_derived(jobs);
        for e in &space.errors {
            let m = String::from_utf8_lossy(e).into_owned();
            self.b.warn("xspace_error", format!("profiler error: {m}"));
        }
        for w in &space.warnings {
            let m = String::from_utf8_lossy(w).into_owned();
            self.b
                .warn("xspace_warning", format!("profiler warning: {m}"));
        }
        if !space.hostnames.is_empty() {
            let k = self.b.intern("hostnames");
            let joined: Vec<String> = space
                .hostnames
                .iter()
                .map(|h| String::from_utf8_lossy(h).into_owned())
                .collect();
            let v = self.b.intern(&joined.join(","));
            self.meta.push((k, ArgValue::Str(v)));
        }
        self.finish_derived();
        self.finish_flows();
        self.push_hlo_costs();
        self.b.args.begin();
        for &(k, v) in &self.meta {
            self.b.args.push(k, v);
        }
        self.b.metadata = self.b.args.finish();
        Ok((self.b, tables))
    }

    fn stat_table(&mut self, p: &PlaneScan<'_>) -> Result<StatTable, Box<WireError>> {
        let mut pairs = Vec::with_capacity(p.stat_metadata.len());
        for &e in &p.stat_metadata {
            let (key, v) = map_entry(e)?;
            let m = XStatMetadata::decode(v.data()).map_err(|x| perr(&v, "XStatMetadata", x))?;
            pairs.push((key, self.b.intern(&m.name)));
        }
        Ok(StatTable::new(pairs, &self.b.strings))
    }

    /// Reads a plane's metadata: process, stat and event metadata, plane stats, line tracks.
    fn plane_meta(
        &mut self,
        index: usize,
        p: &PlaneScan<'_>,
    ) -> Result<(PlanePrep, PlaneTables), Box<WireError>> {
        let pname = self.b.strings.intern_lossy(p.name);
        let name = self.b.strings.get(pname).to_string();
        let kind = plane_kind(&name);
        let hidden = plane_hidden(&name);
        let proc_ = self.b.process(Key::Str(pname));
        {
            let pr = self.b.process_mut(proc_);
            pr.name = pname;
            pr.kind = kind;
            pr.hidden = hidden;
            pr.sort_index = index as i64;
        }
        let table = self.stat_table(p)?;

        // Plane stats → capture metadata (the scope range tree → its own map).
        for &sr in &p.stats {
            let st = XStat::decode(sr.data()).map_err(|x| perr(&sr, "XStat", x))?;
            if name == SCOPE_TREE_PLANE {
                if let Some(parent) = stats::raw_of(&st).as_int() {
                    self.scope_tree.insert(st.metadata_id, parent);
                }
                continue;
            }
            let (sname, _) = table.get(st.metadata_id);
            let v = stats::resolve(stats::raw_of(&st), &table, &mut self.b.strings);
            let key = if hidden {
                sname
            } else {
                let k = format!("{name}: {}", self.b.strings.get(sname));
                self.b.intern(&k)
            };
            if name == "Task Environment"
                && self.b.strings.get(sname) == "profile_start_time"
                && let Some(t) = stats::raw_of(&st).as_int()
            {
                // Relative timestamps: time 0 is the session start. Epoch timestamps already
                // fixed the origin.
                if self.origin_ns == 0 {
                    self.b.origin_epoch_ns = Some(t);
                }
            }
            self.meta.push((key, v));
        }

        // Event metadata.
        let is_metadata_plane = name == "/host:metadata";
        let mut metas = Vec::with_capacity(p.event_metadata.len());
        for &e in &p.event_metadata {
            let (key, v) = map_entry(e)?;
            let m = XEventMetadata::decode(v.data()).map_err(|x| perr(&v, "XEventMetadata", x))?;
            let full = self.b.intern(&m.name);
            let disp = if m.display_name.is_empty() {
                full
            } else {
                self.b.intern(&m.display_name)
            };
            let mut em = EvMeta {
                name: disp,
                full,
                cu: m.name.starts_with("cu"),
                ..EvMeta::default()
            };
            let mut program_id = None;
            let mut hlo_proto: Option<&[u8]> = None;
            let mut entries = Vec::new();
            for st in &m.stats {
                let (sname, role) = table.get(st.metadata_id);
                let raw = stats::raw_of(st);
                if is_metadata_plane
                    && let stats::RawValue::Bytes(b) = raw
                    && self.b.strings.get(sname) == "Hlo Proto"
                {
                    hlo_proto = Some(b);
                }
                let v = stats::resolve(raw, &table, &mut self.b.strings);
                let s = stats::as_str_id(v).unwrap_or(StrId::EMPTY);
                match role {
                    Role::HloOp => em.hlo_op = s,
                    Role::HloModule => em.hlo_module = s,
                    Role::TfOp => em.tf_op = s,
                    Role::Source => em.source = s,
                    Role::KernelDetails => em.kernel = true,
                    Role::MemcpyDetails => em.memcpy = true,
                    Role::MemsetDetails => em.memset = true,
                    Role::ProgramId => program_id = raw.as_int(),
                    _ => {}
                }
                entries.push((sname, v));
            }
            if disp != full {
                entries.push((self.k_long_name, ArgValue::Str(full)));
            }
            if !entries.is_empty() {
                self.b.args.begin();
                for (k, v) in entries {
                    self.b.args.push(k, v);
                }
                em.args = self.b.args.finish();
            }
            em.program_id = program_id;
            if let Some(b) = hlo_proto {
                // XProf keys a module by its program_id stat, else the metadata id.
                self.symbols.add(program_id.unwrap_or(key) as u64, b);
                self.costs.add(program_id.unwrap_or(key) as u64, b);
            }
            if is_metadata_plane && full != StrId::EMPTY {
                let pid = program_id.unwrap_or(key);
                let k = self.b.intern(&format!("hlo_module:{pid}"));
                self.meta.push((k, ArgValue::Str(full)));
            }
            metas.push((key, em));
        }
        let metas = IdTable::from_pairs(metas);

        let has_derived = p
            .lines
            .iter()
            .any(|l| derived::is_derived_line(l.key(), &String::from_utf8_lossy(l.title())));
        if kind == ProcessKind::Gpu
            && let Some(n) = name
                .strip_prefix("/device:GPU:")
                .and_then(|n| n.parse::<i64>().ok())
        {
            let has_launch = p.lines.iter().any(|l| l.title() == b"Launch Stats");
            self.gpus.entry(n).or_insert((proc_, has_launch));
        }
        let mut tracks = Vec::with_capacity(p.lines.len());
        for (li, lh) in p.lines.iter().enumerate() {
            let title = self.b.strings.intern_lossy(lh.title());
            let is_derived = derived::is_derived_line(lh.key(), self.b.strings.get(title));
            let tkind = if is_derived {
                TrackKind::Derived
            } else {
                TrackKind::XLine
            };
            let before = self.b.track_count();
            let t = self.b.track(proc_, Key::Int(lh.key()), tkind);
            if self.b.track_count() > before {
                let tr = self.b.track_mut(t);
                tr.name = title;
                tr.sort_index = if is_derived { -1000 } else { 0 } + li as i64;
            }
            tracks.push(t);
        }
        let prep = PlanePrep {
            kind,
            proc_,
            collect_dev: kind == ProcessKind::Gpu && !has_derived,
            launch_plane: name == "/host:CPU",
            tracks,
        };
        Ok((
            prep,
            PlaneTables {
                stats: table,
                metas,
            },
        ))
    }

    /// Walks every line's events (in parallel), merges the results in file order, and returns
    /// each plane's derived lines.
    fn walk(
        &mut self,
        space: &SpaceScan<'_>,
        preps: &[PlanePrep],
        tables: &[PlaneTables],
    ) -> Result<Vec<Vec<DerivedLine>>, Box<WireError>> {
        // Units of work: lines with events, in file order.
        let mut units: Vec<(usize, usize)> = Vec::new();
        for (pi, p) in space.planes.iter().enumerate() {
            for (li, l) in p.lines.iter().enumerate() {
                if l.events > 0 {
                    units.push((pi, li));
                }
            }
        }
        let counts: Vec<usize> = units
            .iter()
            .map(|&(p, l)| usize::try_from(space.planes[p].lines[l].events).unwrap_or(usize::MAX))
            .collect();
        let cats = {
            let mut c = |s: &str| {
                let id = self.b.intern(s);
                self.b.class_of(id)
            };
            Cats {
                none: c(""),
                kernel: c("kernel"),
                memcpy: c("gpu_memcpy"),
                memset: c("gpu_memset"),
            }
        };
        let done = AtomicU64::new(0);
        // Step grouping feeds only the derived lines (and their Launch Stats): without a plane
        // to derive, host events are not recorded and grouping has nothing to do.
        let group_host = preps.iter().any(|p| p.collect_dev);
        let global = std::mem::take(&mut self.b.strings);
        let extra = Mutex::new(Interner::new());
        let walk = Walk {
            preps,
            tables,
            cats,
            origin_ns: self.origin_ns,
            progress: self.progress,
            done: &done,
            total: counts.iter().map(|&c| c as u64).sum(),
            bytes_total: self.progress.bytes_total.load(Ordering::Relaxed),
            group_host,
        };
        let slot_runs: Vec<(u32, usize)> = units
            .iter()
            .zip(&counts)
            .map(|(&(p, l), &c)| (preps[p].tracks[l], c))
            .collect();
        let (first, runs) = self.b.slots(&slot_runs);
        let cells: Vec<Mutex<(SliceSlots<'_>, UnitOut)>> = runs
            .into_iter()
            .map(|r| Mutex::new((r, UnitOut::default())))
            .collect();
        // Host lines first (step grouping waits for all of them, then their records go), then
        // largest units (in bytes) first, so the last ones to finish are short; lines of GPU
        // planes that get derived timelines count double (their plane's derivation follows).
        let is_host: Vec<bool> = units
            .iter()
            .map(|&(pi, _)| group_host && preps[pi].kind == ProcessKind::Host)
            .collect();
        let cost = |u: usize| {
            let (pi, li) = units[u];
            let bytes = space.planes[pi].lines[li].r.data().len();
            if preps[pi].collect_dev {
                bytes * 2
            } else {
                bytes
            }
        };
        let mut order: Vec<usize> = (0..units.len()).collect();
        order.sort_by_key(|&u| (!is_host[u], std::cmp::Reverse(cost(u)), u));
        let ctx = DeriveCtx {
            symbols: &self.symbols,
            scope_tree: &self.scope_tree,
        };
        let sched = Sched::new(
            space,
            ctx,
            &units,
            &is_host,
            preps.iter().map(|p| p.collect_dev).collect(),
        );
        if sched.no_host() {
            let mut names = SharedNames {
                global: &global,
                extra: &extra,
            };
            sched.group(HostNodes::default(), &mut names);
        }
        // Grouping reads every host unit's records, in file order, once all are walked.
        let take_host = || {
            let n: usize = units.len();
            let mut host = HostNodes::default();
            let total: usize = (0..n)
                .filter(|&u| is_host[u])
                .map(|u| lock(&cells[u]).1.host.nodes.len())
                .sum();
            host.nodes.reserve_exact(total);
            for u in (0..n).filter(|&u| is_host[u]) {
                host.append(&mut lock(&cells[u]).1.host);
            }
            host
        };
        let next = AtomicUsize::new(0);
        let work = || {
            let mut names = SharedNames {
                global: &global,
                extra: &extra,
            };
            loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&u) = order.get(k) else { break };
                let (pi, li) = units[u];
                let prep = &preps[pi];
                let mut cell = lock(&cells[u]);
                let (run, out) = &mut *cell;
                let mut local = prep.collect_dev.then(|| {
                    DevRun::with_capacity(li.min(usize::from(u16::MAX)) as u16, counts[u])
                });
                let lh = &space.planes[pi].lines[li];
                if let Err(e) = walk.line(pi, li, lh, run, out, &mut names, local.as_mut()) {
                    out.err = Some(e);
                    // Stop the others early: the load fails anyway.
                    next.store(order.len(), Ordering::Relaxed);
                    break;
                }
                drop(cell);
                if let Some(l) = local.as_mut() {
                    l.seal();
                }
                sched.unit_done(pi, local, is_host[u], take_host, &mut names);
            }
        };
        let threads = self.threads.min(units.len()).max(1);
        if threads == 1 {
            work();
        } else {
            std::thread::scope(|sc| {
                for _ in 1..threads {
                    sc.spawn(work);
                }
                work();
            });
        }
        let outs: Vec<(FilledRun, UnitOut)> = cells
            .into_iter()
            .map(|c| {
                let (run, out) = c.into_inner().unwrap_or_else(|e| e.into_inner());
                (run.finish(), out)
            })
            .collect();
        // The first real error in file order; a cancellation only when there is none.
        if let Some(e) = outs
            .iter()
            .filter_map(|(_, o)| o.err.as_ref())
            .min_by_key(|e| e.cancelled)
        {
            self.b.strings = global;
            return Err(e.clone());
        }
        let (filled, outs): (Vec<FilledRun>, Vec<UnitOut>) = outs.into_iter().unzip();
        let (groups, mut derived) = sched.finish();
        {
            // Steps are named by their group: grouping's names, else a step name the file
            // gives (first in file order), else the group id.
            let mut names = SharedNames {
                global: &global,
                extra: &extra,
            };
            let mut group_names: FxHashMap<i64, StrId> = FxHashMap::default();
            for (&g, name) in &groups.names {
                group_names.insert(g, names.intern(name));
            }
            for o in &outs {
                for &(g, s) in &o.step_names {
                    group_names.entry(g).or_insert(s);
                }
            }
            for lines in &mut derived {
                name_steps(lines, &group_names, &mut names);
            }
        }
        self.b.strings = global;
        let starts = self.b.compact_slots(first, &counts, filled);

        // Strings first seen during the walk join the capture's table, in first-seen order.
        let extra = extra.into_inner().unwrap_or_else(|e| e.into_inner());
        let map: Vec<StrId> = extra.iter().map(|(_, s)| self.b.intern(s)).collect();
        let fix = |id: StrId| -> StrId {
            if id.0 & EXTRA != 0 {
                map.get((id.0 & !EXTRA) as usize)
                    .copied()
                    .unwrap_or(StrId::EMPTY)
            } else {
                id
            }
        };
        let (mut clamped, mut clamp_at, mut negative, mut far) = (0u64, 0usize, 0u64, 0u64);
        for (u, o) in outs.into_iter().enumerate() {
            let (pi, li) = units[u];
            let track = preps[pi].tracks[li];
            let base = starts[u];
            self.flows.extend(
                o.flows
                    .iter()
                    .map(|&(id, ph, st, i)| (id, ph, st, base + i)),
            );
            for (g, s) in o.step_names {
                self.step_names.entry(g).or_insert(fix(s));
            }
            for (name, n, dur) in o.aggregated {
                self.b.add_aggregated(track, name, n, dur);
            }
            if clamped == 0 {
                clamp_at = o.clamp_at;
            }
            clamped += o.clamped;
            negative += o.negative;
            far += o.far;
        }
        // Group names (steps) and the launches of Launch Stats: only groups this grouping made
        // (XProf looks a launch's group up in its group metadata; groups a file carries
        // already have none).
        for (g, name) in &groups.names {
            let id = self.b.intern(name);
            self.step_names.insert(*g, id);
        }
        self.launches.extend(groups.launches);
        self.b.warn_n(
            "time_out_of_range",
            format!("event time beyond ±2^61 ps clamped (first near byte {clamp_at})"),
            clamped,
        );
        self.b.warn_n(
            "negative_duration",
            "slice with negative duration clamped to 0".into(),
            negative,
        );
        self.b.warn_n(
            "args_beyond_2gib",
            "stats of events beyond byte 2^31 of the file not kept (their metadata stats are)"
                .into(),
            far,
        );
        self.progress.update(
            self.progress.bytes_total.load(Ordering::Relaxed),
            done.load(Ordering::Relaxed),
        );
        Ok(derived
            .into_iter()
            .map(|mut lines| {
                for l in &mut lines {
                    for e in &mut l.events {
                        e.name = fix(e.name);
                        e.long_name = fix(e.long_name);
                    }
                }
                lines
            })
            .collect())
    }

    fn finish_flows(&mut self) {
        let mut flows = std::mem::take(&mut self.flows);
        flows.sort_unstable_by_key(|&(id, ph, st, raw)| (id, ph, st, raw));
        for (id, ph, _, raw) in flows {
            let phase = match ph {
                0 => FlowPhase::Start,
                1 => FlowPhase::Step,
                _ => FlowPhase::Finish,
            };
            self.b.flow_slice(phase, id, self.cat_flow, raw);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
