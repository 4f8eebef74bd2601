//! The lines XProf 2.24 derives on a TPU TensorCore plane (`/device:TPU:N`), from the plane's
//! own events and their metadata stats: `Framework Name Scope`, `Framework Ops`, `Source code`
//! (`DeriveLinesFromStats` in `derived_timeline.cc`) and `Host Offload Ops row N`
//! (`HostOffloadEventProcessor`, `host_offload_utils.cc`). Events are grouped first like
//! `GroupTpuXPlaneEvents`. Rules: docs/xplane.md ("Derived lines on a TPU plane").

use super::derived::{DerivedEvent, DerivedKind, DerivedLine, LineBuilder, NO_GROUP, NO_VALUE};
use super::scan::PlaneScan;
use super::stats::{self, RawValue, Role};
use super::tables::PlaneTables;
use super::tf_op;
use super::wire::{LEN, Reader, WireError};
use crate::model::{Interner, Ps, StrId};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// Most `Host Offload Ops` rows (`kThreadIdHostOffloadOpEnd − Start + 1`); later transfers go
/// to the last row.
pub const MAX_OFFLOAD_ROWS: usize = 41;

/// Names of the derived lines this module adds (a plane that has one already keeps its own).
const TPU_DERIVED: &[&str] = &[
    "Framework Ops",
    "Framework Name Scope",
    "TensorFlow Ops",
    "TensorFlow Name Scope",
    "Source code",
];

/// True for a TensorCore plane (`/device:TPU:<n>`) whose lines this module derives: it has
/// no line of those names (nor `Host Offload Ops …`).
pub fn derives(p: &PlaneScan<'_>) -> bool {
    let name = String::from_utf8_lossy(p.name);
    let core = name
        .strip_prefix("/device:TPU:")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    core && !p.lines.iter().any(|l| {
        let t = String::from_utf8_lossy(l.title());
        TPU_DERIVED.contains(&t.as_ref()) || t.starts_with("Host Offload Ops")
    })
}

/// One event of the plane as the derivation reads it.
#[derive(Clone, Copy, Debug)]
struct Ev {
    start: Ps,
    dur: Ps,
    /// Display name, full name.
    name: StrId,
    full: StrId,
    tf_op: StrId,
    source: StrId,
    group: i64,
    is_async: bool,
}

/// What [`derive`] gives: the derived lines and how many `XLA Ops` events carry the HLO op
/// metadata they are derived from.
#[derive(Debug, Default)]
pub struct TpuDerived {
    /// The derived lines.
    pub lines: Vec<DerivedLine>,
    /// Events on the plane's `XLA Ops` line.
    pub ops: u64,
    /// Those with a `tf_op` or `source` stat (their own or their metadata's).
    pub ops_with_metadata: u64,
}

impl TpuDerived {
    /// The load warning of a plane whose `XLA Ops` events carry no HLO op metadata at all
    /// (stripped, or written without it): what could not be derived.
    pub fn missing_metadata_warning(&self, plane: &str) -> Option<String> {
        (self.ops > 0 && self.ops_with_metadata == 0).then(|| {
            format!(
                "{plane}: none of its {} XLA Ops events carries HLO op metadata (tf_op, source): \
                 no Framework Ops, Framework Name Scope or Source code line",
                self.ops
            )
        })
    }
}

