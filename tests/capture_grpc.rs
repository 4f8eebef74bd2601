//! `tracetui capture` against an in-process profiler server built from the same protos: round
//! trip into a temp log dir, several hosts at once, deadlines, retries, an older server that
//! writes the file itself, the request's tracer levels, a message above gRPC's usual 4 MiB limit,
//! refused ports, something that is not a profiler server, and hostile host names.
#![cfg(feature = "capture")]

fn load(p: &std::path::Path) -> Result<tracetui::model::Capture, tracetui::formats::LoadError> {
    tracetui::formats::load(
        p,
        tracetui::model::SourceInfo::default(),
        &tracetui::formats::Progress::default(),
    )
}

mod common;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tonic::codegen::{BoxFuture, Service, http};
use tracetui::capture::grpc::{self, CaptureError, Landed, Options, RawProfileResponse};
use tracetui::capture::proto::{ProfileRequest, TerminateRequest, TerminateResponse};

/// What the fake server does for one Profile call.
#[derive(Clone)]
enum Reply {
    /// Returns the XSpace (a server honouring `emit_xspace`).
    Emit(Vec<u8>),
    /// Answers `empty_trace`.
    Empty,
    /// Ignores `emit_xspace`: writes `<repository_root>/<session>/<host ':'→'_'>.xplane.pb` itself.
    OldServerWrites(Vec<u8>),
    /// Ignores `emit_xspace` and writes nothing where the client can see.
    OldServerElsewhere,
    /// Sleeps, then returns the XSpace.
    Slow(Duration, Vec<u8>),
    /// Fails with a status.
    Fail(tonic::Code, &'static str),
}

#[derive(Clone, Default)]
struct Fake {
    script: Arc<Mutex<VecDeque<Reply>>>,
    seen: Arc<Mutex<Vec<ProfileRequest>>>,
    terminated: Arc<Mutex<Vec<String>>>,
}

impl Fake {
    fn new(replies: Vec<Reply>) -> Self {
        Self {
            script: Arc::new(Mutex::new(replies.into())),
            ..Default::default()
        }
    }

    async fn profile(&self, req: ProfileRequest) -> Result<RawProfileResponse, tonic::Status> {
        self.seen.lock().unwrap().push(req.clone());
        let reply = self
            .script
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or(Reply::Empty);
        let ok = |x: Vec<u8>| RawProfileResponse {
            tool_data: vec![],
            empty_trace: false,
            xspace: Some(x),
        };
        match reply {
            Reply::Emit(x) => Ok(ok(x)),
            Reply::Empty => Ok(RawProfileResponse {
                tool_data: vec![],
                empty_trace: true,
                xspace: None,
            }),
            Reply::OldServerWrites(x) => {
                let dir = Path::new(&req.repository_root).join(&req.session_id);
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(
                    dir.join(format!("{}.xplane.pb", req.host_name.replace(':', "_"))),
                    x,
                )
                .unwrap();
                Ok(RawProfileResponse {
                    tool_data: vec![],
                    empty_trace: false,
                    xspace: None,
                })
            }
            Reply::OldServerElsewhere => Ok(RawProfileResponse {
                tool_data: vec![],
                empty_trace: false,
                xspace: None,
            }),
            Reply::Slow(d, x) => {
                tokio::time::sleep(d).await;
                Ok(ok(x))
            }
            Reply::Fail(code, msg) => Err(tonic::Status::new(code, msg)),
        }
    }
}

struct ProfileSvc(Fake);
impl tonic::server::UnaryService<ProfileRequest> for ProfileSvc {
    type Response = RawProfileResponse;
    type Future = BoxFuture<tonic::Response<RawProfileResponse>, tonic::Status>;
    fn call(&mut self, r: tonic::Request<ProfileRequest>) -> Self::Future {
        let f = self.0.clone();
        Box::pin(async move { f.profile(r.into_inner()).await.map(tonic::Response::new) })
    }
}

struct TerminateSvc(Fake);
impl tonic::server::UnaryService<TerminateRequest> for TerminateSvc {
    type Response = TerminateResponse;
    type Future = BoxFuture<tonic::Response<TerminateResponse>, tonic::Status>;
    fn call(&mut self, r: tonic::Request<TerminateRequest>) -> Self::Future {
        let f = self.0.clone();
        Box::pin(async move {
            f.terminated.lock().unwrap().push(r.into_inner().session_id);
            Ok(tonic::Response::new(TerminateResponse {}))
        })
    }
}

impl<B> Service<http::Request<B>> for Fake
where
    B: tonic::codegen::Body + Send + 'static,
    B::Error: Into<tonic::codegen::StdError> + Send + 'static,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = std::convert::Infallible;
    type Future = BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let me = self.clone();
        match req.uri().path() {
            "/tensorflow.ProfilerService/Profile" => Box::pin(async move {
                let mut g = tonic::server::Grpc::new(tonic_prost::ProstCodec::default())
                    .max_encoding_message_size(usize::MAX);
                Ok(g.unary(ProfileSvc(me), req).await)
            }),
            "/tensorflow.ProfilerService/Terminate" => Box::pin(async move {
                let mut g = tonic::server::Grpc::new(tonic_prost::ProstCodec::default());
                Ok(g.unary(TerminateSvc(me), req).await)
            }),
            _ => Box::pin(
                async move { Ok(tonic::Status::unimplemented("no such method").into_http()) },
            ),
        }
    }
}

