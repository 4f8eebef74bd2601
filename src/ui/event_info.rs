//! One event's facts: what the explorer's details pane ([`super::details`]) shows of the selected
//! slice — times, self time, depth, parents, args and call stack, flow / correlation partners —
//! plus its children and the device work it launched (or the op that launched it), as plain
//! data. `tracetui event --json` and the MCP `event` tool print it ([`crate::cli::event`]).

use super::loader::Loaded;
use crate::model::{Capture, Category, TrackKind};
use serde::Serialize;

/// Children listed at most (all are counted).
pub const MAX_CHILDREN: usize = 100;
/// Launched device events listed at most (all are counted).
pub const MAX_LAUNCHED: usize = 50;
/// Descendants scanned for launched device work at most (an outermost step holds many).
const MAX_SCANNED: usize = 200_000;

/// Another event, named: id, name, place and times.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct EventRef {
    /// Slice id (what `search --json` prints as `id`).
    pub id: u32,
    /// Name.
    pub name: String,
    /// `process / track`.
    pub track: String,
    /// Start, integer ns from the capture's zero (its earliest event).
    pub start_ns: i64,
    /// Duration, ns.
    pub dur_ns: i64,
}

/// A flow or correlation partner of the event.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct Partner {
    /// `launches` (device work this event launched), `launched_by` (the host call that launched
    /// this device event), `flow` (another flow link) or `correlation` (same correlation id).
    pub relation: &'static str,
    /// The partner.
    #[serde(flatten)]
    pub event: EventRef,
}

/// One arg of the event.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct Arg {
    /// Key.
    pub name: String,
    /// Value as text.
    pub value: String,
}

/// Everything known of one event.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct EventInfo {
    /// The event (name, place, times).
    #[serde(flatten)]
    pub event: EventRef,
    /// End, ns from the capture's zero.
    pub end_ns: i64,
    /// Duration minus its direct children's, ns.
    pub self_ns: i64,
    /// Nesting depth on its track (0: outermost).
    pub depth: u16,
    /// Raw category (`cpu_op`, `kernel`, …; empty when none).
    pub category: String,
    /// What its track is (`thread`, `gpu_stream`, `xline`, …).
    pub track_kind: &'static str,
    /// Correlation id (0: none).
    pub correlation: u64,
    /// Its args in file order (Kineto's `Call stack` is in `call_stack`).
    pub args: Vec<Arg>,
    /// Kineto's `Call stack`, one frame per entry, innermost first as the file has it.
    pub call_stack: Vec<String>,
    /// True when the file changed on disk since loading: args were not read.
    pub args_not_read: bool,
    /// Enclosing events, outermost first (at most 32).
    pub parents: Vec<EventRef>,
    /// Direct children.
    pub children_count: usize,
    /// The first [`MAX_CHILDREN`] children in time order.
    pub children: Vec<EventRef>,
    /// Flow and correlation partners (a launch and its kernels).
    pub partners: Vec<Partner>,
    /// Device events (kernels, copies) launched by this event or its descendants.
    pub launched_count: usize,
    /// The first [`MAX_LAUNCHED`] of them in time order.
    pub launched: Vec<EventRef>,
    /// For a device event: the host call that launched it.
    pub launching_call: Option<EventRef>,
    /// For a device event: the innermost CPU op around the launching call.
    pub launching_op: Option<EventRef>,
}

/// Self time of slice `id`: its duration minus its direct children's, ps.
pub fn self_time(l: &Loaded, id: u32) -> i64 {
    let s = &l.cap.slices;
    let kids: i64 = l
        .index
        .children(&l.cap, id)
        .iter()
        .map(|&c| s.dur[c as usize])
        .sum();
    (s.dur[id as usize] - kids).max(0)
}

/// Parent chain from the root down to (excluding) `id`, at most 32 deep.
pub fn parents(l: &Loaded, id: u32) -> Vec<u32> {
    let mut chain = Vec::new();
    let mut cur = id;
    while let Some(p) = l.index.parent(&l.cap, cur) {
        chain.push(p);
        cur = p;
        if chain.len() >= 32 {
            break;
        }
    }
    chain.reverse();
    chain
}

/// The args of slice `id` as (key, value) in file order, and Kineto's `Call stack` split into
/// frames (not among the args). Not sanitized: callers printing to a terminal do that.
pub fn args_of(cap: &Capture, id: u32) -> (Vec<(String, String)>, Vec<String>) {
    let mut args = Vec::new();
    let mut stack = Vec::new();
    let Some(&r) = cap.slices.args.get(id as usize) else {
        return (args, stack);
    };
    for (k, v) in cap.args.iter(r, &cap.strings) {
        let key = cap.strings.get(k);
        let val = v.display(&cap.strings);
        if key == "Call stack" {
            stack = val
                .split(';')
                .map(str::trim)
                .filter(|f| !f.is_empty())
                .map(str::to_string)
                .collect();
            continue;
        }
        args.push((key.to_string(), val));
    }
    (args, stack)
}

