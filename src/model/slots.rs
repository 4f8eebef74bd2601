//! Reserved runs of slice slots that loader threads fill in parallel (the XPlane loader gives
//! each line its own run, sized by the first pass), then compacted in run order.

use super::args::ArgsRef;
use super::builder::CaptureBuilder;
use super::capture::{CORR_WIDE, Ps, narrow_corr};
use super::category::Category;
use super::strings::StrId;

/// One run of reserved slots of one track: the columns a single thread writes, in order.
#[derive(Debug)]
pub struct SliceSlots<'a> {
    start: &'a mut [Ps],
    dur: &'a mut [Ps],
    name: &'a mut [StrId],
    class: &'a mut [u16],
    args: &'a mut [ArgsRef],
    corr: &'a mut [u32],
    /// Correlation ids of 32 bits or more: (index in the run, id).
    wide: Vec<(u32, u64)>,
    len: usize,
}

impl SliceSlots<'_> {
    /// Slots filled so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when none is filled.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Slots reserved.
    pub fn capacity(&self) -> usize {
        self.start.len()
    }

    /// What `compact_slots` needs of a filled run: its length and its wide correlation ids.
    pub fn finish(self) -> FilledRun {
        FilledRun {
            used: self.len,
            wide: self.wide,
        }
    }

    /// The args handles of the filled slots (to rebase handles written into another arena).
    pub fn args_mut(&mut self) -> &mut [ArgsRef] {
        &mut self.args[..self.len]
    }

    /// Fills the next slot; returns its index within the run, or `None` when the run is full.
    /// `dur` must be ≥ 0 and `class` from [`CaptureBuilder::class_of`].
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn push(
        &mut self,
        start: Ps,
        dur: Ps,
        name: StrId,
        class: u16,
        args: ArgsRef,
        corr: u64,
    ) -> Option<u32> {
        let i = self.len;
        if i >= self.start.len() {
            return None;
        }
        debug_assert!(dur >= 0);
        self.start[i] = start;
        self.dur[i] = dur;
        self.name[i] = name;
        self.class[i] = class;
        self.args[i] = args;
        self.corr[i] = narrow_corr(corr).unwrap_or_else(|| {
            self.wide.push((i as u32, corr));
            CORR_WIDE
        });
        self.len = i + 1;
        Some(i as u32)
    }
}

/// A filled run, handed back to [`CaptureBuilder::compact_slots`].
#[derive(Debug, Default)]
pub struct FilledRun {
    /// Slots filled.
    pub used: usize,
    wide: Vec<(u32, u64)>,
}

/// Column types whose all-zero bit pattern is a valid value.
///
/// # Safety
/// Implementors must be valid (and meaningful as a placeholder) when every byte is zero.
unsafe trait ZeroValid: Copy {}
// SAFETY: plain integers, and newtypes / a `repr(u8)` enum whose 0 is a valid value.
unsafe impl ZeroValid for u8 {}
unsafe impl ZeroValid for u16 {}
unsafe impl ZeroValid for u32 {}
unsafe impl ZeroValid for u64 {}
unsafe impl ZeroValid for i64 {}
unsafe impl ZeroValid for StrId {}
unsafe impl ZeroValid for ArgsRef {}
unsafe impl ZeroValid for Category {}

/// A vector of `n` zero values from zeroed allocation: fresh pages come zero from the kernel,
/// so nothing is written here and each page is first touched by the thread that fills it.
fn zeroed<T: ZeroValid>(n: usize) -> Vec<T> {
    use std::alloc::{Layout, alloc_zeroed, handle_alloc_error};
    if n == 0 || std::mem::size_of::<T>() == 0 {
        return Vec::new();
    }
    let Ok(layout) = Layout::array::<T>(n) else {
        panic!("slice slots: {n} elements overflow the address space");
    };
    // SAFETY: the layout has a non-zero size; the memory is zeroed, which `ZeroValid` makes a
    // valid `T` for all `n` elements; the vector takes ownership with the same layout.
    unsafe {
        let p = alloc_zeroed(layout).cast::<T>();
        if p.is_null() {
            handle_alloc_error(layout);
        }
        Vec::from_raw_parts(p, n, n)
    }
}

