//! A local mirror of the captures of an object-store log dir: the listing is filtered with the
//! discovery's file-name rules, new or changed objects are fetched with parallel ranged GETs
//! (written under a hidden name, then renamed into place with the object's modification time),
//! and objects gone from the listing are removed. Syncing again fetches only what changed, so
//! polling it is how a remote log dir is watched.

use super::location::{Location, open, runtime};
use crate::discover::{NameKind, classify};
use futures::StreamExt;
use object_store::path::Path as ObjPath;
use object_store::{ObjectMeta, ObjectStoreExt};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Bytes per ranged GET.
pub const CHUNK: u64 = 8 << 20;
/// Ranged GETs in flight per object.
pub const PARALLEL_GETS: usize = 4;
/// Bytes fetched to decide whether a `.json[.gz]` of another name is a trace.
const SNIFF_GET: u64 = 64 << 10;
/// The mirror's record of what it holds (hidden: discovery skips it).
const STATE: &str = ".tracetui-remote.json";

/// What the mirror knows of one object.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Seen {
    size: u64,
    etag: Option<String>,
    modified_ms: i64,
    /// False for a `.json` whose first bytes are not a trace (not fetched).
    trace: bool,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    objects: BTreeMap<String, Seen>,
}

/// What one sync did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// Objects listed below the prefix.
    pub listed: usize,
    /// Captures fetched (new or changed).
    pub fetched: usize,
    /// Bytes fetched.
    pub fetched_bytes: u64,
    /// Captures removed (gone from the listing).
    pub removed: usize,
    /// Captures already current.
    pub current: usize,
    /// Objects that could not be fetched: (key, why).
    pub problems: Vec<(String, String)>,
}

/// A local mirror of an object-store log dir or capture.
#[derive(Debug)]
pub struct Mirror {
    loc: Location,
    dir: PathBuf,
    /// `Some(name)` when the URL names one object (its file name in `dir`).
    single: Option<String>,
    rt: tokio::runtime::Runtime,
}

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The mirror directory of `url`: `<cache dir>/remote/<hash>` (see `tracetui cache`), or a
/// directory under the system temp dir when caching is off.
pub fn mirror_dir(url: &str) -> PathBuf {
    let base =
        crate::formats::cache::dir().unwrap_or_else(|| std::env::temp_dir().join("tracetui"));
    base.join("remote")
        .join(format!("{:016x}", fnv(url.trim_end_matches('/'))))
}

/// The local relative path of an object key below the prefix, when it is a safe one.
fn relative(prefix: &ObjPath, key: &ObjPath) -> Option<String> {
    let parts: Vec<String> = key
        .prefix_match(prefix)?
        .map(|p| p.as_ref().to_string())
        .collect();
    if parts.is_empty()
        || parts
            .iter()
            .any(|p| p.is_empty() || p == "." || p == ".." || p.contains('\\'))
    {
        return None;
    }
    Some(parts.join("/"))
}

/// True when the discovery could take a file of this relative path (hidden and temporary
/// entries and other file types are never fetched).
fn wanted(rel: &str) -> bool {
    let mut parts = rel.split('/');
    let name = parts.next_back().unwrap_or("");
    !rel.split('/').any(|p| p.starts_with('.')) && classify(name) != NameKind::Ignored
}

impl Mirror {
    /// Opens `url` (see [`super::location::open`]) with its mirror directory.
    pub fn new(url: &str) -> Result<Mirror, String> {
        let loc = open(url)?;
        Ok(Mirror {
            dir: mirror_dir(url),
            loc,
            single: None,
            rt: runtime()?,
        })
    }

    /// The local path to hand to discovery: the mirror directory, or the mirrored file when the
    /// URL names one object.
    pub fn local_path(&self) -> PathBuf {
        match &self.single {
            Some(n) => self.dir.join(n),
            None => self.dir.clone(),
        }
    }

    /// The URL.
    pub fn url(&self) -> &str {
        &self.loc.url
    }