/// True for device work: a slice on a GPU stream, or a kernel / copy / memset.
pub fn on_device(cap: &Capture, id: u32) -> bool {
    let t = cap.track_of(id) as usize;
    cap.tracks
        .get(t)
        .is_some_and(|tr| tr.kind == TrackKind::GpuStream)
        || matches!(
            cap.slices.kind(id as usize),
            Category::Kernel | Category::Memcpy | Category::Memset
        )
}

/// `id` as an [`EventRef`] (times from the capture's zero `z`, ps).
pub fn event_ref(cap: &Capture, id: u32) -> EventRef {
    let s = &cap.slices;
    let i = id as usize;
    let z = cap.time_zero();
    let t = cap.track_of(id);
    let track = match cap.tracks.get(t as usize) {
        Some(tr) => format!("{} / {}", cap.process_title(tr.process), cap.track_name(t)),
        None => String::new(),
    };
    EventRef {
        id,
        name: cap.slice_name(id).to_string(),
        track,
        start_ns: ns(s.start[i] - z),
        dur_ns: ns(s.dur[i]),
    }
}

fn ns(ps: i64) -> i64 {
    ps.saturating_add(500).div_euclid(1000)
}

/// Everything known of slice `id`; `None` when there is no such slice.
pub fn event_info(l: &Loaded, id: u32) -> Option<EventInfo> {
    let cap = &l.cap;
    let s = &cap.slices;
    let i = id as usize;
    if i >= s.len() {
        return None;
    }
    let z = cap.time_zero();
    let track = cap.track_of(id);
    let (args, call_stack) = args_of(cap, id);
    // Lazily read args may come from a file rewritten meanwhile: checked after reading.
    let changed = cap.source_changed();
    let (args, call_stack) = if changed {
        (Vec::new(), Vec::new())
    } else {
        (args, call_stack)
    };
    let kids = l.index.children(cap, id);
    let device = on_device(cap, id);
    let partners: Vec<Partner> = l
        .partners_of(id)
        .into_iter()
        .map(|(_, p)| {
            let flow = l.flow_partners.binary_search(&(id, p)).is_ok();
            let relation = match (device, on_device(cap, p)) {
                (false, true) => "launches",
                (true, false) => "launched_by",
                _ if flow => "flow",
                _ => "correlation",
            };
            Partner {
                relation,
                event: event_ref(cap, p),
            }
        })
        .collect();
    let (launched_count, launched) = if device {
        (0, Vec::new())
    } else {
        launched_by_tree(l, id)
    };
    let launching_call = partners
        .iter()
        .find(|p| p.relation == "launched_by")
        .map(|p| p.event.clone());
    let launching_op = launching_call.as_ref().and_then(|c| {
        let mut cur = c.id;
        while let Some(p) = l.index.parent(cap, cur) {
            if s.kind(p as usize) == Category::CpuOp {
                return Some(event_ref(cap, p));
            }
            cur = p;
        }
        None
    });
    Some(EventInfo {
        event: event_ref(cap, id),
        end_ns: ns(s.end(i) - z),
        self_ns: ns(self_time(l, id)),
        depth: cap.depth(id),
        category: cap.strings.get(s.cat(i)).to_string(),
        track_kind: cap.tracks.get(track as usize).map_or("", |t| t.kind.name()),
        correlation: s.corr(i),
        args: args
            .into_iter()
            .map(|(name, value)| Arg { name, value })
            .collect(),
        call_stack,
        args_not_read: changed,
        parents: parents(l, id)
            .into_iter()
            .map(|p| event_ref(cap, p))
            .collect(),
        children_count: kids.len(),
        children: kids
            .iter()
            .take(MAX_CHILDREN)
            .map(|&c| event_ref(cap, c))
            .collect(),
        partners,
        launched_count,
        launched,
        launching_call,
        launching_op,
    })
}

/// Device events launched by host slice `id` or the slices it contains on its track (at most
/// [`MAX_SCANNED`] of them looked at): their count and the first [`MAX_LAUNCHED`] in time order.
fn launched_by_tree(l: &Loaded, id: u32) -> (usize, Vec<EventRef>) {
    let cap = &l.cap;
    let s = &cap.slices;
    let (a, b) = (s.start[id as usize], s.end(id as usize));
    let track_end = cap
        .tracks
        .get(cap.track_of(id) as usize)
        .map_or(id + 1, |t| t.slices.1);
    let mut found: Vec<u32> = Vec::new();
    // Slices of a track are sorted by start: the contained ones follow `id`.
    let mut d = id;
    let mut scanned = 0;
    while d < track_end && s.start[d as usize] < b.max(a + 1) && scanned < MAX_SCANNED {
        let di = d as usize;
        if d == id || (s.start[di] >= a && s.end(di) <= b) {
            found.extend(
                l.partners_of(d)
                    .into_iter()
                    .map(|(_, p)| p)
                    .filter(|&p| on_device(cap, p)),
            );
        }
        d += 1;
        scanned += 1;
    }
    found.sort_unstable_by_key(|&p| (s.start[p as usize], p));
    found.dedup();
    let n = found.len();
    (
        n,
        found
            .into_iter()
            .take(MAX_LAUNCHED)
            .map(|p| event_ref(cap, p))
            .collect(),
    )
}
