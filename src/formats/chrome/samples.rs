//! Sampled CPU stacks of the object form: top-level `stackFrames` (`{"id": {"name", "parent",
//! "category"}}`) and `samples` (`[{"tid", "ts", "sf", "weight", "name", "cpu"}]`), as Chrome
//! and V8 write them.
//!
//! Each sample is a stack (its frame `sf` and that frame's parents). They are loaded as slices
//! on one track per sampled thread, named `samples (thread T)`: the samples of a thread in time
//! order, each lasting until the next one (the last one as long as the interval before it), and
//! the frames of consecutive samples that share a stack prefix merged into one longer slice — so
//! the track reads like Chrome's sampled-stacks row, and a flame view over its slices merges the
//! samples by stack weighted by time. The track lives in the process holding a thread with that
//! tid when exactly one does (samples carry no pid), else in a process named `sampled stacks`.
//! Samples whose frame is unknown are counted (`sample_unknown_frame`) and skipped.

use super::raw::TimeVal;
use super::time::us_text_to_ps;
use crate::model::{Key, StrId};
use rustc_hash::FxHashMap;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::fmt;

/// One stack frame.
#[derive(Clone, Copy, Debug)]
pub struct Frame {
    /// Frame name.
    pub name: StrId,
    /// Category (library, `v8`, ...).
    pub cat: StrId,
}

/// One sample as read.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    /// Thread id.
    pub tid: Key,
    /// Time (raw, like an event's `ts`).
    pub ts: TimeVal,
    /// Leaf frame id (index into the frame ids), `u32::MAX` when unknown.
    pub sf: u32,
}

/// What was read from `stackFrames` and `samples` (in either order).
#[derive(Debug, Default)]
pub struct Sampled {
    /// Frame id text → index.
    ids: FxHashMap<String, u32>,
    /// Frames by index; `None` for ids seen only as references so far.
    pub frames: Vec<Option<Frame>>,
    /// Samples in file order.
    pub samples: Vec<Sample>,
    /// Parent frame index of each frame (`u32::MAX`: a root or not given).
    parents: Vec<u32>,
}

impl Sampled {
    fn id(&mut self, text: &str) -> u32 {
        if let Some(&i) = self.ids.get(text) {
            return i;
        }
        let i = self.frames.len() as u32;
        self.ids.insert(text.to_string(), i);
        self.frames.push(None);
        self.parents.push(u32::MAX);
        i
    }

    /// The frames of a sample's stack, leaf first (cut at 4096 frames, so a cycle ends);
    /// empty when the leaf is unknown.
    pub fn stack(&self, leaf: u32, out: &mut Vec<Frame>) {
        out.clear();
        let mut at = leaf;
        while let Some(Some(f)) = self.frames.get(at as usize) {
            if out.len() >= 4096 {
                break;
            }
            out.push(*f);
            at = self.parents.get(at as usize).copied().unwrap_or(u32::MAX);
        }
    }
}

/// Text of an id value (`"12"`, `12`), `None` for anything else.
fn id_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Reads the `stackFrames` object.
pub struct FramesSeed<'a> {
    /// Where frames go.
    pub out: &'a mut Sampled,
    /// Interns names and categories.
    pub intern: &'a mut dyn FnMut(&str) -> StrId,
}

impl<'de> DeserializeSeed<'de> for FramesSeed<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for FramesSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of stack frames")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        while let Some(id) = a.next_key::<String>()? {
            let v: Value = a.next_value()?;
            let i = self.out.id(&id);
            let name = v.get("name").and_then(Value::as_str).unwrap_or("");
            let cat = v.get("category").and_then(Value::as_str).unwrap_or("");
            let parent = v.get("parent").and_then(id_text);
            let frame = Frame {
                name: (self.intern)(name),
                cat: (self.intern)(cat),
            };
            self.out.frames[i as usize] = Some(frame);
            if let Some(p) = parent {
                let pi = self.out.id(&p);
                self.out.parents[i as usize] = pi;
            }
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        while a.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
}

