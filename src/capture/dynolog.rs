//! PyTorch's on-demand capture through the `dynolog` daemon.
//!
//! The protocol (dynolog's `dyno gputrace`): one TCP connection to the daemon (port 1778 by
//! default); each message is a native-endian `i32` length, then that many bytes of JSON, in both
//! directions. The request `{"fn":"setKinetOnDemandRequest","config":…,"job_id":…,"pids":[…],
//! "process_limit":…}` carries a Kineto config (newline-separated `KEY=value` lines); the daemon
//! hands it to the Kineto clients of the matched processes (those started with
//! `KINETO_USE_DAEMON=1`) and answers with the pids it matched. Each matched process then writes
//! its trace to the log file with `.json` replaced by `_<pid>.json`.

use serde::Deserialize;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The daemon's default port.
pub const DEFAULT_PORT: u16 = 1778;
/// Largest reply accepted (a reply is a few hundred bytes).
const MAX_REPLY: usize = 16 << 20;

/// When tracing starts and how long it lasts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// Trace `duration_ms` from `start_time_ms` (Unix ms; 0 = at once).
    Duration {
        start_time_ms: u64,
        duration_ms: u64,
    },
    /// Trace `iterations` steps, starting at the next multiple of `roundup`.
    Iterations { roundup: u64, iterations: u64 },
}

/// One on-demand request.
#[derive(Clone, Debug)]
pub struct Request {
    /// Where the processes write (`.json` becomes `_<pid>.json`).
    pub log_file: String,
    /// Job id to match (0 = any).
    pub job_id: u64,
    /// Pids to match (empty or `[0]` = any).
    pub pids: Vec<i64>,
    /// Most processes to trace.
    pub process_limit: u32,
    /// When and how long.
    pub trigger: Trigger,
    /// `record_shapes`.
    pub record_shapes: bool,
    /// `profile_memory` (also turns on the memory snapshot profiler, as `dyno gputrace` does).
    pub profile_memory: bool,
    /// `with_stack`.
    pub with_stack: bool,
    /// `with_flops`.
    pub with_flops: bool,
    /// `with_modules`.
    pub with_modules: bool,
}

impl Request {
    /// The Kineto config text, line for line what `dyno gputrace` sends.
    pub fn config(&self) -> String {
        let mut s = format!("ACTIVITIES_LOG_FILE={}\n", self.log_file);
        let memory_ms = match self.trigger {
            Trigger::Duration {
                start_time_ms,
                duration_ms,
            } => {
                s.push_str(&format!(
                    "PROFILE_START_TIME={start_time_ms}\nACTIVITIES_DURATION_MSECS={duration_ms}"
                ));
                duration_ms
            }
            Trigger::Iterations {
                roundup,
                iterations,
            } => {
                s.push_str(&format!(
                    "PROFILE_START_ITERATION=0\nPROFILE_START_ITERATION_ROUNDUP={roundup}\nACTIVITIES_ITERATIONS={iterations}"
                ));
                0
            }
        };
        s.push_str(&format!(
            "\nPROFILE_REPORT_INPUT_SHAPES={}",
            self.record_shapes
        ));
        if self.profile_memory {
            s.push_str(&format!(
                "\nPROFILE_PROFILE_MEMORY=true\nPROFILE_MEMORY=true\nPROFILE_MEMORY_DURATION_MSECS={memory_ms}"
            ));
        }
        s.push_str(&format!(
            "\nPROFILE_WITH_STACK={}\nPROFILE_WITH_FLOPS={}\nPROFILE_WITH_MODULES={}",
            self.with_stack, self.with_flops, self.with_modules
        ));
        s
    }

    /// The JSON request body.
    pub fn body(&self) -> String {
        let pids = if self.pids.is_empty() {
            vec![0]
        } else {
            self.pids.clone()
        };
        serde_json::json!({
            "fn": "setKinetOnDemandRequest",
            "config": self.config(),
            "job_id": self.job_id,
            "pids": pids,
            "process_limit": self.process_limit,
        })
        .to_string()
    }

