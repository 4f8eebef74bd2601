//! Capture → snapshot bytes, streamed through [`Enc`].

use super::codec::{
    CATEGORIES, Enc, FORMATS, MAGIC, PROCESS_KINDS, Sum, TRACK_KINDS, VERSION, index_of,
};
use crate::model::capture::*;
use std::io::{self, Write};

/// True when `c` can be snapshotted (not for lazily read args: XPlane).
pub fn supported(c: &Capture) -> bool {
    c.args.lazy.is_none()
}

/// `c` as a snapshot in memory; `None` when not [`supported`].
pub fn encode(c: &Capture) -> Option<Vec<u8>> {
    let mut v = Vec::new();
    encode_to(c, &mut v).ok()?.then_some(v)
}

/// Streams `c` as a snapshot into `w` (through a 1 MiB buffer: no second copy of the model);
/// `Ok(false)` when not [`supported`].
pub fn encode_to(c: &Capture, w: &mut dyn Write) -> io::Result<bool> {
    if !supported(c) {
        return Ok(false);
    }
    let mut e = Enc {
        out: Vec::with_capacity(1 << 21),
        w,
        sum: Sum::new(),
        err: None,
    };
    e.out.extend_from_slice(MAGIC);
    e.u32(VERSION);
    match c.format {
        None => e.u8(0xff),
        Some(f) => e.u8(index_of(&FORMATS, &f)),
    }
    // Strings, in id order (id 0 is the empty string).
    e.len(c.strings.len());
    for (_, s) in c.strings.iter() {
        e.str(s);
    }
    let (data, dropped, inherits) = c.args.raw_parts();
    e.bytes(data);
    e.u64(dropped);
    e.u8(u8::from(inherits));
    e.len(c.processes.len());
    for p in &c.processes {
        e.key(p.key);
        e.u32(p.name.0);
        e.u32(p.label.0);
        e.i64(p.sort_index);
        e.u8(index_of(&PROCESS_KINDS, &p.kind));
        e.u8(u8::from(p.hidden));
    }
    e.len(c.tracks.len());
    for t in &c.tracks {
        e.u32(t.process);
        e.key(t.key);
        e.u32(t.name.0);
        e.u8(index_of(&TRACK_KINDS, &t.kind));
        e.i64(t.sort_index);
        e.u32(t.slices.0);
        e.u32(t.slices.1);
        e.u32(t.instants.0);
        e.u32(t.instants.1);
        e.u32(t.counter.unwrap_or(u32::MAX));
        e.u8(u8::from(t.counter.is_some()));
        e.u16(t.lanes);
        e.u16(t.max_depth);
        e.col(&t.group_bases, u16::to_le_bytes);
    }
    let s = &c.slices;
    e.col(&s.start, i64::to_le_bytes);
    e.col(&s.dur, i64::to_le_bytes);
    e.col(&s.name, |x| x.0.to_le_bytes());
    e.col(&s.class, u16::to_le_bytes);
    e.len(s.classes.len());
    for &(cat, k) in &s.classes {
        e.u32(cat.0);
        e.u8(index_of(&CATEGORIES, &k));
    }
    e.col(&s.lane, u16::to_le_bytes);
    e.col(&s.parent, u32::to_le_bytes);
    e.col(&s.args, |x| x.0.to_le_bytes());
    e.col(&s.corr, u32::to_le_bytes);
    e.len(s.corr_wide.len());
    for &(i, v) in &s.corr_wide {
        e.u32(i);
        e.u64(v);
    }
    e.col(&s.flags, |x| [x]);
    let i = &c.instants;
    e.col(&i.ts, i64::to_le_bytes);
    e.col(&i.name, |x| x.0.to_le_bytes());
    e.col(&i.cat, |x| x.0.to_le_bytes());
    e.col(&i.args, |x| x.0.to_le_bytes());
    e.col(&i.track, u32::to_le_bytes);
    e.col(&i.scope, |x| [x]);
    e.len(c.counters.len());
    for k in &c.counters {
        e.u32(k.track);
        e.u32(k.name.0);
        e.col(&k.ts, i64::to_le_bytes);
        e.col(&k.value, f64::to_le_bytes);
    }
    e.len(c.flows.len());
    for f in &c.flows {
        e.u64(f.id);
        e.u32(f.cat.0);
        e.u32(f.from);
        e.u32(f.to);
    }
    e.len(c.aggregated.len());
    for a in &c.aggregated {
        e.u32(a.track);
        e.u32(a.name.0);
        e.u64(a.occurrences);
        e.i64(a.dur);
    }
    e.u8(u8::from(c.origin_epoch_ns.is_some()));
    e.i64(c.origin_epoch_ns.unwrap_or(0));
    e.i64(c.span.0);
    e.i64(c.span.1);
    e.u32(c.metadata.0);
    e.len(c.warnings.len());
    for w in &c.warnings {
        e.str(w.kind);
        e.u64(w.count);
        e.str(&w.message);
    }
    e.out.extend_from_slice(MAGIC);
    let n = e.out.len() & !7;
    e.sum.words(&e.out[..n]);
    let sum = e.sum.finish(&e.out[n..]);
    e.u64(sum);
    if let Some(err) = e.err {
        return Err(err);
    }
    e.w.write_all(&e.out)?;
    Ok(true)
}
