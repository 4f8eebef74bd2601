//! `tracetui mcp`: a Model Context Protocol server over stdio (JSON-RPC 2.0, one message a line).
//!
//! Hand-written on serde_json (no new crate): `initialize`, `ping`, `tools/list`, `tools/call`
//! and the notifications; every other request is answered with a JSON-RPC error. Each tool runs
//! the headless command of the same name with `--json` through the command's own code path
//! ([`super::run`]), with its output kept instead of printed, and its captures taken from the
//! captures kept loaded across calls and shared, never copied ([`kept`]). The server reads only
//! files under its roots and the client's MCP roots ([`roots`]), writes nothing but the capture
//! cache, opens no port and runs no subprocess.

use super::report::capture_output;
use super::text::clean;
use crate::discover;
use clap::{Args, CommandFactory, Parser};
use kept::{KEPT, install};
use serde_json::{Map, Value, json};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub const MCP_AFTER: &str = "\
Examples:
  tracetui mcp ~/logs                   serve every capture below ~/logs to an MCP client
  claude mcp add tracetui -- tracetui mcp ~/logs

Speaks the Model Context Protocol over stdin/stdout (newline-delimited JSON-RPC 2.0). Tools:
list_captures, summary, stats, search, event, window, steps, critical, roofline, gpu, memory,
diff, advise, ranks; each
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

/// Protocol versions this server speaks (the newest first).
const VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The server: roots (given on the command line, and the client's), limits.
struct Server {
    /// The roots given at start, canonical.
    base: Vec<PathBuf>,
    /// The client's MCP roots (`roots/list`), canonical.
    client: RefCell<Vec<PathBuf>>,
    max_chars: usize,
    /// The client declared the `roots` capability.
    wants_roots: Cell<bool>,
    /// Our `roots/list` requests so far.
    asked: Cell<u64>,
    /// When the unanswered `roots/list` request was sent: requests wait for its answer (at most
    /// [`ROOTS_WAIT`]) so a call right after `initialized` already sees the client's roots.
    pending: Cell<Option<Instant>>,
}

/// How long requests wait for the client's answer to `roots/list`.
const ROOTS_WAIT: Duration = Duration::from_secs(5);

impl Server {
    fn new(base: Vec<PathBuf>, max_chars: usize) -> Server {
        Server {
            base,
            client: RefCell::new(Vec::new()),
            max_chars,
            wants_roots: Cell::new(false),
            asked: Cell::new(0),
            pending: Cell::new(None),
        }
    }

    /// Every root: those given at start, then the client's.
    fn roots(&self) -> Vec<PathBuf> {
        let mut r = self.base.clone();
        r.extend(self.client.borrow().iter().cloned());
        r
    }

    /// The `roots/list` request to send after `notification` (when the client has roots).
    fn notified(&self, notification: &str) -> Option<Value> {
        let ask = matches!(
            notification,
            "notifications/initialized" | "notifications/roots/list_changed"
        );
        if !ask || !self.wants_roots.get() {
            return None;
        }
        self.asked.set(self.asked.get() + 1);
        self.pending.set(Some(Instant::now()));
        Some(roots::request(self.asked.get()))
    }

    /// The client's answer to `roots/list`: its directories become roots beside the base ones.
    fn take_roots(&self, msg: &Value) {
        self.pending.set(None);
        let (dirs, skipped) = roots::from_response(msg);
        for s in skipped {
            super::report::warn(&format!("mcp: client root left out: {}", clean(&s)));
        }
        *self.client.borrow_mut() = dirs;
        install(&self.roots());
    }
}

/// The reply to one message line of a server reading `roots` (none for a notification): the fuzz
/// target's entry (fuzz/fuzz_targets/mcp_request.rs). Loaded captures are kept as in [`cmd_mcp`].
pub fn handle_line(roots: &[PathBuf], line: &str) -> Option<Value> {
    install(roots);
    Server::new(roots.to_vec(), DEFAULT_MAX_CHARS).handle_line(line)
}

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
        // The explorer's budget: $TRACETUI_MEMORY_MB, else config.toml's, else half the memory.
        let (config, _) = crate::ui::config::load(None);
        k.budget = crate::ui::budget::resolve(config.memory_mb);
    }
    install(&canon);
    let server = Server::new(canon, a.max_chars.max(1000));
    // Lines are read on their own thread so a request can wait for the client's roots answer.
    // `None`: a line that is not UTF-8.
    let (tx, rx) = mpsc::channel::<Option<String>>();
    std::thread::spawn(move || {
        let mut input = std::io::stdin().lock();
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match input.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => return,
                Ok(_) => {
                    if tx.send(String::from_utf8(buf.clone()).ok()).is_err() {
                        return;
                    }
                }
            }
        }
    });
    let process = |line: Option<String>| match line {
        None => send(&error_response(
            Value::Null,
            (PARSE_ERROR, "parse error: not UTF-8".into()),
        )),
        Some(l) if l.trim().is_empty() => {}
        Some(l) => {
            if let Some(reply) = server.handle_line(&l) {
                send(&reply);
            }
        }
    };
    let mut queued: VecDeque<Option<String>> = VecDeque::new();
    loop {
        let pending = server.pending.get();
        if pending.is_none()
            && let Some(l) = queued.pop_front()
        {
            process(l);
            continue;
        }
        let got = match pending {
            Some(since) => match rx.recv_timeout(ROOTS_WAIT.saturating_sub(since.elapsed())) {
                Ok(l) => l,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    super::report::warn("mcp: the client did not answer roots/list in 5 s");
                    server.pending.set(None);
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            },
            None => match rx.recv() {
                Ok(l) => l,
                Err(_) => break,
            },
        };
        let answers_roots = got
            .as_deref()
            .and_then(|l| serde_json::from_str::<Value>(l).ok())
            .is_some_and(|v| roots::is_response(&v));
        if pending.is_some() && !answers_roots {
            queued.push_back(got);
        } else {
            process(got);
        }
    }
    server.pending.set(None);
    queued.into_iter().for_each(process);
    0
}