impl tonic::server::NamedService for Fake {
    const NAME: &'static str = "tensorflow.ProfilerService";
}

/// Starts the fake on a free loopback port in a background runtime; returns its address.
fn serve(fake: Fake) -> String {
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = std_listener.local_addr().unwrap();
    std_listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let l = tokio::net::TcpListener::from_std(std_listener).unwrap();
            let incoming = tonic::transport::server::TcpIncoming::from(l);
            tonic::transport::Server::builder()
                .add_service(fake)
                .serve_with_incoming(incoming)
                .await
                .unwrap();
        });
    });
    addr.to_string()
}

fn xspace() -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/xplane/vm.xplane.pb"))
        .unwrap()
}

fn opts(logdir: &Path) -> Options {
    Options {
        duration_ms: 100,
        logdir: logdir.to_path_buf(),
        server_file_wait: Duration::from_secs(2),
        ..Default::default()
    }
}

fn one(addr: &str, o: &Options) -> grpc::HostResult {
    let mut r = grpc::capture(&[addr.to_string()], "2026_11_24_10_00_00", o).unwrap();
    r.remove(0)
}

#[test]
fn round_trip_writes_the_returned_xspace_where_tensorboard_looks() {
    let d = tempfile::tempdir().unwrap();
    let fake = Fake::new(vec![Reply::Emit(xspace())]);
    let addr = serve(fake.clone());
    let r = one(&addr, &opts(d.path()));
    let Ok(Landed::Returned { path, bytes }) = r.outcome else {
        panic!("{:?}", r.outcome)
    };
    let want: PathBuf = d
        .path()
        .join("plugins/profile/2026_11_24_10_00_00")
        .join(format!("{}.xplane.pb", addr.replace(':', "_")));
    assert_eq!(path, want);
    assert_eq!(bytes, xspace().len() as u64);
    assert_eq!(std::fs::read(&path).unwrap(), xspace());
    // It loads like any capture, with its XLA / python lines.
    let cap = load(&path).expect("captured file loads");
    assert!(cap.slices.len() > 1000, "{}", cap.slices.len());
    // The request is what the reference client sends, plus emit_xspace.
    let seen = fake.seen.lock().unwrap();
    let req = &seen[0];
    let o = req.opts.as_ref().unwrap();
    assert!(
        o.version >= 1,
        "version must be >= 1 or the levels are ignored"
    );
    assert_eq!(
        (
            o.host_tracer_level,
            o.device_tracer_level,
            o.python_tracer_level
        ),
        (2, 1, 1)
    );
    assert_eq!((req.duration_ms, o.duration_ms), (100, 100));
    assert!(req.emit_xspace);
    assert_eq!(req.tools, vec!["xplane.pb"]);
    assert_eq!(req.session_id, "2026_11_24_10_00_00");
    assert_eq!(req.host_name, addr);
    assert_eq!(
        Path::new(&req.repository_root),
        d.path().join("plugins/profile")
    );
}

