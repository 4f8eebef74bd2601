//! What one graph capture contributes: the capture windows of a capture trace (between
//! `StreamBeginCapture` and `StreamEndCapture`) and, for each, the host slices recorded in it —
//! ops, annotations, the Python frames above them and the launch calls — copied once into the
//! replay's builder (names, categories, args), ready to be placed inside every graph launch
//! that replays it.

use super::align::CaptureCall;
use crate::model::{
    ArgValue, ArgsRef, Capture, CaptureBuilder, Category, NO_SLICE, Ps, StrId, TrackKind,
};
use rustc_hash::{FxHashMap, FxHashSet};

/// One slice of a capture window, in the replay builder's strings and args.
#[derive(Clone, Copy, Debug)]
pub struct TemplateSlice {
    /// Index of its thread in [`Template::threads`].
    pub thread: u32,
    /// Start and end, ps, in the capture trace's time.
    pub start: Ps,
    /// End, ps.
    pub end: Ps,
    /// Name (builder string).
    pub name: StrId,
    /// Raw category (builder string).
    pub cat: StrId,
    /// Args (builder arena).
    pub args: ArgsRef,
}

/// One capture window of a capture trace.
#[derive(Clone, Debug, Default)]
pub struct Template {
    /// The window, ps, in the capture trace's time: end of `StreamBeginCapture` → start of
    /// `StreamEndCapture`.
    pub window: (Ps, Ps),
    /// Capture-trace thread names (builder strings) of the slices.
    pub threads: Vec<StrId>,
    /// The slices kept, grouped by thread, each thread in (start asc, dur desc) order.
    pub slices: Vec<TemplateSlice>,
    /// The launch calls (indices into `slices`), in start order: what replayed kernels pair with.
    pub calls: Vec<u32>,
    /// (call name, `args.kernel`) of each of `calls` (builder strings; kernel `EMPTY` when absent).
    pub call_names: Vec<(StrId, StrId)>,
    /// Host slices in the window left out: Python frames and runtime calls above no op or launch.
    pub pruned: u64,
}

impl Template {
    /// The calls as [`align`](super::align::align) takes them.
    pub fn capture_calls<'a>(&self, b: &'a CaptureBuilder) -> Vec<CaptureCall<'a>> {
        self.call_names
            .iter()
            .map(|&(c, k)| CaptureCall {
                call: b.strings.get(c),
                kernel: (k != StrId::EMPTY).then(|| b.strings.get(k)),
            })
            .collect()
    }
}

/// True for a host call that launches device work or copies / sets memory (TraceLens's filter:
/// runtime or driver category, `Launch`, `Memcpy` or `Memset` in the name).
pub fn is_launch_call(kind: Category, name: &str) -> bool {
    matches!(kind, Category::Runtime | Category::Driver)
        && (name.contains("Launch") || name.contains("Memcpy") || name.contains("Memset"))
}

/// The capture windows of `c`, in time order: each `StreamBeginCapture` paired with the next
/// `StreamEndCapture` (TraceLens pairs the n-th with the n-th; the same on well-formed traces).
fn windows(c: &Capture) -> Vec<(Ps, Ps)> {
    let mut begins = Vec::new();
    let mut ends = Vec::new();
    for i in 0..c.slices.len() {
        if c.slices.kind(i) != Category::Runtime {
            continue;
        }
        let n = c.strings.get(c.slices.name[i]);
        if n.contains("StreamBeginCapture") {
            begins.push(c.slices.end(i));
        } else if n.contains("StreamEndCapture") {
            ends.push(c.slices.start[i]);
        }
    }
    begins.sort_unstable();
    ends.sort_unstable();
    begins
        .into_iter()
        .zip(ends)
        .filter(|(b, e)| b <= e)
        .collect()
}

/// Copies string `s` of the capture trace into the builder, once.
struct StrMap<'a> {
    src: &'a Capture,
    map: FxHashMap<StrId, StrId>,
}

impl StrMap<'_> {
    fn get(&mut self, b: &mut CaptureBuilder, s: StrId) -> StrId {
        *self
            .map
            .entry(s)
            .or_insert_with(|| b.strings.intern(self.src.strings.get(s)))
    }

    fn args(&mut self, b: &mut CaptureBuilder, r: ArgsRef) -> ArgsRef {
        if !r.is_some() {
            return r;
        }
        let entries: Vec<(StrId, ArgValue)> = self.src.args.iter(r, &self.src.strings).collect();
        let mapped: Vec<(StrId, ArgValue)> = entries
            .into_iter()
            .map(|(k, v)| {
                let v = match v {
                    ArgValue::Str(s) => ArgValue::Str(self.get(b, s)),
                    ArgValue::Json(s) => ArgValue::Json(self.get(b, s)),
                    v => v,
                };
                (self.get(b, k), v)
            })
            .collect();
        b.args.begin();
        for (k, v) in mapped {
            b.args.push(k, v);
        }
        b.args.finish()
    }
}

