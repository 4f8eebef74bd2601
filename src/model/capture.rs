//! The loaded, immutable model of one capture: processes → tracks → columnar slices.

use super::args::{ArgsArena, ArgsRef};
use super::category::Category;
use super::strings::{Interner, StrId};
use std::path::PathBuf;

/// Picoseconds relative to the capture origin.
pub type Ps = i64;

/// Sentinel for "no slice" in `u32` slice-id columns.
pub const NO_SLICE: u32 = u32::MAX;

/// The file format a capture was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// XSpace protobuf (`.xplane.pb`, `.xplane.pb.gz`).
    XPlane,
    /// PyTorch Kineto JSON (`.pt.trace.json[.gz]` or JSON with Kineto keys).
    Kineto,
    /// XProf trace-viewer JSON export (`<host>.trace.json.gz`, `perfetto_trace.json.gz`).
    XProfJson,
    /// Any other Chrome Trace Event JSON.
    Chrome,
    /// Folded stacks (`*.folded`, `*.stacks.txt`: `frame;frame;…;leaf VALUE` per line).
    Folded,
    /// A torch CUDA allocator snapshot (`*.pickle`, `torch.cuda.memory._dump_snapshot`): no
    /// events, its memory model only (`formats::snapshot`).
    Snapshot,
}

impl Format {
    /// Short lower-case name used in `summary`.
    pub fn name(self) -> &'static str {
        match self {
            Format::XPlane => "xplane",
            Format::Kineto => "kineto",
            Format::XProfJson => "xprof-json",
            Format::Chrome => "chrome-json",
            Format::Folded => "folded",
            Format::Snapshot => "torch-snapshot",
        }
    }
}

/// Where a capture came from and how discovery named it.
#[derive(Clone, Debug, Default)]
pub struct SourceInfo {
    /// The file read.
    pub path: PathBuf,
    /// Run name (XProf session path, PyTorch run directory), stable across reloads.
    pub run: String,
    /// Host (XPlane/XProf) or worker (PyTorch) name.
    pub host: String,
    /// Size of the file on disk in bytes.
    pub file_bytes: u64,
}

/// Process / plane key as written in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    /// Numeric pid / tid / line id.
    Int(i64),
    /// String pid / tid (Kineto `"Spans"`, plane names).
    Str(StrId),
}

/// What a process holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProcessKind {
    /// Host CPU threads.
    Host,
    /// A GPU device.
    Gpu,
    /// A TPU device.
    Tpu,
    /// Another accelerator or custom plane.
    Device,
    /// Profiler-internal or unknown.
    Other,
}

/// One process (Chrome pid) or XPlane plane.
#[derive(Clone, Debug)]
pub struct Process {
    /// Key in the file.
    pub key: Key,
    /// Display name (`process_name` metadata, plane name).
    pub name: StrId,
    /// Extra label (`process_labels`, device name).
    pub label: StrId,
    /// Ordering hint (`process_sort_index`); lower first.
    pub sort_index: i64,
    /// What it holds.
    pub kind: ProcessKind,
    /// True for planes whose facts are kept but which are not drawn (`/host:metadata`).
    pub hidden: bool,
}

/// What a track draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TrackKind {
    /// A CPU thread.
    Thread,
    /// A GPU stream.
    GpuStream,
    /// An XPlane line (device op line, TPU line, ...).
    XLine,
    /// A line derived by tracetui (Steps, XLA Modules, XLA Ops, ...).
    Derived,
    /// A counter series, drawn as a sparkline.
    Counter,
    /// Async (`b/e`, `S/F`) slices of one process and category.
    Async,
}

impl TrackKind {
    /// Short lower-case name used in `summary`.
    pub fn name(self) -> &'static str {
        match self {
            TrackKind::Thread => "thread",
            TrackKind::GpuStream => "gpu_stream",
            TrackKind::XLine => "xline",
            TrackKind::Derived => "derived",
            TrackKind::Counter => "counter",
            TrackKind::Async => "async",
        }
    }
}

