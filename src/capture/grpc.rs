//! Client of the JAX/TensorFlow profiler server (`/tensorflow.ProfilerService/Profile`).
//!
//! One request per address, all addresses concurrently into one session folder, as TensorBoard
//! does for a multi-host job. The request is what the reference client sends (`repository_root`,
//! `session_id`, `host_name`, `tools = ["xplane.pb"]`, `max_events`) plus `emit_xspace`: newer
//! servers return the XSpace, which is written here; older ones ignore that field and write the
//! file on their own disk, where it is waited for. Retries follow the reference client: on
//! UNAVAILABLE, ALREADY_EXISTS, "Stream removed", and an empty trace.

use super::logdir;
use super::proto::{
    ProfileOptions, ProfileRequest, ProfileToolData, TerminateRequest, TerminateResponse,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tonic::codegen::http::uri::PathAndQuery;
use tonic::{Code, Status};

const PROFILE_PATH: &str = "/tensorflow.ProfilerService/Profile";
const TERMINATE_PATH: &str = "/tensorflow.ProfilerService/Terminate";
/// The most a gRPC message can carry (its length prefix is 32 bits; protobuf stops at 2 GiB).
const MAX_MESSAGE: usize = i32::MAX as usize;

/// The Profile response, read with the XSpace kept as the bytes the server sent (the same wire
/// encoding as `ProfileResponse`), so it is written to disk without being decoded and re-encoded.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RawProfileResponse {
    /// Tool outputs (older servers may put an `xplane.pb` here).
    #[prost(message, repeated, tag = "6")]
    pub tool_data: Vec<ProfileToolData>,
    /// True when the server recorded nothing.
    #[prost(bool, tag = "7")]
    pub empty_trace: bool,
    /// The serialized XSpace, when the server honours `emit_xspace`.
    #[prost(bytes = "vec", optional, tag = "8")]
    pub xspace: Option<Vec<u8>>,
}

/// What to capture and where to put it.
#[derive(Clone, Debug)]
pub struct Options {
    /// How long the server traces.
    pub duration_ms: u64,
    /// Host tracer level (0–3; 2 records allocator events).
    pub host_tracer_level: u32,
    /// Device tracer level (0 off, 1 on).
    pub device_tracer_level: u32,
    /// Python tracer level (0 off, 1 on).
    pub python_tracer_level: u32,
    /// Wait this long before tracing starts (sent as `start_timestamp_ns`).
    pub delay_ms: u64,
    /// Most events the server records.
    pub max_events: u64,
    /// Attempts per address (the reference client makes 3).
    pub attempts: u32,
    /// Log dir the capture goes under (`plugins/profile/<session>/`).
    pub logdir: PathBuf,
    /// Per-attempt deadline; `None` = max(60 s, 2 × duration) + delay, as the reference client.
    pub deadline: Option<Duration>,
    /// How long to wait for the file an older server writes itself.
    pub server_file_wait: Duration,
    /// TCP/HTTP2 connect timeout.
    pub connect_timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            duration_ms: 2000,
            host_tracer_level: 2,
            device_tracer_level: 1,
            python_tracer_level: 1,
            delay_ms: 0,
            max_events: 1_000_000,
            attempts: 3,
            logdir: PathBuf::from("."),
            deadline: None,
            server_file_wait: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(10),
        }
    }
}

impl Options {
    /// The per-attempt deadline.
    pub fn deadline(&self) -> Duration {
        self.deadline.unwrap_or_else(|| {
            Duration::from_millis(60_000u64.max(self.duration_ms.saturating_mul(2)))
                + Duration::from_millis(self.delay_ms)
        })
    }
}

/// Where one address's capture landed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Landed {
    /// The server returned the XSpace; tracetui wrote it here.
    Returned { path: PathBuf, bytes: u64 },
    /// An older server wrote the file itself, and it appeared here.
    WrittenByServer { path: PathBuf, bytes: u64 },
}

