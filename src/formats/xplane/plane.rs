//! Second pass: planes → processes, lines → tracks, events streamed from the wire straight into
//! the [`CaptureBuilder`]; metadata maps decoded with the prost types.

use super::dedup::Dedup;
use super::derived::{self, DerivedKind, DerivedLine, DevEvent, Launch};
use super::generated::{XEventMetadata, XStat, XStatMetadata};
use super::scan::{LineHead, PlaneScan, SpaceScan};
use super::stats::{self, IdTable, Role, StatTable};
use super::wire::{LEN, Reader, VARINT, WireError, expect_len};
use crate::formats::Progress;
use crate::model::{
    ArgValue, ArgsRef, CaptureBuilder, FlowPhase, Key, ProcessKind, Ps, StrId, TrackKind,
};
use prost::Message;
use rustc_hash::FxHashMap;

/// Largest |time| or duration kept (ps, ≈ 26 days): sums of two stay far from i64 overflow.
const TIME_LIMIT: i64 = 1 << 61;

/// Kind of process for a plane name.
pub fn plane_kind(name: &str) -> ProcessKind {
    if name.starts_with("/device:GPU:") {
        ProcessKind::Gpu
    } else if name.starts_with("/device:TPU") {
        ProcessKind::Tpu
    } else if name.starts_with("/host:") {
        ProcessKind::Host
    } else if name == "Task Environment" {
        ProcessKind::Other
    } else {
        ProcessKind::Device
    }
}

/// Planes whose facts go to the capture metadata and which are not drawn.
pub fn plane_hidden(name: &str) -> bool {
    name == "/host:metadata" || name == "Task Environment"
}

/// Per event-metadata facts.
#[derive(Clone, Copy, Debug, Default)]
struct EvMeta {
    /// Display name (display_name, else name).
    name: StrId,
    /// Full name.
    full: StrId,
    args: ArgsRef,
    hlo_op: StrId,
    hlo_module: StrId,
    tf_op: StrId,
    source: StrId,
    kernel: bool,
    memcpy: bool,
    memset: bool,
}