    /// The file each matched process writes: the log file with `.json` replaced by `_<pid>.json`.
    pub fn output_file(&self, pid: i64) -> PathBuf {
        PathBuf::from(self.log_file.replacen(".json", &format!("_{pid}.json"), 1))
    }
}

/// The daemon's answer.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
pub struct Reply {
    /// Pids whose Kineto client took the request.
    #[serde(default, rename = "processesMatched")]
    pub processes_matched: Vec<i64>,
    /// Profilers triggered, as the daemon lists them.
    #[serde(default, rename = "activityProfilersTriggered")]
    pub activity_profilers_triggered: Vec<serde_json::Value>,
    /// The same, under the name some daemon versions use.
    #[serde(default, rename = "eventProfilersTriggered")]
    pub event_profilers_triggered: Vec<serde_json::Value>,
}

/// Why the request failed.
#[derive(Debug)]
pub enum Error {
    /// Address could not be resolved or connected.
    Connect { addr: String, error: std::io::Error },
    /// The exchange broke off.
    Io(std::io::Error),
    /// The daemon's reply is not what the protocol says.
    BadReply(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Connect { addr, error } => write!(
                f,
                "cannot reach dynolog at {addr}: {error} (is `dynolog --enable_ipc_monitor` running there?)"
            ),
            Error::Io(e) => write!(f, "dynolog exchange failed: {e}"),
            Error::BadReply(s) => write!(f, "dynolog replied with something unexpected: {s}"),
        }
    }
}

impl std::error::Error for Error {}

/// `HOST` or `HOST:PORT` with the daemon's default port.
pub fn with_default_port(addr: &str) -> String {
    let a = addr.trim();
    let has_port = if let Some(rest) = a.strip_prefix('[') {
        rest.contains("]:")
    } else {
        a.matches(':').count() == 1
    };
    if has_port {
        a.to_string()
    } else {
        format!("{a}:{DEFAULT_PORT}")
    }
}

fn write_frame(mut w: impl Write, body: &[u8]) -> std::io::Result<()> {
    let n = i32::try_from(body.len())
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "message too long"))?;
    w.write_all(&n.to_ne_bytes())?;
    w.write_all(body)?;
    w.flush()
}

fn read_frame(mut r: impl Read) -> Result<Vec<u8>, Error> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len).map_err(Error::Io)?;
    let n = i32::from_ne_bytes(len);
    let n = usize::try_from(n)
        .ok()
        .filter(|&n| n <= MAX_REPLY)
        .ok_or_else(|| Error::BadReply(format!("length prefix {n}")))?;
    let mut buf = vec![0u8; n];
    r.read_exact(&mut buf).map_err(Error::Io)?;
    Ok(buf)
}

/// Sends `req` to the daemon at `addr` and returns its reply.
pub fn send(addr: &str, req: &Request, timeout: Duration) -> Result<Reply, Error> {
    let addr = with_default_port(addr);
    let sock = addr
        .to_socket_addrs()
        .map_err(|error| Error::Connect {
            addr: addr.clone(),
            error,
        })?
        .next()
        .ok_or_else(|| Error::Connect {
            addr: addr.clone(),
            error: std::io::Error::new(std::io::ErrorKind::NotFound, "no address"),
        })?;
    let stream = TcpStream::connect_timeout(&sock, timeout).map_err(|error| Error::Connect {
        addr: addr.clone(),
        error,
    })?;
    stream.set_read_timeout(Some(timeout)).map_err(Error::Io)?;
    stream.set_write_timeout(Some(timeout)).map_err(Error::Io)?;
    write_frame(&stream, req.body().as_bytes()).map_err(Error::Io)?;
    let bytes = read_frame(&stream)?;
    let text = String::from_utf8_lossy(&bytes);
    serde_json::from_str(&text)
        .map_err(|e| Error::BadReply(format!("{e}: {}", crate::text::sanitize(&text))))
}