#[test]
fn requested_levels_are_sent() {
    let d = tempfile::tempdir().unwrap();
    let fake = Fake::new(vec![Reply::Emit(xspace())]);
    let addr = serve(fake.clone());
    let o = Options {
        host_tracer_level: 3,
        device_tracer_level: 0,
        python_tracer_level: 0,
        ..opts(d.path())
    };
    assert!(one(&addr, &o).outcome.is_ok());
    let seen = fake.seen.lock().unwrap();
    let p = seen[0].opts.as_ref().unwrap();
    assert_eq!(
        (
            p.version >= 1,
            p.host_tracer_level,
            p.device_tracer_level,
            p.python_tracer_level
        ),
        (true, 3, 0, 0)
    );
}

#[test]
fn several_hosts_are_captured_concurrently_into_one_session() {
    let d = tempfile::tempdir().unwrap();
    let slow = Duration::from_millis(700);
    let addrs: Vec<String> = (0..3)
        .map(|_| serve(Fake::new(vec![Reply::Slow(slow, xspace())])))
        .collect();
    let t = std::time::Instant::now();
    let rs = grpc::capture(&addrs, "2026_11_24_10_00_01", &opts(d.path())).unwrap();
    // Concurrent: three 0.7 s servers answer in well under 3 × 0.7 s.
    assert!(
        t.elapsed() < Duration::from_millis(1900),
        "{:?}",
        t.elapsed()
    );
    let session = d.path().join("plugins/profile/2026_11_24_10_00_01");
    for (r, a) in rs.iter().zip(&addrs) {
        assert_eq!(&r.address, a);
        let l = r.outcome.as_ref().unwrap();
        assert_eq!(l.path().parent().unwrap(), session);
    }
    assert_eq!(std::fs::read_dir(&session).unwrap().count(), 3);
}

#[test]
fn a_slow_server_hits_the_deadline() {
    let d = tempfile::tempdir().unwrap();
    let addr = serve(Fake::new(vec![Reply::Slow(
        Duration::from_secs(5),
        xspace(),
    )]));
    let o = Options {
        deadline: Some(Duration::from_millis(400)),
        ..opts(d.path())
    };
    let t = std::time::Instant::now();
    let r = one(&addr, &o);
    assert!(
        matches!(r.outcome, Err(CaptureError::TimedOut { .. })),
        "{:?}",
        r.outcome
    );
    assert!(t.elapsed() < Duration::from_secs(4));
    assert!(
        !d.path().join("plugins").exists()
            || std::fs::read_dir(d.path().join("plugins/profile")).map_or(0, |r| r.count()) == 0
    );
}

#[test]
fn empty_traces_are_retried_then_reported() {
    let d = tempfile::tempdir().unwrap();
    let fake = Fake::new(vec![
        Reply::Empty,
        Reply::Fail(tonic::Code::Unavailable, "warming up"),
        Reply::Emit(xspace()),
    ]);
    let addr = serve(fake.clone());
    let r = one(&addr, &opts(d.path()));
    assert!(
        matches!(r.outcome, Ok(Landed::Returned { .. })),
        "{:?}",
        r.outcome
    );
    assert_eq!(r.attempts, 3);
    assert_eq!(fake.seen.lock().unwrap().len(), 3);

    let fake = Fake::new(vec![
        Reply::Empty,
        Reply::Empty,
        Reply::Empty,
        Reply::Emit(xspace()),
    ]);
    let addr = serve(fake.clone());
    let r = one(&addr, &opts(d.path()));
    assert!(
        matches!(r.outcome, Err(CaptureError::EmptyTrace { attempts: 3 })),
        "{:?}",
        r.outcome
    );
    assert_eq!(
        fake.seen.lock().unwrap().len(),
        3,
        "3 attempts, as the reference client"
    );
}

