//! Object-store paths on the command line: every command's PATH may be `gs://…`, `s3://…`,
//! `az://…` or `https://…`; it is mirrored locally (see [`crate::remote`]) and the command runs
//! on the mirror. The explorer and `watch` keep polling the listing.

use super::{Cli, Command};
use std::path::PathBuf;

/// The PATH argument of the command line.
fn path_mut(cli: &mut Cli) -> Option<&mut PathBuf> {
    match &mut cli.command {
        Some(Command::Summary(a)) => Some(&mut a.path),
        Some(Command::Stats(a)) => Some(&mut a.path),
        Some(Command::Rank(a)) => Some(&mut a.path),
        Some(Command::Gpu(a)) => Some(&mut a.path),
        Some(Command::Search(a)) => Some(&mut a.path),
        Some(Command::Watch(a)) => Some(&mut a.path),
        Some(Command::Nested(a)) => Some(&mut a.path),
        Some(Command::Export(a)) => Some(&mut a.path),
        Some(Command::Sql(a)) => a.path.as_mut(),
        Some(Command::Stacks(a)) => Some(&mut a.path),
        Some(Command::Memory(a)) => Some(&mut a.path),
        Some(Command::Steps(a)) => Some(&mut a.path),
        Some(Command::Critical(a)) => Some(&mut a.path),
        Some(Command::Ranks(a)) => Some(&mut a.steps.path),
        Some(Command::Roofline(a)) => Some(&mut a.path),
        Some(Command::Advise(a)) => Some(&mut a.path),
        Some(Command::Event(a)) => Some(&mut a.path),
        Some(Command::Window(a)) => Some(&mut a.path),
        Some(Command::Cache(_))
        | Some(Command::Capture(_))
        | Some(Command::Mcp(_))
        | Some(Command::Diff(_))
        | Some(Command::Completions(_))
        | Some(Command::Man) => None,
        None => cli.path.as_mut(),
    }
}

#[cfg(feature = "cloud")]
/// Seconds between listings when a remote log dir is watched (`TRACETUI_REMOTE_POLL_SECS`).
fn poll_every() -> std::time::Duration {
    let s = std::env::var("TRACETUI_REMOTE_POLL_SECS")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v >= 0.1)
        .unwrap_or(10.0);
    std::time::Duration::from_secs_f64(s)
}

/// When PATH is an object-store URL: syncs its mirror, points PATH at it and, for the explorer
/// and `watch`, starts polling the listing. `Err(exit code)` when the location cannot be read.
pub fn localize(cli: &mut Cli) -> Result<(), i32> {
    let live = matches!(cli.command, None | Some(Command::Watch(_)));
    let Some(path) = path_mut(cli) else {
        return Ok(());
    };
    let text = path.to_string_lossy().into_owned();
    if !crate::remote::is_url(&text) {
        return Ok(());
    }
    sync(path, &text, live)
}

#[cfg(feature = "cloud")]
fn sync(path: &mut PathBuf, url: &str, live: bool) -> Result<(), i32> {
    use super::text::clean;
    let mut m = crate::remote::Mirror::new(url).map_err(|e| super::fail(&clean(&e)))?;
    let rep = m.sync().map_err(|e| super::fail(&clean(&e)))?;
    for (k, why) in &rep.problems {
        super::report::warn(&format!("{}: {}", clean(k), clean(why)));
    }
    if rep.fetched > 0 {
        eprintln!(
            "tracetui: {}: fetched {} capture(s), {} ({} current, {} listed)",
            clean(url),
            rep.fetched,
            super::text::bytes(rep.fetched_bytes),
            rep.current,
            rep.listed
        );
    }
    *path = m.local_path();
    if live {
        let every = poll_every();
        std::thread::spawn(move || {
            loop {
                std::thread::sleep(every);
                // Failures of one poll are retried at the next; the watcher sees the files.
                let _ = m.sync();
            }
        });
    }
    Ok(())
}

#[cfg(not(feature = "cloud"))]
fn sync(_: &mut PathBuf, url: &str, _: bool) -> Result<(), i32> {
    Err(super::report::feature_missing(
        &format!("the object-store path {}", super::text::clean(url)),
        "cloud",
    ))
}
