//! `tracetui mcp`: a Model Context Protocol server over stdio (JSON-RPC 2.0, one message a line).
//!
//! Hand-written on serde_json (no new crate): `initialize`, `ping`, `tools/list`, `tools/call`
//! and the notifications; every other request is answered with a JSON-RPC error. Each tool runs
//! the headless command of the same name with `--json` through the command's own code path
//! ([`super::run`]), with its output kept instead of printed, and its captures taken from a small
//! set of loaded captures kept across calls ([`super::load::set_provider`]). The server reads only
//! files under its roots, writes nothing, opens no port and runs no subprocess.

use super::report::capture_output;
use crate::discover::{self, CaptureFile};
use crate::formats::{LoadError, Progress};
use crate::model::Capture;
use clap::{Args, CommandFactory, Parser};
use serde_json::{Map, Value, json};
use std::collections::VecDeque;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

pub const MCP_AFTER: &str = "\
Examples:
  tracetui mcp ~/logs                   serve every capture below ~/logs to an MCP client
  claude mcp add tracetui -- tracetui mcp ~/logs

Speaks the Model Context Protocol over stdin/stdout (newline-delimited JSON-RPC 2.0). Tools:
list_captures, summary, stats, search, steps, critical, roofline, gpu, memory, diff, advise,
ranks; each
returns the command's --json. Only files under the given roots are read. See docs/mcp.md.";

/// Arguments of `mcp`.
#[derive(Args, Debug)]
pub struct McpArgs {
    /// Roots: log dirs or capture files the tools may read (nothing outside them) [default: .]
    pub roots: Vec<PathBuf>,
    /// Largest tool result, in characters (rows are cut to fit, never a JSON value)
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CHARS)]
    pub max_chars: usize,
    /// Captures kept loaded across calls (the least recently used is dropped)
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..))]
    pub keep: u64,
}

/// Default size limit of one tool result, characters.
pub const DEFAULT_MAX_CHARS: usize = 20_000;
/// Default rows per page.
pub const DEFAULT_LIMIT: usize = 50;
/// Protocol versions this server speaks (the newest first).
const VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// A tool: its name, the command it runs, what it answers.
struct Tool {
    name: &'static str,
    command: &'static str,
    description: &'static str,
}

const TOOLS: &[Tool] = &[
    Tool {
        name: "list_captures",
        command: "",
        description: "List the captures under the server's roots (or under `path`): path, format, run, host, size in bytes. Start here: every other tool takes one of these paths (or a log dir under a root).",
    },
    Tool {
        name: "summary",
        command: "summary",
        description: "What each capture holds: format, span (ns), event counts, processes and tracks, warnings. Same JSON as `tracetui summary --json`. Times are integer ns.",
    },
    Tool {
        name: "stats",
        command: "stats",
        description: "Per-name statistics like torch's key_averages(): count, total / self / avg / min / max time, device time, per kind (CPU ops, GPU kernels, runtime, memcpy, ...). Same JSON as `tracetui stats --json`; times are integer ns. Rows are the `stats` array.",
    },
    Tool {
        name: "search",
        command: "search",
        description: "Find event names (fuzzy, or regex with `regex`) with count, total and self time (ns) and their first occurrences (track, start ns). Same JSON as `tracetui search --json`.",
    },
    Tool {
        name: "steps",
        command: "steps",
        description: "Each capture's training steps and what their time went to: compute, communication, idle, input (ns and fractions). Same JSON as `tracetui steps --json`. Use to find the slow step.",
    },
    Tool {
        name: "critical",
        command: "critical",
        description: "The critical path of each step through host threads, launches, syncs and the GPU: segments with their duration (ns) and what bounds the step. Same JSON as `tracetui critical --json`.",
    },
    Tool {
        name: "roofline",
        command: "roofline",
        description: "FLOP/s and bytes/s per op against the device's peaks (roofline): achieved FLOP/s, bytes/s, arithmetic intensity (FLOP/byte), bound. Same JSON as `tracetui roofline --json`. Use to pick the kernel to optimize first.",
    },
    Tool {
        name: "gpu",
        command: "gpu",
        description: "HTA-style GPU breakdowns per device and stream: busy / idle time (ns), idle causes, queue length, kernel launches, top kernels. Same JSON as `tracetui gpu --json`.",
    },
    Tool {
        name: "memory",
        command: "memory",
        description: "Memory per device / allocator: peaks (bytes), allocations, live at end, top allocating ops. Same JSON as `tracetui memory --json`.",
    },
    Tool {
        name: "diff",
        command: "diff",
        description: "Compare two captures (`a` baseline, `b` new): per-name count, total and self time (ns), delta and status. Same JSON as `tracetui diff --json`. Use to see what changed between two runs.",
    },
    Tool {
        name: "advise",
        command: "advise",
        description: "What to change: findings ranked by the time each would save per step (saving_ns is an upper bound measured from the trace, ns per step), each with its evidence (event ids, tracks, the analysis that measured it), what to try and the threshold that fired. Same JSON as `tracetui advise --json`. Start here for \"why is this step slow?\".",
    },
    Tool {
        name: "ranks",
        command: "ranks",
        description: "Group the captures of a log dir into runs of ranks: step times per rank (ns), collectives across ranks, skew, stragglers. Same JSON as `tracetui ranks --json`.",
    },
];

