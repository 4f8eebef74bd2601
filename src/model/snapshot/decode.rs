//! Snapshot bytes → capture: every length and id checked before use ([`Dec`]).

use super::codec::{
    CATEGORIES, Dec, FORMATS, MAGIC, PROCESS_KINDS, R, SnapshotError, TRACK_KINDS, VERSION,
    checksum, warning_kind,
};
use crate::model::args::{ArgsArena, ArgsRef};
use crate::model::capture::*;
use crate::model::strings::{Interner, StrId};

/// Reads a snapshot written by [`encode`]; `source` is the file it stands for.
pub fn decode(b: &[u8], source: SourceInfo) -> Result<Capture, SnapshotError> {
    let body = b.len().saturating_sub(8);
    let sum = b.get(body..).and_then(|t| <[u8; 8]>::try_from(t).ok());
    if sum.map(u64::from_le_bytes) != Some(checksum(&b[..body])) {
        return Err(SnapshotError {
            offset: body,
            expected: "a matching checksum",
        });
    }
    let b = &b[..body];
    let mut d = Dec { b, pos: 0 };
    if d.take(MAGIC.len(), "magic")? != MAGIC {
        return d.err("magic TTSNAP");
    }
    if d.u32("version")? != VERSION {
        return d.err("this tracetui's snapshot version");
    }
    let format = match d.u8("format")? {
        0xff => None,
        f => Some(*FORMATS.get(f as usize).ok_or(SnapshotError {
            offset: d.pos,
            expected: "a format",
        })?),
    };
    let n = d.len(8, "string count")?;
    let mut strings = Interner::new();
    for i in 0..n {
        let s = d.str("a string")?;
        if i > 0 && strings.intern(s) != StrId(i as u32) {
            return d.err("distinct strings");
        }
    }
    let nstr = strings.len() as u32;
    let sid = |d: &Dec<'_>, v: u32| -> R<StrId> {
        if v < nstr {
            Ok(StrId(v))
        } else {
            d.err("a string id")
        }
    };
    let data = d.bytes("args arena")?.to_vec();
    let dropped = d.u64("dropped blocks")?;
    let inherits = d.u8("inherit flag")? != 0;
    let args = ArgsArena::from_raw_parts(data, dropped, inherits);
    let np = d.len(23, "process count")?;
    let mut processes = Vec::with_capacity(np);
    for _ in 0..np {
        let key = d.key("process key")?;
        let name = d.u32("process name")?;
        let label = d.u32("process label")?;
        processes.push(Process {
            key,
            name: sid(&d, name)?,
            label: sid(&d, label)?,
            sort_index: d.i64("sort index")?,
            kind: *PROCESS_KINDS
                .get(d.u8("process kind")? as usize)
                .ok_or(SnapshotError {
                    offset: d.pos,
                    expected: "a process kind",
                })?,
            hidden: d.u8("hidden")? != 0,
        });
    }
    let nt = d.len(50, "track count")?;
    let mut tracks = Vec::with_capacity(nt);
    for _ in 0..nt {
        let process = d.u32("track process")?;
        if process as usize >= np {
            return d.err("a process index");
        }
        let key = d.key("track key")?;
        let name = d.u32("track name")?;
        let name = sid(&d, name)?;
        let kind = *TRACK_KINDS
            .get(d.u8("track kind")? as usize)
            .ok_or(SnapshotError {
                offset: d.pos,
                expected: "a track kind",
            })?;
        let sort_index = d.i64("track sort index")?;
        let slices = (d.u32("slice range")?, d.u32("slice range")?);
        let instants = (d.u32("instant range")?, d.u32("instant range")?);
        let counter = d.u32("counter")?;
        let has_counter = d.u8("counter flag")? != 0;
        tracks.push(Track {
            process,
            key,
            name,
            kind,
            sort_index,
            slices,
            instants,
            counter: has_counter.then_some(counter),
            lanes: d.u16("lanes")?,
            max_depth: d.u16("max depth")?,
            group_bases: d.col("group bases", u16::from_le_bytes)?,
        });
    }
    let start = d.col("slice starts", i64::from_le_bytes)?;
    let dur = d.col("slice durations", i64::from_le_bytes)?;
    let name = d.col("slice names", |a| StrId(u32::from_le_bytes(a)))?;
    let class = d.col("slice classes", u16::from_le_bytes)?;
    let nc = d.len(5, "class count")?;
    let mut classes = Vec::with_capacity(nc);
    for _ in 0..nc {
        let cat = d.u32("class category")?;
        let k = d.u8("category kind")?;
        let k = *CATEGORIES.get(k as usize).ok_or(SnapshotError {
            offset: d.pos,
            expected: "a category",
        })?;
        classes.push((sid(&d, cat)?, k));
    }
    let lane = d.col("slice lanes", u16::from_le_bytes)?;
    let parent = d.col("slice parents", u32::from_le_bytes)?;
    let sargs = d.col("slice args", |a| ArgsRef(u32::from_le_bytes(a)))?;
    let corr = d.col("slice correlations", u32::from_le_bytes)?;
    let nw = d.len(12, "wide correlations")?;
    let mut corr_wide = Vec::with_capacity(nw);
    for _ in 0..nw {
        corr_wide.push((d.u32("wide correlation")?, d.u64("wide correlation")?));
    }
    let flags = d.col("slice flags", |a: [u8; 1]| a[0])?;
    let n = start.len();
    if [
        dur.len(),
        name.len(),
        class.len(),
        lane.len(),
        parent.len(),
        sargs.len(),
        corr.len(),
        flags.len(),
    ]
    .iter()
    .any(|&l| l != n)
        || name.iter().any(|s| s.0 >= nstr)
        || class.iter().any(|&k| k as usize >= classes.len().max(1))
        || parent.iter().any(|&p| p != NO_SLICE && p as usize >= n)
        || tracks
            .iter()
            .any(|t| t.slices.0 > t.slices.1 || t.slices.1 as usize > n)
    {
        return d.err("consistent slice columns");
    }
    let slices = Slices {
        start,
        dur,
        name,
        class,
        classes,
        lane,
        parent,
        args: sargs,
        corr,
        corr_wide,
        flags,
    };
    let instants = Instants {
        ts: d.col("instant times", i64::from_le_bytes)?,
        name: d.col("instant names", |a| StrId(u32::from_le_bytes(a)))?,
        cat: d.col("instant categories", |a| StrId(u32::from_le_bytes(a)))?,
        args: d.col("instant args", |a| ArgsRef(u32::from_le_bytes(a)))?,
        track: d.col("instant tracks", u32::from_le_bytes)?,
        scope: d.col("instant scopes", |a: [u8; 1]| a[0])?,
    };
    let ni = instants.ts.len();
    if [
        instants.name.len(),
        instants.cat.len(),
        instants.args.len(),
        instants.track.len(),
        instants.scope.len(),
    ]
    .iter()
    .any(|&l| l != ni)
        || instants
            .name
            .iter()
            .chain(&instants.cat)
            .any(|s| s.0 >= nstr)
        || instants.track.iter().any(|&t| t as usize >= nt)
        || tracks
            .iter()
            .any(|t| t.instants.0 > t.instants.1 || t.instants.1 as usize > ni)
    {
        return d.err("consistent instant columns");
    }
    let nk = d.len(24, "counter count")?;
    let mut counters = Vec::with_capacity(nk);
    for _ in 0..nk {
        let track = d.u32("counter track")?;
        let name = d.u32("counter name")?;
        let ts: Vec<Ps> = d.col("counter times", i64::from_le_bytes)?;
        let value = d.col("counter values", f64::from_le_bytes)?;
        if track as usize >= nt || ts.len() != value.len() {
            return d.err("a consistent counter");
        }
        counters.push(CounterSeries {
            track,
            name: sid(&d, name)?,
            ts,
            value,
        });
    }
    if tracks
        .iter()
        .any(|t| t.counter.is_some_and(|k| k as usize >= nk))
    {
        return d.err("a counter index");
    }
    let nf = d.len(20, "flow count")?;
    let mut flows = Vec::with_capacity(nf);
    for _ in 0..nf {
        let id = d.u64("flow id")?;
        let cat = d.u32("flow category")?;
        let (from, to) = (d.u32("flow from")?, d.u32("flow to")?);
        if [from, to].iter().any(|&s| s != NO_SLICE && s as usize >= n) {
            return d.err("a flow endpoint");
        }
        flows.push(Flow {
            id,
            cat: sid(&d, cat)?,
            from,
            to,
        });
    }
    let na = d.len(24, "aggregated count")?;
    let mut aggregated = Vec::with_capacity(na);
    for _ in 0..na {
        let track = d.u32("aggregated track")?;
        let name = d.u32("aggregated name")?;
        if track as usize >= nt {
            return d.err("a track index");
        }
        aggregated.push(Aggregated {
            track,
            name: sid(&d, name)?,
            occurrences: d.u64("occurrences")?,
            dur: d.i64("aggregated duration")?,
        });
    }
    let has_origin = d.u8("origin flag")? != 0;
    let origin = d.i64("origin")?;
    let span = (d.i64("span")?, d.i64("span")?);
    let metadata = ArgsRef(d.u32("metadata")?);
    let nw = d.len(17, "warning count")?;
    let mut warnings = Vec::with_capacity(nw);
    for _ in 0..nw {
        let kind = warning_kind(d.str("warning kind")?);
        let count = d.u64("warning count")?;
        let message = d.str("warning message")?.to_string();
        warnings.push(Warning {
            kind,
            count,
            message,
        });
    }
    if d.take(MAGIC.len(), "end marker")? != MAGIC || d.pos != b.len() {
        return d.err("the end marker");
    }
    Ok(Capture {
        source,
        format,
        strings,
        args,
        processes,
        tracks,
        slices,
        instants,
        counters,
        flows,
        aggregated,
        origin_epoch_ns: has_origin.then_some(origin),
        span,
        metadata,
        warnings,
        graph_replay: Default::default(),
    })
}