/// Decoder state shared across planes.
pub struct Decoder<'p> {
    /// The builder being filled.
    pub b: CaptureBuilder,
    progress: &'p Progress,
    events_done: u64,
    events_total: u64,
    origin_ns: i64,
    meta: Vec<(StrId, ArgValue)>,
    flows: Vec<(u64, u8, Ps, u32)>,
    launches: Vec<Launch>,
    step_names: FxHashMap<i64, StrId>,
    /// GPU ordinal → (process, has a Launch Stats line already).
    gpus: FxHashMap<i64, (u32, bool)>,
    cat_kernel: StrId,
    cat_memcpy: StrId,
    cat_memset: StrId,
    cat_flow: StrId,
    k_long_name: StrId,
    /// The stats of the event being read.
    stat_buf: Vec<(StrId, ArgValue)>,
    /// Shared args blocks of the current plane's events.
    dedup: Dedup,
    /// Shared args blocks of derived events (reset with `dedup`).
    dedup_derived: Dedup,
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
    /// A decoder for a space whose times are shifted by `origin_ns`.
    pub fn new(progress: &'p Progress, origin_ns: i64) -> Self {
        let mut b = CaptureBuilder::new();
        let cat_kernel = b.intern("kernel");
        let cat_memcpy = b.intern("gpu_memcpy");
        let cat_memset = b.intern("gpu_memset");
        let cat_flow = b.intern("xflow");
        let k_long_name = b.intern("long_name");
        Decoder {
            b,
            progress,
            events_done: 0,
            events_total: 0,
            origin_ns,
            meta: Vec::new(),
            flows: Vec::new(),
            launches: Vec::new(),
            step_names: FxHashMap::default(),
            gpus: FxHashMap::default(),
            cat_kernel,
            cat_memcpy,
            cat_memset,
            cat_flow,
            k_long_name,
            stat_buf: Vec::new(),
            dedup: Dedup::default(),
            dedup_derived: Dedup::default(),
        }
    }

    /// Decodes the whole space into the builder.
    pub fn run(mut self, space: &SpaceScan<'_>) -> Result<CaptureBuilder, Box<WireError>> {
        if self.origin_ns != 0 {
            self.b.origin_epoch_ns = Some(self.origin_ns);
        }
        self.events_total = space.event_count();
        self.b
            .reserve_slices(usize::try_from(self.events_total).unwrap_or(0));
        for (i, p) in space.planes.iter().enumerate() {
            self.plane(i, p)?;
        }
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
        self.b.args.begin();
        for &(k, v) in &self.meta {
            self.b.args.push(k, v);
        }
        self.b.metadata = self.b.args.finish();
        self.progress.update(
            self.progress
                .bytes_total
                .load(std::sync::atomic::Ordering::Relaxed),
            self.events_done,
        );
        Ok(self.b)
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

    fn plane(&mut self, index: usize, p: &PlaneScan<'_>) -> Result<(), Box<WireError>> {
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
        self.dedup.reset();
        self.dedup_derived.reset();

        // Plane stats → capture metadata.
        for &sr in &p.stats {
            let st = XStat::decode(sr.data()).map_err(|x| perr(&sr, "XStat", x))?;
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
                ..EvMeta::default()
            };
            let mut program_id = None;
            let mut entries = Vec::new();
            for st in &m.stats {
                let (sname, role) = table.get(st.metadata_id);
                let raw = stats::raw_of(st);
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
        let collect_dev = kind == ProcessKind::Gpu && !has_derived;
        let mut dev = Vec::new();
        if collect_dev {
            dev.reserve(
                usize::try_from(p.lines.iter().map(|l| l.events).sum::<u64>()).unwrap_or(0),
            );
        }
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
            let dev_out = if collect_dev { Some(&mut dev) } else { None };
            self.line(lh, t, kind, &table, &metas, dev_out)?;
        }
        if collect_dev && !dev.is_empty() {
            // Derive now so the records of one plane at a time are alive; step names come
            // from the planes read so far (host planes precede device planes in practice).
            let lines =
                derived::derive_device_lines(&mut dev, &mut self.b.strings, &self.step_names);
            drop(dev);
            // Room for the derived slices and the raw events still to come: one exact
            // reallocation instead of doubling.
            let later = self.events_total.saturating_sub(self.events_done);
            self.b.reserve_slices(
                lines.iter().map(|l| l.events.len()).sum::<usize>()
                    + usize::try_from(later).unwrap_or(0),
            );
            for l in &lines {
                self.push_derived(proc_, l);
            }
        }
        Ok(())
    }

    fn line(
        &mut self,
        lh: &LineHead<'_>,
        track: u32,
        kind: ProcessKind,
        table: &StatTable,
        metas: &IdTable<EvMeta>,
        mut dev: Option<&mut Vec<DevEvent>>,
    ) -> Result<(), Box<WireError>> {
        let base_ps = lh
            .timestamp_ns
            .saturating_sub(self.origin_ns)
            .saturating_mul(1000);
        let gpu = kind == ProcessKind::Gpu;
        let host = kind == ProcessKind::Host;
        let mut r = lh.r;
        while !r.is_empty() {
            let (f, wt) = r.key()?;
            if f != 4 {
                r.skip(wt)?;
                continue;
            }
            let mut er = expect_len(&mut r, wt, "XLine.events")?;
            let mut mid = 0i64;
            let mut off = 0i64;
            let mut dur = 0i64;
            let mut occ: Option<i64> = None;
            let mut corr = 0u64;
            let mut flow: Option<u64> = None;
            let mut group: Option<i64> = None;
            let mut device: Option<i64> = None;
            let mut step_name = StrId::EMPTY;
            let mut d = DevEvent::default();
            let (mut memcpy, mut memset) = (false, false);
            self.stat_buf.clear();
            // Stats before this index are unique to the event (correlation, flow).
            let mut split = 0;
            while !er.is_empty() {
                let (f, wt) = er.key()?;
                match (f, wt) {
                    (1, VARINT) => mid = er.varint()? as i64,
                    (2, VARINT) => {
                        off = er.varint()? as i64;
                        occ = None;
                    }
                    (3, VARINT) => dur = er.varint()? as i64,
                    (4, LEN) => {
                        let (smid, raw) = stats::read_stat(er.sub()?)?;
                        let (sname, role) = table.get(smid);
                        let v = stats::resolve(raw, table, &mut self.b.strings);
                        self.stat_buf.push((sname, v));
                        if role != Role::None {
                            if matches!(role, Role::Correlation | Role::Flow) {
                                split = self.stat_buf.len();
                            }
                            let s = stats::as_str_id(v).unwrap_or(StrId::EMPTY);
                            match role {
                                Role::Correlation => corr = raw.as_int().unwrap_or(0) as u64,
                                Role::Flow => flow = raw.as_int().map(|x| x as u64),
                                Role::GroupId => group = raw.as_int(),
                                Role::DeviceId => device = raw.as_int(),
                                Role::StepName => step_name = s,
                                Role::HloOp => d.hlo_op = s,
                                Role::HloModule => d.hlo_module = s,
                                Role::TfOp => d.tf_op = s,
                                Role::Source => d.source = s,
                                Role::KernelDetails => d.kernel = true,
                                Role::MemcpyDetails => memcpy = true,
                                Role::MemsetDetails => memset = true,
                                Role::ProgramId | Role::None => {}
                            }
                        }
                    }
                    (5, VARINT) => occ = Some(er.varint()? as i64),
                    _ => er.skip(wt)?,
                }
            }
            let m = metas.get(mid).unwrap_or_default();
            let args = self.event_args(split, m.args);
            self.events_done += 1;
            if self.events_done & 0xffff == 0 {
                self.progress.update(er.offset() as u64, self.events_done);
                if self.progress.cancelled() {
                    return Err(er.err("loading cancelled"));
                }
            }
            if let Some(n) = occ {
                self.b.add_aggregated(track, m.name, n.max(0) as u64, dur);
                continue;
            }
            let kernel = d.kernel || m.kernel;
            let cat = if !gpu {
                StrId::EMPTY
            } else if kernel {
                self.cat_kernel
            } else if memcpy || m.memcpy {
                self.cat_memcpy
            } else if memset || m.memset {
                self.cat_memset
            } else {
                StrId::EMPTY
            };
            let mut start = base_ps.saturating_add(off);
            if !(-TIME_LIMIT..=TIME_LIMIT).contains(&start) || dur > TIME_LIMIT {
                start = start.clamp(-TIME_LIMIT, TIME_LIMIT);
                dur = dur.min(TIME_LIMIT);
                self.b.warn(
                    "time_out_of_range",
                    format!(
                        "event time beyond ±2^61 ps clamped (near byte {})",
                        er.offset()
                    ),
                );
            }
            let raw = self.b.add_slice(track, start, dur, m.name, cat, args, corr);
            if let Some(fv) = flow {
                let phase = match fv & 3 {
                    2 => 0, // out: start
                    3 => 1, // in/out: step
                    _ => 2, // in: finish
                };
                let id = (fv >> 2) & ((1u64 << 56) - 1);
                self.flows.push((id, phase, start, raw));
            }
            if let (Some(g), true) = (group, step_name != StrId::EMPTY) {
                self.step_names.entry(g).or_insert(step_name);
            }
            if host
                && let (Some(g), Some(dv), true) = (group, device, corr != 0)
                && !self.b.strings.get(m.full).starts_with("cu")
            {
                self.launches.push(Launch {
                    device: dv,
                    group: g,
                    start,
                    dur,
                });
            }
            if let Some(dev) = dev.as_deref_mut()
                && (kernel || group.is_some())
            {
                let pick = |a: StrId, b: StrId| if a != StrId::EMPTY { a } else { b };
                dev.push(DevEvent {
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
                });
            }
        }
        Ok(())
    }

    /// The args block of an event: its unique stats (before `split`) inline, then a shared block
    /// of the rest that inherits the metadata's args.
    fn event_args(&mut self, split: usize, meta: ArgsRef) -> ArgsRef {
        let (own, shared) = self.stat_buf.split_at(split.min(self.stat_buf.len()));
        let tail = if shared.is_empty() {
            meta
        } else {
            self.dedup.block(&mut self.b.args, shared, meta)
        };
        if own.is_empty() {
            return tail;
        }
        self.b.args.begin();
        for &(k, v) in own {
            self.b.args.push(k, v);
        }
        self.b.args.push_inherit(tail);
        self.b.args.finish()
    }

    fn push_derived(&mut self, proc_: u32, line: &DerivedLine) {
        let kind = line.kind;
        let t = self
            .b
            .track(proc_, Key::Int(kind.line_id()), TrackKind::Derived);
        let name = self.b.intern(kind.name());
        {
            let tr = self.b.track_mut(t);
            tr.name = name;
            tr.sort_index = -2000 + kind.order();
        }
        let k_group = self.b.intern("group_id");
        let k_step = self.b.intern("step_name");
        let k_n = self.b.intern("num_launches");
        let k_max = self.b.intern("max_launch_time_us");
        let k_avg = self.b.intern("avg_launch_time_us");
        for (i, e) in line.events.iter().enumerate() {
            self.stat_buf.clear();
            if let Some(g) = e.group {
                self.stat_buf.push((k_group, ArgValue::I64(g)));
            }
            if e.long_name != StrId::EMPTY {
                let k = if kind == DerivedKind::Steps {
                    k_step
                } else {
                    self.k_long_name
                };
                self.stat_buf.push((k, ArgValue::Str(e.long_name)));
            }
            if let Some(&(n, mx, avg)) = line.launch.get(i) {
                self.stat_buf.push((k_n, ArgValue::U64(n)));
                self.stat_buf.push((k_max, ArgValue::F64(mx)));
                self.stat_buf.push((k_avg, ArgValue::F64(avg)));
            }
            // Derived events of one op / module / step share their args.
            let args = if self.stat_buf.is_empty() {
                ArgsRef::NONE
            } else {
                self.dedup_derived
                    .block(&mut self.b.args, &self.stat_buf, ArgsRef::NONE)
            };
            self.b
                .add_slice(t, e.start, e.dur, e.name, StrId::EMPTY, args, 0);
        }
    }

    fn finish_derived(&mut self) {
        let launches = std::mem::take(&mut self.launches);
        if !launches.is_empty() {
            let per_dev =
                derived::derive_launch_stats(&launches, &mut self.b.strings, &self.step_names);
            for (dev, line) in per_dev {
                match self.gpus.get(&dev) {
                    Some(&(p, false)) => self.push_derived(p, &line),
                    Some(&(_, true)) => {}
                    None => self.b.warn(
                        "launch_without_device",
                        format!("host launches name device_id {dev}, which has no GPU plane"),
                    ),
                }
            }
        }
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
