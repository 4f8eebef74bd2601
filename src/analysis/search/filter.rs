//! Prefix filters resolved against one capture: which tracks and categories pass, and the arg
//! tests run per event (lazily, only for events of names the text already matched).
//!
//! Values compare as ASCII-case-insensitive substrings (`cat:kern` finds `kernel`); arg keys
//! compare exactly. Arg values are tested on their displayed form, without allocating for
//! string values.

use super::query::Filter;
use crate::model::{ArgValue, Capture, Category, StrId};
use std::fmt::Write;

/// Class id given to XPlane aggregated (untimed) events, which have no category.
pub const NO_CLASS: u16 = u16::MAX;

/// One `arg:` test.
#[derive(Clone, Debug)]
struct ArgTest {
    /// The interned key; `None` when no event has that key (nothing can match).
    key: Option<StrId>,
    /// Lower-cased value part, if any.
    value: Option<String>,
}

/// Filters of a query, resolved for one capture.
#[derive(Clone, Debug, Default)]
pub struct EventFilter {
    /// Per track: passes every `track:` / `proc:` filter (`None`: no such filter).
    tracks: Option<Vec<bool>>,
    /// Per slice class: passes every `cat:` filter (`None`: no such filter).
    classes: Option<Vec<bool>>,
    args: Vec<ArgTest>,
}

/// ASCII-case-insensitive substring test; `needle` must be lower-case already.
pub fn contains_ci(hay: &str, needle: &str) -> bool {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    n.is_empty()
        || h.windows(n.len())
            .any(|w| w.iter().zip(n).all(|(a, b)| a.to_ascii_lowercase() == *b))
}

impl EventFilter {
    /// Resolves `filters` against `cap`.
    pub fn new(cap: &Capture, filters: &[Filter]) -> EventFilter {
        let mut f = EventFilter::default();
        let lower = |v: &str| v.to_ascii_lowercase();
        let tracks: Vec<String> = filters
            .iter()
            .filter_map(|x| match x {
                Filter::Track(v) => Some(lower(v)),
                _ => None,
            })
            .collect();
        let procs: Vec<String> = filters
            .iter()
            .filter_map(|x| match x {
                Filter::Proc(v) => Some(lower(v)),
                _ => None,
            })
            .collect();
        if !tracks.is_empty() || !procs.is_empty() {
            let mut proc_ok: Vec<Option<bool>> = vec![None; cap.processes.len()];
            let mask = (0..cap.tracks.len() as u32)
                .map(|t| {
                    let tr = &cap.tracks[t as usize];
                    let p = tr.process as usize;
                    let pok = match proc_ok.get(p).copied().flatten() {
                        Some(ok) => ok,
                        None => {
                            let (name, stable) = (
                                cap.process_name(tr.process),
                                cap.process_stable_name(tr.process),
                            );
                            let ok = procs
                                .iter()
                                .all(|v| contains_ci(&name, v) || contains_ci(&stable, v));
                            if let Some(slot) = proc_ok.get_mut(p) {
                                *slot = Some(ok);
                            }
                            ok
                        }
                    };
                    pok && (tracks.is_empty() || {
                        let (name, stable) = (cap.track_name(t), cap.track_stable_name(t));
                        tracks
                            .iter()
                            .all(|v| contains_ci(&name, v) || contains_ci(&stable, v))
                    })
                })
                .collect();
            f.tracks = Some(mask);
        }
        let cats: Vec<String> = filters
            .iter()
            .filter_map(|x| match x {
                Filter::Cat(v) => Some(lower(v)),
                _ => None,
            })
            .collect();
        if !cats.is_empty() {
            let mask = cap
                .slices
                .classes
                .iter()
                .map(|&(raw, kind): &(StrId, Category)| {
                    let raw = cap.strings.get(raw);
                    cats.iter()
                        .all(|v| contains_ci(raw, v) || contains_ci(kind.canonical(), v))
                })
                .collect();
            f.classes = Some(mask);
        }
        f.args = filters
            .iter()
            .filter_map(|x| match x {
                Filter::Arg { key, value } => Some(ArgTest {
                    key: cap.strings.lookup(key),
                    value: value.as_deref().map(lower),
                }),
                _ => None,
            })
            .collect();
        f
    }

