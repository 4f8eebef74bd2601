//! The merge itself: which capture each graph launch of the replay takes, the alignment of
//! each, the warnings and notes, then the rebuild (`graft`).

use super::align;
use super::details::{CaptureEntry, DETAILS_FILE, pick, read_details};
use super::graft::{self, Graft};
use super::replay;
use super::template::{self, Template};
use crate::formats::chrome;
use crate::formats::progress::Progress;
use crate::model::{Capture, CaptureBuilder, Format, SourceInfo, Warning};
use rustc_hash::FxHashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The folder name looked for beside a trace.
pub const FOLDER: &str = "capture_traces";

static CAPTURE_DIR: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Sets the capture folder given by `--capture DIR` (for every trace loaded after).
pub fn set_capture_dir(dir: Option<PathBuf>) {
    if let Ok(mut d) = CAPTURE_DIR.lock() {
        *d = dir;
    }
}

/// The capture folder that applies to trace `path`: `--capture DIR`, else `capture_traces/`
/// beside the trace when it holds an `execution_details.json`.
pub fn capture_dir_for(path: &Path) -> Option<PathBuf> {
    if let Some(d) = CAPTURE_DIR.lock().ok().and_then(|d| d.clone()) {
        return Some(d);
    }
    let d = path.parent()?.join(FOLDER);
    d.join(DETAILS_FILE).is_file().then_some(d)
}

/// True when `path` is itself one of the capture traces (it is not merged into itself).
fn is_capture_trace(path: &Path, dir: &Path) -> bool {
    match (path.parent().map(Path::canonicalize), dir.canonicalize()) {
        (Some(Ok(p)), Ok(d)) => p == d,
        _ => false,
    }
}

/// Merges the capture folder that applies to `path` (see [`capture_dir_for`]) into `cap`;
/// `cap` unchanged when none applies or it is not a Kineto/Chrome capture.
pub fn merge_beside(path: &Path, cap: Capture) -> Capture {
    if !matches!(cap.format, Some(Format::Kineto | Format::Chrome)) {
        return cap;
    }
    match capture_dir_for(path) {
        Some(dir) if !is_capture_trace(path, &dir) => merge(cap, &dir),
        _ => cap,
    }
}

/// A name for a message: control characters replaced, long (templated kernel) names cut.
fn short(s: &str) -> String {
    crate::text::fit(&crate::text::sanitize(s), 100).into_owned()
}

fn warning(kind: &'static str, message: String) -> Warning {
    Warning {
        kind,
        count: 1,
        message,
    }
}

/// Counted warnings: the first message of each kind, and how many.
#[derive(Default)]
struct Warns(Vec<Warning>);

impl Warns {
    fn add(&mut self, kind: &'static str, message: String) {
        match self.0.iter_mut().find(|w| w.kind == kind) {
            Some(w) => w.count += 1,
            None => self.0.push(warning(kind, message)),
        }
    }
}

/// A capture trace loaded and cut into templates, once per file.
fn load_templates(e: &CaptureEntry, b: &mut CaptureBuilder) -> Result<Vec<Template>, String> {
    let c = chrome::load(&e.file, SourceInfo::default(), &Progress::default())
        .map_err(|err| format!("{}: {err}", e.file.display()))?;
    let t = template::templates(&c, b);
    if t.is_empty() {
        return Err(format!(
            "{}: no StreamBeginCapture/StreamEndCapture window",
            e.file.display()
        ));
    }
    Ok(t)
}

