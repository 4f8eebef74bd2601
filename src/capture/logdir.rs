//! Where a capture is written and how: session folders named by local time, host names made
//! safe as file names, and writes that never overwrite and are never seen half-done.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Folder under a log dir that TensorBoard/XProf read captures from.
pub const PROFILE_DIR: &str = "plugins/profile";

/// `<logdir>/plugins/profile`: the `repository_root` sent to the server.
pub fn repository_root(logdir: &Path) -> PathBuf {
    logdir.join(PROFILE_DIR)
}

/// The session folder name the reference client uses: local time as `YYYY_MM_DD_HH_MM_SS`.
pub fn session_id_now() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    session_id_at(now as libc::time_t)
}

/// [`session_id_now`] for a given Unix time (seconds), in the local time zone.
pub fn session_id_at(secs: libc::time_t) -> String {
    // SAFETY: `tm` is plain data that localtime_r fills; both pointers are valid for the call.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let ok = unsafe { !libc::localtime_r(&secs, &mut tm).is_null() };
    if !ok {
        return format!("session_{secs}");
    }
    format!(
        "{:04}_{:02}_{:02}_{:02}_{:02}_{:02}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    )
}

/// The file name stem the server derives from `host_name` (`:` becomes `_`), made safe: no path
/// separators, no `..`, no control or other odd characters, at most 200 bytes, never empty.
pub fn sanitize_host(host: &str) -> String {
    let mut s: String = host
        .chars()
        .map(|c| match c {
            ':' | '/' | '\\' => '_',
            c if c.is_control() => '_',
            c if c.is_alphanumeric() || matches!(c, '.' | '-' | '_' | '[' | ']' | '@') => c,
            _ => '_',
        })
        .collect();
    while s.contains("..") {
        s = s.replace("..", "_");
    }
    let s = s.trim_start_matches('.').to_string();
    let mut s = if s.is_empty() { "host".to_string() } else { s };
    if s.len() > 200 {
        let mut cut = 200;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
    }
    s
}

/// `<logdir>/plugins/profile/<session>/<sanitized host>.xplane.pb`.
pub fn xplane_path(logdir: &Path, session: &str, host: &str) -> PathBuf {
    repository_root(logdir)
        .join(sanitize_host(session))
        .join(format!("{}.xplane.pb", sanitize_host(host)))
}

/// Writes `bytes` as the new file `path`: into a hidden temp file beside it, then linked into
/// place, so readers see the whole file or nothing. Fails with `AlreadyExists` instead of
/// overwriting. Parent folders are created.
pub fn write_new(path: &Path, bytes: &[u8]) -> io::Result<()> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no parent"))?;
    std::fs::create_dir_all(dir)?;
    if path.exists() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} exists; tracetui never overwrites", path.display()),
        ));
    }
    let name = path
        .file_name()
        .map_or_else(|| "capture".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(
        ".{name}.tracetui-tmp-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        match std::fs::hard_link(&tmp, path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} exists; tracetui never overwrites", path.display()),
            )),
            // File systems without hard links: a rename is still atomic; the check above keeps
            // the no-overwrite promise except against a writer racing us.
            Err(_) if !path.exists() => std::fs::rename(&tmp, path),
            Err(e) => Err(e),
        }
    })();
    let _ = std::fs::remove_file(&tmp);
    result
}

/// One poll of a file another process is writing: its size when it is non-empty and the same
/// as at the previous poll (`last`, updated here), i.e. when it stopped growing.
pub fn settled_size(path: &Path, last: &mut Option<u64>) -> Option<u64> {
    let size = std::fs::metadata(path).ok().map(|m| m.len());
    let done = size.filter(|&s| s > 0 && *last == Some(s));
    *last = size;
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_become_safe_file_names() {
        assert_eq!(sanitize_host("localhost:9999"), "localhost_9999");
        assert_eq!(sanitize_host("10.0.0.2:6009"), "10.0.0.2_6009");
        assert_eq!(sanitize_host("[::1]:9999"), "[__1]_9999");
        assert_eq!(sanitize_host("../../etc/passwd"), "____etc_passwd");
        assert_eq!(sanitize_host(".."), "_");
        assert_eq!(sanitize_host("a\u{1b}[2Jb"), "a_[2Jb");
        assert_eq!(sanitize_host(""), "host");
        assert_eq!(sanitize_host("...hidden"), "_.hidden");
        assert!(sanitize_host(&"x".repeat(500)).len() <= 200);
        for h in ["a/b", "a\\b", "..", "\n", "a..b"] {
            let s = sanitize_host(h);
            assert!(
                !s.contains('/') && !s.contains("..") && !s.starts_with('.'),
                "{h} -> {s}"
            );
        }
    }

    #[test]
    fn session_ids_have_the_reference_shape() {
        let s = session_id_at(1_700_000_000);
        assert_eq!(s.len(), 19, "{s}");
        assert_eq!(s.matches('_').count(), 5, "{s}");
        assert!(s.starts_with("2023_11_1"), "{s}");
    }

    #[test]
    fn write_new_never_overwrites() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a/b/host.xplane.pb");
        write_new(&p, b"one").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"one");
        let e = write_new(&p, b"two").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&p).unwrap(), b"one");
        let left: Vec<_> = std::fs::read_dir(p.parent().unwrap()).unwrap().collect();
        assert_eq!(left.len(), 1, "no temp file left behind");
    }
}