/// One timeline row group: a thread, stream, XPlane line, counter or async lane set.
#[derive(Clone, Debug)]
pub struct Track {
    /// Index into `Capture::processes`.
    pub process: u32,
    /// Key in the file (tid, line id, counter name).
    pub key: Key,
    /// Display name.
    pub name: StrId,
    /// What it draws.
    pub kind: TrackKind,
    /// Ordering hint within the process; lower first.
    pub sort_index: i64,
    /// Slice ids `[slices.0, slices.1)` of this track (sorted by start, longer first).
    pub slices: (u32, u32),
    /// Instant ids of this track.
    pub instants: (u32, u32),
    /// Index into `Capture::counters` for counter tracks.
    pub counter: Option<u32>,
    /// Number of drawn rows (nesting depths plus extra lanes for partial overlaps).
    pub lanes: u16,
    /// Deepest nesting depth.
    pub max_depth: u16,
    /// First lane of each lane group, ascending (`[0]` when all slices nest properly): a slice's
    /// depth is its lane minus the base of its group, so no depth column is stored.
    pub group_bases: Vec<u16>,
}

impl Track {
    /// Number of slices.
    pub fn slice_count(&self) -> usize {
        (self.slices.1 - self.slices.0) as usize
    }

    /// Nesting depth of a slice drawn on `lane` of this track.
    #[inline]
    pub fn depth_of_lane(&self, lane: u16) -> u16 {
        let k = self.group_bases.partition_point(|&b| b <= lane);
        lane - k.checked_sub(1).map_or(0, |k| self.group_bases[k])
    }
}

/// Bit flags of a slice.
pub mod slice_flags {
    /// A `B` without `E`: closed at the end of the capture.
    pub const UNFINISHED: u8 = 1;
    /// An async slice whose end was never seen.
    pub const ASYNC_UNFINISHED: u8 = 2;
    /// Grafted from a graph capture trace (`formats::graph_capture`): a capture-time op, frame
    /// or launch call placed inside the graph launch that replayed it, not replay CPU time.
    pub const CAPTURED: u8 = 4;
}

/// Columnar slices of a capture, grouped by track and sorted by (start asc, dur desc) within a track.
#[derive(Clone, Debug, Default)]
pub struct Slices {
    /// Start, ps from the origin.
    pub start: Vec<Ps>,
    /// Duration in ps (≥ 0).
    pub dur: Vec<Ps>,
    /// Interned display name.
    pub name: Vec<StrId>,
    /// Category class of each slice: an index into `classes` (read with [`Slices::cat`] and
    /// [`Slices::kind`]); 2 bytes instead of a string id and an enum per slice.
    pub class: Vec<u16>,
    /// (interned raw category, category enum) of each class; class 0 is the empty category.
    pub classes: Vec<(StrId, Category)>,
    /// Drawn row within the track.
    pub lane: Vec<u16>,
    /// Enclosing slice (strict containment on the same track), or `NO_SLICE`.
    pub parent: Vec<u32>,
    /// Args block.
    pub args: Vec<ArgsRef>,
    /// Correlation id linking a launch to its device activity (0 = none), when it fits 32
    /// bits; [`CORR_WIDE`] sends the reader to `corr_wide`. Read with [`Slices::corr`].
    pub corr: Vec<u32>,
    /// Correlation ids of 32 bits or more: (slice id, id), sorted by slice id.
    pub corr_wide: Vec<(u32, u64)>,
    /// `slice_flags` bits.
    pub flags: Vec<u8>,
}

/// Marks a correlation id kept in `Slices::corr_wide`.
pub const CORR_WIDE: u32 = u32::MAX;

/// The `corr` column value of a correlation id: itself when it fits below [`CORR_WIDE`], else
/// `None` (the id goes to `corr_wide` and the column holds `CORR_WIDE`).
#[inline]
pub fn narrow_corr(corr: u64) -> Option<u32> {
    u32::try_from(corr).ok().filter(|&c| c != CORR_WIDE)
}