/// Positional arguments that are paths (checked against the roots).
const PATH_ARGS: &[&str] = &["path", "a", "b"];

/// CLI options the server handles itself or that make no sense here.
const HIDDEN: &[&str] = &["json", "help", "version", "quiet", "wide", "limit"];

/// The server: roots, limits and the loaded captures.
struct Server {
    roots: Vec<PathBuf>,
    max_chars: usize,
}

/// Loaded captures kept across calls, least recently used first.
struct Kept {
    keep: usize,
    list: VecDeque<(PathBuf, Arc<Capture>)>,
}

static KEPT: Mutex<Kept> = Mutex::new(Kept {
    keep: 4,
    list: VecDeque::new(),
});

/// A copy of the capture at `cap.path`, loaded once and kept.
fn provide(cap: &CaptureFile) -> Result<Capture, LoadError> {
    // A capture found below a root through a symlink that leads outside is not read.
    let inside = std::fs::canonicalize(&cap.path).is_ok_and(|c| {
        ROOTS
            .lock()
            .is_ok_and(|r| r.iter().any(|root| c.starts_with(root)))
    });
    if !inside {
        return Err(LoadError::new(
            crate::formats::LoadErrorKind::Io,
            &cap.path,
            None,
            "outside the server's roots (through a symlink): not read",
        ));
    }
    if let Ok(mut k) = KEPT.lock()
        && let Some(i) = k.list.iter().position(|(p, _)| p == &cap.path)
        && let Some(e) = k.list.remove(i)
    {
        let c = Capture::clone(&e.1);
        k.list.push_back(e);
        return Ok(c);
    }
    let loaded = load_with_progress(cap)?;
    // Big JSON captures: the model is cached for the next start, as the commands do.
    crate::formats::cache::store(&cap.path, &loaded);
    let c = loaded.clone();
    if let Ok(mut k) = KEPT.lock() {
        k.list.push_back((cap.path.clone(), Arc::new(loaded)));
        while k.list.len() > k.keep {
            k.list.pop_front();
        }
    }
    Ok(c)
}

/// The server's roots, canonical: the provider reads nothing else.
static ROOTS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Makes `roots` the roots and the kept captures the source of every command's captures.
fn install(roots: &[PathBuf]) {
    if let Ok(mut r) = ROOTS.lock() {
        *r = roots.to_vec();
    }
    super::load::set_provider(Box::new(provide));
}

/// The `progressToken` of the call in progress (its `_meta`), when the client asked for progress.
static PROGRESS_TOKEN: Mutex<Option<Value>> = Mutex::new(None);

