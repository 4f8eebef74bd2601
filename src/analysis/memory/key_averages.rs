//! torch's memory columns of `key_averages()` (`self_cpu_memory_usage`, `cpu_memory_usage`,
//! `self_device_memory_usage`, `device_memory_usage`), by torch's own rule
//! (`profile._parse_kineto_results` with `MemRecordsAcc`), which differs from the per-thread
//! attribution of the memory tracks:
//!
//! - every `[memory]` record whose time lies in a CPU event's `[start, end]` (both inclusive),
//!   **from any thread**, adds its `Bytes` (negative for frees) to that event;
//! - CPU columns take device types CPU / MKLDNN / IDEEP, device columns CUDA / HIP / XPU /
//!   PrivateUse1;
//! - self = own − Σ own of the direct CPU children (torch's containment rule per thread);
//! - records inside no CPU event become rows named `[memory]`, every `[OutOfMemory]` record a row
//!   `[OutOfMemory]`.
//!
//! CPU events are the slices torch turns into CPU `FunctionEvent`s: categories `cpu_op`,
//! `user_annotation`, `cuda_runtime`, `cuda_driver` (and their legacy names) on non-async
//! tracks, minus the names torch filters (`_filter_name`). Prefix sums over the time-sorted records
//! make each event O(log m).

use super::events::{MEMORY_EVENT, MemKind, OOM_EVENT, memory_events};
use crate::analysis::nesting::ContainmentStack;
use crate::analysis::stats::group_name;
use crate::model::{Capture, Category, Ps, StrId, TrackKind};
use rustc_hash::FxHashMap;

/// Names torch leaves out of its function events (`profiler_util._filter_name`).
pub const FILTERED_NAMES: [&str; 8] = [
    MEMORY_EVENT,
    OOM_EVENT,
    "profiler::_record_function_enter",
    "profiler::_record_function_enter_new",
    "profiler::_record_function_exit",
    "aten::is_leaf",
    "aten::output_nr",
    "aten::_version",
];

/// The four memory columns of one row, bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct MemColumns {
    /// Own CPU bytes minus the children's.
    pub self_cpu_mem: i64,
    /// CPU bytes allocated (minus freed) inside the event.
    pub cpu_mem: i64,
    /// Own device bytes minus the children's.
    pub self_device_mem: i64,
    /// Device bytes allocated (minus freed) inside the event.
    pub device_mem: i64,
}

impl MemColumns {
    /// A row that has no children: self equals total.
    fn leaf(cpu: i64, dev: i64) -> MemColumns {
        MemColumns {
            self_cpu_mem: cpu,
            cpu_mem: cpu,
            self_device_mem: dev,
            device_mem: dev,
        }
    }

    fn add(&mut self, o: &MemColumns) {
        self.self_cpu_mem += o.self_cpu_mem;
        self.cpu_mem += o.cpu_mem;
        self.self_device_mem += o.self_device_mem;
        self.device_mem += o.device_mem;
    }
}

/// Memory columns per row name, plus the standalone rows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MemoryColumns {
    /// Per grouped event name (`ProfilerStep#N` as `ProfilerStep*`).
    pub by_name: FxHashMap<String, MemColumns>,
    /// Rows torch adds for records: (`[memory]` or `[OutOfMemory]`, count, columns).
    pub extra_rows: Vec<(String, u64, MemColumns)>,
    /// Number of memory records (0: the capture was not recorded with `profile_memory`).
    pub records: u64,
}

/// c10 device types counted in the CPU columns.
pub fn is_cpu_device(t: i64) -> bool {
    matches!(t, 0 | 2 | 5)
}

/// c10 device types counted in the device columns (CUDA, HIP, XPU, PrivateUse1).
pub fn is_device_device(t: i64) -> bool {
    matches!(t, 1 | 6 | 12 | 20)
}

/// `bytes` as (CPU bytes, device bytes) by torch's device-type rule (one of them, or neither).
fn split_bytes(device_type: i64, bytes: i64) -> (i64, i64) {
    (
        if is_cpu_device(device_type) { bytes } else { 0 },
        if is_device_device(device_type) {
            bytes
        } else {
            0
        },
    )
}

fn cpu_function_event(cat: Category) -> bool {
    matches!(
        cat,
        Category::CpuOp | Category::UserAnnotation | Category::Runtime | Category::Driver
    )
}

/// An open CPU event of [`compute`].
struct MemOpen {
    id: u32,
    own: MemColumns,
    kids: MemColumns,
    /// Direct children closed so far.
    n: u32,
    /// The first child: (id, own columns, self columns).
    first: Option<(u32, MemColumns, MemColumns)>,
}