impl Slices {
    /// Interned raw category of slice `i`.
    #[inline]
    pub fn cat(&self, i: usize) -> StrId {
        self.classes
            .get(usize::from(self.class[i]))
            .map_or(StrId::EMPTY, |c| c.0)
    }

    /// Category enum of slice `i`.
    #[inline]
    pub fn kind(&self, i: usize) -> Category {
        self.classes
            .get(usize::from(self.class[i]))
            .map_or(Category::Other, |c| c.1)
    }

    /// Correlation id of slice `i` (0 = none).
    #[inline]
    pub fn corr(&self, i: usize) -> u64 {
        let c = self.corr[i];
        if c != CORR_WIDE {
            return u64::from(c);
        }
        self.corr_wide
            .binary_search_by_key(&(i as u32), |e| e.0)
            .map_or(u64::from(c), |k| self.corr_wide[k].1)
    }

    /// Number of slices.
    pub fn len(&self) -> usize {
        self.start.len()
    }
    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.start.is_empty()
    }
    /// End time of slice `i`.
    #[inline]
    pub fn end(&self, i: usize) -> Ps {
        self.start[i] + self.dur[i]
    }
}

/// Columnar instant events, grouped by track and sorted by time.
#[derive(Clone, Debug, Default)]
pub struct Instants {
    /// Time, ps.
    pub ts: Vec<Ps>,
    /// Interned name.
    pub name: Vec<StrId>,
    /// Interned category.
    pub cat: Vec<StrId>,
    /// Args block.
    pub args: Vec<ArgsRef>,
    /// Owning track.
    pub track: Vec<u32>,
    /// Scope: b't' thread, b'p' process, b'g' global.
    pub scope: Vec<u8>,
}

/// One counter series (Chrome `C` event key, XPlane counter line).
#[derive(Clone, Debug)]
pub struct CounterSeries {
    /// Its track.
    pub track: u32,
    /// Series name.
    pub name: StrId,
    /// Sample times (sorted).
    pub ts: Vec<Ps>,
    /// Sample values.
    pub value: Vec<f64>,
}

/// A resolved flow / correlation link between two slices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flow {
    /// Flow id from the file.
    pub id: u64,
    /// Interned category (`ac2g`, `fwdbwd`, ...; `correlation` for links made from args).
    pub cat: StrId,
    /// Source slice id or `NO_SLICE`.
    pub from: u32,
    /// Destination slice id or `NO_SLICE`.
    pub to: u32,
}

/// An XPlane aggregated event (`num_occurrences`): listed in stats, not drawn.
#[derive(Clone, Debug)]
pub struct Aggregated {
    /// Track it belongs to.
    pub track: u32,
    /// Name.
    pub name: StrId,
    /// Number of occurrences.
    pub occurrences: u64,
    /// Total duration in ps.
    pub dur: Ps,
}

/// Something skipped, repaired or capped while loading; always shown to the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// Stable machine-readable kind (`truncated`, `unmatched_end`, ...).
    pub kind: &'static str,
    /// How many times it happened.
    pub count: u64,
    /// Human-readable description of the first occurrence.
    pub message: String,
}