/// Grows `v` to `n` elements of `fill`, or, when it is empty, replaces it with zeroed memory
/// (every slot is written before it is read, or removed by `compact_slots`). Large growth is
/// written by two threads (fresh pages fault in both).
fn grow<T: ZeroValid + Send + Sync>(v: &mut Vec<T>, n: usize, fill: T) {
    if v.is_empty() {
        *v = zeroed(n);
        return;
    }
    let add = n.saturating_sub(v.len());
    if add < PARALLEL_FILL_MIN {
        v.resize(n, fill);
        return;
    }
    v.reserve_exact(add);
    let spare = &mut v.spare_capacity_mut()[..add];
    let (a, b) = spare.split_at_mut(add / 2);
    std::thread::scope(|sc| {
        sc.spawn(|| a.iter_mut().for_each(|x| _ = x.write(fill)));
        b.iter_mut().for_each(|x| _ = x.write(fill));
    });
    // SAFETY: the first `add` spare elements were all initialized just above (both threads
    // joined), and `reserve_exact` made room for them.
    unsafe { v.set_len(n) };
}

/// Growth (elements) from which `grow` fills on two threads.
const PARALLEL_FILL_MIN: usize = 1 << 20;

/// Splits `s` into consecutive runs of the given lengths (their sum must be `s.len()`).
fn split_runs<'a, T>(mut s: &'a mut [T], counts: &[usize]) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(counts.len());
    for &n in counts {
        let (a, b) = std::mem::take(&mut s).split_at_mut(n);
        out.push(a);
        s = b;
    }
    out
}

impl CaptureBuilder {
    /// Appends one run of empty slice slots per `(track, count)`, to be filled from any thread.
    /// Raw slice ids of run `i` start at the returned first id plus the sum of the earlier
    /// counts until [`CaptureBuilder::compact_slots`] closes the gaps.
    pub fn slots(&mut self, runs: &[(u32, usize)]) -> (u32, Vec<SliceSlots<'_>>) {
        let counts: Vec<usize> = runs.iter().map(|r| r.1).collect();
        let counts = &counts[..];
        let first = self.s.start.len();
        let total: usize = counts.iter().sum();
        let n = first + total;
        self.slot_runs = None;
        for (k, &(t, c)) in runs.iter().enumerate() {
            let r = self.s_track.push_run(t, c);
            if k == 0 {
                self.slot_runs = r;
            }
        }
        let s = &mut self.s;
        grow(&mut s.start, n, 0);
        grow(&mut s.dur, n, 0);
        grow(&mut s.name, n, StrId::EMPTY);
        grow(&mut s.class, n, 0);
        grow(&mut s.args, n, ArgsRef::NONE);
        grow(&mut s.corr, n, 0);
        grow(&mut s.flags, n, 0);
        let mut start = split_runs(&mut s.start[first..], counts).into_iter();
        let mut dur = split_runs(&mut s.dur[first..], counts).into_iter();
        let mut name = split_runs(&mut s.name[first..], counts).into_iter();
        let mut class = split_runs(&mut s.class[first..], counts).into_iter();
        let mut args = split_runs(&mut s.args[first..], counts).into_iter();
        let mut corr = split_runs(&mut s.corr[first..], counts).into_iter();
        let mut out = Vec::with_capacity(counts.len());
        for _ in runs {
            let (Some(start), Some(dur), Some(name)) = (start.next(), dur.next(), name.next())
            else {
                break;
            };
            let (Some(class), Some(args), Some(corr)) = (class.next(), args.next(), corr.next())
            else {
                break;
            };
            out.push(SliceSlots {
                start,
                dur,
                name,
                class,
                args,
                corr,
                wide: Vec::new(),
                len: 0,
            });
        }
        (first as u32, out)
    }

