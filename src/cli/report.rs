//! What every headless command shares: finding the captures, loading them a few at a time,
//! printing text or JSON, and the exit code from what failed.

use super::load;
use super::text::clean;
use crate::discover::{self, CaptureFile, Catalog};
use crate::formats::LoadError;
use crate::model::Capture;
use serde::Serialize;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// `--quiet`: warnings and notes are not printed (errors are).
static QUIET: AtomicBool = AtomicBool::new(false);

/// Silences (or not) [`warn`] and [`note`] for this run.
pub(super) fn set_quiet(q: bool) {
    QUIET.store(q, Ordering::Relaxed);
}

/// Prints `tracetui: warning: MSG` on stderr unless `--quiet`. The caller passes clean text.
pub(super) fn warn(msg: &str) {
    if !QUIET.load(Ordering::Relaxed) {
        eprintln!("tracetui: warning: {msg}");
    }
}

/// Prints `tracetui: note: MSG` on stderr unless `--quiet`. The caller passes clean text.
pub(super) fn note(msg: &str) {
    if !QUIET.load(Ordering::Relaxed) {
        eprintln!("tracetui: note: {msg}");
    }
}

/// Worker threads used to load captures (the target machines have 2 cores; memory stays at two
/// loaded captures).
pub(super) const LOAD_THREADS: usize = 2;

/// Output of a command run by `tracetui mcp`: what [`emit`] and [`fail`] wrote, kept instead of
/// printed (stdout is the MCP channel there).
/// The JSON value [`to_json`] was given, kept as it is.
type Sink = (String, Vec<String>, Option<serde_json::Value>);
static SINK: Mutex<Option<Sink>> = Mutex::new(None);

/// Runs `f` with [`emit`], [`fail`] and [`to_json`] kept: (exit code, stdout text, error
/// messages, the JSON value).
pub(super) fn capture_output(f: impl FnOnce() -> i32) -> (i32, Sink) {
    if let Ok(mut g) = SINK.lock() {
        *g = Some((String::new(), Vec::new(), None));
    }
    let code = f();
    let kept = SINK
        .lock()
        .ok()
        .and_then(|mut g| g.take())
        .unwrap_or_default();
    (code, kept)
}

/// Keeps `s` in the sink when one is set; `false` when none is.
fn sink(s: &str, error: bool) -> bool {
    match SINK.lock() {
        Ok(mut g) => match g.as_mut() {
            Some((out, errs, _)) => {
                if error {
                    errs.push(s.to_string());
                } else {
                    out.push_str(s);
                }
                true
            }
            None => false,
        },
        Err(_) => false,
    }
}

pub(super) fn fail(msg: &str) -> i32 {
    if sink(msg, true) {
        return 1;
    }
    eprintln!("tracetui: error: {msg}");
    1
}

/// Discovers captures; prints problems to stderr. `Err(code)` when nothing can be loaded.
pub(super) fn catalog(path: &Path) -> Result<Catalog, i32> {
    let cat = match discover::discover(path) {
        Ok(c) => c,
        Err(e) => return Err(fail(&clean(&e.to_string()))),
    };
    for (p, why) in &cat.problems {
        warn(&format!(
            "{}: {}",
            clean(&p.display().to_string()),
            clean(why)
        ));
    }
    if cat.is_empty() {
        return Err(fail(&format!(
            "{}: no captures found (looked for *.xplane.pb, *.pt.trace.json[.gz] and Chrome trace \
             JSON)",
            clean(&path.display().to_string())
        )));
    }
    Ok(cat)
}

/// Writes `s` to stdout; a closed pipe (`| head`) is not an error.
pub(super) fn emit(s: &str) -> Result<(), i32> {
    if sink(s, false) {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(s.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(0),
        Err(e) => Err(fail(&format!("cannot write output: {e}"))),
    }
}

pub(super) fn to_json<T: Serialize>(v: &T) -> String {
    // Under `tracetui mcp` the value itself is kept: floats stay exact (no text round trip).
    if let Ok(mut g) = SINK.lock()
        && let Some(s) = g.as_mut()
    {
        s.2 = serde_json::to_value(v).ok();
        return String::new();
    }
    serde_json::to_string_pretty(v).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}")) + "\n"
}