#[test]
fn errors_that_are_not_transient_are_not_retried() {
    let d = tempfile::tempdir().unwrap();
    let fake = Fake::new(vec![
        Reply::Fail(tonic::Code::InvalidArgument, "bad options"),
        Reply::Emit(xspace()),
    ]);
    let addr = serve(fake.clone());
    let r = one(&addr, &opts(d.path()));
    let Err(e) = r.outcome else { panic!() };
    assert!(e.to_string().contains("bad options"), "{e}");
    assert_eq!(fake.seen.lock().unwrap().len(), 1);
}

#[test]
fn an_older_server_writes_the_file_itself() {
    let d = tempfile::tempdir().unwrap();
    let addr = serve(Fake::new(vec![Reply::OldServerWrites(xspace())]));
    let r = one(&addr, &opts(d.path()));
    let Ok(Landed::WrittenByServer { path, bytes }) = r.outcome else {
        panic!("{:?}", r.outcome)
    };
    assert_eq!(bytes, xspace().len() as u64);
    assert!(path.starts_with(d.path().join("plugins/profile/2026_11_24_10_00_00")));

    let addr = serve(Fake::new(vec![Reply::OldServerElsewhere]));
    let o = Options {
        server_file_wait: Duration::from_millis(300),
        ..opts(d.path())
    };
    let r = one(&addr, &o);
    let Err(e @ CaptureError::ServerWroteElsewhere { .. }) = r.outcome else {
        panic!("{:?}", r.outcome)
    };
    let msg = e.to_string();
    assert!(
        msg.contains("own disk") && msg.contains(&addr.replace(':', "_")),
        "{msg}"
    );
}

#[test]
fn messages_above_the_default_grpc_limit_are_received() {
    let d = tempfile::tempdir().unwrap();
    // A valid XSpace of ~12 MB (tonic's default limit is 4 MiB): the fixture's planes plus one
    // 12 MB `warnings` string (field 3, length-delimited).
    let mut x = xspace();
    let big = vec![b'w'; 12 << 20];
    x.push((3 << 3) | 2);
    let mut n = big.len() as u64;
    while n >= 0x80 {
        x.push((n as u8) | 0x80);
        n >>= 7;
    }
    x.push(n as u8);
    x.extend_from_slice(&big);
    let addr = serve(Fake::new(vec![Reply::Emit(x.clone())]));
    let r = one(&addr, &opts(d.path()));
    let Ok(Landed::Returned { bytes, path }) = r.outcome else {
        panic!("{:?}", r.outcome)
    };
    assert_eq!(bytes, x.len() as u64);
    assert!(load(&path).is_ok());
}

#[test]
fn refused_ports_and_non_profilers_say_so() {
    let d = tempfile::tempdir().unwrap();
    let free = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .to_string();
    let r = one(&free, &opts(d.path()));
    let Err(e @ CaptureError::Refused(_)) = r.outcome else {
        panic!("{:?}", r.outcome)
    };
    assert!(e.to_string().contains("start_server"), "{e}");

    // Something that answers HTTP/1 and closes: not a profiler server.
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            use std::io::Write;
            let mut s = s;
            let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        }
    });
    let r = one(
        &addr,
        &Options {
            attempts: 1,
            ..opts(d.path())
        },
    );
    assert!(r.outcome.is_err());
    let msg = r.outcome.unwrap_err().to_string();
    assert!(
        msg.contains("profiler") || msg.contains("start_server"),
        "{msg}"
    );

    let r = one("no-port-here", &opts(d.path()));
    assert!(matches!(r.outcome, Err(CaptureError::BadAddress(_))));
}