impl Landed {
    /// The capture file.
    pub fn path(&self) -> &Path {
        match self {
            Landed::Returned { path, .. } | Landed::WrittenByServer { path, .. } => path,
        }
    }
}

/// Why a capture failed, in words a user can act on.
#[derive(Debug)]
pub enum CaptureError {
    /// The address is not `HOST:PORT` (or a URL).
    BadAddress(String),
    /// Nothing listens there.
    Refused(String),
    /// No connection or no answer within the deadline.
    TimedOut { after: Duration },
    /// Every attempt returned an empty trace.
    EmptyTrace { attempts: u32 },
    /// Something answers, but not the profiler service.
    NotProfiler(String),
    /// An older server wrote the capture on its own disk, where this machine does not see it.
    ServerWroteElsewhere { path: PathBuf },
    /// The server answered with an error.
    Status { code: Code, message: String },
    /// Writing the capture failed.
    Write {
        path: PathBuf,
        error: std::io::Error,
    },
    /// Interrupted (Ctrl-C); the server was asked to stop.
    Interrupted,
}

impl std::fmt::Display for CaptureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CaptureError::BadAddress(a) => write!(f, "`{a}` is not HOST:PORT"),
            CaptureError::Refused(d) => write!(
                f,
                "connection refused ({d}): is the program running with jax.profiler.start_server(PORT) \
                 or tf.profiler.experimental.server.start(PORT)?"
            ),
            CaptureError::TimedOut { after } => {
                write!(f, "no answer within {:.1} s", after.as_secs_f64())
            }
            CaptureError::EmptyTrace { attempts } => write!(
                f,
                "empty trace after {attempts} attempts: the program recorded nothing while traced \
                 (is it running steps? try a longer --duration-ms)"
            ),
            CaptureError::NotProfiler(d) => write!(
                f,
                "no answer from a profiler server ({d}): is one listening there? Start it in the \
                 program with jax.profiler.start_server(PORT)"
            ),
            CaptureError::ServerWroteElsewhere { path } => write!(
                f,
                "the server wrote the capture on its own disk at {} (an older server ignores \
                 emit_xspace); this machine does not see that path: run tracetui where the server \
                 runs or share the log dir",
                path.display()
            ),
            CaptureError::Status { code, message } => {
                write!(f, "server error {code:?}: {message}")
            }
            CaptureError::Write { path, error } => {
                write!(f, "cannot write {}: {error}", path.display())
            }
            CaptureError::Interrupted => write!(f, "interrupted; the server was asked to stop"),
        }
    }
}

impl std::error::Error for CaptureError {}

/// The result for one address.
#[derive(Debug)]
pub struct HostResult {
    /// The address as typed.
    pub address: String,
    /// Attempts made.
    pub attempts: u32,
    /// Where the capture landed, or why not.
    pub outcome: Result<Landed, CaptureError>,
}

/// The request the reference client sends, plus `emit_xspace`.
pub fn build_request(
    address: &str,
    session: &str,
    repository_root: &Path,
    o: &Options,
) -> ProfileRequest {
    let start_timestamp_ns = if o.delay_ms > 0 {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        now.saturating_add(o.delay_ms.saturating_mul(1_000_000))
    } else {
        0
    };
    ProfileRequest {
        duration_ms: o.duration_ms,
        max_events: o.max_events,
        tools: vec!["xplane.pb".into()],
        opts: Some(ProfileOptions {
            host_tracer_level: o.host_tracer_level,
            device_tracer_level: o.device_tracer_level,
            python_tracer_level: o.python_tracer_level,
            version: 1,
            duration_ms: o.duration_ms,
            start_timestamp_ns,
            repository_path: repository_root.display().to_string(),
            session_id: session.to_string(),
            ..Default::default()
        }),
        repository_root: repository_root.display().to_string(),
        session_id: session.to_string(),
        host_name: address.to_string(),
        emit_xspace: true,
    }
}