/// Waits until every file exists and has stopped growing, or `wait` passes; returns those found.
pub fn wait_for_files(files: &[PathBuf], wait: Duration) -> Vec<PathBuf> {
    let deadline = std::time::Instant::now() + wait;
    let mut found: Vec<PathBuf> = Vec::new();
    let mut sizes: Vec<Option<u64>> = vec![None; files.len()];
    loop {
        for (i, f) in files.iter().enumerate() {
            if found.contains(f) {
                continue;
            }
            if super::logdir::settled_size(f, &mut sizes[i]).is_some() {
                found.push(f.clone());
            }
        }
        if found.len() == files.len() || std::time::Instant::now() >= deadline {
            return found;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The log file made absolute (the job writes it, maybe from another working directory).
pub fn absolute_log_file(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().map_or_else(|_| p.to_path_buf(), |d| d.join(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(trigger: Trigger, mem: bool) -> Request {
        Request {
            log_file: "/tmp/test_trace.json".into(),
            job_id: 0,
            pids: vec![],
            process_limit: 3,
            trigger,
            record_shapes: true,
            profile_memory: mem,
            with_stack: true,
            with_flops: false,
            with_modules: true,
        }
    }

    #[test]
    fn config_lines_match_dyno_gputrace() {
        let r = req(
            Trigger::Duration {
                start_time_ms: 1000,
                duration_ms: 42,
            },
            false,
        );
        assert_eq!(
            r.config(),
            "ACTIVITIES_LOG_FILE=/tmp/test_trace.json\nPROFILE_START_TIME=1000\nACTIVITIES_DURATION_MSECS=42\n\
             PROFILE_REPORT_INPUT_SHAPES=true\nPROFILE_WITH_STACK=true\nPROFILE_WITH_FLOPS=false\nPROFILE_WITH_MODULES=true"
        );
        let r = req(
            Trigger::Duration {
                start_time_ms: 1000,
                duration_ms: 42,
            },
            true,
        );
        assert!(r.config().contains(
            "PROFILE_REPORT_INPUT_SHAPES=true\nPROFILE_PROFILE_MEMORY=true\nPROFILE_MEMORY=true\nPROFILE_MEMORY_DURATION_MSECS=42\nPROFILE_WITH_STACK=true"
        ));
        let r = req(
            Trigger::Iterations {
                roundup: 1000,
                iterations: 42,
            },
            false,
        );
        assert!(r.config().starts_with(
            "ACTIVITIES_LOG_FILE=/tmp/test_trace.json\nPROFILE_START_ITERATION=0\nPROFILE_START_ITERATION_ROUNDUP=1000\nACTIVITIES_ITERATIONS=42\n"
        ));
    }

    #[test]
    fn output_files_and_ports() {
        let r = req(
            Trigger::Iterations {
                roundup: 1,
                iterations: 1,
            },
            false,
        );
        assert_eq!(r.output_file(77), PathBuf::from("/tmp/test_trace_77.json"));
        assert_eq!(with_default_port("gpu01"), "gpu01:1778");
        assert_eq!(with_default_port("gpu01:2000"), "gpu01:2000");
        assert_eq!(with_default_port("[::1]"), "[::1]:1778");
        assert_eq!(with_default_port("[::1]:5"), "[::1]:5");
    }

    #[test]
    fn frames_round_trip_and_reject_bad_lengths() {
        let mut buf = Vec::new();
        write_frame(&mut buf, b"{\"a\":1}").unwrap();
        assert_eq!(&buf[..4], &7i32.to_ne_bytes());
        assert_eq!(read_frame(&buf[..]).unwrap(), b"{\"a\":1}");
        let mut neg = (-5i32).to_ne_bytes().to_vec();
        neg.extend_from_slice(b"xxxxx");
        assert!(matches!(read_frame(&neg[..]), Err(Error::BadReply(_))));
        assert!(matches!(read_frame(&buf[..6]), Err(Error::Io(_))));
    }
}