    fn state(&self) -> State {
        std::fs::read(self.dir.join(STATE))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    fn save(&self, s: &State) -> Result<(), String> {
        let tmp = self.dir.join(format!("{STATE}.tmp"));
        let text = serde_json::to_vec(s).map_err(|e| e.to_string())?;
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, self.dir.join(STATE)))
            .map_err(|e| format!("{}: {e}", self.dir.display()))
    }

    /// Lists the location: every object below the prefix, or the one object it names.
    async fn list(&self) -> Result<(Vec<(String, ObjectMeta)>, Option<String>), String> {
        let loc = &self.loc;
        let mut out = Vec::new();
        if !loc.http {
            let mut s = loc.store.list(Some(&loc.prefix));
            while let Some(m) = s.next().await {
                let m = m.map_err(|e| format!("{}: cannot list: {e}", loc.url))?;
                if let Some(rel) = relative(&loc.prefix, &m.location) {
                    out.push((rel, m));
                }
            }
            if !out.is_empty() {
                return Ok((out, None));
            }
        }
        // No objects below it: the URL names one object (always so for http(s)).
        match loc.store.head(&loc.prefix).await {
            Ok(m) => {
                // Mirrored under its whole key, so that run names come from its directories
                // (`…/plugins/profile/<session>/`) as for a local file.
                let name = relative(&ObjPath::default(), &loc.prefix)
                    .ok_or_else(|| format!("{}: not a usable object key", loc.url))?;
                Ok((vec![(name.clone(), m)], Some(name)))
            }
            Err(object_store::Error::NotFound { .. }) if loc.http => Err(format!(
                "{}: not found (https:// names single capture files: a directory cannot be \
                 listed over plain HTTPS, which has no listing; WebDAV's PROPFIND would be needed)",
                loc.url
            )),
            Err(object_store::Error::NotFound { .. }) => Ok((Vec::new(), None)),
            Err(e) => Err(format!("{}: {e}", loc.url)),
        }
    }

    /// Fetches `m` into `dest` with parallel ranged GETs (hidden temporary name, renamed into
    /// place, modification time set to the object's).
    async fn fetch(&self, m: &ObjectMeta, dest: &Path) -> Result<(), String> {
        let dir = dest.parent().unwrap_or(&self.dir);
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let name = dest
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = dir.join(format!(".{name}.{}.part", std::process::id()));
        let file = std::fs::File::create(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
        file.set_len(m.size)
            .map_err(|e| format!("{}: {e}", tmp.display()))?;
        let store = &self.loc.store;
        let ranges: Vec<std::ops::Range<u64>> = (0..m.size.div_ceil(CHUNK))
            .map(|k| k * CHUNK..((k + 1) * CHUNK).min(m.size))
            .collect();
        let mut gets = futures::stream::iter(ranges)
            .map(|r| async move {
                let start = r.start;
                store.get_range(&m.location, r).await.map(|b| (start, b))
            })
            .buffer_unordered(PARALLEL_GETS);
        let mut result = Ok(());
        while let Some(got) = gets.next().await {
            match got {
                Ok((at, bytes)) => {
                    if let Err(e) = file.write_all_at(&bytes, at) {
                        result = Err(format!("{}: {e}", tmp.display()));
                        break;
                    }
                }
                Err(e) => {
                    result = Err(format!("{}: {e}", m.location));
                    break;
                }
            }
        }
        let modified = SystemTime::UNIX_EPOCH
            + Duration::from_millis(m.last_modified.timestamp_millis().max(0) as u64);
        let result = result
            .and_then(|()| file.set_modified(modified).map_err(|e| e.to_string()))
            .and_then(|()| {
                std::fs::rename(&tmp, dest).map_err(|e| format!("{}: {e}", dest.display()))
            });
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result
    }

    /// True when the first bytes of a `.json[.gz]` object look like a Chrome / Kineto trace.
    async fn sniff(&self, m: &ObjectMeta) -> Result<bool, String> {
        let head = self
            .loc
            .store
            .get_range(&m.location, 0..m.size.min(SNIFF_GET))
            .await
            .map_err(|e| format!("{}: {e}", m.location))?;
        let tmp = self.dir.join(format!(".sniff.{}.tmp", std::process::id()));
        std::fs::write(&tmp, &head).map_err(|e| format!("{}: {e}", tmp.display()))?;
        let r = crate::discover::sniff(&tmp);
        let _ = std::fs::remove_file(&tmp);
        Ok(matches!(r, Ok(Some(_))))
    }

    /// Brings the mirror up to date with the listing.
    pub fn sync(&mut self) -> Result<SyncReport, String> {
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| format!("{}: cannot create: {e}", self.dir.display()))?;
        let mut state = self.state();
        let (listed, single) = self.rt.block_on(self.list())?;
        self.single = single;
        let mut rep = SyncReport {
            listed: listed.len(),
            ..SyncReport::default()
        };
        let mut keep: BTreeMap<String, Seen> = BTreeMap::new();
        for (rel, m) in &listed {
            if !wanted(rel) {
                continue;
            }
            let seen = Seen {
                size: m.size,
                etag: m.e_tag.clone(),
                modified_ms: m.last_modified.timestamp_millis(),
                trace: true,
            };
            let dest = self.dir.join(rel);
            let old = state.objects.get(rel);
            if let Some(o) = old
                && (Seen {
                    trace: o.trace,
                    ..seen.clone()
                }) == *o
                && (!o.trace || dest.exists())
            {
                keep.insert(rel.clone(), o.clone());
                rep.current += usize::from(o.trace);
                continue;
            }
            let kind = classify(rel.rsplit('/').next().unwrap_or(""));
            if kind == NameKind::Riegeli {
                // Not supported: an empty stand-in lets the discovery report it by name.
                let made = dest
                    .parent()
                    .map_or(Ok(()), std::fs::create_dir_all)
                    .and_then(|()| std::fs::write(&dest, b""));
                if let Err(e) = made {
                    rep.problems.push((rel.clone(), e.to_string()));
                } else {
                    keep.insert(rel.clone(), seen);
                }
                continue;
            }
            if matches!(kind, NameKind::MaybeJson { .. }) {
                match self.rt.block_on(self.sniff(m)) {
                    Ok(true) => {}
                    Ok(false) => {
                        keep.insert(
                            rel.clone(),
                            Seen {
                                trace: false,
                                ..seen
                            },
                        );
                        continue;
                    }
                    Err(e) => {
                        rep.problems.push((rel.clone(), e));
                        continue;
                    }
                }
            }
            match self.rt.block_on(self.fetch(m, &dest)) {
                Ok(()) => {
                    rep.fetched += 1;
                    rep.fetched_bytes += m.size;
                    keep.insert(rel.clone(), seen);
                }
                Err(e) => rep.problems.push((rel.clone(), e)),
            }
        }
        for (rel, o) in &state.objects {
            if !keep.contains_key(rel) && o.trace && !rep.problems.iter().any(|p| &p.0 == rel) {
                let _ = std::fs::remove_file(self.dir.join(rel));
                rep.removed += 1;
            }
        }
        state.objects = keep;
        self.save(&state)?;
        Ok(rep)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_below_the_prefix_map_to_safe_relative_paths() {
        let p = ObjPath::from("logs/run");
        assert_eq!(
            relative(&p, &ObjPath::from("logs/run/plugins/profile/s/h.xplane.pb")).as_deref(),
            Some("plugins/profile/s/h.xplane.pb")
        );
        assert_eq!(relative(&p, &ObjPath::from("logs/runx/a.json")), None);
        assert!(wanted("plugins/profile/s/h.xplane.pb.gz"));
        assert!(wanted("w0.123.pt.trace.json.gz"));
        assert!(wanted("x/other.json"));
        assert!(!wanted("x/.hidden/h.xplane.pb"));
        assert!(!wanted("x/events.tfevents.1"));
        assert!(!wanted("x/a.xplane.pb.tmp"));
    }
}