fn error_response(id: Value, (code, message): RpcError) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

impl Server {
    /// The reply to one line (none for a notification).
    fn handle_line(&self, line: &str) -> Option<Value> {
        let msg: Value = match serde_json::from_str(line) {
            Ok(v) if roots::is_response(&v) => {
                self.take_roots(&v);
                return None;
            }
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
            // Notifications: initialized, cancelled, roots changed; nothing to answer, but the
            // client's roots are asked for after `initialized` and when they change.
            return self.notified(method);
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
                self.wants_roots
                    .set(params.pointer("/capabilities/roots").is_some());
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
            if let Ok(mut g) = kept::PROGRESS_TOKEN.lock() {
                *g = token;
            }
            let ran = self.run_command(tool.command, &args);
            if let Ok(mut g) = kept::PROGRESS_TOKEN.lock() {
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
            tries.extend(self.roots().iter().map(|r| r.join(p)));
        }
        for t in tries {
            if let Ok(c) = std::fs::canonicalize(&t) {
                if self.roots().iter().any(|r| c.starts_with(r)) {
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
        let r: Vec<String> = self
            .roots()
            .iter()
            .map(|r| r.display().to_string())
            .collect();
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
            None => self.roots(),
        };
        let loaded = kept::kept();
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
                            "loaded_heap_bytes": loaded.iter().find(|(p, _)| *p == c.path).map(|(_, b)| *b),
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

mod kept;
mod page;
mod roots;
mod rpc;
mod schema;
#[cfg(test)]
mod tests;
mod tools;

use page::Page;
use rpc::send;
pub use rpc::{DEFAULT_LIMIT, DEFAULT_MAX_CHARS};
use rpc::{
    INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, RpcError,
};
use schema::tools_list;
use tools::{HIDDEN, PATH_ARGS, TOOLS};
