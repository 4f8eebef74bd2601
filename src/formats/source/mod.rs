//! The bytes a loader parses: one [`Source`] whatever the file is — a plain file mapped
//! ([`Mapped`], guarded against the file changing), a `.gz` inflated into an unlinked temporary
//! file and mapped ([`inflate`]; page cache, not anonymous memory), or bytes in memory.
//!
//! [`open`] looks at a file once (length, gzip magic); [`Opened::plain`] and [`inflate`] then
//! give its bytes. For loaders that parse while a `.gz` is still inflating, [`spill::Growing`]
//! is a temporary file filled by one thread while others read what has been published; when no
//! temporary file can be written, [`pipe::Pipelined`] streams the inflated text instead.
//! Nothing here knows a trace format.

pub mod pipe;
pub mod spill;

use super::mapped::Mapped;
use super::progress::Progress;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

/// True when `bytes` start with the gzip magic number.
#[inline]
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// Gunzips `bytes` into `buf` (at most `limit` inflated bytes) when they start with the gzip
/// magic; else borrows them. A gzip error names the file and how far it got.
pub fn maybe_gunzip<'a>(
    bytes: &'a [u8],
    path: &Path,
    buf: &'a mut Vec<u8>,
    limit: u64,
) -> Result<&'a [u8], super::error::LoadError> {
    if !is_gzip(bytes) {
        return Ok(bytes);
    }
    flate2::read::MultiGzDecoder::new(bytes)
        .take(limit)
        .read_to_end(buf)
        .map_err(|e| {
            super::error::LoadError::new(
                super::error::LoadErrorKind::Corrupt,
                path,
                None,
                format!("gzip: {e} (after {} uncompressed bytes)", buf.len()),
            )
        })?;
    Ok(buf)
}

/// The bytes of a capture file, kept alive as long as something reads them (the loader, and
/// XPlane's lazy args after it).
pub enum Source {
    /// A read-only map of an unlinked temporary file holding an inflated `.gz`: page cache, not
    /// anonymous memory.
    Map(memmap2::Mmap),
    /// The user's file, read through a map guarded against the file changing on disk.
    File(Mapped),
    /// Bytes in memory.
    Owned(Vec<u8>),
}

impl Source {
    /// True when the bytes no longer match what was loaded (the user's file was truncated or
    /// rewritten in place); costs one `fstat`.
    pub fn changed(&self) -> bool {
        match self {
            Source::File(m) => m.changed(),
            Source::Map(_) | Source::Owned(_) => false,
        }
    }

    /// [`Source::changed`] for hot paths (see [`Mapped::changed_lately`]).
    pub fn changed_lately(&self) -> bool {
        match self {
            Source::File(m) => m.changed_lately(),
            Source::Map(_) | Source::Owned(_) => false,
        }
    }
}

impl std::ops::Deref for Source {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Source::Map(m) => m,
            Source::File(m) => m,
            Source::Owned(v) => v,
        }
    }
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Map(m) => write!(f, "Map({} bytes)", m.len()),
            Source::File(m) => write!(f, "File({m:?})"),
            Source::Owned(v) => write!(f, "Owned({} bytes)", v.len()),
        }
    }
}

/// A capture file opened for loading.
pub struct Opened {
    /// The open file.
    pub file: File,
    /// Its length in bytes (compressed length for a `.gz`).
    pub len: u64,
    /// It starts with the gzip magic.
    pub gz: bool,
}

/// Opens `path` and reads its first two bytes (gzip magic). `(what failed, error)` on failure.
pub fn open(path: &Path) -> Result<Opened, (&'static str, io::Error)> {
    let file = File::open(path).map_err(|e| ("cannot open", e))?;
    let len = file.metadata().map_err(|e| ("cannot stat", e))?.len();
    let mut magic = [0u8; 2];
    let gz = (&file).read_exact(&mut magic).is_ok() && is_gzip(&magic);
    Ok(Opened { file, len, gz })
}

impl Opened {
    /// The bytes of a plain file: mapped (`populate`: all pages faulted in at once, for loaders
    /// that read every page anyway), or read into memory when it cannot be mapped.
    pub fn plain(self, populate: bool) -> io::Result<Source> {
        match Mapped::new(self.file.try_clone()?, populate) {
            Ok(m) => Ok(Source::File(m)),
            Err(_) => {
                let mut v = Vec::new();
                (&self.file).seek(SeekFrom::Start(0))?;
                (&self.file).read_to_end(&mut v)?;
                Ok(Source::Owned(v))
            }
        }
    }
}

/// The text of a `.gz` inflated into an unlinked temporary file ([`Source::Map`]).
pub struct Inflated {
    /// The inflated bytes.
    pub source: Source,
    /// The inflate error that ended the stream early (truncated or corrupt gzip): the bytes
    /// are what came before it.
    pub error: Option<io::Error>,
}

/// Inflates the `.gz` at `path` (possibly multi-member) into an unlinked temporary file and maps
/// it, publishing the inflated length as `progress.bytes_done`. Errors only when the temporary
/// file cannot be created, written or mapped (the caller then streams or reads instead).
pub fn inflate(path: &Path, progress: &Progress) -> io::Result<Inflated> {
    let sp = spill::inflate_to_temp(path, progress)?;
    // SAFETY: the temporary file is private to this process (unlinked) and not resized.
    let map = unsafe { memmap2::Mmap::map(&sp.file) }?;
    Ok(Inflated {
        source: Source::Map(map),
        error: sp.error,
    })
}
