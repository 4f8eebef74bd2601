//! The parallel part of the second pass: one XLine's events walked from the wire into its run
//! of slice slots, on whichever thread took the line (see `plane.rs` for the metadata pass and the
//! merge). Only the stats the loader interprets are resolved; string values are interned so that
//! lazy reads of the event find them.

use super::derived::{DevEvent, DevRun, NO_VALUE, NameTable};
use super::group::{ASYNC, CU, HostNode, HostNodes, HostRare, LAUNCH_PLANE, NONE};
use super::scan::LineHead;
use super::stats::{self, RawValue, Role, StatTable};
use super::tables::{PlanePrep, PlaneTables};
use super::wire::{LEN, Reader, VARINT, WireError, expect_len};
use crate::formats::progress::Progress;
use crate::model::{ArgsRef, Interner, ProcessKind, Ps, SliceSlots, StrId};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Largest |time| or duration kept (ps, ≈ 26 days): sums of two stay far from i64 overflow.
const TIME_LIMIT: i64 = 1 << 61;

/// Ids tagged with this bit live in the walk's extra string table until the merge.
pub(super) const EXTRA: u32 = 1 << 31;

/// A thread's view of the strings while the walk runs: the capture's interner (read-only)
/// and a shared table of new strings (string stat values seen for the first time).
pub(super) struct SharedNames<'a> {
    pub(super) global: &'a Interner,
    pub(super) extra: &'a Mutex<Interner>,
}

impl SharedNames<'_> {
    #[inline]
    fn intern_lossy(&mut self, b: &[u8]) -> StrId {
        match std::str::from_utf8(b) {
            Ok(s) => NameTable::intern(self, s),
            Err(_) => NameTable::intern(self, &String::from_utf8_lossy(b)),
        }
    }
}

impl NameTable for SharedNames<'_> {
    fn intern(&mut self, s: &str) -> StrId {
        if let Some(id) = self.global.lookup(s) {
            return id;
        }
        let mut x = self.extra.lock().unwrap_or_else(|e| e.into_inner());
        StrId(x.intern(s).0 | EXTRA)
    }
    fn text(&self, id: StrId) -> String {
        if id.0 & EXTRA != 0 {
            let x = self.extra.lock().unwrap_or_else(|e| e.into_inner());
            x.get(StrId(id.0 & !EXTRA)).to_string()
        } else {
            self.global.get(id).to_string()
        }
    }
}

/// What one line's walk produces besides its slots (merged in file order).
#[derive(Debug, Default)]
pub(super) struct UnitOut {
    /// (flow id, phase, start, index in the unit's run).
    pub(super) flows: Vec<(u64, u8, Ps, u32)>,
    /// Host events step grouping needs (this line's, in time order).
    pub(super) host: HostNodes,
    pub(super) step_names: Vec<(i64, StrId)>,
    pub(super) aggregated: Vec<(StrId, u64, Ps)>,
    pub(super) clamped: u64,
    pub(super) clamp_at: usize,
    pub(super) negative: u64,
    /// Events whose stats lie beyond what a lazy handle can address.
    pub(super) far: u64,
    pub(super) err: Option<Box<WireError>>,
}

/// Category classes the walk gives GPU events.
#[derive(Clone, Copy, Debug)]
pub(super) struct Cats {
    pub(super) kernel: u16,
    pub(super) memcpy: u16,
    pub(super) memset: u16,
    pub(super) none: u16,
}

/// The interned id of a string-valued stat (str, ref or compressed), else empty.
#[inline]
fn str_of(raw: RawValue<'_>, table: &StatTable, names: &mut SharedNames<'_>) -> StrId {
    match raw {
        RawValue::Ref(r) => table.get(r as i64).0,
        RawValue::Str(b) => names.intern_lossy(b),
        RawValue::Compressed(_) => intern_compressed(raw, names),
        _ => StrId::EMPTY,
    }
}