/// Derives the lines of TPU plane `p`. `origin_ns` is the capture's time origin; a plane whose
/// events carry no `group_id` is grouped by its `Steps` line (else `XLA Modules`): the k-th
/// event of that line gets group `first_group + k`, and every other event the group of the
/// first such event it overlaps (end points included).
pub fn derive(
    p: &PlaneScan<'_>,
    t: &PlaneTables,
    origin_ns: i64,
    first_group: i64,
    strings: &mut Interner,
) -> Result<TpuDerived, Box<WireError>> {
    // Every line's events, in file order.
    let mut lines: Vec<Vec<Ev>> = Vec::with_capacity(p.lines.len());
    let mut file_groups = false;
    let (mut n_ops, mut ops_with_metadata) = (0u64, 0u64);
    for lh in &p.lines {
        let is_ops = lh.title() == b"XLA Ops";
        let mut evs = Vec::with_capacity(usize::try_from(lh.events).unwrap_or(0));
        let base = lh
            .timestamp_ns
            .saturating_sub(origin_ns)
            .saturating_mul(1000);
        let mut r = lh.r;
        while !r.is_empty() {
            let (f, wt) = r.key()?;
            if (f, wt) != (4, LEN) {
                r.skip(wt)?;
                continue;
            }
            let e = read_event(r.sub()?, t, base, strings)?;
            if is_ops {
                n_ops += 1;
                ops_with_metadata += u64::from(e.tf_op != StrId::EMPTY || e.source != StrId::EMPTY);
            }
            file_groups |= e.group != NO_GROUP;
            evs.push(e);
        }
        lines.push(evs);
    }
    if !file_groups {
        group_by_line(p, &mut lines, first_group);
    }
    // The plane's events in time order (start, longer first; ties in line and file order).
    let mut all: Vec<Ev> = lines.into_iter().flatten().collect();
    all.sort_by(|a, b| a.start.cmp(&b.start).then(b.dur.cmp(&a.dur)));

    let mut scope = LineBuilder::new(DerivedKind::NameScope, None).with_gap_rule();
    let mut fw = LineBuilder::new(DerivedKind::FrameworkOps, None).with_gap_rule();
    let mut source = LineBuilder::new(DerivedKind::Source, None).with_gap_rule();
    let mut offload = Offload::default();
    let mut ops: FxHashMap<StrId, (Vec<StrId>, StrId)> = FxHashMap::default();
    let mut levels: Vec<(StrId, DerivedEvent)> = Vec::new();
    let host_label = "S(5)";
    for e in all.iter().filter(|e| !e.is_async) {
        let base = DerivedEvent {
            start: e.start,
            dur: e.dur,
            name: StrId::EMPTY,
            long_name: StrId::EMPTY,
            group_id: e.group,
        };
        if e.tf_op != StrId::EMPTY {
            let (scopes, display) = ops.entry(e.tf_op).or_insert_with(|| {
                let text = strings.get(e.tf_op).to_string();
                let op = tf_op::parse(&text);
                let scopes: Vec<StrId> = op.scopes().map(|s| strings.intern(s)).collect();
                let name = op.event_name();
                let display = if name.is_empty() {
                    e.tf_op
                } else {
                    strings.intern(&name)
                };
                (scopes, display)
            });
            if !scopes.is_empty() {
                levels.clear();
                levels.extend(
                    scopes
                        .iter()
                        .map(|&id| (id, DerivedEvent { name: id, ..base })),
                );
                if scope.expand_or_add_levels(&levels, &[]) {
                    fw.reset_from(0);
                }
            }
            let display = *display;
            let ev = DerivedEvent {
                name: display,
                long_name: if display == e.tf_op {
                    StrId::EMPTY
                } else {
                    e.tf_op
                },
                ..base
            };
            fw.expand_or_add(0, e.tf_op, ev, NO_VALUE, NO_VALUE);
        }
        if e.source != StrId::EMPTY {
            let ev = DerivedEvent {
                name: e.source,
                ..base
            };
            source.expand_or_add(0, e.source, ev, NO_VALUE, NO_VALUE);
        }
        let disp = strings.get(e.name);
        if is_offload_name(disp) && strings.get(e.full).contains(host_label) {
            let disp = disp.to_string();
            offload.event(&disp, e, strings);
        }
    }
    scope.reset_from(0);
    fw.reset_from(0);
    let mut out: Vec<DerivedLine> = [scope, fw, source]
        .into_iter()
        .map(LineBuilder::finish)
        .filter(|l| !l.events.is_empty())
        .collect();
    out.extend(offload.finish());
    Ok(TpuDerived {
        lines: out,
        ops: n_ops,
        ops_with_metadata,
    })
}

/// Reads one XEvent: times, names and the stats the derivation reads (event stats over the
/// metadata's).
fn read_event(
    mut r: Reader<'_>,
    t: &PlaneTables,
    base: Ps,
    strings: &mut Interner,
) -> Result<Ev, Box<WireError>> {
    let (mut mid, mut off, mut dur) = (0i64, 0i64, 0i64);
    let mut e = Ev {
        start: 0,
        dur: 0,
        name: StrId::EMPTY,
        full: StrId::EMPTY,
        tf_op: StrId::EMPTY,
        source: StrId::EMPTY,
        group: NO_GROUP,
        is_async: false,
    };
    let (mut tf_op, mut source) = (None, None);
    while !r.is_empty() {
        let (f, wt) = r.key()?;
        match (f, wt) {
            (1, _) if wt != LEN => mid = r.scalar(wt)? as i64,
            (2, _) if wt != LEN => off = r.scalar(wt)? as i64,
            (3, _) if wt != LEN => dur = r.scalar(wt)? as i64,
            (4, LEN) => {
                let (smid, raw) = stats::read_stat_fast(r.sub()?)?;
                let str_of = |raw: RawValue<'_>, strings: &mut Interner| match raw {
                    RawValue::Ref(v) => t.stats.get(v as i64).0,
                    RawValue::Str(b) => strings.intern_lossy(b),
                    _ => StrId::EMPTY,
                };
                match t.stats.get(smid).1 {
                    Role::GroupId => e.group = raw.as_int().unwrap_or(NO_GROUP),
                    Role::IsAsync => e.is_async = raw.as_int().is_some_and(|v| v != 0),
                    Role::TfOp => tf_op = Some(str_of(raw, strings)),
                    Role::Source => source = Some(str_of(raw, strings)),
                    _ => {}
                }
            }
            _ => r.skip(wt)?,
        }
    }
    let m = t.metas.get(mid).unwrap_or_default();
    e.start = base.saturating_add(off);
    e.dur = dur.max(0);
    e.name = m.name;
    e.full = m.full;
    e.tf_op = tf_op.unwrap_or(m.tf_op);
    e.source = source.unwrap_or(m.source);
    Ok(e)
}

