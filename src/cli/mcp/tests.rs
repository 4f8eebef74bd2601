//! Unit tests of the MCP server (paging, roots, requests).

use super::*;

fn server() -> Server {
    Server::new(vec![std::env::temp_dir()], DEFAULT_MAX_CHARS)
}

#[test]
fn client_roots_are_asked_for_and_extend_the_roots() {
    let s = server();
    // No roots capability: nothing asked.
    s.handle_line(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#);
    assert_eq!(
        s.handle_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
        None
    );
    s.handle_line(r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"capabilities":{"roots":{"listChanged":true}}}}"#);
    let ask = s
        .handle_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .expect("roots/list request");
    assert_eq!(ask["method"], "roots/list");
    assert!(s.pending.get().is_some());
    let dir = std::env::current_dir().expect("cwd");
    let answer = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"roots": [
        {"uri": format!("file://{}", dir.display())}, {"uri": "https://example.com/"}]}});
    assert_eq!(s.handle_line(&answer.to_string()), None);
    assert!(s.pending.get().is_none());
    let canon = std::fs::canonicalize(&dir).expect("canonical cwd");
    assert!(s.roots().contains(&canon));
    assert!(s.resolve("path", &json!("Cargo.toml")).is_ok());
    // A change notification asks again.
    let again = s.handle_line(r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#);
    assert!(again.is_some_and(|r| r["id"] != ask["id"]));
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