/// Exit code after loading: 1 when every capture failed, else 0; failures listed on stderr.
pub(super) fn finish<'a>(
    errors: impl Iterator<Item = (&'a str, Option<&'a String>)>,
    total: usize,
) -> i32 {
    let mut failed = 0;
    for (_, e) in errors {
        if let Some(e) = e {
            failed += 1;
            eprintln!("tracetui: error: {}", clean(e));
        }
    }
    if failed == total {
        1
    } else {
        if failed > 0 {
            eprintln!("tracetui: {failed} of {total} captures could not be loaded");
        }
        0
    }
}

pub(super) fn captures(cat: &Catalog) -> Vec<&CaptureFile> {
    cat.captures().collect()
}

#[derive(Serialize)]
pub(super) struct Problem {
    pub(super) path: String,
    pub(super) message: String,
}

pub(super) fn problems(cat: &Catalog) -> Vec<Problem> {
    cat.problems
        .iter()
        .map(|(p, m)| Problem {
            path: p.display().to_string(),
            message: m.clone(),
        })
        .collect()
}

/// Runs `per_capture` on every capture found under `path` (loaded [`LOAD_THREADS`] at a time),
/// prints the reports — JSON `{"captures": […], "problems": […]}`, or each report's `text`
/// separated by blank lines — and returns the exit code from each report's (path, error).
pub(super) fn report<T, F>(
    path: &Path,
    json: bool,
    per_capture: F,
    text: fn(&T) -> String,
    outcome: fn(&T) -> (&str, Option<&String>),
) -> i32
where
    T: Serialize + Send,
    F: Fn(&CaptureFile, Result<std::sync::Arc<Capture>, LoadError>) -> T + Sync,
{
    let cat = match catalog(path) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let caps = captures(&cat);
    let reports = load::map_loaded(&caps, LOAD_THREADS, per_capture);
    let printed = if json {
        #[derive(Serialize)]
        struct Out<'a, T> {
            captures: &'a [T],
            problems: Vec<Problem>,
        }
        emit(&to_json(&Out {
            captures: &reports,
            problems: problems(&cat),
        }))
    } else {
        let texts: Vec<String> = reports.iter().map(text).collect();
        emit(&texts.join("\n"))
    };
    if let Err(code) = printed {
        return code;
    }
    finish(reports.iter().map(outcome), reports.len())
}

/// The one capture `path` names (a file, or a dir holding exactly one capture).
pub(super) fn one_capture(label: &str, path: &Path) -> Result<CaptureFile, i32> {
    let cat = catalog(path)?;
    let caps = captures(&cat);
    match caps.as_slice() {
        [one] => Ok((*one).clone()),
        many => {
            let list: Vec<String> = many
                .iter()
                .take(5)
                .map(|c| clean(&c.path.display().to_string()).into_owned())
                .collect();
            Err(fail(&format!(
                "{label}: {} holds {} captures; name one file ({}{})",
                clean(&path.display().to_string()),
                many.len(),
                list.join(", "),
                if many.len() > 5 { ", …" } else { "" }
            )))
        }
    }
}

/// The one capture `path` names ([`one_capture`]), loaded (or taken from the kept captures);
/// failures are reported and their exit code returned.
pub(super) fn one_loaded(
    label: &str,
    path: &Path,
) -> Result<(CaptureFile, std::sync::Arc<crate::ui::loader::Loaded>), i32> {
    let cap = one_capture(label, path)?;
    match load::with_loaded(&cap) {
        Ok(l) => Ok((cap, l)),
        Err(e) => Err(fail(&clean(&e.to_string()))),
    }
}

/// The install command that adds `feature` to tracetui (the help and the feature message say it).
#[cfg(not(all(feature = "export", feature = "sql", feature = "cloud")))]
pub(super) fn install_hint(feature: &str) -> String {
    format!(
        "cargo install tracetui --features {feature}  (in a checkout: cargo install --path . --features {feature})"
    )
}

/// Says that `what` needs the opt-in cargo `feature` this binary was built without and how to
/// get it; exit code 2 (usage), as for an unknown option.
#[cfg(not(all(feature = "export", feature = "sql", feature = "cloud")))]
pub(super) fn feature_missing(what: &str, feature: &str) -> i32 {
    eprintln!(
        "tracetui: error: {what} needs the `{feature}` feature, which this build leaves out (the \
         default build is the lean explorer).\n  install it with: {}",
        install_hint(feature)
    );
    2
}