/// Loads `cap`; while it loads, sends `notifications/progress` (bytes read of the file) every
/// 200 ms when the call has a progress token.
fn load_with_progress(cap: &CaptureFile) -> Result<Capture, LoadError> {
    let token = PROGRESS_TOKEN.lock().ok().and_then(|g| g.clone());
    let Some(token) = token else {
        return cap.load_or_alternate(&Progress::default());
    };
    let progress = Progress::default();
    let done = AtomicBool::new(false);
    let notify = |done_bytes: u64, total: u64, events: u64| {
        let mut p = json!({
            "progressToken": token,
            "progress": done_bytes,
            "message": format!("loading {}: {events} events", cap.path.display()),
        });
        if total > 0 {
            p["total"] = Value::from(total);
        }
        send(&json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": p}));
    };
    std::thread::scope(|s| {
        s.spawn(|| {
            notify(0, cap.bytes, 0);
            let (mut last, mut ticks) = (0, 0u32);
            // 20 ms steps: the call does not wait long for this thread once the load is done.
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(std::time::Duration::from_millis(20));
                ticks += 1;
                let b = progress.bytes_done.load(Ordering::Relaxed);
                if ticks % 10 == 0 && b > last && !done.load(Ordering::Relaxed) {
                    last = b;
                    let total = progress.bytes_total.load(Ordering::Relaxed);
                    notify(b, total, progress.events.load(Ordering::Relaxed));
                }
            }
        });
        let r = cap.load_or_alternate(&progress);
        done.store(true, Ordering::Relaxed);
        r
    })
}

/// The reply to one message line of a server reading `roots` (none for a notification): the fuzz
/// target's entry (fuzz/fuzz_targets/mcp_request.rs). Loaded captures are kept as in [`cmd_mcp`].
pub fn handle_line(roots: &[PathBuf], line: &str) -> Option<Value> {
    install(roots);
    let server = Server {
        roots: roots.to_vec(),
        max_chars: DEFAULT_MAX_CHARS,
    };
    server.handle_line(line)
}

/// A JSON-RPC error: (code, message).
type RpcError = (i64, String);

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const INTERNAL_ERROR: i64 = -32603;

/// Runs the server on stdin/stdout until stdin closes.
pub fn cmd_mcp(a: &McpArgs) -> i32 {
    let roots = if a.roots.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        a.roots.clone()
    };
    let mut canon = Vec::new();
    for r in &roots {
        match std::fs::canonicalize(r) {
            Ok(c) => canon.push(c),
            Err(e) => {
                eprintln!("tracetui: error: mcp root {}: {e}", r.display());
                return 1;
            }
        }
    }
    if let Ok(mut k) = KEPT.lock() {
        k.keep = usize::try_from(a.keep).unwrap_or(4);
    }
    install(&canon);
    let server = Server {
        roots: canon,
        max_chars: a.max_chars.max(1000),
    };
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut line = String::new();
    loop {
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) => return 0,
            Ok(_) => {}
            Err(e) => {
                // Not UTF-8: a parse error, then go on with the next line.
                if e.kind() == std::io::ErrorKind::InvalidData {
                    send(&error_response(
                        Value::Null,
                        (PARSE_ERROR, "parse error: not UTF-8".into()),
                    ));
                    continue;
                }
                return 0;
            }
        }
        if line.trim().is_empty() {
            continue;
        }
        if let Some(reply) = server.handle_line(&line) {
            send(&reply);
        }
    }
}

fn send(v: &Value) {
    let mut out = std::io::stdout().lock();
    let s = serde_json::to_string(v).unwrap_or_default();
    let _ = out
        .write_all(s.as_bytes())
        .and_then(|_| out.write_all(b"\n"))
        .and_then(|_| out.flush());
}

fn error_response(id: Value, (code, message): RpcError) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

