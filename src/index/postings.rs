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
    /// Builds the lists for `names` distinct names on this thread (see [`Postings::scatter`]
    /// and [`Postings::sort_chunk`]).
    pub fn build(s: &Slices, names: usize) -> Postings {
        let (offsets, mut ids) = Postings::scatter(s, names);
        let mut keyed = Vec::new();
        Postings::sort_chunk(s, &offsets, 0, &mut ids, &mut keyed);
        Postings { offsets, ids }
    }

    /// Assembles finished parts.
    pub fn from_parts(offsets: Vec<u32>, ids: Vec<u32>) -> Postings {
        Postings { offsets, ids }
    }

    /// Counting sort by name: per-name offsets and the ids grouped by name, each group ascending
    /// by id (one time-sorted run per track).
    pub fn scatter(s: &Slices, names: usize) -> (Vec<u32>, Vec<u32>) {
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
        (offsets, ids)
    }

    /// Splits scattered `ids` into about `parts` chunks of whole names: (first name, ids).
    pub fn chunks<'a>(
        offsets: &[u32],
        ids: &'a mut [u32],
        parts: usize,
    ) -> Vec<(usize, &'a mut [u32])> {
        let target = (ids.len() / parts.max(1)).max(1);
        let mut out = Vec::new();
        let mut rest = ids;
        let (mut first, mut taken) = (0usize, 0usize);
        let names = offsets.len().saturating_sub(1);
        let mut name = 0;
        while name < names {
            let mut end = name;
            while end < names && (offsets[end + 1] as usize - taken) < target {
                end += 1;
            }
            let end = (end + 1).min(names);
            let len = offsets[end] as usize - taken;
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(len);
            out.push((first, head));
            rest = tail;
            taken += len;
            first = end;
            name = end;
        }
        out
    }

    /// Orders every list of a chunk (names from `first`, ids `chunk`) by (start, id): lists on
    /// one track are already sorted; others are several sorted runs, which the stable sort merges.
    pub fn sort_chunk(
        s: &Slices,
        offsets: &[u32],
        first: usize,
        chunk: &mut [u32],
        keyed: &mut Vec<(i64, u32)>,
    ) {
        let base = offsets.get(first).copied().unwrap_or(0) as usize;
        let mut name = first;
        let mut pos = 0usize;
        while pos < chunk.len() && name + 1 < offsets.len() {
            let end = (offsets[name + 1] as usize - base).min(chunk.len());
            let list = &mut chunk[pos..end];
            name += 1;
            pos = end;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_whole_names_exactly() {
        // Names 0..6 with list lengths 0, 3, 0, 5, 1, 0.
        let offsets = [0u32, 0, 3, 3, 8, 9, 9];
        for parts in [1, 2, 3, 5, 9, 100] {
            let mut ids: Vec<u32> = (0..9).collect();
            let chunks = Postings::chunks(&offsets, &mut ids, parts);
            let mut next = 0usize;
            for (first, c) in &chunks {
                assert_eq!(offsets[*first] as usize, next, "parts={parts}");
                next += c.len();
                // Every chunk ends on a name boundary.
                assert!(offsets.contains(&(next as u32)));
            }
            assert_eq!(next, 9, "parts={parts}");
        }
    }
}