/// `GroupTpuXPlaneEvents` when no host step reaches the device (`CreateEventGroups` then
/// groups the TensorCore's step or module events in lock step): the grouping line's k-th
/// event gets `first + k`; each event of another line the group of the grouping event it
/// overlaps, found by a cursor that only moves forward (`XEventContextTracker`).
fn group_by_line(p: &PlaneScan<'_>, lines: &mut [Vec<Ev>], first: i64) {
    let find = |name: &[u8]| {
        p.lines
            .iter()
            .zip(lines.iter())
            .position(|(l, evs)| l.name == name && !evs.is_empty())
    };
    let Some(gl) = find(b"Steps").or_else(|| find(b"XLA Modules")) else {
        return;
    };
    let spans: Vec<(Ps, Ps, i64)> = lines[gl]
        .iter()
        .enumerate()
        .map(|(k, e)| (e.start, e.start.saturating_add(e.dur), first + k as i64))
        .collect();
    for (k, e) in lines[gl].iter_mut().enumerate() {
        e.group = first + k as i64;
    }
    for (li, evs) in lines.iter_mut().enumerate() {
        if li == gl {
            continue;
        }
        let mut cur: Option<usize> = None;
        for e in evs.iter_mut() {
            let (b, end) = (e.start, e.start.saturating_add(e.dur));
            let overlaps = |i: usize| spans[i].0 <= end && b <= spans[i].1;
            if let Some(i) = cur
                && overlaps(i)
            {
                e.group = spans[i].2;
                continue;
            }
            // The next grouping event that does not end before this one starts overlaps it
            // unless it starts after this one ends.
            let from = cur.map_or(0, |i| i + 1);
            for (i, &(s0, s1, g)) in spans.iter().enumerate().skip(from) {
                if s0 > end {
                    break;
                }
                if s1 < b {
                    continue;
                }
                cur = Some(i);
                e.group = g;
                break;
            }
        }
    }
}

/// Display names of async transfers XProf draws as host offloads (with `S(5)` in the full name).
fn is_offload_name(disp: &str) -> bool {
    const KEYS: [&str; 6] = [
        "copy-start",
        "copy-done",
        "dynamic-slice-start",
        "dynamic-slice-done",
        "dynamic-update-slice-start",
        "dynamic-update-slice-done",
    ];
    KEYS.iter().any(|k| disp.contains(k))
}

/// `offload-<op>.<id>` of `copy-start.4` / `copy-done.4` (`<id>` 0 without a dot).
fn offload_name(disp: &str) -> String {
    let id = match disp.rsplit_once('.') {
        Some((_, id)) => id,
        None => "0",
    };
    let op = match (disp.find("-start"), disp.find("-done")) {
        (Some(i), _) | (None, Some(i)) => &disp[..i],
        (None, None) => disp,
    };
    format!("offload-{op}.{id}")
}

/// The `Host Offload Ops` rows: each `-done` closes the oldest open `-start` of the same name
/// (a `-done` seen first, as a zero-duration `-start` sorted after a `-done` of the same
/// instant, waits for the next `-start`: XProf 2.24.2 pairs all of them); the transfer spans
/// both and goes to the row whose last end is the earliest among those ending by its start (the
/// later row on ties), else to a new row.
#[derive(Default)]
struct Offload {
    /// Per name: starts waiting for a done, dones (their ends) waiting for a start.
    open: FxHashMap<String, (VecDeque<Ps>, VecDeque<Ps>)>,
    rows: Vec<(Ps, Vec<DerivedEvent>)>,
}