fn endpoint_uri(address: &str) -> Result<String, CaptureError> {
    let a = address.trim();
    let a = a.strip_prefix("grpc://").unwrap_or(a);
    let uri = if a.contains("://") {
        a.to_string()
    } else {
        format!("http://{a}")
    };
    match uri.parse::<tonic::codegen::http::Uri>() {
        Ok(u) if u.host().is_some() && u.port_u16().is_some() => Ok(uri),
        _ => Err(CaptureError::BadAddress(address.to_string())),
    }
}

fn is_refused(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::ConnectionRefused
        {
            return true;
        }
        cur = err.source();
    }
    false
}

fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![e.to_string()];
    let mut cur = e.source();
    while let Some(err) = cur {
        parts.push(err.to_string());
        cur = err.source();
    }
    parts.join(": ")
}

/// Whether the reference client would try again after this status.
pub fn should_retry(s: &Status) -> bool {
    matches!(s.code(), Code::Unavailable | Code::AlreadyExists)
        || s.message().contains("Stream removed")
}

fn status_error(s: Status) -> CaptureError {
    let msg = s.message().to_string();
    let h2 = [
        "h2 protocol",
        "protocol error",
        "frame with invalid size",
        "http2",
        "invalid HTTP",
    ];
    if s.code() == Code::Unimplemented {
        CaptureError::NotProfiler(format!("UNIMPLEMENTED: {msg}"))
    } else if s.code() == Code::Cancelled
        || s.code() == Code::Unknown && msg.contains("transport error")
    {
        // The peer closed the connection (an HTTP/1 server answering and hanging up closes
        // it before or after tonic reads the answer: Cancelled or Unknown by timing).
        CaptureError::NotProfiler(format!(
            "the connection closed without a gRPC answer: {msg}"
        ))
    } else if h2.iter().any(|p| msg.contains(p))
        || s.code() == Code::Internal && msg.contains("content-type")
    {
        CaptureError::NotProfiler(msg)
    } else {
        CaptureError::Status {
            code: s.code(),
            message: msg,
        }
    }
}

async fn connect(address: &str, o: &Options) -> Result<tonic::transport::Channel, CaptureError> {
    let uri = endpoint_uri(address)?;
    let ep = tonic::transport::Endpoint::from_shared(uri)
        .map_err(|_| CaptureError::BadAddress(address.to_string()))?
        .connect_timeout(o.connect_timeout);
    match tokio::time::timeout(o.connect_timeout + Duration::from_secs(1), ep.connect()).await {
        Err(_) => Err(CaptureError::TimedOut {
            after: o.connect_timeout,
        }),
        Ok(Ok(ch)) => Ok(ch),
        Ok(Err(e)) if is_refused(&e) => Err(CaptureError::Refused(address.to_string())),
        Ok(Err(e)) => {
            let chain = error_chain(&e);
            if chain.contains("timed out") {
                Err(CaptureError::TimedOut {
                    after: o.connect_timeout,
                })
            } else {
                Err(CaptureError::NotProfiler(chain))
            }
        }
    }
}

async fn profile_call(
    ch: tonic::transport::Channel,
    req: ProfileRequest,
    deadline: Duration,
) -> Result<RawProfileResponse, Status> {
    let mut grpc = tonic::client::Grpc::new(ch)
        .max_decoding_message_size(MAX_MESSAGE)
        .max_encoding_message_size(MAX_MESSAGE);
    grpc.ready()
        .await
        .map_err(|e| Status::unavailable(format!("connection not ready: {e}")))?;
    let mut r = tonic::Request::new(req);
    r.set_timeout(deadline);
    let codec = tonic_prost::ProstCodec::<ProfileRequest, RawProfileResponse>::default();
    let resp = grpc
        .unary(r, PathAndQuery::from_static(PROFILE_PATH), codec)
        .await?;
    Ok(resp.into_inner())
}