/// Closes `o` into its name's row: self = own − the children's own; an only child of the same
/// name (torch's `_remove_dup_nodes`) leaves its row (count, total) and its self moves here.
fn close_mem(
    c: &Capture,
    o: MemOpen,
    parent: Option<&mut MemOpen>,
    merge: bool,
    by: &mut FxHashMap<StrId, MemColumns>,
) {
    let s = &c.slices;
    let mut me = MemColumns {
        self_cpu_mem: o.own.cpu_mem - o.kids.cpu_mem,
        cpu_mem: o.own.cpu_mem,
        self_device_mem: o.own.device_mem - o.kids.device_mem,
        device_mem: o.own.device_mem,
    };
    if let Some((k, k_own, k_self)) = o.first
        && o.n == 1
        && merge
        && crate::analysis::stats::tree::same_name(c, k, o.id)
    {
        me.self_cpu_mem += k_self.self_cpu_mem;
        me.self_device_mem += k_self.self_device_mem;
        by.entry(s.name[k as usize]).or_default().add(&MemColumns {
            self_cpu_mem: -k_self.self_cpu_mem,
            cpu_mem: -k_own.cpu_mem,
            self_device_mem: -k_self.self_device_mem,
            device_mem: -k_own.device_mem,
        });
    }
    by.entry(s.name[o.id as usize]).or_default().add(&me);
    if let Some(p) = parent {
        p.n += 1;
        if p.n == 1 {
            p.first = Some((o.id, o.own, me));
        }
    }
}

/// Computes the memory columns of `c` by torch's rule.
pub fn compute(c: &Capture) -> MemoryColumns {
    let events = memory_events(c);
    let mut out = MemoryColumns::default();
    // Records: (time, cpu bytes, device bytes), time-sorted (memory_events sorts by time).
    let mut ts: Vec<Ps> = Vec::new();
    let mut pc: Vec<i64> = vec![0];
    let mut pd: Vec<i64> = vec![0];
    let mut oom = (0u64, MemColumns::default());
    for e in events.iter().filter(|e| !e.is_slice) {
        let (cpu, dev) = split_bytes(e.device_type, e.bytes);
        if e.kind == MemKind::Oom {
            oom.0 += 1;
            oom.1.add(&MemColumns::leaf(cpu, dev));
            continue;
        }
        ts.push(e.ts);
        pc.push(pc[pc.len() - 1] + cpu);
        pd.push(pd[pd.len() - 1] + dev);
    }
    out.records = ts.len() as u64 + oom.0;
    if out.records == 0 {
        return out;
    }
    let filtered: Vec<_> = FILTERED_NAMES
        .iter()
        .filter_map(|n| c.strings.lookup(n))
        .collect();
    // Coverage of each record by some CPU event: a difference array.
    let mut cover = vec![0i32; ts.len() + 1];
    let mut by_id: FxHashMap<StrId, MemColumns> = FxHashMap::default();
    let s = &c.slices;
    for (t, tr) in c.tracks.iter().enumerate() {
        if tr.kind == TrackKind::Async || crate::analysis::stats::is_device_process(c, t as u32) {
            continue;
        }
        // Containment stack payload: the event, its own columns, Σ its children's own columns,
        // and its first child (merged into it by `_remove_dup_nodes` when it is the only one
        // and has the same name).
        let mut st: ContainmentStack<MemOpen> = ContainmentStack::new();
        let merge = crate::analysis::stats::tree::merges(c, t as u32);
        for id in tr.slices.0..tr.slices.1 {
            let i = id as usize;
            if !cpu_function_event(s.kind(i)) || filtered.contains(&s.name[i]) {
                continue;
            }
            let (start, end) = (s.start[i], s.end(i));
            let lo = ts.partition_point(|&x| x < start);
            let hi = ts.partition_point(|&x| x <= end);
            if hi > lo {
                cover[lo] += 1;
                cover[hi] -= 1;
            }
            let own = MemColumns {
                cpu_mem: pc[hi] - pc[lo],
                device_mem: pd[hi] - pd[lo],
                ..MemColumns::default()
            };
            st.close_before(start, end, |o, p| close_mem(c, o, p, merge, &mut by_id));
            if let Some(p) = st.top_mut() {
                p.kids.cpu_mem += own.cpu_mem;
                p.kids.device_mem += own.device_mem;
            }
            st.enter(
                end,
                MemOpen {
                    id,
                    own,
                    kids: MemColumns::default(),
                    n: 0,
                    first: None,
                },
            );
        }
        st.drain_linked(|o, p| close_mem(c, o, p, merge, &mut by_id));
    }
    // Rows by name (`ProfilerStep#N` ids merge into `ProfilerStep*`): one String per name id.
    for (name, m) in by_id {
        out.by_name
            .entry(group_name(c.strings.get(name)).to_string())
            .or_default()
            .add(&m);
    }
    // Records no CPU event covers: one `[memory]` row.
    let mut run = 0i32;
    let mut standalone = (0u64, MemColumns::default());
    for k in 0..ts.len() {
        run += cover[k];
        if run == 0 {
            let cpu = pc[k + 1] - pc[k];
            let dev = pd[k + 1] - pd[k];
            standalone.0 += 1;
            standalone.1.add(&MemColumns::leaf(cpu, dev));
        }
    }
    if standalone.0 > 0 {
        out.extra_rows
            .push((MEMORY_EVENT.to_string(), standalone.0, standalone.1));
    }
    if oom.0 > 0 {
        out.extra_rows.push((OOM_EVENT.to_string(), oom.0, oom.1));
    }
    out
}