impl Server {
    /// The reply to one line (none for a notification).
    fn handle_line(&self, line: &str) -> Option<Value> {
        let msg: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                return Some(error_response(
                    Value::Null,
                    (PARSE_ERROR, format!("parse error: {e}")),
                ));
            }
        };
        self.handle(msg)
    }

    /// The reply to one message (none for a notification or a response).
    fn handle(&self, msg: Value) -> Option<Value> {
        let Value::Object(obj) = msg else {
            return Some(error_response(
                Value::Null,
                (
                    INVALID_REQUEST,
                    "invalid request: expected one JSON-RPC object (batches are not supported)"
                        .into(),
                ),
            ));
        };
        let id = obj.get("id").cloned();
        let valid_id = matches!(id, None | Some(Value::String(_)) | Some(Value::Number(_)));
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") || !valid_id {
            return Some(error_response(
                id.filter(|_| valid_id).unwrap_or(Value::Null),
                (
                    INVALID_REQUEST,
                    "invalid request: needs \"jsonrpc\": \"2.0\" and a string or number id".into(),
                ),
            ));
        }
        let Some(method) = obj.get("method").and_then(Value::as_str) else {
            // A response to a request of ours (we send none), or nonsense.
            return id
                .filter(|_| !obj.contains_key("result") && !obj.contains_key("error"))
                .map(|id| {
                    error_response(id, (INVALID_REQUEST, "invalid request: no method".into()))
                });
        };
        let params = obj.get("params").cloned().unwrap_or(Value::Null);
        let Some(id) = id else {
            // Notifications: initialized, cancelled, roots changed; nothing to answer.
            return None;
        };
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.request(method, &params)
        }))
        .unwrap_or_else(|_| Err((INTERNAL_ERROR, "internal error (please report it)".into())));
        Some(match result {
            Ok(r) => json!({"jsonrpc": "2.0", "id": id, "result": r}),
            Err(e) => error_response(id, e),
        })
    }

    fn request(&self, method: &str, params: &Value) -> Result<Value, RpcError> {
        if !(params.is_object() || params.is_null()) {
            return Err((INVALID_PARAMS, "params must be an object".into()));
        }
        match method {
            "initialize" => {
                let asked = params.get("protocolVersion").and_then(Value::as_str);
                let version = asked
                    .filter(|v| VERSIONS.contains(v))
                    .unwrap_or(VERSIONS[0]);
                Ok(json!({
                    "protocolVersion": version,
                    "capabilities": {"tools": {"listChanged": false}},
                    "serverInfo": {"name": "tracetui", "version": env!("CARGO_PKG_VERSION")},
                    "instructions": "Profiler captures (XPlane, PyTorch Kineto, Chrome JSON) under the server's roots. Call list_captures first, then summary / steps / stats / gpu / critical / roofline / memory on a capture path, diff on two. Times are integer ns unless a field says otherwise. Results are pages: `page` says the total rows and the next offset.",
                }))
            }
            "ping" => Ok(json!({})),
            "tools/list" => Ok(json!({"tools": tools_list()})),
            "tools/call" => self.call(params),
            _ => Err((METHOD_NOT_FOUND, format!("method not found: {method}"))),
        }
    }

    /// `tools/call`: runs a tool; argument problems are JSON-RPC errors, command failures a
    /// result with `isError`.
    fn call(&self, params: &Value) -> Result<Value, RpcError> {
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .ok_or((INVALID_PARAMS, "tools/call needs a tool `name`".to_string()))?;
        let tool = TOOLS.iter().find(|t| t.name == name).ok_or_else(|| {
            (
                INVALID_PARAMS,
                format!("unknown tool: {name} (tools/list says which)"),
            )
        })?;
        let args = match params.get("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(_) => return Err((INVALID_PARAMS, "`arguments` must be an object".into())),
        };
        let page = Page::from_args(&args, self.max_chars)?;
        let value = if tool.command.is_empty() {
            self.list_captures(&args)?
        } else {
            let token = params
                .get("_meta")
                .and_then(|m| m.get("progressToken"))
                .filter(|t| t.is_string() || t.is_number())
                .cloned();
            if let Ok(mut g) = PROGRESS_TOKEN.lock() {
                *g = token;
            }
            let ran = self.run_command(tool.command, &args);
            if let Ok(mut g) = PROGRESS_TOKEN.lock() {
                *g = None;
            }
            match ran? {
                Ok(v) => v,
                Err(msg) => {
                    return Ok(
                        json!({"content": [{"type": "text", "text": msg}], "isError": true}),
                    );
                }
            }
        };
        let text = page.apply(value);
        Ok(json!({"content": [{"type": "text", "text": text}], "isError": false}))
    }

    /// `path` resolved and checked against the roots.
    fn resolve(&self, key: &str, v: &Value) -> Result<PathBuf, RpcError> {
        let s = v.as_str().ok_or_else(|| {
            (
                INVALID_PARAMS,
                format!("`{key}` must be a string (a path under a root)"),
            )
        })?;
        let p = Path::new(s);
        let mut tries = vec![p.to_path_buf()];
        if p.is_relative() {
            tries.extend(self.roots.iter().map(|r| r.join(p)));
        }
        for t in tries {
            if let Ok(c) = std::fs::canonicalize(&t) {
                if self.roots.iter().any(|r| c.starts_with(r)) {
                    return Ok(c);
                }
                return Err((
                    INVALID_PARAMS,
                    format!(
                        "{s}: outside the server's roots ({}); only captures under them can be read",
                        self.roots_text()
                    ),
                ));
            }
        }
        Err((
            INVALID_PARAMS,
            format!(
                "{s}: no such file or directory under the roots ({})",
                self.roots_text()
            ),
        ))
    }

    fn roots_text(&self) -> String {
        let r: Vec<String> = self.roots.iter().map(|r| r.display().to_string()).collect();
        r.join(", ")
    }

    fn list_captures(&self, args: &Map<String, Value>) -> Result<Value, RpcError> {
        if let Some(k) = args
            .keys()
            .find(|k| !["path", "limit", "offset", "max_chars"].contains(&k.as_str()))
        {
            return Err((
                INVALID_PARAMS,
                format!("list_captures: unknown argument `{k}`"),
            ));
        }
        let roots = match args.get("path") {
            Some(v) => vec![self.resolve("path", v)?],
            None => self.roots.clone(),
        };
        let mut captures = Vec::new();
        let mut problems = Vec::new();
        for r in &roots {
            match discover::discover(r) {
                Ok(cat) => {
                    for c in cat.captures() {
                        captures.push(json!({
                            "path": c.path.display().to_string(),
                            "format": c.format.name(),
                            "run": c.run,
                            "host": c.host,
                            "bytes": c.bytes,
                        }));
                    }
                    for (p, m) in &cat.problems {
                        problems.push(json!({"path": p.display().to_string(), "message": m}));
                    }
                }
                Err(e) => problems
                    .push(json!({"path": r.display().to_string(), "message": e.to_string()})),
            }
        }
        Ok(json!({"captures": captures, "problems": problems}))
    }

    /// Runs `tracetui COMMAND … --json` with `args` as its options: Ok(Ok(json)), Ok(Err(message))
    /// when the command failed, Err when the arguments are wrong.
    fn run_command(
        &self,
        command: &str,
        args: &Map<String, Value>,
    ) -> Result<Result<Value, String>, RpcError> {
        let cmd = super::Cli::command();
        let sub = cmd
            .find_subcommand(command)
            .ok_or((INTERNAL_ERROR, format!("no command {command}")))?;
        let mut positional: Vec<(usize, String)> = Vec::new();
        let mut options: Vec<String> = Vec::new();
        for (key, v) in args {
            if ["limit", "offset", "max_chars"].contains(&key.as_str()) {
                continue;
            }
            let arg = sub
                .get_arguments()
                .find(|a| {
                    !HIDDEN.contains(&a.get_id().as_str())
                        && (a.get_id().as_str() == key
                            || a.get_long()
                                .is_some_and(|l| l == key || l.replace('-', "_") == *key))
                })
                .ok_or_else(|| {
                    (
                        INVALID_PARAMS,
                        format!(
                            "{command}: unknown argument `{key}` (tools/list gives the schema)"
                        ),
                    )
                })?;
            if arg.is_positional() {
                let text = if PATH_ARGS.contains(&arg.get_id().as_str()) {
                    self.resolve(key, v)?.display().to_string()
                } else {
                    match v {
                        Value::String(s) => s.clone(),
                        Value::Number(n) => n.to_string(),
                        _ => {
                            return Err((
                                INVALID_PARAMS,
                                format!("{command}: `{key}` must be a string"),
                            ));
                        }
                    }
                };
                // Their order on the command line: the order clap declares them in.
                let order = sub
                    .get_positionals()
                    .position(|p| p.get_id() == arg.get_id())
                    .unwrap_or(0);
                positional.push((order, text));
                continue;
            }
            let Some(long) = arg.get_long() else { continue };
            let flag = matches!(arg.get_action(), clap::ArgAction::SetTrue);
            let bad = || {
                (
                    INVALID_PARAMS,
                    format!(
                        "{command}: `{key}` must be {}",
                        if flag {
                            "a boolean"
                        } else {
                            "a string or number"
                        }
                    ),
                )
            };
            match v {
                Value::Bool(b) if flag => {
                    if *b {
                        options.push(format!("--{long}"));
                    }
                }
                Value::String(s) if !flag => options.push(format!("--{long}={s}")),
                Value::Number(n) if !flag => options.push(format!("--{long}={n}")),
                Value::Array(items) if !flag && arg.get_value_delimiter().is_some() => {
                    let mut parts = Vec::new();
                    for i in items {
                        match i {
                            Value::String(s) => parts.push(s.clone()),
                            Value::Number(n) => parts.push(n.to_string()),
                            _ => return Err(bad()),
                        }
                    }
                    options.push(format!("--{long}={}", parts.join(",")));
                }
                _ => return Err(bad()),
            }
        }
        positional.sort();
        let mut argv: Vec<String> = vec![
            "tracetui".into(),
            command.into(),
            "--quiet".into(),
            "--json".into(),
        ];
        argv.extend(options);
        // Positionals after `--`: a query starting with `-` is not an option.
        argv.push("--".into());
        argv.extend(positional.into_iter().map(|(_, p)| p));
        if let Err(e) = super::Cli::try_parse_from(&argv) {
            let msg = e.render().to_string();
            let first: Vec<&str> = msg.lines().take_while(|l| !l.trim().is_empty()).collect();
            let first = first.join(" ");
            return Err((
                INVALID_PARAMS,
                format!("{command}: {}", first.trim_start_matches("error: ")),
            ));
        }
        let (code, (out, errors, value)) = capture_output(|| super::run(&argv));
        if let Some(v) = value {
            return Ok(Ok(v));
        }
        if code != 0 && out.trim().is_empty() {
            return Ok(Err(if errors.is_empty() {
                format!("{command} failed (exit {code})")
            } else {
                errors.join("\n")
            }));
        }
        match serde_json::from_str::<Value>(&out) {
            Ok(v) => Ok(Ok(v)),
            Err(e) => Ok(Err(format!("{command}: no JSON output ({e})"))),
        }
    }
}