/// The templates of capture trace `c`, one per capture window, copied into `b`.
pub fn templates(c: &Capture, b: &mut CaptureBuilder) -> Vec<Template> {
    let mut sm = StrMap {
        src: c,
        map: FxHashMap::default(),
    };
    let kernel_key = c.strings.lookup("kernel");
    let host: Vec<bool> = c
        .tracks
        .iter()
        .map(|t| matches!(t.kind, TrackKind::Thread))
        .collect();
    let mut out = Vec::new();
    for (ws, we) in windows(c) {
        let inside = |i: u32| {
            let i = i as usize;
            c.slices.start[i] >= ws && c.slices.end(i) <= we
        };
        let mut t = Template {
            window: (ws, we),
            ..Template::default()
        };
        let mut thread_of: FxHashMap<u32, u32> = FxHashMap::default();
        let mut calls: Vec<(Ps, u32)> = Vec::new();
        for (tid, tr) in c.tracks.iter().enumerate() {
            if !host[tid] {
                continue;
            }
            // Slices are sorted by start: those starting in the window are one range.
            let (t0, t1) = tr.slices;
            let st = &c.slices.start[t0 as usize..t1 as usize];
            let lo = t0 + st.partition_point(|&s| s < ws) as u32;
            let hi = t0 + st.partition_point(|&s| s <= we) as u32;
            // Kept slices of this track: in the window, under an op or frame that began before
            // the capture (TraceLens's capture roots), and an op, an annotation, a launch call
            // or above one. `top[i - lo]`: the outermost in-window ancestor of slice i (a parent
            // comes before its children in this order, so it is known when a child is reached).
            let mut keep: Vec<u32> = Vec::new();
            let mut needed: FxHashSet<u32> = FxHashSet::default();
            let mut top: Vec<u32> = vec![NO_SLICE; (hi - lo) as usize];
            for i in lo..hi {
                if !inside(i) {
                    continue;
                }
                let p = c.slices.parent[i as usize];
                let up = if p != NO_SLICE && p >= lo && p < hi && inside(p) {
                    top[(p - lo) as usize]
                } else {
                    NO_SLICE
                };
                let root = if up == NO_SLICE { i } else { up };
                top[(i - lo) as usize] = root;
                let tp = c.slices.parent[root as usize];
                if tp == NO_SLICE
                    || !matches!(
                        c.slices.kind(root as usize),
                        Category::CpuOp | Category::PythonFunction
                    )
                {
                    continue;
                }
                let kind = c.slices.kind(i as usize);
                let name = c.strings.get(c.slices.name[i as usize]);
                if matches!(kind, Category::CpuOp | Category::UserAnnotation)
                    || is_launch_call(kind, name)
                {
                    // Mark it and its ancestors in the window as needed.
                    let mut k = i;
                    while k != NO_SLICE && inside(k) && needed.insert(k) {
                        k = c.slices.parent[k as usize];
                    }
                }
                keep.push(i);
            }
            for &i in &keep {
                if !needed.contains(&i) {
                    t.pruned += 1;
                    continue;
                }
                let th = *thread_of.entry(tid as u32).or_insert_with(|| {
                    t.threads.push(tr.name);
                    (t.threads.len() - 1) as u32
                });
                let iu = i as usize;
                let name = c.slices.name[iu];
                let idx = t.slices.len() as u32;
                t.slices.push(TemplateSlice {
                    thread: th,
                    start: c.slices.start[iu],
                    end: c.slices.end(iu),
                    name: sm.get(b, name),
                    cat: sm.get(b, c.slices.cat(iu)),
                    args: sm.args(b, c.slices.args[iu]),
                });
                if is_launch_call(c.slices.kind(iu), c.strings.get(name)) {
                    let kernel = kernel_key
                        .and_then(|k| c.args.get(c.slices.args[iu], k, &c.strings))
                        .and_then(|v| match v {
                            ArgValue::Str(s) => Some(sm.get(b, s)),
                            _ => None,
                        })
                        .unwrap_or(StrId::EMPTY);
                    calls.push((c.slices.start[iu], idx));
                    t.call_names.push((sm.get(b, name), kernel));
                }
            }
        }
        // Threads' names, in the builder.
        for n in &mut t.threads {
            *n = sm.get(b, *n);
        }
        // Calls in start order across threads (stable: a thread's own order is kept).
        let mut order: Vec<usize> = (0..calls.len()).collect();
        order.sort_by_key(|&k| calls[k].0);
        t.calls = order.iter().map(|&k| calls[k].1).collect();
        t.call_names = order.iter().map(|&k| t.call_names[k]).collect();
        out.push(t);
    }
    out
}