/// Inflates and interns a compressed string stat (what lazy decoding will look up).
#[inline(never)]
fn intern_compressed(raw: RawValue<'_>, names: &mut SharedNames<'_>) -> StrId {
    match stats::inflate(raw) {
        Some(s) => names.intern_lossy(&s),
        None => StrId::EMPTY,
    }
}

/// What an event's stats say, as far as the loader interprets them.
#[derive(Default)]
struct EvStats {
    corr: u64,
    has_corr: bool,
    flow: Option<u64>,
    group: Option<i64>,
    device: Option<i64>,
    step_name: StrId,
    /// Derivation inputs (op, module, framework op, source, kernel flag).
    dev: DevEvent,
    memcpy: bool,
    memset: bool,
    /// Grouping stats (roots, step numbers, producer/consumer contexts).
    rare: HostRare,
    prod_type: Option<i64>,
    prod_id: Option<i64>,
    cons_type: Option<i64>,
    cons_id: Option<i64>,
    is_async: bool,
    /// Stats seen.
    count: u32,
}

impl EvStats {
    /// Reads one XStat message.
    #[inline(always)]
    fn read(
        &mut self,
        sub: Reader<'_>,
        table: &StatTable,
        names: &mut SharedNames<'_>,
    ) -> Result<(), Box<WireError>> {
        self.count += 1;
        let (smid, raw) = stats::read_stat_fast(sub)?;
        let role = table.get(smid).1;
        if role == Role::None {
            // Only interned, so that lazy reads of this event find it.
            if matches!(raw, RawValue::Str(_) | RawValue::Compressed(_)) {
                str_of(raw, table, names);
            }
            return Ok(());
        }
        let s = str_of(raw, table, names);
        match role {
            Role::Correlation => {
                self.corr = raw.as_int().unwrap_or(0) as u64;
                self.has_corr = raw.as_int().is_some();
                self.dev.corr = raw.as_int().unwrap_or(NO_VALUE);
            }
            Role::Flow => self.flow = raw.as_int().map(|x| x as u64),
            Role::GroupId => self.group = raw.as_int(),
            Role::DeviceId => self.device = raw.as_int(),
            Role::StepName => self.step_name = s,
            Role::HloOp => self.dev.hlo_op = s,
            Role::HloModule => self.dev.hlo_module = s,
            Role::TfOp => self.dev.tf_op = s,
            Role::Source => self.dev.source = s,
            Role::KernelDetails => self.dev.kernel = true,
            Role::MemcpyDetails => self.memcpy = true,
            Role::MemsetDetails => self.memset = true,
            Role::ProgramId => self.dev.program_id = raw.as_int().unwrap_or(NO_VALUE),
            Role::IsRoot => self.rare.root = raw.as_int().unwrap_or(0),
            Role::StepNum => self.rare.step_num = raw.as_int().unwrap_or(NONE),
            Role::IterNum => self.rare.iter_num = raw.as_int().unwrap_or(NONE),
            Role::GraphType => self.rare.graph_type = s,
            Role::ProducerType => self.prod_type = raw.as_int(),
            Role::ProducerId => self.prod_id = raw.as_int(),
            Role::ConsumerType => self.cons_type = raw.as_int(),
            Role::ConsumerId => self.cons_id = raw.as_int(),
            Role::IsAsync => self.is_async = raw.as_int().unwrap_or(0) != 0,
            Role::ScopeRangeId => self.dev.scope = raw.as_int().unwrap_or(NO_VALUE),
            // XProf reads it as an unsigned value only (`UintValue`).
            Role::CudaGraphId => {
                self.dev.graph_id = match raw {
                    RawValue::U64(v) => v,
                    _ => 0,
                }
            }
            Role::CudaGraphExecId => self.dev.graph_exec = true,
            Role::None => {}
        }
        Ok(())
    }
}