/// A fully loaded capture: immutable once built.
#[derive(Clone, Debug, Default)]
pub struct Capture {
    /// Where it came from.
    pub source: SourceInfo,
    /// Format read.
    pub format: Option<Format>,
    /// All interned strings.
    pub strings: Interner,
    /// All args blocks.
    pub args: ArgsArena,
    /// Processes / planes.
    pub processes: Vec<Process>,
    /// Tracks; `tracks[t].slices` ranges ascend with `t`.
    pub tracks: Vec<Track>,
    /// All slices.
    pub slices: Slices,
    /// All instants.
    pub instants: Instants,
    /// All counter series.
    pub counters: Vec<CounterSeries>,
    /// Flow and correlation links.
    pub flows: Vec<Flow>,
    /// Aggregated (untimed) events.
    pub aggregated: Vec<Aggregated>,
    /// Wall-clock epoch ns of time 0, when the file says.
    pub origin_epoch_ns: Option<i64>,
    /// Earliest start and latest end of anything timed, ps.
    pub span: (Ps, Ps),
    /// Trace-level metadata (Kineto header keys, XPlane environment facts).
    pub metadata: ArgsRef,
    /// Everything skipped or repaired.
    pub warnings: Vec<Warning>,
    /// Replayed CUDA/HIP graph kernels → their graph launch, when capture traces were merged
    /// (`formats::graph_capture`); not kept in snapshots (a merged capture is not cached).
    pub graph_replay: super::graph_replay::GraphReplay,
}

impl Capture {
    /// The file's own clock at model time 0, ns: the origin's wall-clock ns minus Kineto's
    /// `baseTimeNanoseconds` (the shift the JSON loader applied, so this is Kineto's raw `ts`
    /// clock), else the origin's epoch ns, else 0.
    pub fn file_clock0_ns(&self) -> i64 {
        let Some(origin) = self.origin_epoch_ns else {
            return 0;
        };
        let base = self
            .strings
            .lookup("baseTimeNanoseconds")
            .and_then(|k| self.args.get(self.metadata, k, &self.strings))
            .and_then(|v| v.as_i64(&self.strings))
            .unwrap_or(0);
        origin.wrapping_sub(base)
    }