#[test]
fn hostile_host_names_stay_inside_the_log_dir() {
    let d = tempfile::tempdir().unwrap();
    for host in ["../../escape", "a/b", "x\u{1b}]0;pwn\u{7}", ".."] {
        let p = tracetui::capture::logdir::xplane_path(d.path(), "../s", host);
        assert!(
            p.starts_with(d.path().join("plugins/profile")),
            "{}",
            p.display()
        );
        let rel = p.strip_prefix(d.path()).unwrap();
        assert!(
            rel.components()
                .all(|c| matches!(c, std::path::Component::Normal(_))),
            "{}",
            p.display()
        );
        assert!(!p.display().to_string().chars().any(char::is_control));
    }
}

#[test]
fn an_existing_capture_is_never_overwritten() {
    let d = tempfile::tempdir().unwrap();
    let addr = serve(Fake::new(vec![
        Reply::Emit(xspace()),
        Reply::Emit(b"other".to_vec()),
    ]));
    assert!(one(&addr, &opts(d.path())).outcome.is_ok());
    let r = one(&addr, &opts(d.path()));
    let Err(CaptureError::Write { error, path }) = r.outcome else {
        panic!("{:?}", r.outcome)
    };
    assert_eq!(error.kind(), std::io::ErrorKind::AlreadyExists);
    assert_eq!(std::fs::read(path).unwrap(), xspace());
}

#[test]
fn terminate_reaches_the_server() {
    let fake = Fake::new(vec![]);
    let addr = serve(fake.clone());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(grpc::terminate(&addr, "2026_11_24_10_00_09"))
        .unwrap();
    assert_eq!(
        fake.terminated.lock().unwrap().as_slice(),
        ["2026_11_24_10_00_09"]
    );
}