/// `limit` / `offset` / `max_chars` of a call.
struct Page {
    limit: usize,
    offset: usize,
    max_chars: usize,
}

impl Page {
    fn from_args(args: &Map<String, Value>, max_chars: usize) -> Result<Page, RpcError> {
        let num = |k: &str, d: usize| -> Result<usize, RpcError> {
            match args.get(k) {
                None | Some(Value::Null) => Ok(d),
                Some(v) => v
                    .as_u64()
                    .and_then(|n| usize::try_from(n).ok())
                    .ok_or_else(|| {
                        (
                            INVALID_PARAMS,
                            format!("`{k}` must be a non-negative integer"),
                        )
                    }),
            }
        };
        Ok(Page {
            limit: num("limit", DEFAULT_LIMIT)?,
            offset: num("offset", 0)?,
            max_chars: num("max_chars", max_chars)?.max(1000),
        })
    }

    /// `{"result": value with its row arrays paged, "page": {...}}` as text of at most
    /// `max_chars` characters where cutting rows can make it so.
    fn apply(&self, value: Value) -> String {
        let mut full = value;
        let rows: Vec<usize> = row_arrays(&mut full).iter().map(|r| r.len()).collect();
        let total: usize = rows.iter().sum();
        let mut keep = self.limit;
        loop {
            let mut v = full.clone();
            let mut returned = 0;
            for arr in row_arrays(&mut v) {
                let end = arr.len().min(self.offset.saturating_add(keep));
                let start = self.offset.min(end);
                let page: Vec<Value> = arr.drain(..).skip(start).take(end - start).collect();
                returned = returned.max(page.len());
                *arr = page;
            }
            let cut_for_size = keep < self.limit;
            let more = rows.iter().any(|r| *r > self.offset + keep);
            let page = json!({
                "offset": self.offset,
                "limit": self.limit,
                "total": total,
                "rows_per_array": rows,
                "returned_per_array_at_most": returned,
                "cut_for_size": cut_for_size,
                "next_offset": if more { Some(self.offset + keep) } else { None },
            });
            let text =
                serde_json::to_string(&json!({"result": v, "page": page})).unwrap_or_default();
            let returned_now = returned;
            if text.chars().count() <= self.max_chars || keep == 0 {
                return text;
            }
            keep = if keep > returned_now {
                returned_now
            } else {
                keep / 2
            };
            if returned_now == 0 {
                return text;
            }
        }
    }
}