    /// Closes the gaps left by runs filled below their count: run `i` (reserved `counts[i]`
    /// slots from `first` on) moves down to follow run `i − 1`. Returns the new first raw id of
    /// each run. Must follow the latest [`CaptureBuilder::slots`] call.
    pub fn compact_slots(
        &mut self,
        first: u32,
        counts: &[usize],
        filled: Vec<FilledRun>,
    ) -> Vec<u32> {
        fn shift<T: Copy>(v: &mut Vec<T>, moves: &[(usize, usize, usize)], end: usize) {
            for &(from, to, n) in moves {
                if from != to {
                    v.copy_within(from..from + n, to);
                }
            }
            v.truncate(end);
        }
        let mut moves = Vec::with_capacity(counts.len());
        let mut starts = Vec::with_capacity(counts.len());
        let (mut from, mut to) = (first as usize, first as usize);
        let used: Vec<usize> = counts
            .iter()
            .zip(&filled)
            .map(|(&c, f)| f.used.min(c))
            .collect();
        for ((&c, &u), f) in counts.iter().zip(&used).zip(filled) {
            moves.push((from, to, u));
            starts.push(to as u32);
            for (i, id) in f.wide {
                self.s.corr_wide.push((to as u32 + i, id));
            }
            from += c;
            to += u;
        }
        let s = &mut self.s;
        if self.s_track.is_dense() {
            shift(self.s_track.dense_mut(), &moves, to);
        }
        self.s_track.set_runs(self.slot_runs.take(), &used, to);
        shift(&mut s.start, &moves, to);
        shift(&mut s.dur, &moves, to);
        shift(&mut s.name, &moves, to);
        shift(&mut s.class, &moves, to);
        shift(&mut s.args, &moves, to);
        shift(&mut s.corr, &moves, to);
        shift(&mut s.flags, &moves, to);
        starts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::capture::{Format, Key, SourceInfo, TrackKind};

    #[test]
    fn runs_fill_in_parallel_and_compact_in_order() {
        let mut b = CaptureBuilder::new();
        let p = b.process(Key::Int(1));
        let t0 = b.track(p, Key::Int(1), TrackKind::Thread);
        let t1 = b.track(p, Key::Int(2), TrackKind::Thread);
        let name = b.intern("x");
        let counts = [3, 0, 4];
        let (first, mut runs) = b.slots(&[(t0, 3), (t1, 0), (t1, 4)]);
        assert_eq!(first, 0);
        std::thread::scope(|sc| {
            let mut it = runs.iter_mut();
            let (r0, _r1, r2) = (it.next().unwrap(), it.next().unwrap(), it.next().unwrap());
            sc.spawn(move || {
                for k in 0..2 {
                    r0.push(k * 10, 5, name, 0, ArgsRef::NONE, 0);
                }
            });
            for k in 0..4 {
                r2.push(k * 10, 5, name, 0, ArgsRef::NONE, 7);
            }
            assert!(r2.push(0, 0, name, 0, ArgsRef::NONE, 0).is_none());
        });
        let filled: Vec<FilledRun> = runs.into_iter().map(SliceSlots::finish).collect();
        assert_eq!(b.compact_slots(first, &counts, filled), vec![0, 2, 2]);
        assert_eq!(b.slice_count(), 6);
        let c = b.finish(SourceInfo::default(), Format::Chrome);
        assert_eq!(c.tracks[t0 as usize].slices, (0, 2));
        assert_eq!(c.tracks[t1 as usize].slices, (2, 6));
        assert_eq!(c.slices.corr[2..], [7, 7, 7, 7]);
    }

    #[test]
    fn slots_after_dense_tracks_and_out_of_order_runs() {
        let mut b = CaptureBuilder::new();
        let p = b.process(Key::Int(1));
        let ts: Vec<u32> = (0..3)
            .map(|k| b.track(p, Key::Int(k), TrackKind::Thread))
            .collect();
        let name = b.intern("x");
        // Interleaved slices: the track column turns dense.
        for k in 0..20_000i64 {
            let t = ts[(k % 2) as usize];
            b.add_slice(t, k, 1, name, StrId::EMPTY, ArgsRef::NONE, 0);
        }
        // A run for track 0 (out of order with the slices above), partly filled.
        let (first, mut runs) = b.slots(&[(ts[0], 5), (ts[2], 2)]);
        for k in 0..3 {
            runs[0].push(-10 + k, 1, name, 0, ArgsRef::NONE, 0);
        }
        runs[1].push(0, 9, name, 0, ArgsRef::NONE, u64::MAX);
        let filled: Vec<FilledRun> = runs.into_iter().map(SliceSlots::finish).collect();
        b.compact_slots(first, &[5, 2], filled);
        let c = b.finish(SourceInfo::default(), Format::Chrome);
        assert_eq!(c.tracks[ts[0] as usize].slice_count(), 10_003);
        assert_eq!(c.tracks[ts[1] as usize].slice_count(), 10_000);
        assert_eq!(c.tracks[ts[2] as usize].slice_count(), 1);
        let (lo, hi) = c.tracks[ts[0] as usize].slices;
        assert_eq!(c.slices.start[lo as usize], -10);
        assert!(
            c.slices.start[lo as usize..hi as usize]
                .windows(2)
                .all(|w| w[0] <= w[1])
        );
    }
}