#[test]
fn the_cli_captures_and_prints_json() {
    let d = tempfile::tempdir().unwrap();
    let addr = serve(Fake::new(vec![Reply::Emit(xspace())]));
    let out = assert_cmd::Command::cargo_bin("tracetui")
        .unwrap()
        .args([
            "capture",
            &addr,
            "--duration-ms",
            "100",
            "--json",
            "--logdir",
        ])
        .arg(d.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let h = &v["hosts"][0];
    assert_eq!(h["ok"], true);
    assert_eq!(h["source"], "returned");
    let p = PathBuf::from(h["path"].as_str().unwrap());
    assert!(p.exists());
    // The new capture is what `summary` of the log dir lists.
    let s = assert_cmd::Command::cargo_bin("tracetui")
        .unwrap()
        .args(["summary", "--json"])
        .arg(d.path())
        .output()
        .unwrap();
    assert!(s.status.success());
    let v: serde_json::Value = serde_json::from_slice(&s.stdout).unwrap();
    assert_eq!(v["captures"].as_array().unwrap().len(), 1);
}

#[test]
fn the_explorer_form_captures_remembers_and_opens_the_capture() {
    use ratatui::crossterm::event::KeyCode;
    use tracetui::ui::app::App;
    use tracetui::ui::colors::ColorMode;
    use tracetui::ui::keymap::ViewKind;
    use tracetui::ui::views::capture_form::CaptureForm;

    let d = tempfile::tempdir().unwrap();
    let addr = serve(Fake::new(vec![Reply::Emit(xspace())]));
    let config = d.path().join("config/tracetui.toml");
    std::fs::create_dir_all(d.path().join("config")).unwrap();
    std::fs::write(&config, "[theme]\npalette = \"category\"\n").unwrap();
    let logdir = d.path().join("logs");
    std::fs::create_dir_all(&logdir).unwrap();
    let (mut app, cmds) = App::new(Vec::new(), (100, 30), ColorMode::None);
    common::run_cmds(&mut app, cmds);
    {
        let c = &mut app.state_mut().capture;
        c.logdir = logdir.clone();
        c.config_path = Some(config.clone());
    }
    app.update(common::key('C'));
    let form = app
        .views()
        .last()
        .and_then(|v| v.as_any().downcast_ref::<CaptureForm>());
    assert_eq!(form.map(|f| f.values[0].as_str()), Some("localhost:9999"));
    let s = common::screen(&app);
    assert!(s.contains("capture from a profiler server"), "{s}");
    assert!(s.contains("duration (ms)"), "{s}");
    // Retype the address, then a 150 ms duration and python tracer off.
    for _ in 0.."localhost:9999".len() {
        app.update(common::code(KeyCode::Backspace));
    }
    for c in addr.chars() {
        app.update(common::key(c));
    }
    app.update(common::code(KeyCode::Tab));
    for _ in 0..4 {
        app.update(common::code(KeyCode::Backspace));
    }
    for c in "150".chars() {
        app.update(common::key(c));
    }
    app.update(common::code(KeyCode::Up));
    app.update(common::code(KeyCode::Up));
    app.update(common::code(KeyCode::Backspace));
    app.update(common::key('0'));
    let cmds = app.update(common::code(KeyCode::Enter));
    // The countdown is up while the capture runs.
    let running = app.capture.running.as_ref().expect("running");
    assert!(
        running.status().starts_with("capturing 127.0.0.1:"),
        "{}",
        running.status()
    );
    assert!(common::screen(&app).contains("capturing 127.0.0.1:"));
    common::run_cmds(&mut app, cmds);
    assert!(app.capture.running.is_none());
    // The capture landed under the log dir and is open on the timeline.
    assert_eq!(app.top(), ViewKind::Timeline);
    let l = app.loaded().expect("capture loaded");
    assert!(
        l.cap
            .source
            .path
            .starts_with(logdir.join("plugins/profile"))
    );
    assert!(l.cap.slices.len() > 1000);
    let notice = app.notice.clone().unwrap_or_default();
    assert!(notice.starts_with("captured 1 file: opened "), "{notice}");
    // The settings are remembered beside the rest of the config.
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(
        text.starts_with("[theme]\npalette = \"category\"\n"),
        "{text}"
    );
    let (cfg, errors) = tracetui::ui::config::parse(&text, &config);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(cfg.capture.address, addr);
    assert_eq!(cfg.capture.duration_ms, 150);
    assert_eq!(cfg.capture.python_level, 0);
    assert_eq!(cfg.capture.host_level, 2);
}

#[test]
fn the_explorer_form_says_what_is_wrong_and_a_failed_capture_is_told() {
    use ratatui::crossterm::event::KeyCode;
    use tracetui::ui::app::App;
    use tracetui::ui::colors::ColorMode;

    let d = tempfile::tempdir().unwrap();
    let (mut app, _) = App::new(Vec::new(), (100, 30), ColorMode::None);
    app.state_mut().capture.logdir = d.path().to_path_buf();
    app.update(common::key('C'));
    app.update(common::code(KeyCode::Tab));
    for _ in 0..4 {
        app.update(common::code(KeyCode::Backspace));
    }
    app.update(common::key('0'));
    let cmds = app.update(common::code(KeyCode::Enter));
    assert!(cmds.is_empty());
    assert!(common::screen(&app).contains("! the duration must be at least 1 ms"));
    // A port nothing listens on: the capture fails and says so; nothing opens.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    app.update(common::code(KeyCode::Backspace));
    app.update(common::key('5'));
    app.update(common::code(KeyCode::BackTab));
    for _ in 0.."localhost:9999".len() {
        app.update(common::code(KeyCode::Backspace));
    }
    for c in format!("127.0.0.1:{port}").chars() {
        app.update(common::key(c));
    }
    let cmds = app.update(common::code(KeyCode::Enter));
    common::run_cmds(&mut app, cmds);
    let notice = app.notice.clone().unwrap_or_default();
    assert!(
        notice.starts_with("capture: nothing landed · failed: 127.0.0.1:"),
        "{notice}"
    );
    assert!(app.loaded().is_none());
}