    /// No filter at all.
    pub fn is_empty(&self) -> bool {
        self.tracks.is_none() && self.classes.is_none() && self.args.is_empty()
    }

    /// Some `arg:` filter: events must be tested one by one.
    pub fn has_args(&self) -> bool {
        !self.args.is_empty()
    }

    /// An `arg:` key that no event has: nothing can match.
    pub fn impossible(&self) -> bool {
        self.args.iter().any(|a| a.key.is_none())
    }

    /// The track passes `track:` and `proc:`.
    #[inline]
    pub fn track_ok(&self, track: u32) -> bool {
        self.tracks
            .as_ref()
            .is_none_or(|m| m.get(track as usize).copied().unwrap_or(false))
    }

    /// A slice class (or [`NO_CLASS`]) passes `cat:`.
    #[inline]
    pub fn class_ok(&self, class: u16) -> bool {
        self.classes
            .as_ref()
            .is_none_or(|m| m.get(class as usize).copied().unwrap_or(false))
    }

    /// Slice `id` (on `track`) passes every filter; reads its args only when `arg:` filters exist.
    /// `buf` is scratch for formatting numeric values.
    pub fn slice_ok(&self, cap: &Capture, id: u32, track: u32, buf: &mut String) -> bool {
        let i = id as usize;
        let Some(&class) = cap.slices.class.get(i) else {
            return false;
        };
        self.track_ok(track) && self.class_ok(class) && self.args_ok(cap, id, buf)
    }

    fn args_ok(&self, cap: &Capture, id: u32, buf: &mut String) -> bool {
        if self.args.is_empty() {
            return true;
        }
        let Some(&r) = cap.slices.args.get(id as usize) else {
            return false;
        };
        self.args.iter().all(|t| {
            let Some(key) = t.key else { return false };
            cap.args.iter(r, &cap.strings).any(|(k, v)| {
                k == key && t.value.as_deref().is_none_or(|w| value_has(cap, v, w, buf))
            })
        })
    }
}

/// The displayed form of `v` contains `needle` (lower-case).
fn value_has(cap: &Capture, v: ArgValue, needle: &str, buf: &mut String) -> bool {
    match v {
        ArgValue::Str(s) | ArgValue::Json(s) => contains_ci(cap.strings.get(s), needle),
        other => {
            buf.clear();
            let _ = match other {
                ArgValue::Null => write!(buf, "null"),
                ArgValue::Bool(b) => write!(buf, "{b}"),
                ArgValue::I64(x) => write!(buf, "{x}"),
                ArgValue::U64(x) => write!(buf, "{x}"),
                ArgValue::F64(x) => write!(buf, "{x}"),
                ArgValue::Bytes(n) => write!(buf, "<opaque {n} bytes>"),
                ArgValue::Str(_) | ArgValue::Json(_) => Ok(()),
            };
            contains_ci(buf, needle)
        }
    }
}

/// Maps an instant's category to the slice class with the same raw category ([`NO_CLASS`]
/// when no slice has it), so `cat:` filters test instants as they test slices.
pub fn instant_classes(cap: &Capture) -> impl Fn(StrId) -> u16 + '_ {
    let mut by: rustc_hash::FxHashMap<StrId, u16> = rustc_hash::FxHashMap::default();
    for (k, &(raw, _)) in cap.slices.classes.iter().enumerate().rev() {
        by.insert(raw, k.min(usize::from(NO_CLASS - 1)) as u16);
    }
    move |cat: StrId| by.get(&cat).copied().unwrap_or(NO_CLASS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substring_ignores_ascii_case() {
        assert!(contains_ci("/device:GPU:0", "gpu"));
        assert!(contains_ci("anything", ""));
        assert!(!contains_ci("gp", "gpu"));
        assert!(contains_ci("Stream 7", "stream 7"));
    }
}
