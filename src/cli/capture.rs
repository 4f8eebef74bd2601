//! `tracetui capture`: record a trace from a running program — a JAX/TensorFlow profiler server
//! (gRPC) or, with `--dynolog`, PyTorch jobs through the dynolog daemon. The one command that
//! writes: only new files, only inside `--logdir` (see `capture::logdir`).

use super::report::{emit, to_json};
use super::text::clean;
use crate::capture::dynolog;
#[cfg(feature = "capture")]
use crate::capture::logdir;
use clap::Args;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Examples and notes shown by `tracetui capture --help`.
pub const CAPTURE_AFTER: &str = "\
Examples:
  tracetui capture localhost:9999                        2 s from a program that called
                                                         jax.profiler.start_server(9999)
  tracetui capture w0:9999,w1:9999 --logdir logs --open  every host of a job into one session
  tracetui capture --dynolog gpu01 --iterations 5 --log-file /tmp/trace.json
                                                         PyTorch job started with KINETO_USE_DAEMON=1

The capture lands as <logdir>/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/<host>_<port>.xplane.pb, the
layout TensorBoard and `tracetui LOGDIR` read; an explorer watching the log dir shows it at once.
Servers since late 2025 return the capture (emit_xspace); older ones write it on their own disk
at the same path, which tracetui waits for (same machine or a shared file system).
Writes only new files inside --logdir, through a temp file and a link (never overwrites).
Exit status: 0 every host captured, 1 any failed, 2 usage error.";

/// Arguments of `capture`.
#[derive(Args, Debug)]
pub struct CaptureArgs {
    /// Profiler server addresses, HOST:PORT, comma-separated (with --dynolog: the daemon's HOST[:PORT])
    #[arg(value_name = "ADDR[,ADDR…]", required = true)]
    pub addresses: String,
    /// How long to trace, in ms (dynolog: default 500)
    #[arg(long, value_name = "MS")]
    pub duration_ms: Option<u64>,
    /// Log dir to write into (default: the current directory)
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub logdir: PathBuf,
    /// Host tracer level: 0 off, 1 user annotations, 2 +program events (allocator events), 3 verbose
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(0..=3))]
    pub host_tracer_level: u32,
    /// Device tracer level: 0 off, 1 on
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(0..=1))]
    pub device_tracer_level: u32,
    /// Python tracer level: 0 off, 1 on
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(0..=1))]
    pub python_tracer_level: u32,
    /// Start tracing this many ms from now (all hosts at the same moment)
    #[arg(long, value_name = "MS", default_value_t = 0)]
    pub delay_ms: u64,
    /// Open the explorer on the new capture when it lands
    #[arg(long)]
    pub open: bool,
    /// Print JSON (see docs/cli.md) instead of text
    #[arg(long)]
    pub json: bool,
    /// Talk to the dynolog daemon (PyTorch on-demand tracing) instead of a profiler server
    #[arg(long)]
    pub dynolog: bool,
    /// dynolog: job id to match (0 = any)
    #[arg(long, default_value_t = 0)]
    pub job_id: u64,
    /// dynolog: pids to match, comma-separated (default: any)
    #[arg(long, value_delimiter = ',')]
    pub pids: Vec<i64>,
    /// dynolog: most processes to trace
    #[arg(long, default_value_t = 3)]
    pub process_limit: u32,
    /// dynolog: trace N iterations instead of a duration
    #[arg(long, value_name = "N", conflicts_with = "duration_ms")]
    pub iterations: Option<u64>,
    /// dynolog: record Python stacks
    #[arg(long)]
    pub with_stack: bool,
    /// dynolog: record input shapes
    #[arg(long)]
    pub record_shapes: bool,
    /// dynolog: record memory (allocations and the memory snapshot)
    #[arg(long)]
    pub profile_memory: bool,
    /// dynolog: trace file the jobs write (`.json` becomes `_<pid>.json`)
    #[arg(long, value_name = "PATH")]
    pub log_file: Option<PathBuf>,
}

#[cfg(feature = "capture")]
#[derive(Serialize)]
struct HostJson {
    address: String,
    ok: bool,
    attempts: u32,
    path: Option<String>,
    bytes: Option<u64>,
    /// `returned` (written by tracetui) or `server` (written by the server itself).
    source: Option<&'static str>,
    error: Option<String>,
}