/// Read-only context of the parallel walk.
pub(super) struct Walk<'a> {
    pub(super) preps: &'a [PlanePrep],
    pub(super) tables: &'a [PlaneTables],
    pub(super) cats: Cats,
    pub(super) origin_ns: i64,
    pub(super) progress: &'a Progress,
    pub(super) done: &'a AtomicU64,
    pub(super) total: u64,
    pub(super) bytes_total: u64,
    /// Host events are recorded for step grouping: only when a plane's lines are derived
    /// (grouping's results feed nothing else), so a capture without one skips it.
    pub(super) group_host: bool,
}

impl Walk<'_> {
    /// Walks one line's events into its run of slots.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn line(
        &self,
        plane: usize,
        li: usize,
        lh: &LineHead<'_>,
        run: &mut SliceSlots<'_>,
        out: &mut UnitOut,
        names: &mut SharedNames<'_>,
        mut dev: Option<&mut DevRun>,
    ) -> Result<(), Box<WireError>> {
        let prep = &self.preps[plane];
        let tables = &self.tables[plane];
        let (table, metas) = (&tables.stats, &tables.metas);
        let base_ps = lh
            .timestamp_ns
            .saturating_sub(self.origin_ns)
            .saturating_mul(1000);
        let gpu = prep.kind == ProcessKind::Gpu;
        let host = self.group_host && prep.kind == ProcessKind::Host;
        let line_uid = ((plane as u32) << 16) | (li as u32 & 0xffff);
        let mut since_report = 0u64;
        let mut r = lh.r;
        while !r.is_empty() {
            let (f, wt) = r.key()?;
            if f != 4 {
                r.skip(wt)?;
                continue;
            }
            // The event's handle: where its length prefix starts.
            let at = r.offset();
            let mut er = expect_len(&mut r, wt, "XLine.events")?;
            let mut mid = 0i64;
            let mut off = 0i64;
            let mut dur = 0i64;
            let mut occ: Option<i64> = None;
            let mut st = EvStats::default();
            // Fast prefix: the field order profilers write (metadata id, offset, duration,
            // stats), each key one byte; predictable branches instead of a dispatch per field.
            if er.peek() == Some(0x08) {
                er.bump();
                mid = er.varint()? as i64;
            }
            if er.peek() == Some(0x10) {
                er.bump();
                off = er.varint()? as i64;
            }
            if er.peek() == Some(0x18) {
                er.bump();
                dur = er.varint()? as i64;
            }
            while er.peek() == Some(0x22) {
                er.bump();
                st.read(er.sub()?, table, names)?;
            }
            // Anything else, in file order (later fields win, as in protobuf).
            while !er.is_empty() {
                let (f, wt) = er.key()?;
                match (f, wt) {
                    (1, VARINT) => mid = er.varint()? as i64,
                    (2, VARINT) => {
                        off = er.varint()? as i64;
                        occ = None;
                    }
                    (3, VARINT) => dur = er.varint()? as i64,
                    (4, LEN) => st.read(er.sub()?, table, names)?,
                    (5, VARINT) => occ = Some(er.varint()? as i64),
                    _ => er.skip(wt)?,
                }
            }
            let EvStats {
                corr,
                has_corr,
                flow,
                group,
                device,
                step_name,
                dev: d,
                memcpy,
                memset,
                mut rare,
                prod_type,
                prod_id,
                cons_type,
                cons_id,
                is_async,
                count: nstats,
            } = st;
            let m = metas.get(mid).unwrap_or_default();
            since_report += 1;
            if since_report == 1 << 16 {
                self.report(since_report, &er)?;
                since_report = 0;
            }
            if let Some(n) = occ {
                out.aggregated.push((m.name, n.max(0) as u64, dur));
                continue;
            }
            let args = if nstats == 0 {
                m.args
            } else if let Ok(a) = u32::try_from(at)
                && a <= ArgsRef::LAZY_MAX
            {
                ArgsRef::lazy(a)
            } else {
                out.far += 1;
                m.args
            };
            let kernel = d.kernel || m.kernel;
            let class = if !gpu {
                self.cats.none
            } else if kernel {
                self.cats.kernel
            } else if memcpy || m.memcpy {
                self.cats.memcpy
            } else if memset || m.memset {
                self.cats.memset
            } else {
                self.cats.none
            };
            let mut start = base_ps.saturating_add(off);
            if !(-TIME_LIMIT..=TIME_LIMIT).contains(&start) || dur > TIME_LIMIT {
                start = start.clamp(-TIME_LIMIT, TIME_LIMIT);
                dur = dur.min(TIME_LIMIT);
                if out.clamped == 0 {
                    out.clamp_at = er.offset();
                }
                out.clamped += 1;
            }
            if dur < 0 {
                out.negative += 1;
                dur = 0;
            }
            let Some(idx) = run.push(start, dur, m.name, class, args, corr) else {
                // The first pass counted every event of this line; more cannot appear.
                return Err(er.err("more events than the first pass counted"));
            };
            if let Some(fv) = flow {
                let phase = match fv & 3 {
                    2 => 0, // out: start
                    3 => 1, // in/out: step
                    _ => 2, // in: finish
                };
                let id = (fv >> 2) & ((1u64 << 56) - 1);
                out.flows.push((id, phase, start, idx));
            }
            if let (Some(g), true) = (group, step_name != StrId::EMPTY) {
                out.step_names.push((g, step_name));
            }
            if host {
                rare.group = group.unwrap_or(NONE);
                if let (Some(t), Some(i)) = (prod_type, prod_id) {
                    rare.prod = (t, i);
                }
                if let (Some(t), Some(i)) = (cons_type, cons_id) {
                    rare.cons = (t, i);
                }
                let flags = if is_async { ASYNC } else { 0 }
                    | if m.cu { CU } else { 0 }
                    | if prep.launch_plane { LAUNCH_PLANE } else { 0 };
                rare.name = m.full;
                let node = HostNode {
                    start,
                    dur,
                    corr: if has_corr { corr as i64 } else { NONE },
                    line: line_uid,
                    device: device.map_or(i32::MIN, |d| d.clamp(0, i64::from(i32::MAX)) as i32),
                    rare: u32::MAX,
                    flags,
                };
                out.host.push(node, rare);
            }
            if let Some(dev) = dev.as_deref_mut() {
                let pick = |a: StrId, b: StrId| if a != StrId::EMPTY { a } else { b };
                dev.push(&DevEvent {
                    start,
                    dur,
                    name: m.full,
                    group_id: group.unwrap_or(0),
                    grouped: group.is_some(),
                    hlo_op: pick(d.hlo_op, m.hlo_op),
                    hlo_module: pick(d.hlo_module, m.hlo_module),
                    tf_op: pick(d.tf_op, m.tf_op),
                    source: pick(d.source, m.source),
                    kernel,
                    program_id: if d.program_id != NO_VALUE {
                        d.program_id
                    } else {
                        m.program_id.unwrap_or(NO_VALUE)
                    },
                    ..d
                });
            }
        }
        out.host.sort_line();
        self.done.fetch_add(since_report, Ordering::Relaxed);
        Ok(())
    }

    /// Adds `n` events to the shared count, publishes progress and checks for cancellation.
    fn report(&self, n: u64, r: &Reader<'_>) -> Result<(), Box<WireError>> {
        let done = self.done.fetch_add(n, Ordering::Relaxed) + n;
        let bytes = (u128::from(self.bytes_total) * u128::from(done)
            / u128::from(self.total.max(1))) as u64;
        self.progress.update(bytes.min(self.bytes_total), done);
        if self.progress.cancelled() {
            return Err(WireError::cancelled(r.offset()));
        }
        Ok(())
    }
}