impl Offload {
    fn event(&mut self, disp: &str, e: &Ev, strings: &mut Interner) {
        let name = offload_name(disp);
        let (starts, dones) = self.open.entry(name.clone()).or_default();
        let (start, end) = if disp.contains("-start") {
            match dones.pop_front() {
                Some(end) => (e.start, end),
                None => {
                    starts.push_back(e.start);
                    return;
                }
            }
        } else if disp.contains("-done") {
            let end = e.start.saturating_add(e.dur);
            match starts.pop_front() {
                Some(start) => (start, end),
                None => {
                    dones.push_back(end);
                    return;
                }
            }
        } else {
            return;
        };
        let mut row = None;
        let mut frontier = start;
        for (i, (f, _)) in self.rows.iter().enumerate() {
            if *f <= frontier {
                row = Some(i);
                frontier = *f;
            }
        }
        let row = match row {
            Some(r) => r,
            None => {
                if self.rows.len() < MAX_OFFLOAD_ROWS {
                    self.rows.push((end, Vec::new()));
                }
                self.rows.len() - 1
            }
        };
        let Some((f, evs)) = self.rows.get_mut(row) else {
            return;
        };
        *f = (*f).max(end);
        evs.push(DerivedEvent {
            start,
            dur: end.saturating_sub(start),
            name: strings.intern(&name),
            long_name: StrId::EMPTY,
            group_id: NO_GROUP,
        });
    }

    fn finish(self) -> Vec<DerivedLine> {
        self.rows
            .into_iter()
            .enumerate()
            .map(|(i, (_, mut events))| {
                events.sort_by(|a, b| a.start.cmp(&b.start).then(b.dur.cmp(&a.dur)));
                DerivedLine {
                    kind: DerivedKind::HostOffload(i as u16),
                    from: None,
                    events,
                    launch: Vec::new(),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warns_only_when_no_op_has_metadata() {
        let d = |ops, with| TpuDerived {
            lines: Vec::new(),
            ops,
            ops_with_metadata: with,
        };
        assert!(d(0, 0).missing_metadata_warning("/device:TPU:0").is_none());
        assert!(d(10, 1).missing_metadata_warning("/device:TPU:0").is_none());
        let w = d(10, 0).missing_metadata_warning("/device:TPU:0");
        assert!(w.is_some_and(|w| w.starts_with("/device:TPU:0: none of its 10 XLA Ops")));
    }

    #[test]
    fn offload_names_like_xprof() {
        assert_eq!(offload_name("copy-start.4"), "offload-copy.4");
        assert_eq!(offload_name("copy-done"), "offload-copy.0");
        assert_eq!(
            offload_name("dynamic-update-slice-done.12"),
            "offload-dynamic-update-slice.12"
        );
        assert!(is_offload_name("copy-start.1") && !is_offload_name("async-copy"));
    }

    fn ev(s: &mut Interner, name: &str, start: Ps, dur: Ps) -> Ev {
        Ev {
            start,
            dur,
            name: s.intern(name),
            full: s.intern(&format!("%{name} = f32[8]{{0:S(5)}}")),
            tf_op: StrId::EMPTY,
            source: StrId::EMPTY,
            group: NO_GROUP,
            is_async: false,
        }
    }

    #[test]
    fn offload_rows_pair_start_and_done_and_reuse_free_rows() {
        let mut s = Interner::new();
        let mut o = Offload::default();
        // Transfers are placed when they complete: copy.1 (done first) takes row 0, copy.0
        // (overlapping it) row 1; copy.2 goes to the row whose last end is the earliest (row
        // 0, free since 60); copy.3's done comes before its start and waits for it.
        for (n, st, d) in [
            ("copy-start", 0, 1),
            ("copy-start.1", 10, 1),
            ("copy-done.1", 50, 10),
            ("copy-done", 90, 10),
            ("copy-start.2", 200, 1),
            ("copy-done.2", 300, 5),
            ("copy-done.3", 400, 5), // no start yet: waits for the next one
            ("copy-start.3", 400, 0),
        ] {
            let e = ev(&mut s, n, st, d);
            o.event(n, &e, &mut s);
        }
        let rows = o.finish();
        let got: Vec<Vec<(String, Ps, Ps)>> = rows
            .iter()
            .map(|l| {
                l.events
                    .iter()
                    .map(|e| (s.get(e.name).to_string(), e.start, e.dur))
                    .collect()
            })
            .collect();
        assert_eq!(
            got,
            vec![
                vec![
                    ("offload-copy.1".to_string(), 10, 50),
                    ("offload-copy.2".to_string(), 200, 105)
                ],
                vec![
                    ("offload-copy.0".to_string(), 0, 100),
                    ("offload-copy.3".to_string(), 400, 5)
                ],
            ]
        );
        assert_eq!(rows[1].kind.title(), "Host Offload Ops row 1");
    }
}