#[cfg(feature = "capture")]
#[derive(Serialize)]
struct CaptureJson {
    session: String,
    logdir: String,
    hosts: Vec<HostJson>,
}

#[derive(Serialize)]
struct DynologJson {
    daemon: String,
    processes_matched: Vec<i64>,
    activity_profilers_triggered: usize,
    files: Vec<String>,
    landed: Vec<String>,
}

/// Runs `tracetui capture`.
pub fn cmd_capture(a: &CaptureArgs) -> i32 {
    if a.dynolog {
        return cmd_dynolog(a);
    }
    if a.iterations.is_some() || a.log_file.is_some() {
        return usage("--iterations and --log-file are dynolog options (add --dynolog)");
    }
    grpc_capture(a)
}

fn usage(msg: &str) -> i32 {
    eprintln!("tracetui capture: {msg}");
    2
}

#[cfg(not(feature = "capture"))]
fn grpc_capture(_: &CaptureArgs) -> i32 {
    eprintln!(
        "tracetui capture: this build has no gRPC client (built without the `capture` feature); --dynolog works"
    );
    1
}

#[cfg(feature = "capture")]
fn grpc_capture(a: &CaptureArgs) -> i32 {
    use crate::capture::grpc::{self, Landed};
    let addresses: Vec<String> = a
        .addresses
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    if addresses.is_empty() {
        return usage("no address given");
    }
    let logdir = match absolute_dir(&a.logdir) {
        Ok(d) => d,
        Err(e) => return fail(&e),
    };
    let opts = grpc::Options {
        duration_ms: a.duration_ms.unwrap_or(2000),
        host_tracer_level: a.host_tracer_level,
        device_tracer_level: a.device_tracer_level,
        python_tracer_level: a.python_tracer_level,
        delay_ms: a.delay_ms,
        logdir: logdir.clone(),
        ..Default::default()
    };
    let session = logdir::session_id_now();
    if !a.json {
        eprintln!(
            "tracetui: tracing {} for {} ms{} (deadline {:.0} s) into {}",
            clean(&addresses.join(", ")),
            opts.duration_ms,
            if a.delay_ms > 0 {
                format!(" after {} ms", a.delay_ms)
            } else {
                String::new()
            },
            opts.deadline().as_secs_f64(),
            clean(
                &logdir::repository_root(&logdir)
                    .join(&session)
                    .display()
                    .to_string()
            ),
        );
    }
    let results = match grpc::capture(&addresses, &session, &opts) {
        Ok(r) => r,
        Err(e) => return fail(&format!("cannot start the network runtime: {e}")),
    };
    let ok = results.iter().all(|r| r.outcome.is_ok());
    let out = if a.json {
        to_json(&CaptureJson {
            session: session.clone(),
            logdir: logdir.display().to_string(),
            hosts: results
                .iter()
                .map(|r| {
                    let (path, bytes, source, error) = match &r.outcome {
                        Ok(Landed::Returned { path, bytes }) => (
                            Some(path.display().to_string()),
                            Some(*bytes),
                            Some("returned"),
                            None,
                        ),
                        Ok(Landed::WrittenByServer { path, bytes }) => (
                            Some(path.display().to_string()),
                            Some(*bytes),
                            Some("server"),
                            None,
                        ),
                        Err(e) => (None, None, None, Some(e.to_string())),
                    };
                    HostJson {
                        address: r.address.clone(),
                        ok: r.outcome.is_ok(),
                        attempts: r.attempts,
                        path,
                        bytes,
                        source,
                        error,
                    }
                })
                .collect(),
        })
    } else {
        let mut s = String::new();
        for r in &results {
            match &r.outcome {
                Ok(l) => {
                    let (bytes, how) = match l {
                        Landed::Returned { bytes, .. } => (*bytes, "returned by the server"),
                        Landed::WrittenByServer { bytes, .. } => (*bytes, "written by the server"),
                    };
                    s.push_str(&format!(
                        "{}: {} ({:.1} MB, {how}{})\n",
                        clean(&r.address),
                        clean(&l.path().display().to_string()),
                        bytes as f64 / 1e6,
                        if r.attempts > 1 {
                            format!(", attempt {}", r.attempts)
                        } else {
                            String::new()
                        }
                    ));
                }
                Err(e) => s.push_str(&format!(
                    "{}: failed: {}\n",
                    clean(&r.address),
                    clean(&e.to_string())
                )),
            }
        }
        s
    };
    if let Err(c) = emit(&out) {
        return c;
    }
    if a.open && ok {
        let dir = logdir::repository_root(&logdir).join(&session);
        return open(&dir);
    }
    if ok { 0 } else { 1 }
}

