//! Folded stacks in (`*.folded`, `*.stacks.txt`, stdin): `frame;frame;…;leaf VALUE` per line,
//! as written by `tracetui stacks`, torch's `export_stacks`, `stackcollapse-*.pl`, py-spy and
//! inferno. Opened as a capture of one track whose slices lay the stacks out like
//! flamegraph.pl: lines summed per stack and sorted, frames shared with the previous line
//! merged, each value taking that much time (1 unit = 1 µs). Its merged tree is then exactly the
//! file's tree; bad lines are counted in a warning with the first one's line number.

use super::{LoadError, LoadErrorKind, Progress};
use crate::model::{
    ArgsRef, Capture, CaptureBuilder, Format, Key, ProcessKind, Ps, SourceInfo, StrId, TrackKind,
};
use std::path::Path;

/// Picoseconds per unit of a folded value (values are read as µs).
pub const UNIT_PS: Ps = 1_000_000;

/// True for file names read as folded stacks.
pub fn is_folded_name(name: &str) -> bool {
    name.ends_with(".folded") || name.ends_with(".stacks.txt")
}

/// Loads a folded-stacks file (`-` reads stdin).
pub fn load(
    path: &Path,
    mut source: SourceInfo,
    progress: &Progress,
) -> Result<Capture, LoadError> {
    let bytes = if path == Path::new("-") {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut v)
            .map_err(|e| LoadError::io(path, "read stdin", &e))?;
        v
    } else {
        std::fs::read(path).map_err(|e| LoadError::io(path, "read", &e))?
    };
    source.path = path.to_path_buf();
    source.file_bytes = bytes.len() as u64;
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("stdin")
        .to_string();
    let c = from_bytes(&bytes, &name, source, Some(path))?;
    progress.update(bytes.len() as u64, c.slices.len() as u64);
    Ok(c)
}

/// Builds the capture of folded text; `path` names the file in errors.
pub fn from_bytes(
    bytes: &[u8],
    track_name: &str,
    source: SourceInfo,
    path: Option<&Path>,
) -> Result<Capture, LoadError> {
    let text = String::from_utf8_lossy(bytes);
    let mut lines: Vec<(&str, u64)> = Vec::new();
    let (mut bad, mut first_bad) = (0u64, None);
    let mut overflow = 0u64;
    let mut offset = 0u64;
    for (k, raw) in text.split('\n').enumerate() {
        let line = raw.trim_end_matches('\r');
        let at = offset;
        offset += raw.len() as u64 + 1;
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let parsed = line.rsplit_once([' ', '\t']).and_then(|(s, v)| {
            let v = v.trim();
            let n = v.parse::<u64>().ok().or_else(|| {
                v.parse::<f64>()
                    .ok()
                    .filter(|f| *f >= 0.0)
                    .map(|f| f as u64)
            });
            Some((s.trim_end(), n?))
        });
        match parsed {
            Some((s, v)) if !s.is_empty() => lines.push((s, v)),
            _ => {
                bad += 1;
                first_bad.get_or_insert((k + 1, at));
            }
        }
    }
    if lines.is_empty() {
        let p = path.unwrap_or(Path::new("-"));
        return Err(LoadError::new(
            LoadErrorKind::NotATrace,
            p,
            first_bad.map(|f| f.1),
            "no folded-stack lines (expected `frame;frame;…;leaf VALUE` per line)",
        ));
    }
    lines.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let mut b = CaptureBuilder::new();
    let p = b.process(Key::Int(0));
    let pname = b.intern("folded stacks");
    {
        let pr = b.process_mut(p);
        pr.name = pname;
        pr.kind = ProcessKind::Host;
    }
    let t = b.track(p, Key::Int(0), TrackKind::Thread);
    let tname = b.intern(track_name);
    b.track_mut(t).name = tname;
    // Open frames: (name, start); closed ones as (start, dur, depth, name), added parents first
    // so that a frame and its only child, which span the same time, nest in file order.
    let mut open: Vec<(StrId, Ps)> = Vec::new();
    let mut closed: Vec<(Ps, std::cmp::Reverse<Ps>, usize, StrId)> = Vec::new();
    let mut now: Ps = 0;
    let mut frames: Vec<StrId> = Vec::new();
    let mut zero = 0u64;
    let mut i = 0;
    while i < lines.len() {
        let stack = lines[i].0;
        let mut v: u64 = 0;
        while i < lines.len() && lines[i].0 == stack {
            v = v.saturating_add(lines[i].1);
            i += 1;
        }
        if v == 0 {
            zero += 1;
            continue;
        }
        frames.clear();
        frames.extend(stack.split(';').map(|f| b.intern(f)));
        let common = open
            .iter()
            .zip(&frames)
            .take_while(|(o, f)| o.0 == **f)
            .count();
        while open.len() > common {
            if let Some((n, s)) = open.pop() {
                closed.push((s, std::cmp::Reverse(now - s), open.len(), n));
            }
        }
        for &f in &frames[common..] {
            open.push((f, now));
        }
        let d = i64::try_from(v)
            .ok()
            .and_then(|v| v.checked_mul(UNIT_PS))
            .filter(|d| now.checked_add(*d).is_some());
        match d {
            Some(d) => now += d,
            None => overflow += 1,
        }
    }
    while let Some((n, s)) = open.pop() {
        closed.push((s, std::cmp::Reverse(now - s), open.len(), n));
    }
    closed.sort_unstable();
    b.reserve_slices(closed.len());
    for (s, std::cmp::Reverse(d), _, n) in closed {
        b.add_slice(t, s, d, n, StrId::EMPTY, ArgsRef::NONE, 0);
    }
    if let Some((line, _)) = first_bad {
        b.warn_n(
            "bad_line",
            format!("line {line} is not `frame;…;leaf VALUE`; such lines are skipped"),
            bad,
        );
    }
    if zero > 0 {
        b.warn_n(
            "zero_value",
            "stacks whose values sum to 0 have no width and are not drawn".into(),
            zero,
        );
    }
    if overflow > 0 {
        b.warn_n(
            "value_overflow",
            "values too large for the time axis (> 9.2e12 µs in total) skipped".into(),
            overflow,
        );
    }
    Ok(b.finish(source, Format::Folded))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::flame::{Metric, Scope, TimeUnit, build, fold};

    #[test]
    fn round_trip_through_the_merged_tree() {
        let text = "main;b;c 3\nmain;a 2\nmain;b 1\nmain;a 4\nother;x;y 5\n\nbroken line\nz 0\n";
        let c = from_bytes(text.as_bytes(), "t", SourceInfo::default(), None).unwrap_or_default();
        let t = build(&c, &Scope::all(), None);
        let f = fold(&t, &c.strings, Metric::SelfTime, TimeUnit::Us);
        assert_eq!(f.text(), "main;a 6\nmain;b 1\nmain;b;c 3\nother;x;y 5\n");
        assert!(
            c.warnings
                .iter()
                .any(|w| w.kind == "bad_line" && w.count == 1)
        );
        assert!(
            c.warnings
                .iter()
                .any(|w| w.kind == "zero_value" && w.count == 1)
        );
        assert_eq!(c.format, Some(Format::Folded));
    }

    #[test]
    fn empty_input_is_an_error() {
        let e = from_bytes(b"\n# nothing\n", "t", SourceInfo::default(), None);
        assert!(e.is_err());
    }
}
