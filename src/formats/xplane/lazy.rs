//! Lazy event args: an XPlane event's args handle is the file offset of the event, and its
//! stats are decoded from the kept (mapped) file only when someone reads them — the details
//! pane reads one event at a time, `stats --unified` a few stats per device event. Loading
//! therefore neither resolves nor copies stats it does not interpret.

use super::stats;
use super::tables::PlaneTables;
use super::wire::{LEN, Reader, VARINT};
use crate::formats::source::Source;
use crate::model::{ArgValue, ArgsRef, Interner, LazyArgs, StrId};
use std::sync::Arc;

/// Decodes the stats of XPlane events from the kept file.
#[derive(Debug)]
pub struct XStats {
    bytes: Arc<Source>,
    /// (first byte, plane) of every line message, by offset: finds an event's plane.
    lines: Vec<(u32, u32)>,
    planes: Vec<PlaneTables>,
}

impl XStats {
    /// A decoder over `bytes` whose lines start at the given offsets (with their plane index).
    pub fn new(bytes: Arc<Source>, mut lines: Vec<(u32, u32)>, planes: Vec<PlaneTables>) -> Self {
        lines.sort_unstable();
        XStats {
            bytes,
            lines,
            planes,
        }
    }
}

impl LazyArgs for XStats {
    fn decode(&self, offset: u32, strings: &Interner, out: &mut Vec<(StrId, ArgValue)>) -> ArgsRef {
        // A file changed on disk since loading gives no args rather than garbage; checked
        // before and after reading (a truncation while reading faults and sets the flag).
        if self.bytes.changed_lately() {
            return ArgsRef::NONE;
        }
        let kept = out.len();
        let then = self.decode_bytes(offset, strings, out);
        if self.bytes.changed_lately() {
            out.truncate(kept);
            return ArgsRef::NONE;
        }
        then
    }

    fn source_changed(&self) -> bool {
        self.bytes.changed()
    }

    fn heap_bytes(&self) -> usize {
        let own = match &*self.bytes {
            Source::Map(_) => 0,
            Source::File(m) => {
                if m.is_mapped() {
                    0
                } else {
                    m.len()
                }
            }
            Source::Owned(v) => v.capacity(),
        };
        own + self.lines.capacity() * 8
            + self
                .planes
                .iter()
                .map(|p| p.stats.heap_bytes() + p.metas.heap_bytes())
                .sum::<usize>()
    }
}

impl XStats {
    /// Decodes the stats of the event at `offset` from the kept bytes.
    fn decode_bytes(
        &self,
        offset: u32,
        strings: &Interner,
        out: &mut Vec<(StrId, ArgValue)>,
    ) -> ArgsRef {
        let k = self.lines.partition_point(|&(at, _)| at <= offset);
        let Some(tables) = k
            .checked_sub(1)
            .and_then(|k| self.planes.get(self.lines[k].1 as usize))
        else {
            return ArgsRef::NONE;
        };
        let data: &[u8] = &self.bytes;
        let Some(rest) = data.get(offset as usize..) else {
            return ArgsRef::NONE;
        };
        // The load validated these bytes; any error here just ends the list.
        let mut r = Reader::new(rest, offset as usize);
        let Ok(mut er) = r.sub() else {
            return ArgsRef::NONE;
        };
        let mut mid = 0i64;
        while !er.is_empty() {
            let Ok((f, wt)) = er.key() else { break };
            let ok = match (f, wt) {
                (1, VARINT) => er.varint().map(|v| mid = v as i64).is_ok(),
                (4, LEN) => match er.sub().and_then(stats::read_stat_fast) {
                    Ok((smid, raw)) => {
                        let name = tables.stats.get(smid).0;
                        out.push((name, stats::resolve_ro(raw, &tables.stats, strings)));
                        true
                    }
                    Err(_) => false,
                },
                _ => er.skip(wt).is_ok(),
            };
            if !ok {
                break;
            }
        }
        tables.metas.get(mid).map_or(ArgsRef::NONE, |m| m.args)
    }
}