/// Reads the `samples` array.
pub struct SamplesSeed<'a> {
    /// Where samples go.
    pub out: &'a mut Sampled,
    /// Interns string tids.
    pub intern: &'a mut dyn FnMut(&str) -> StrId,
}

impl<'de> DeserializeSeed<'de> for SamplesSeed<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for SamplesSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of samples")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        while let Some(v) = a.next_element::<Value>()? {
            let tid = match v.get("tid") {
                Some(Value::Number(n)) => n
                    .as_i64()
                    .map_or_else(|| Key::Str((self.intern)(&n.to_string())), Key::Int),
                Some(Value::String(s)) => match s.trim().parse::<i64>() {
                    Ok(i) => Key::Int(i),
                    Err(_) => Key::Str((self.intern)(s)),
                },
                _ => Key::Int(0),
            };
            let ts = match v.get("ts") {
                Some(Value::Number(n)) => Some(us_text_to_ps(&n.to_string()).ok_or(())),
                Some(Value::String(s)) => Some(us_text_to_ps(s).ok_or(())),
                Some(Value::Null) | None => None,
                Some(_) => Some(Err(())),
            };
            let sf = match v.get("sf").and_then(id_text) {
                Some(t) => self.out.id(&t),
                None => u32::MAX,
            };
            self.out.samples.push(Sample { tid, ts, sf });
        }
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(())
    }
}

/// One slice of a sampled-stacks track, ready for the builder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StackSlice {
    /// Start, ps.
    pub start: i64,
    /// Duration, ps.
    pub dur: i64,
    /// Frame name.
    pub name: StrId,
    /// Frame category.
    pub cat: StrId,
}

/// Turns one thread's samples — `(time, stack root first)` in time order — into merged slices:
/// each sample lasts until the next (the last as long as the interval before it, or 0), and a
/// frame shared with the previous sample's stack at the same depth extends that slice.
pub fn stack_slices(samples: &[(i64, Vec<Frame>)]) -> Vec<StackSlice> {
    let mut out: Vec<StackSlice> = Vec::new();
    // Open frames: (index into `out`, frame name, category).
    let mut open: Vec<(usize, StrId, StrId)> = Vec::new();
    for (k, (ts, stack)) in samples.iter().enumerate() {
        let end = match samples.get(k + 1) {
            Some((next, _)) => *next,
            None => k
                .checked_sub(1)
                .and_then(|p| samples.get(p))
                .map_or(*ts, |(prev, _)| ts + (ts - prev)),
        };
        let common = open
            .iter()
            .zip(stack.iter())
            .take_while(|(o, f)| o.1 == f.name && o.2 == f.cat)
            .count();
        open.truncate(common);
        for &(i, _, _) in &open {
            out[i].dur = end - out[i].start;
        }
        for f in &stack[common..] {
            open.push((out.len(), f.name, f.cat));
            out.push(StackSlice {
                start: *ts,
                dur: end - ts,
                name: f.name,
                cat: f.cat,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(n: u32) -> Frame {
        Frame {
            name: StrId(n),
            cat: StrId::EMPTY,
        }
    }

    #[test]
    fn consecutive_samples_merge_their_common_prefix() {
        // main>a>b @0, main>a>c @10, main>d @20, main>d @30 (interval 10 → ends at 40).
        let s = vec![
            (0, vec![f(1), f(2), f(3)]),
            (10, vec![f(1), f(2), f(4)]),
            (20, vec![f(1), f(5)]),
            (30, vec![f(1), f(5)]),
        ];
        let out = stack_slices(&s);
        let got: Vec<(u32, i64, i64)> = out.iter().map(|x| (x.name.0, x.start, x.dur)).collect();
        assert_eq!(
            got,
            vec![(1, 0, 40), (2, 0, 20), (3, 0, 10), (4, 10, 10), (5, 20, 20)]
        );
    }
}