/// Brute-force reference of [`compute`] for tests: every event against every record.
pub fn compute_brute(c: &Capture) -> MemoryColumns {
    let events = memory_events(c);
    let recs: Vec<_> = events
        .iter()
        .filter(|e| !e.is_slice && e.kind != MemKind::Oom)
        .collect();
    let filtered: Vec<_> = FILTERED_NAMES
        .iter()
        .filter_map(|n| c.strings.lookup(n))
        .collect();
    let s = &c.slices;
    let mut ev: Vec<(u32, u32)> = Vec::new(); // (track, slice)
    for (t, tr) in c.tracks.iter().enumerate() {
        if tr.kind == TrackKind::Async || crate::analysis::stats::is_device_process(c, t as u32) {
            continue;
        }
        for id in tr.slices.0..tr.slices.1 {
            let i = id as usize;
            if cpu_function_event(s.kind(i)) && !filtered.contains(&s.name[i]) {
                ev.push((t as u32, id));
            }
        }
    }
    let own = |id: u32| {
        let i = id as usize;
        let mut m = MemColumns::default();
        for r in &recs {
            if r.ts >= s.start[i] && r.ts <= s.end(i) {
                let (cpu, dev) = split_bytes(r.device_type, r.bytes);
                m.cpu_mem += cpu;
                m.device_mem += dev;
            }
        }
        m
    };
    let parents = {
        let mut p: FxHashMap<u32, u32> = FxHashMap::default();
        let mut k = 0;
        while k < ev.len() {
            let t = ev[k].0;
            let mut j = k;
            while j < ev.len() && ev[j].0 == t {
                j += 1;
            }
            let spans: Vec<(Ps, Ps)> = ev[k..j]
                .iter()
                .map(|&(_, id)| (s.start[id as usize], s.end(id as usize)))
                .collect();
            for (x, par) in crate::analysis::nesting::parents(&spans).iter().enumerate() {
                if let Some(par) = par {
                    p.insert(ev[k + x].1, ev[k + par].1);
                }
            }
            k = j;
        }
        p
    };
    let mut out = MemoryColumns {
        records: (recs.len() + events.iter().filter(|e| e.kind == MemKind::Oom).count()) as u64,
        ..MemoryColumns::default()
    };
    if out.records == 0 {
        return out;
    }
    // torch's `_remove_dup_nodes`, literally: an only child of the same name leaves, its
    // children move up; repeated until nothing changes.
    let mut parents = parents;
    let mut children: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
    for &(_, id) in &ev {
        if let Some(&p) = parents.get(&id) {
            children.entry(p).or_default().push(id);
        }
    }
    let mut gone: rustc_hash::FxHashSet<u32> = rustc_hash::FxHashSet::default();
    loop {
        let mut changed = false;
        for &(_, id) in &ev {
            let Some(&p) = parents.get(&id).filter(|_| !gone.contains(&id)) else {
                continue;
            };
            if children.get(&p).map_or(0, Vec::len) == 1
                && c.format == Some(crate::model::Format::Kineto)
                && crate::analysis::stats::tree::same_name(c, p, id)
            {
                let moved = children.remove(&id).unwrap_or_default();
                for &g in &moved {
                    parents.insert(g, p);
                }
                children.insert(p, moved);
                gone.insert(id);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    for &(_, id) in ev.iter().filter(|e| !gone.contains(&e.1)) {
        let o = own(id);
        let mut k = MemColumns::default();
        for &g in children.get(&id).map_or(&[][..], Vec::as_slice) {
            let x = own(g);
            k.cpu_mem += x.cpu_mem;
            k.device_mem += x.device_mem;
        }
        out.by_name
            .entry(group_name(c.slice_name(id)).to_string())
            .or_default()
            .add(&MemColumns {
                self_cpu_mem: o.cpu_mem - k.cpu_mem,
                cpu_mem: o.cpu_mem,
                self_device_mem: o.device_mem - k.device_mem,
                device_mem: o.device_mem,
            });
    }
    let mut standalone = (0u64, MemColumns::default());
    for r in &recs {
        let covered = ev.iter().any(|&(_, id)| {
            let i = id as usize;
            r.ts >= s.start[i] && r.ts <= s.end(i)
        });
        if !covered {
            let (cpu, dev) = split_bytes(r.device_type, r.bytes);
            standalone.0 += 1;
            standalone.1.add(&MemColumns::leaf(cpu, dev));
        }
    }
    if standalone.0 > 0 {
        out.extra_rows
            .push((MEMORY_EVENT.to_string(), standalone.0, standalone.1));
    }
    let mut oom = (0u64, MemColumns::default());
    for r in events
        .iter()
        .filter(|e| e.kind == MemKind::Oom && !e.is_slice)
    {
        let (cpu, dev) = split_bytes(r.device_type, r.bytes);
        oom.0 += 1;
        oom.1.add(&MemColumns::leaf(cpu, dev));
    }
    if oom.0 > 0 {
        out.extra_rows.push((OOM_EVENT.to_string(), oom.0, oom.1));
    }
    out
}