fn cmd_dynolog(a: &CaptureArgs) -> i32 {
    let Some(log_file) = &a.log_file else {
        return usage("--dynolog needs --log-file PATH (where the jobs write their traces)");
    };
    let log_file = dynolog::absolute_log_file(log_file);
    let log_str = log_file.display().to_string();
    if !log_str.ends_with(".json") {
        return usage("--log-file must end in .json (each process writes FILE_<pid>.json)");
    }
    let duration_ms = a.duration_ms.unwrap_or(500);
    let trigger = match a.iterations {
        Some(n) => dynolog::Trigger::Iterations {
            roundup: 1,
            iterations: n,
        },
        None => dynolog::Trigger::Duration {
            start_time_ms: 0,
            duration_ms,
        },
    };
    let req = dynolog::Request {
        log_file: log_str,
        job_id: a.job_id,
        pids: a.pids.clone(),
        process_limit: a.process_limit,
        trigger,
        record_shapes: a.record_shapes,
        profile_memory: a.profile_memory,
        with_stack: a.with_stack,
        with_flops: false,
        with_modules: false,
    };
    let daemon = dynolog::with_default_port(&a.addresses);
    let reply = match dynolog::send(&daemon, &req, Duration::from_secs(10)) {
        Ok(r) => r,
        Err(e) => return fail(&e.to_string()),
    };
    let files: Vec<PathBuf> = reply
        .processes_matched
        .iter()
        .map(|&p| req.output_file(p))
        .collect();
    let triggered =
        reply.activity_profilers_triggered.len() + reply.event_profilers_triggered.len();
    if files.is_empty() {
        let msg = "dynolog matched no process: the job must run with KINETO_USE_DAEMON=1 (and the \
                   daemon with --enable_ipc_monitor); check --job-id / --pids";
        if a.json {
            let _ = emit(&to_json(&DynologJson {
                daemon,
                processes_matched: vec![],
                activity_profilers_triggered: triggered,
                files: vec![],
                landed: vec![],
            }));
        }
        return fail(msg);
    }
    if !a.json {
        eprintln!(
            "tracetui: dynolog at {} matched {} process(es) ({} profilers triggered); waiting for:",
            clean(&daemon),
            files.len(),
            triggered
        );
        for f in &files {
            eprintln!("  {}", clean(&f.display().to_string()));
        }
    }
    let wait = match a.iterations {
        Some(_) => Duration::from_secs(300),
        None => Duration::from_millis(duration_ms) + Duration::from_secs(60),
    };
    let landed = dynolog::wait_for_files(&files, wait);
    let out = if a.json {
        to_json(&DynologJson {
            daemon,
            processes_matched: reply.processes_matched.clone(),
            activity_profilers_triggered: triggered,
            files: files.iter().map(|f| f.display().to_string()).collect(),
            landed: landed.iter().map(|f| f.display().to_string()).collect(),
        })
    } else {
        let mut s = String::new();
        for f in &files {
            let state = if landed.contains(f) {
                "written"
            } else {
                "not written (yet)"
            };
            s.push_str(&format!("{}: {state}\n", clean(&f.display().to_string())));
        }
        s
    };
    if let Err(c) = emit(&out) {
        return c;
    }
    if landed.len() < files.len() {
        return 1;
    }
    if a.open {
        let dir = log_file
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        return open(&dir);
    }
    0
}

#[cfg(feature = "capture")]
fn absolute_dir(d: &Path) -> Result<PathBuf, String> {
    std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    d.canonicalize()
        .map_err(|e| format!("{}: {e}", d.display()))
}

fn open(path: &Path) -> i32 {
    let (config, errors) = crate::ui::config::load(None);
    match crate::ui::run_live(path, &config, &errors, false) {
        Ok(()) => 0,
        Err(e) => fail(&e.to_string()),
    }
}

fn fail(msg: &str) -> i32 {
    eprintln!("tracetui capture: {}", clean(msg));
    1
}
