//! The client's MCP roots: when the client declares the `roots` capability, the server asks it
//! (`roots/list`, after `notifications/initialized` and on `notifications/roots/list_changed`)
//! and the `file://` roots it answers extend the roots given on the command line.

use serde_json::{Value, json};
use std::path::PathBuf;

/// Id prefix of the server's own `roots/list` requests (their responses are told apart by it).
pub(super) const REQUEST_ID: &str = "tracetui-roots-";

/// The `roots/list` request number `n`.
pub(super) fn request(n: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": format!("{REQUEST_ID}{n}"), "method": "roots/list"})
}

/// True when `msg` is the response to one of our `roots/list` requests.
pub(super) fn is_response(msg: &Value) -> bool {
    msg.get("method").is_none()
        && msg
            .get("id")
            .and_then(Value::as_str)
            .is_some_and(|id| id.starts_with(REQUEST_ID))
}

/// The directories of a `roots/list` response, canonical, and a note per root left out
/// (not a `file://` URI, or not on this machine).
pub(super) fn from_response(msg: &Value) -> (Vec<PathBuf>, Vec<String>) {
    let mut dirs = Vec::new();
    let mut skipped = Vec::new();
    let roots = msg
        .get("result")
        .and_then(|r| r.get("roots"))
        .and_then(Value::as_array);
    let Some(roots) = roots else {
        if msg.get("error").is_some() {
            skipped.push("the client answered roots/list with an error".into());
        }
        return (dirs, skipped);
    };
    for r in roots {
        let uri = r.get("uri").and_then(Value::as_str).unwrap_or("");
        match file_path(uri).map(|p| std::fs::canonicalize(&p)) {
            Some(Ok(c)) => dirs.push(c),
            Some(Err(e)) => skipped.push(format!("{uri}: {e}")),
            None => skipped.push(format!("{uri}: not a file:// URI")),
        }
    }
    (dirs, skipped)
}

/// The path of a `file://` URI (`file:///a/b%20c` → `/a/b c`); `None` for another scheme or a
/// remote host.
pub(super) fn file_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let b = rest.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%'
            && let (Some(h), Some(l)) = (
                b.get(i + 1).copied().and_then(hex),
                b.get(i + 2).copied().and_then(hex),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    Some(PathBuf::from(String::from_utf8(out).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris() {
        assert_eq!(file_path("file:///a/b%20c"), Some(PathBuf::from("/a/b c")));
        assert_eq!(file_path("file://localhost/x"), Some(PathBuf::from("/x")));
        assert_eq!(file_path("file://host/x"), None);
        assert_eq!(file_path("https://x/y"), None);
        assert_eq!(file_path("file:///%zz%2"), Some(PathBuf::from("/%zz%2")));
        assert_eq!(file_path("file:///%ff"), None);
    }

    #[test]
    fn responses() {
        let ok = json!({"jsonrpc": "2.0", "id": "tracetui-roots-1",
            "result": {"roots": [{"uri": "file:///"}, {"uri": "s3://b/k"}, {"name": "no uri"}]}});
        assert!(is_response(&ok));
        let (dirs, skipped) = from_response(&ok);
        assert_eq!(dirs, vec![PathBuf::from("/")]);
        assert_eq!(skipped.len(), 2);
        assert!(!is_response(
            &json!({"jsonrpc": "2.0", "id": 1, "result": {}})
        ));
        let err = json!({"jsonrpc": "2.0", "id": "tracetui-roots-2", "error": {"code": -1}});
        assert_eq!(from_response(&err).1.len(), 1);
    }
}
