//! `.gz` fast path: inflate into an unlinked temporary file so the text can be memory-mapped and
//! parsed with serde_json's slice reader (file-backed pages, not anonymous memory).

use crate::formats::Progress;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

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

/// Inflates `path` (gzip, possibly multi-member) into a temporary file. Errors only when the
/// temporary file cannot be created or written (the caller then streams instead).
pub fn inflate_to_temp(path: &Path, progress: &Progress) -> io::Result<Spilled> {
    let name = std::env::temp_dir().join(format!(
        ".tracetui-{}-{}.json",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&name)?;
    let _ = fs::remove_file(&name);
    let mut src =
        flate2::read::MultiGzDecoder::new(BufReader::with_capacity(1 << 16, File::open(path)?));
    let mut buf = vec![0u8; 1 << 20];
    let mut len = 0u64;
    let mut error = None;
    loop {
        if progress.cancelled() {
            break;
        }
        match src.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                file.write_all(&buf[..n])?;
                len += n as u64;
                progress.bytes_done.store(len, Ordering::Relaxed);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    file.flush()?;
    Ok(Spilled { file, len, error })
}