/// Merges capture folder `dir` into replay capture `replay` (see the module doc). Whatever
/// does not match is said in warnings (`graph_capture*`) and the rest still merges.
pub fn merge(mut replay: Capture, dir: &Path) -> Capture {
    let (entries, skipped) = match read_details(dir) {
        Ok(x) => x,
        Err(e) => {
            replay.warnings.push(warning(
                "graph_capture",
                format!("capture folder not used: {e}"),
            ));
            return replay;
        }
    };
    let mut w = Warns::default();
    for s in skipped {
        w.add("graph_capture", s);
    }
    let launches = replay::launches(&replay);
    let why = if launches.is_empty() {
        Some("the trace has no graph launch")
    } else if !graft::rebuildable(&replay) {
        Some("two tracks of the trace share a key, it cannot be rebuilt")
    } else {
        None
    };
    if let Some(why) = why {
        replay.warnings.push(warning(
            "graph_capture",
            format!("capture folder {} not used: {why}", dir.display()),
        ));
        return replay;
    }
    let steps = replay::steps(&replay, &launches);
    let mut b = CaptureBuilder::new();
    b.strings = std::mem::take(&mut replay.strings);
    b.args = std::mem::take(&mut replay.args);
    let zero = replay.time_zero();
    let starts = &replay.slices.start;
    let at = |s: u32| {
        let ps = starts[s as usize] - zero;
        format!("{:.3} ms", ps as f64 / 1e9)
    };
    let names = &replay.slices.name;
    let launch_name = |strings: &crate::model::Interner, l: &replay::Launch| {
        format!(
            "{} at {}",
            short(strings.get(names[l.slice as usize])),
            at(l.slice)
        )
    };
    let mut loaded: FxHashMap<PathBuf, Result<Vec<Template>, String>> = FxHashMap::default();
    // (launch index, entry, window index, pairs, method, first difference)
    let mut chosen: Vec<(usize, CaptureEntry, usize, align::Alignment)> = Vec::new();
    let mut in_step = vec![false; launches.len()];
    for st in &steps {
        if st.launches.is_empty() {
            continue;
        }
        for &l in &st.launches {
            in_step[l] = true;
        }
        let step_name = short(b.strings.get(replay.slices.name[st.slice as usize]));
        let e = match pick(&entries, st.batch_size, st.launches.len()) {
            Ok(e) => e.clone(),
            Err(msg) => {
                w.add(
                    "graph_capture_missing",
                    format!(
                        "{} at {}: {msg}; its {} graph launch(es) not merged",
                        step_name,
                        at(st.slice),
                        st.launches.len()
                    ),
                );
                continue;
            }
        };
        let t = loaded
            .entry(e.file.clone())
            .or_insert_with(|| load_templates(&e, &mut b));
        let t = match t {
            Ok(t) => t,
            Err(msg) => {
                w.add(
                    "graph_capture_missing",
                    format!(
                        "graph bs={} {} for {}: {msg}",
                        e.batch_size, e.mode, step_name
                    ),
                );
                continue;
            }
        };
        let windows: Vec<usize> = if t.len() == 1 {
            vec![0; st.launches.len()]
        } else if t.len() == st.launches.len() {
            (0..t.len()).collect()
        } else {
            w.add(
                "graph_capture_mismatch",
                format!(
                    "{} at {}: {} graph launches, but capture bs={} {} has {} captured graphs; not merged",
                    step_name,
                    at(st.slice),
                    st.launches.len(),
                    e.batch_size,
                    e.mode,
                    t.len()
                ),
            );
            continue;
        };
        for (&l, k) in st.launches.iter().zip(windows) {
            let tm = &t[k];
            let calls = tm.capture_calls(&b);
            let replayed: Vec<align::Replayed> = launches[l]
                .kernels
                .iter()
                .map(|&s| align::Replayed {
                    name: b.strings.get(replay.slices.name[s as usize]),
                    stream: replay.track_of(s),
                })
                .collect();
            let a = align::align(&calls, &replayed);
            chosen.push((l, e.clone(), k, a));
        }
    }
    let outside = in_step.iter().filter(|&&x| !x).count();
    if outside > 0 {
        let first = in_step
            .iter()
            .position(|&x| !x)
            .map(|k| launch_name(&b.strings, &launches[k]));
        w.add(
            "graph_capture_missing",
            format!(
                "{outside} graph launch(es) lie in no serving iteration annotation (vLLM execute_…, SGLang step[…], ATOM, xDiT) whose batch size picks a capture; not merged (first: {})",
                first.unwrap_or_default()
            ),
        );
    }
    // Notes, warnings, and the grafts.
    let mut notes = Vec::new();
    let mut grafts: Vec<Graft> = Vec::new();
    for (l, e, k, a) in &chosen {
        let ln = &launches[*l];
        let file = e
            .file
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let label = format!("bs={} {}", e.batch_size, e.mode);
        let n = ln.kernels.len();
        let mut note = format!(
            "{}: {label} ({file}, graph #{k}), {}/{n} kernels matched ({})",
            launch_name(&b.strings, ln),
            a.pairs.len(),
            a.method.name()
        );
        if a.pairs.len() < n {
            let mut paired = vec![false; n];
            for &(_, g) in &a.pairs {
                paired[g as usize] = true;
            }
            let missing: Vec<String> = (0..n)
                .filter(|&g| !paired[g])
                .take(5)
                .map(|g| {
                    let name = b.strings.get(replay.slices.name[ln.kernels[g] as usize]);
                    format!("#{g} {}", short(name))
                })
                .collect();
            let more = n - a.pairs.len() - missing.len();
            note.push_str(&format!(
                "; unmatched: {}{}",
                missing.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            ));
            w.add(
                "graph_capture_mismatch",
                format!(
                    "{}: kernel sequence differs from capture {label} ({file}): {}; {}/{n} kernels matched, the rest stay with the graph launch",
                    launch_name(&b.strings, ln),
                    a.first_difference.clone().unwrap_or_default(),
                    a.pairs.len()
                ),
            );
        }
        notes.push(note);
        if let Some(Ok(t)) = loaded.get(&e.file) {
            grafts.push(Graft {
                launch: ln.slice,
                track: ln.track,
                template: &t[*k],
                label,
                pairs: a
                    .pairs
                    .iter()
                    .map(|&(c, g)| (c, ln.kernels[g as usize]))
                    .collect(),
            });
        }
    }
    let mut kernel_launch: Vec<(u32, u32)> = launches
        .iter()
        .flat_map(|l| l.kernels.iter().map(move |&k| (k, l.slice)))
        .collect();
    kernel_launch.sort_unstable();
    let mut cap = graft::rebuild(b, replay, &grafts, kernel_launch, notes);
    cap.warnings.extend(w.0);
    cap
}
