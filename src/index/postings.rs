//! Posting lists: for every name, the slices carrying it in time order (search jumps, "next
//! occurrence"). Stored compressed-sparse-row: one offset per name and one flat id array, 4 bytes
//! per slice.

use crate::model::{Slices, StrId};

/// Slice ids grouped by name, each group ordered by (start, id).
#[derive(Clone, Debug, Default)]
pub struct Postings {
    /// `offsets[n]..offsets[n + 1]` is the range of name `n` in `ids`.
    offsets: Vec<u32>,
    ids: Vec<u32>,
}

impl Postings {
    /// Builds the lists for `names` distinct names: a counting sort by name (ids stay ascending,
    /// i.e. one time-sorted run per track), then a run-aware stable sort by start where a list
    /// spans several tracks.
    pub fn build(s: &Slices, names: usize) -> Postings {
        let n = s.len();
        let names = names.max(s.name.iter().map(|x| x.index() + 1).max().unwrap_or(0));
        let mut offsets = vec![0u32; names + 1];
        for x in &s.name {
            offsets[x.index() + 1] += 1;
        }
        for i in 0..names {
            offsets[i + 1] += offsets[i];
        }
        let mut fill: Vec<u32> = offsets[..names].to_vec();
        let mut ids = vec![0u32; n];
        for (id, x) in s.name.iter().enumerate() {
            let f = &mut fill[x.index()];
            ids[*f as usize] = id as u32;
            *f += 1;
        }
        drop(fill);
        let mut keyed: Vec<(i64, u32)> = Vec::new();
        for w in offsets.windows(2) {
            let list = &mut ids[w[0] as usize..w[1] as usize];
            if list
                .windows(2)
                .all(|p| s.start[p[0] as usize] <= s.start[p[1] as usize])
            {
                continue;
            }
            keyed.clear();
            keyed.extend(list.iter().map(|&i| (s.start[i as usize], i)));
            keyed.sort();
            for (dst, &(_, i)) in list.iter_mut().zip(keyed.iter()) {
                *dst = i;
            }
        }
        Postings { offsets, ids }
    }

    /// Slices named `name`, ordered by (start, id).
    pub fn get(&self, name: StrId) -> &[u32] {
        let i = name.index();
        match (self.offsets.get(i), self.offsets.get(i + 1)) {
            (Some(&a), Some(&b)) => self.ids.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        (self.offsets.capacity() + self.ids.capacity()) * 4
    }
}
