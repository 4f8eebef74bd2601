//! MCP requests: one JSON-RPC line, arbitrary bytes or a generated `tools/call` (a tool name, a
//! path inside or outside the root, arguments of any JSON type), through the `tracetui mcp`
//! server over a small capture in a temporary root. Every request gets a JSON-RPC reply (a result
//! or an error, with the request's id), a notification none; nothing panics or hangs.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::OnceLock;

const TOOLS: &[&str] = &[
    "list_captures",
    "summary",
    "stats",
    "search",
    "event",
    "window",
    "steps",
    "critical",
    "roofline",
    "gpu",
    "memory",
    "diff",
    "ranks",
    "nope",
    "",
];
const KEYS: &[&str] = &[
    "path",
    "a",
    "b",
    "query",
    "limit",
    "offset",
    "max_chars",
    "sort",
    "cat",
    "from",
    "to",
    "regex",
    "step",
    "group-by",
    "group_by",
    "unified",
    "id",
    "track",
    "min-dur",
    "max-depth",
    "nope",
];
const PATHS: &[&str] = &[
    "t.json",
    "",
    ".",
    "..",
    "/etc/passwd",
    "../t.json",
    "missing.json",
];

#[derive(Arbitrary, Debug)]
enum Arg {
    Str(String),
    Path(u8),
    Int(i64),
    Float(f64),
    Bool(bool),
    Null,
    List(Vec<String>),
    Object,
}

#[derive(Arbitrary, Debug)]
enum Input {
    Raw(Vec<u8>),
    Call {
        tool: u8,
        args: Vec<(u8, Arg)>,
        id: i32,
    },
}

fn root() -> &'static PathBuf {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("tracetui-fuzz-mcp-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let trace = r#"{"traceEvents":[
            {"ph":"X","name":"ProfilerStep#1","ts":0,"dur":100,"pid":1,"tid":1,"cat":"user_annotation"},
            {"ph":"X","name":"aten::mm","ts":10,"dur":50,"pid":1,"tid":1,"cat":"cpu_op"},
            {"ph":"X","name":"gemm","ts":20,"dur":30,"pid":0,"tid":7,"cat":"kernel"}]}"#;
        let _ = std::fs::write(dir.join("t.json"), trace);
        std::fs::canonicalize(&dir).unwrap_or(dir)
    })
}

fuzz_target!(|input: Input| {
    let roots = [root().clone()];
    let (line, id) = match input {
        Input::Raw(bytes) => (String::from_utf8_lossy(&bytes).replace('\n', " "), None),
        Input::Call { tool, args, id } => {
            let mut a = serde_json::Map::new();
            for (k, v) in args.into_iter().take(6) {
                let key = KEYS[usize::from(k) % KEYS.len()].to_string();
                let v = match v {
                    Arg::Str(s) => Value::from(s),
                    Arg::Path(p) => Value::from(PATHS[usize::from(p) % PATHS.len()]),
                    Arg::Int(i) => Value::from(i),
                    Arg::Float(f) => json!(f),
                    Arg::Bool(b) => Value::from(b),
                    Arg::Null => Value::Null,
                    Arg::List(l) => Value::from(l),
                    Arg::Object => json!({"x": 1}),
                };
                a.insert(key, v);
            }
            let msg = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": TOOLS[usize::from(tool) % TOOLS.len()], "arguments": a}});
            (msg.to_string(), Some(id))
        }
    };
    let reply = tracetui::cli::mcp::handle_line(&roots, &line);
    if let Some(id) = id {
        let r = reply.expect("a request gets a reply");
        assert_eq!(r["id"], json!(id));
        assert!(r.get("result").is_some() != r.get("error").is_some());
    }
});