    /// The parents of slice `id`, innermost first (nothing for an unknown id).
    pub fn ancestors(&self, id: u32) -> impl Iterator<Item = u32> + '_ {
        let parent = |i: u32| {
            self.slices
                .parent
                .get(i as usize)
                .copied()
                .unwrap_or(NO_SLICE)
        };
        std::iter::successors(Some(parent(id)), move |&p| Some(parent(p)))
            .take_while(|&p| p != NO_SLICE)
    }

    /// The time shown as zero: the first event of the capture. Displayed times are relative to
    /// it (never negative); model times stay relative to the file's origin.
    pub fn time_zero(&self) -> Ps {
        self.span.0
    }

    /// Wall-clock epoch ns of [`Capture::time_zero`], when the file gives an absolute origin.
    pub fn zero_epoch_ns(&self) -> Option<i64> {
        self.origin_epoch_ns
            .map(|o| o.saturating_add(self.span.0.div_euclid(1000)))
    }

    /// True when the file this capture reads details from (XPlane stats, read lazily) was
    /// truncated or rewritten on disk since loading: those details are then unavailable (args
    /// read as empty) and the capture should be reloaded. Costs one `fstat`.
    pub fn source_changed(&self) -> bool {
        self.args.source_changed()
    }

    /// Track owning slice `id`.
    pub fn track_of(&self, id: u32) -> u32 {
        let i = self.tracks.partition_point(|t| t.slices.1 <= id);
        i as u32
    }

    /// Nesting depth of slice `id` within its lane group (0 = a root).
    pub fn depth(&self, id: u32) -> u16 {
        match (
            self.tracks.get(self.track_of(id) as usize),
            self.slices.lane.get(id as usize),
        ) {
            (Some(t), Some(&l)) => t.depth_of_lane(l),
            _ => 0,
        }
    }

    /// Name of slice `id`.
    pub fn slice_name(&self, id: u32) -> &str {
        self.strings.get(self.slices.name[id as usize])
    }

    /// Total event count: slices, instants, counter samples, aggregated events.
    pub fn event_count(&self) -> u64 {
        self.slices.len() as u64
            + self.instants.ts.len() as u64
            + self.counters.iter().map(|c| c.ts.len() as u64).sum::<u64>()
            + self.aggregated.len() as u64
    }

    /// A name for a process that stays the same across reloads (`pid 12`, `/device:GPU:0`).
    pub fn process_stable_name(&self, p: u32) -> String {
        match self.processes[p as usize].key {
            Key::Int(v) => format!("pid {v}"),
            Key::Str(s) => self.strings.get(s).to_string(),
        }
    }

    /// A name for a track that stays the same across reloads (`pid 12/tid 7`, `/device:GPU:0/line 3`).
    pub fn track_stable_name(&self, t: u32) -> String {
        let tr = &self.tracks[t as usize];
        let key = match tr.key {
            Key::Int(v) => format!(
                "{} {v}",
                if tr.kind == TrackKind::XLine || tr.kind == TrackKind::Derived {
                    "line"
                } else {
                    "tid"
                }
            ),
            Key::Str(s) => self.strings.get(s).to_string(),
        };
        format!(
            "{}/{}:{}",
            self.process_stable_name(tr.process),
            tr.kind.name(),
            key
        )
    }

    /// Display name of a process: its name, else its stable name.
    pub fn process_name(&self, p: u32) -> String {
        let pr = &self.processes[p as usize];
        let n = self.strings.get(pr.name);
        if n.is_empty() {
            self.process_stable_name(p)
        } else {
            n.to_string()
        }
    }

    /// A process as users know it: with a label (Kineto `process_labels`: `GPU 0`, `CPU`) the
    /// label leads and the name follows in parentheses — `GPU 0 (python)` — since Kineto gives
    /// every device the host process's name; else [`Capture::process_name`].
    pub fn process_title(&self, p: u32) -> String {
        let pr = &self.processes[p as usize];
        let n = self.strings.get(pr.name);
        let l = self.strings.get(pr.label).trim();
        match (n.trim().is_empty(), l.is_empty()) {
            (true, true) => self.process_stable_name(p),
            (true, false) => l.to_string(),
            (false, true) => n.to_string(),
            (false, false) if n.trim() == l => n.to_string(),
            (false, false) => format!("{l} ({})", n.trim()),
        }
    }

    /// The rank of a distributed run (Kineto `distributedInfo.rank`), when the file says.
    pub fn rank(&self) -> Option<i64> {
        let key = self.strings.lookup("distributedInfo")?;
        let info = match self.args.get(self.metadata, key, &self.strings)? {
            super::args::ArgValue::Json(s) | super::args::ArgValue::Str(s) => {
                serde_json::from_str::<serde_json::Value>(self.strings.get(s)).ok()?
            }
            _ => return None,
        };
        let r = info.get("rank")?;
        r.as_i64().or_else(|| r.as_str()?.trim().parse().ok())
    }

    /// Display name of a track: its name, else its key.
    pub fn track_name(&self, t: u32) -> String {
        let tr = &self.tracks[t as usize];
        let n = self.strings.get(tr.name);
        if !n.is_empty() {
            return n.to_string();
        }
        match tr.key {
            Key::Int(v) => format!(
                "{} {v}",
                if tr.kind == TrackKind::GpuStream {
                    "stream"
                } else {
                    "thread"
                }
            ),
            Key::Str(s) => self.strings.get(s).to_string(),
        }
    }

    /// Approximate heap bytes held by the model.
    pub fn heap_bytes(&self) -> usize {
        let s = &self.slices;
        s.start.capacity() * 8
            + s.dur.capacity() * 8
            + s.name.capacity() * 4
            + s.class.capacity() * 2
            + s.lane.capacity() * 2
            + s.parent.capacity() * 4
            + s.args.capacity() * 4
            + s.corr.capacity() * 4
            + s.corr_wide.capacity() * 16
            + s.flags.capacity()
            + self.instants.ts.capacity() * 25
            + self
                .counters
                .iter()
                .map(|c| c.ts.capacity() * 16)
                .sum::<usize>()
            + self.flows.capacity() * 24
            + self.strings.heap_bytes()
            + self.args.heap_bytes()
    }
}
