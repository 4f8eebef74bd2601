//! What identifies a capture's rows (run, rank, host, file) and the self time of its slices.

use super::schema::PartKey;
use crate::analysis::nesting::ContainmentStack;
use crate::model::{ArgValue, Capture, Ps};

/// The partition-independent identity of a capture's rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureKeys {
    /// Run name.
    pub run: String,
    /// Rank: `distributedInfo.rank` of a Kineto capture, else the host.
    pub rank: String,
    /// Host or worker.
    pub host: String,
    /// File name of the capture.
    pub capture: String,
}

impl CaptureKeys {
    /// The keys of a loaded capture.
    pub fn of(c: &Capture) -> CaptureKeys {
        let capture = c
            .source
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let host = if c.source.host.is_empty() {
            capture.clone()
        } else {
            c.source.host.clone()
        };
        CaptureKeys {
            run: c.source.run.clone(),
            rank: distributed_rank(c).map_or_else(|| host.clone(), |r| r.to_string()),
            host,
            capture,
        }
    }

    /// Value of a partition key.
    pub fn get(&self, k: PartKey) -> &str {
        match k {
            PartKey::Run => &self.run,
            PartKey::Rank => &self.rank,
            PartKey::Host => &self.host,
        }
    }
}

/// `distributedInfo.rank` from the capture's metadata (Kineto JSON of a distributed job).
pub fn distributed_rank(c: &Capture) -> Option<i64> {
    let key = c.strings.lookup("distributedInfo")?;
    let v = c.args.get(c.metadata, key, &c.strings)?;
    let ArgValue::Json(s) = v else { return None };
    let j: serde_json::Value = serde_json::from_str(c.strings.get(s)).ok()?;
    j.get("rank")?.as_i64()
}

/// Self time of every slice, ps: its duration minus the durations of its direct children on the
/// same track under torch's containment rule (the rule of `stats` with every category kept).
pub fn self_times(c: &Capture) -> Vec<Ps> {
    let s = &c.slices;
    let mut out = s.dur.clone();
    let mut stack: ContainmentStack<(u32, Ps)> = ContainmentStack::new();
    for tr in &c.tracks {
        let (lo, hi) = (tr.slices.0 as usize, (tr.slices.1 as usize).min(s.len()));
        for i in lo..hi {
            let (start, dur) = (s.start[i], s.dur[i]);
            stack.push(
                start,
                start + dur,
                (i as u32, dur),
                |(j, v)| out[j as usize] = v,
                |p| p.1 -= dur,
            );
        }
        stack.drain(|(j, v)| out[j as usize] = v);
    }
    out
}