/// The row arrays of a command's JSON: in each capture (or the top object), its longest array.
fn row_arrays(v: &mut Value) -> Vec<&mut Vec<Value>> {
    fn longest(o: &mut Map<String, Value>) -> Option<&mut Vec<Value>> {
        o.values_mut()
            .filter_map(|v| v.as_array_mut())
            .max_by_key(|a| a.len())
    }
    let Value::Object(top) = v else {
        return Vec::new();
    };
    if top
        .get("captures")
        .is_some_and(|c| c.as_array().is_some_and(|a| a.iter().all(Value::is_object)))
        && !top.contains_key("path")
    {
        let has_nested = top
            .get("captures")
            .and_then(Value::as_array)
            .is_some_and(|a| {
                a.iter().any(|c| {
                    c.as_object()
                        .is_some_and(|o| o.values().any(Value::is_array))
                })
            });
        if has_nested {
            return top
                .get_mut("captures")
                .and_then(Value::as_array_mut)
                .map(|a| {
                    a.iter_mut()
                        .filter_map(Value::as_object_mut)
                        .filter_map(longest)
                        .collect()
                })
                .unwrap_or_default();
        }
    }
    longest(top).into_iter().collect()
}

/// `tools/list`: each tool with its input schema, from the command's own options.
fn tools_list() -> Vec<Value> {
    let cmd = super::Cli::command();
    let paging = [
        (
            "limit",
            json!({"type": "integer", "minimum": 0, "description": format!("Rows per page of the result's row array(s) [default: {DEFAULT_LIMIT}]")}),
        ),
        (
            "offset",
            json!({"type": "integer", "minimum": 0, "description": "First row of the page [default: 0]; `page.next_offset` of the previous result"}),
        ),
        (
            "max_chars",
            json!({"type": "integer", "minimum": 1000, "description": "Largest result, characters: rows are cut to fit [default: the server's --max-chars, 20000]"}),
        ),
    ];
    TOOLS
        .iter()
        .map(|t| {
            let mut props = Map::new();
            let mut required = Vec::new();
            if t.command.is_empty() {
                props.insert("path".into(), json!({"type": "string", "description": "A log dir or capture file under a root [default: every root]"}));
            } else if let Some(sub) = cmd.find_subcommand(t.command) {
                for a in sub.get_arguments() {
                    let id = a.get_id().as_str();
                    if HIDDEN.contains(&id) {
                        continue;
                    }
                    let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
                    let (key, schema) = if a.is_positional() {
                        if a.is_required_set() {
                            required.push(Value::from(id));
                        }
                        let what = if PATH_ARGS.contains(&id) { " (a path under a root)" } else { "" };
                        (id.to_string(), json!({"type": "string", "description": format!("{help}{what}")}))
                    } else {
                        let Some(long) = a.get_long() else { continue };
                        let flag = matches!(a.get_action(), clap::ArgAction::SetTrue);
                        let mut s = if flag {
                            json!({"type": "boolean"})
                        } else if a.get_value_delimiter().is_some() {
                            json!({"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]})
                        } else {
                            json!({"type": ["string", "number"]})
                        };
                        let values: Vec<String> = a.get_possible_values().iter().filter(|_| !flag).map(|p| p.get_name().to_string()).collect();
                        if !values.is_empty() {
                            s = json!({"type": "string", "enum": values});
                        }
                        let defaults: Vec<String> = a.get_default_values().iter().map(|d| d.to_string_lossy().into_owned()).collect();
                        let mut d = help;
                        if !defaults.is_empty() && !flag {
                            d.push_str(&format!(" [default: {}]", defaults.join(",")));
                        }
                        (long.to_string(), {
                            s["description"] = Value::from(d);
                            s
                        })
                    };
                    props.insert(key, schema);
                }
            }
            for (k, s) in &paging {
                props.insert((*k).into(), s.clone());
            }
            json!({
                "name": t.name,
                "description": t.description,
                "inputSchema": {"type": "object", "properties": props, "required": required, "additionalProperties": false},
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> Server {
        Server {
            roots: vec![std::env::temp_dir()],
            max_chars: DEFAULT_MAX_CHARS,
        }
    }

    #[test]
    fn malformed_messages_are_errors() {
        let s = server();
        for (line, code) in [
            ("{", PARSE_ERROR),
            ("[]", INVALID_REQUEST),
            ("42", INVALID_REQUEST),
            (
                r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
                INVALID_REQUEST,
            ),
            (
                r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
                INVALID_REQUEST,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"nope"}"#,
                METHOD_NOT_FOUND,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}"#,
                INVALID_PARAMS,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"stats","arguments":{"path":"/etc/passwd"}}}"#,
                INVALID_PARAMS,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"stats","arguments":{"path":5}}}"#,
                INVALID_PARAMS,
            ),
        ] {
            let r = s.handle_line(line).expect("a reply");
            assert_eq!(r["error"]["code"], code, "{line}: {r}");
        }
        assert!(
            s.handle_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
                .is_none()
        );
        let r = s
            .handle_line(r#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#)
            .expect("a reply");
        assert_eq!(r["result"], json!({}));
    }

    #[test]
    fn symlinks_out_of_the_root_are_not_read() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/diff");
        let dir = tempfile::tempdir().expect("temp dir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        std::os::unix::fs::symlink(fixtures.join("hand_a.json"), root.join("a.json")).expect("ln");
        std::os::unix::fs::symlink(&fixtures, root.join("sub")).expect("ln");
        let call = |path: &str| {
            let line = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "stats", "arguments": {"path": path}}});
            handle_line(std::slice::from_ref(&root), &line.to_string()).expect("a reply")
        };
        // The file link resolves outside: refused before anything is read.
        let r = call("a.json");
        assert_eq!(r["error"]["code"], INVALID_PARAMS, "{r}");
        // The root itself is inside; what discovery finds through `sub` is not loaded.
        let r = call(&root.display().to_string());
        let text = r["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(!text.contains("\"stats\":[{"), "{r}");
        assert!(text.contains("outside the server's roots"), "{r}");
    }

    #[test]
    fn pages_cut_rows_to_fit() {
        let rows: Vec<Value> = (0..1000)
            .map(|i| json!({"name": format!("row {i}"), "ns": i}))
            .collect();
        let v = json!({"captures": [{"path": "x", "stats": rows}], "problems": []});
        let p = Page {
            limit: 1000,
            offset: 10,
            max_chars: 2000,
        };
        let text = p.apply(v);
        assert!(text.len() <= 2000);
        let out: Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(out["page"]["total"], 1000);
        assert_eq!(out["result"]["captures"][0]["stats"][0]["ns"], 10);
        assert!(out["page"]["next_offset"].as_u64().is_some());
    }

    #[test]
    fn every_tool_has_a_schema() {
        let t = tools_list();
        assert_eq!(t.len(), TOOLS.len());
        assert!(
            t.iter()
                .all(|t| t["inputSchema"]["properties"]["limit"].is_object())
        );
        let diff = t.iter().find(|t| t["name"] == "diff").expect("diff");
        assert_eq!(diff["inputSchema"]["required"], json!(["a", "b"]));
    }
}
