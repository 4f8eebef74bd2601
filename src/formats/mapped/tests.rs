//! Unit tests of [`Mapped`]: truncation, rewrite and deletion of a mapped file never crash,
//! read zeros where the file is gone, and report the change.

use super::*;
use std::io::{Seek, SeekFrom, Write};

const LEN: usize = 5 * 4096 + 123;

fn pattern(i: usize) -> u8 {
    (i % 251) as u8 + 1
}

/// A temp file of `LEN` non-zero bytes and a guarded map of it.
fn mapped_temp(populate: bool) -> (tempfile::NamedTempFile, Mapped) {
    let mut f = tempfile::NamedTempFile::new().expect("temp file");
    let bytes: Vec<u8> = (0..LEN).map(pattern).collect();
    f.write_all(&bytes).expect("write");
    f.flush().expect("flush");
    let m = Mapped::new(File::open(f.path()).expect("open"), populate).expect("map");
    (f, m)
}

/// Reads every byte (volatile, so no read is optimized away); returns their sum.
fn read_all(m: &Mapped) -> u64 {
    let mut sum = 0u64;
    for i in 0..m.len() {
        // SAFETY: `i` is in bounds.
        sum += unsafe { std::ptr::read_volatile(m.as_ptr().add(i)) } as u64;
    }
    sum
}

#[test]
fn unchanged_file_reads_back_and_is_not_changed() {
    let (_f, m) = mapped_temp(false);
    assert_eq!(m.len(), LEN);
    assert!(m.iter().enumerate().all(|(i, &b)| b == pattern(i)));
    assert!(!m.changed());
    assert!(!m.changed_lately());
    #[cfg(target_os = "linux")]
    assert!(m.is_mapped());
}

#[test]
fn truncated_to_zero_reads_zeros_and_reports_change() {
    for populate in [false, true] {
        let (f, m) = mapped_temp(populate);
        f.as_file().set_len(0).expect("truncate");
        let sum = read_all(&m);
        assert_eq!(sum, 0, "every byte of a truncated file reads as zero");
        assert!(m.changed());
        assert!(m.changed_lately());
        #[cfg(target_os = "linux")]
        assert!(m.faulted());
    }
}

#[test]
fn truncated_to_half_keeps_the_first_pages() {
    let (f, m) = mapped_temp(false);
    let keep = 2 * 4096;
    f.as_file().set_len(keep as u64).expect("truncate");
    // Read from the end first: the fault maps zeros from the faulting page on only.
    let last = read_all(&m);
    assert!(m.changed());
    let head_ok = m[..keep].iter().enumerate().all(|(i, &b)| b == pattern(i));
    assert!(head_ok, "pages before the cut are intact");
    let tail_zero = m[keep..].iter().all(|&b| b == 0);
    assert!(tail_zero, "pages past the cut read as zeros");
    assert_eq!(last, (0..keep).map(|i| pattern(i) as u64).sum::<u64>());
}

#[test]
fn rewrite_in_place_same_length_is_a_change() {
    let (f, m) = mapped_temp(false);
    std::thread::sleep(std::time::Duration::from_millis(5));
    let mut w = std::fs::OpenOptions::new()
        .write(true)
        .open(f.path())
        .expect("open for write");
    w.seek(SeekFrom::Start(0)).expect("seek");
    w.write_all(&vec![b'x'; LEN]).expect("rewrite");
    w.flush().expect("flush");
    read_all(&m);
    assert!(m.changed(), "same length, new content: changed");
}

#[test]
fn truncate_then_regrow_is_a_change() {
    let (f, m) = mapped_temp(false);
    f.as_file().set_len(0).expect("truncate");
    let mut w = f.as_file();
    w.seek(SeekFrom::Start(0)).expect("seek");
    w.write_all(&vec![7u8; LEN]).expect("rewrite");
    read_all(&m);
    assert!(m.changed());
}

#[test]
fn deleted_file_keeps_its_bytes_and_is_not_a_change() {
    let (f, m) = mapped_temp(false);
    let path = f.path().to_path_buf();
    drop(f);
    assert!(!path.exists());
    assert!(m.iter().enumerate().all(|(i, &b)| b == pattern(i)));
    assert!(!m.changed());
}

#[test]
fn empty_file_is_read_not_mapped() {
    let f = tempfile::NamedTempFile::new().expect("temp file");
    let m = Mapped::new(File::open(f.path()).expect("open"), true).expect("map");
    assert!(m.is_empty());
    assert!(!m.is_mapped());
    assert!(!m.changed());
}

#[test]
fn many_maps_from_many_threads_are_guarded_independently() {
    // More maps than table slots: the rest are read into memory; all survive truncation.
    let n = 40;
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(move || {
                let maps: Vec<_> = (0..n).map(|_| mapped_temp(false)).collect();
                for (k, (f, m)) in maps.iter().enumerate() {
                    if k.is_multiple_of(2) {
                        f.as_file().set_len(100).expect("truncate");
                    }
                    read_all(m);
                    assert_eq!(m.changed(), k % 2 == 0);
                }
            });
        }
    });
}

#[test]
fn slots_are_reused_after_drop() {
    for _ in 0..3 * 128 {
        let (f, m) = mapped_temp(false);
        f.as_file().set_len(0).expect("truncate");
        read_all(&m);
        assert!(m.changed());
    }
    // Every slot freed by the drops above (other tests may hold a few right now).
    #[cfg(target_os = "linux")]
    assert!(
        mapped_temp(false).1.is_mapped(),
        "dropped maps free their slots"
    );
}
