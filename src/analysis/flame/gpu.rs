//! Device activities and the host slice that launched each (HTA's stream rules and correlation
//! links, [`crate::analysis::gpu::streams`]), arranged for attributing device time to stacks.

use crate::analysis::gpu::GpuOptions;
use crate::analysis::gpu::streams;
use crate::model::{Capture, NO_SLICE};

/// Launch → activity pairs and the activities without a launch.
#[derive(Clone, Debug, Default)]
pub struct DeviceLinks {
    /// (launch slice, activity slice), sorted by launch.
    pub pairs: Vec<(u32, u32)>,
    /// Activities whose launch is not in the capture.
    pub unlinked: Vec<u32>,
}

impl DeviceLinks {
    /// Finds the device activities of `c` and their launches.
    pub fn of(c: &Capture) -> DeviceLinks {
        let g = streams::collect(c, &GpuOptions::default());
        let mut out = DeviceLinks::default();
        for (&act, &launch) in g.acts.slice.iter().zip(&g.acts.launch) {
            if launch == NO_SLICE {
                out.unlinked.push(act);
            } else {
                out.pairs.push((launch, act));
            }
        }
        out.pairs.sort_unstable();
        out.unlinked.sort_unstable();
        out
    }

    /// True when the capture has no device activities.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty() && self.unlinked.is_empty()
    }

    /// Pairs whose launch id is in `[ids.0, ids.1)` (a track's slice range).
    pub fn launched_on(&self, ids: (u32, u32)) -> &[(u32, u32)] {
        let a = self.pairs.partition_point(|p| p.0 < ids.0);
        let b = self.pairs.partition_point(|p| p.0 < ids.1);
        self.pairs.get(a..b).unwrap_or(&[])
    }
}
