//! JSON-RPC 2.0 errors and the server's default limits, shared by the server and its paging.

/// Default size limit of one tool result, characters.
pub const DEFAULT_MAX_CHARS: usize = 20_000;
/// Default rows per page.
pub const DEFAULT_LIMIT: usize = 50;

/// A JSON-RPC error: (code, message).
pub(crate) type RpcError = (i64, String);

pub(crate) const PARSE_ERROR: i64 = -32700;
pub(crate) const INVALID_REQUEST: i64 = -32600;
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
pub(crate) const INVALID_PARAMS: i64 = -32602;
pub(crate) const INTERNAL_ERROR: i64 = -32603;

/// Writes one JSON-RPC message (a line) to stdout and flushes it.
pub(super) fn send(v: &serde_json::Value) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let s = serde_json::to_string(v).unwrap_or_default();
    let _ = out
        .write_all(s.as_bytes())
        .and_then(|_| out.write_all(b"\n"))
        .and_then(|_| out.flush());
}
