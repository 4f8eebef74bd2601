//! `.gz` fast path: inflate into an unlinked temporary file so the text can be memory-mapped and
//! parsed with serde_json's slice reader (file-backed pages, not anonymous memory).

use crate::formats::progress::Progress;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The inflated text in a temporary file (already unlinked).
pub struct Spilled {
    /// The file, positioned anywhere; map it to read.
    pub file: File,
    /// Uncompressed bytes written.
    pub len: u64,
    /// The inflate error that ended the stream early (truncated/corrupt gzip), if any.
    pub error: Option<io::Error>,
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A new, already unlinked temporary file.
fn temp_file() -> io::Result<File> {
    let name = std::env::temp_dir().join(format!(
        ".tracetui-{}-{}.json",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&name)?;
    let _ = fs::remove_file(&name);
    Ok(file)
}

/// A temporary file being filled by [`Growing::inflate`] while others read its first
/// [`Growing::avail`] bytes through a map made in advance.
pub struct Growing {
    /// The file, growing by appends; map [`Growing::room`] bytes of it once (pages past its
    /// end are never read: only the published length is).
    pub file: File,
    /// Most bytes the text may take.
    pub room: u64,
    written: AtomicU64,
    done: AtomicBool,
}

impl Growing {
    /// An unlinked temporary file for at most `room` bytes.
    pub fn create(room: u64) -> io::Result<Growing> {
        let file = temp_file()?;
        Ok(Growing {
            file,
            room,
            written: AtomicU64::new(0),
            done: AtomicBool::new(false),
        })
    }

    /// A read-only map of [`Growing::room`] bytes of the file, made once before inflating.
    pub fn map(&self) -> io::Result<memmap2::Mmap> {
        let len = usize::try_from(self.room).map_err(io::Error::other)?;
        // SAFETY: the temporary file is private to this process (unlinked) and only grows while
        // mapped; readers only read below the published inflated length (inside the file), so
        // the map's pages past the file's end are never touched.
        unsafe { memmap2::MmapOptions::new().len(len).map(&self.file) }
    }

    /// Bytes inflated so far, and whether inflating has ended.
    pub fn avail(&self) -> (usize, bool) {
        let done = self.done.load(Ordering::Acquire);
        let n = self.written.load(Ordering::Acquire);
        (usize::try_from(n).unwrap_or(usize::MAX), done)
    }

    /// Inflates `path` into the file, publishing its progress; `(length, inflate error)`. Errors
    /// when the text outgrows the room or cannot be written (then nothing is usable).
    pub fn inflate(
        &self,
        path: &Path,
        progress: &Progress,
    ) -> io::Result<(u64, Option<io::Error>)> {
        let r = self.fill(path, progress);
        self.done.store(true, Ordering::Release);
        r
    }

    fn fill(&self, path: &Path, progress: &Progress) -> io::Result<(u64, Option<io::Error>)> {
        inflate_into(path, &self.file, self.room, progress, |len| {
            self.written.store(len, Ordering::Release)
        })
    }
}

/// Inflates `path` (gzip, possibly multi-member) into `out`, calling `wrote` with the length so
/// far after each write; stops early on cancel. `(length, inflate error)`; `Err` when writing
/// fails or the text would pass `room` bytes.
fn inflate_into(
    path: &Path,
    mut out: &File,
    room: u64,
    progress: &Progress,
    wrote: impl Fn(u64),
) -> io::Result<(u64, Option<io::Error>)> {
    let mut src =
        flate2::read::MultiGzDecoder::new(BufReader::with_capacity(1 << 16, File::open(path)?));
    let mut buf = vec![0u8; 1 << 20];
    let mut len = 0u64;
    loop {
        if progress.cancelled() {
            return Ok((len, None));
        }
        match src.read(&mut buf) {
            Ok(0) => return Ok((len, None)),
            Ok(n) => {
                if len + n as u64 > room {
                    return Err(io::Error::other("inflated text outgrew its room"));
                }
                out.write_all(&buf[..n])?;
                len += n as u64;
                wrote(len);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Ok((len, Some(e))),
        }
    }
}

/// Inflates `path` (gzip, possibly multi-member) into a temporary file. Errors only when the
/// temporary file cannot be created or written (the caller then streams instead).
pub fn inflate_to_temp(path: &Path, progress: &Progress) -> io::Result<Spilled> {
    let file = temp_file()?;
    let (len, error) = inflate_into(path, &file, u64::MAX, progress, |len| {
        progress.bytes_done.store(len, Ordering::Relaxed)
    })?;
    (&file).flush()?;
    Ok(Spilled { file, len, error })
}