/// Asks the server at `address` to end the session early (best effort, 5 s).
pub async fn terminate(address: &str, session: &str) -> Result<(), CaptureError> {
    let o = Options {
        connect_timeout: Duration::from_secs(5),
        ..Default::default()
    };
    let ch = connect(address, &o).await?;
    let mut grpc = tonic::client::Grpc::new(ch);
    grpc.ready()
        .await
        .map_err(|e| CaptureError::NotProfiler(e.to_string()))?;
    let codec = tonic_prost::ProstCodec::<TerminateRequest, TerminateResponse>::default();
    let mut r = tonic::Request::new(TerminateRequest {
        session_id: session.to_string(),
    });
    r.set_timeout(Duration::from_secs(5));
    grpc.unary(r, PathAndQuery::from_static(TERMINATE_PATH), codec)
        .await
        .map(|_| ())
        .map_err(status_error)
}

fn xspace_bytes(resp: RawProfileResponse) -> Option<Vec<u8>> {
    if let Some(x) = resp.xspace {
        return Some(x);
    }
    resp.tool_data
        .into_iter()
        .find(|t| t.name.ends_with("xplane.pb") && !t.data.is_empty())
        .map(|t| t.data)
}

async fn wait_for_server_file(path: &Path, wait: Duration) -> Option<u64> {
    let deadline = Instant::now() + wait;
    let mut last = None;
    loop {
        if let Some(s) = logdir::settled_size(path, &mut last) {
            return Some(s);
        }
        if Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Captures one address: connect, Profile (with retries), then write or find the file.
pub async fn capture_one(address: String, session: String, o: Arc<Options>) -> HostResult {
    let root = logdir::repository_root(&o.logdir);
    let path = logdir::xplane_path(&o.logdir, &session, &address);
    let deadline = o.deadline();
    let mut attempts = 0;
    let mut last_err = CaptureError::EmptyTrace { attempts: 0 };
    let attempts_max = o.attempts.max(1);
    while attempts < attempts_max {
        attempts += 1;
        let ch = match connect(&address, &o).await {
            Ok(ch) => ch,
            Err(e) => {
                return HostResult {
                    address,
                    attempts,
                    outcome: Err(e),
                };
            }
        };
        let req = build_request(&address, &session, &root, &o);
        let resp = match tokio::time::timeout(
            deadline + Duration::from_secs(2),
            profile_call(ch, req, deadline),
        )
        .await
        {
            Err(_) => {
                return HostResult {
                    address,
                    attempts,
                    outcome: Err(CaptureError::TimedOut { after: deadline }),
                };
            }
            Ok(Err(s))
                if s.code() == Code::DeadlineExceeded
                    || s.code() == Code::Cancelled && s.message().contains("Timeout") =>
            {
                return HostResult {
                    address,
                    attempts,
                    outcome: Err(CaptureError::TimedOut { after: deadline }),
                };
            }
            Ok(Err(s)) if should_retry(&s) && attempts < attempts_max => {
                last_err = status_error(s);
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
            Ok(Err(s)) => {
                return HostResult {
                    address,
                    attempts,
                    outcome: Err(status_error(s)),
                };
            }
            Ok(Ok(r)) => r,
        };
        let empty = resp.empty_trace;
        match xspace_bytes(resp) {
            Some(x) if !x.is_empty() => {
                let n = x.len() as u64;
                let outcome = match logdir::write_new(&path, &x) {
                    Ok(()) => Ok(Landed::Returned { path, bytes: n }),
                    Err(error) => Err(CaptureError::Write { path, error }),
                };
                return HostResult {
                    address,
                    attempts,
                    outcome,
                };
            }
            Some(_) => {}
            None if !empty => {
                let outcome = match wait_for_server_file(&path, o.server_file_wait).await {
                    Some(bytes) => Ok(Landed::WrittenByServer { path, bytes }),
                    None => Err(CaptureError::ServerWroteElsewhere { path }),
                };
                return HostResult {
                    address,
                    attempts,
                    outcome,
                };
            }
            None => {}
        }
        last_err = CaptureError::EmptyTrace { attempts };
        if attempts < attempts_max {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    if let CaptureError::EmptyTrace { .. } = last_err {
        last_err = CaptureError::EmptyTrace { attempts };
    }
    HostResult {
        address,
        attempts,
        outcome: Err(last_err),
    }
}

/// Captures every address concurrently into one session `<logdir>/plugins/profile/<session>/`.
/// On Ctrl-C the servers are asked to stop (Terminate) and what they return is still written;
/// a second Ctrl-C gives up. Returns one result per address, in the order given.
pub fn capture(
    addresses: &[String],
    session: &str,
    o: &Options,
) -> std::io::Result<Vec<HostResult>> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let o = Arc::new(o.clone());
    let session = session.to_string();
    Ok(rt.block_on(async move {
        let mut set = tokio::task::JoinSet::new();
        for (i, a) in addresses.iter().enumerate() {
            let (a, s, o) = (a.clone(), session.clone(), o.clone());
            set.spawn(async move { (i, capture_one(a, s, o).await) });
        }
        let mut out: Vec<Option<HostResult>> = (0..addresses.len()).map(|_| None).collect();
        let mut interrupted = false;
        loop {
            tokio::select! {
                next = set.join_next() => match next {
                    Some(Ok((i, r))) => out[i] = Some(r),
                    Some(Err(_)) => {}
                    None => break,
                },
                _ = tokio::signal::ctrl_c() => {
                    if interrupted {
                        set.abort_all();
                        break;
                    }
                    interrupted = true;
                    eprintln!("tracetui: interrupted: asking the servers to stop tracing (Ctrl-C again to give up)");
                    for a in addresses {
                        let _ = terminate(a, &session).await;
                    }
                }
            }
        }
        out.into_iter()
            .zip(addresses)
            .map(|(r, a)| {
                r.unwrap_or_else(|| HostResult {
                    address: a.clone(),
                    attempts: 0,
                    outcome: Err(CaptureError::Interrupted),
                })
            })
            .collect()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_become_endpoints() {
        assert_eq!(
            endpoint_uri("localhost:9999").unwrap(),
            "http://localhost:9999"
        );
        assert_eq!(
            endpoint_uri("grpc://10.1.2.3:6009").unwrap(),
            "http://10.1.2.3:6009"
        );
        assert_eq!(endpoint_uri("[::1]:9999").unwrap(), "http://[::1]:9999");
        assert!(endpoint_uri("localhost").is_err());
        assert!(endpoint_uri("a b:1").is_err());
    }

    #[test]
    fn request_has_version_and_both_durations() {
        let o = Options {
            duration_ms: 1234,
            ..Default::default()
        };
        let r = build_request(
            "h:1",
            "2026_01_02_03_04_05",
            Path::new("/l/plugins/profile"),
            &o,
        );
        let opts = r.opts.unwrap();
        assert!(opts.version >= 1);
        assert_eq!((r.duration_ms, opts.duration_ms), (1234, 1234));
        assert_eq!(
            (
                opts.host_tracer_level,
                opts.device_tracer_level,
                opts.python_tracer_level
            ),
            (2, 1, 1)
        );
        assert_eq!(r.tools, vec!["xplane.pb".to_string()]);
        assert!(r.emit_xspace);
        assert_eq!(r.max_events, 1_000_000);
        assert_eq!(r.repository_root, "/l/plugins/profile");
        assert_eq!(r.host_name, "h:1");
    }

    #[test]
    fn deadline_follows_the_reference() {
        let mut o = Options {
            duration_ms: 2000,
            ..Default::default()
        };
        assert_eq!(o.deadline(), Duration::from_secs(60));
        o.duration_ms = 100_000;
        o.delay_ms = 500;
        assert_eq!(o.deadline(), Duration::from_millis(200_500));
    }

    #[test]
    fn retry_rules() {
        assert!(should_retry(&Status::unavailable("x")));
        assert!(should_retry(&Status::already_exists("x")));
        assert!(should_retry(&Status::unknown("Stream removed")));
        assert!(!should_retry(&Status::invalid_argument("x")));
    }
}
