//! `tracetui cache`: what the capture cache holds (`formats::cache`), and `--clear`.

use super::report::{emit, to_json};
use super::text;
use crate::formats::cache;
use clap::Args;
use serde::Serialize;

/// Arguments of `cache`.
#[derive(Args, Debug)]
pub struct CacheArgs {
    /// Delete every entry
    #[arg(long)]
    pub clear: bool,
    /// Print JSON (`{"dir", "entries": [{trace, current, bytes, idle_s, file}], "bytes"}`)
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct Listing {
    dir: Option<String>,
    entries: Vec<cache::EntryInfo>,
    bytes: u64,
}

/// Runs `tracetui cache`.
pub fn cmd_cache(a: &CacheArgs) -> i32 {
    let dir = cache::dir();
    if a.clear {
        let n = cache::clear();
        let msg = match &dir {
            Some(d) => format!("removed {n} cache files from {}\n", d.display()),
            None => "the capture cache is off (TRACETUI_CACHE=off or no home directory)\n".into(),
        };
        return emit(&msg).map_or_else(|c| c, |()| 0);
    }
    let entries = cache::entries();
    let bytes = entries.iter().map(|e| e.bytes).sum();
    let out = if a.json {
        to_json(&Listing {
            dir: dir.as_ref().map(|d| d.display().to_string()),
            entries,
            bytes,
        })
    } else {
        let mut s = match &dir {
            Some(d) => format!(
                "capture cache {}: {} entries, {:.1} MB (TRACETUI_CACHE=off disables it; --clear empties it)\n",
                text::clean(&d.display().to_string()),
                entries.len(),
                bytes as f64 / 1e6
            ),
            None => "the capture cache is off (TRACETUI_CACHE=off or no home directory)\n".into(),
        };
        for e in &entries {
            s.push_str(&format!(
                "  {:>9.1} MB  used {:>6} ago  {}{}\n",
                e.bytes as f64 / 1e6,
                ago(e.idle_s),
                text::clean(&e.trace.display().to_string()),
                if e.current {
                    ""
                } else {
                    "  (stale: trace changed or gone)"
                }
            ));
        }
        s
    };
    emit(&out).map_or_else(|c| c, |()| 0)
}

fn ago(s: u64) -> String {
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86400 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86400),
    }
}
