//! `tracetui mcp` against a real MCP client: the Python `mcp` SDK runs tests/mcp/client.py, which
//! starts the server over stdio, initializes, lists the tools, calls each one and compares it
//! with the CLI's `--json`, and sends malformed JSON-RPC, unknown tools, wrong argument types and
//! paths outside the root (errors, no crash, no hang).
//!
//! The Python is `$TRACETUI_MCP_PYTHON` (`.ci/run` installs the SDK in target/mcp-venv and sets
//! it), else target/mcp-venv/bin/python, else python3. Without Python or without the SDK the test
//! says so and passes.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn python() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut tries: Vec<PathBuf> = Vec::new();
    if let Some(p) = std::env::var_os("TRACETUI_MCP_PYTHON") {
        tries.push(PathBuf::from(p));
    }
    tries.push(root.join("target/mcp-venv/bin/python"));
    tries.push(PathBuf::from("python3"));
    tries.into_iter().find(|p| {
        Command::new(p)
            .args(["-c", "import mcp.client.stdio"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

#[test]
fn real_mcp_client() {
    let Some(py) = python() else {
        eprintln!(
            "SKIPPED mcp_client: no Python with the `mcp` SDK (set TRACETUI_MCP_PYTHON, or \
             python3 -m venv target/mcp-venv && target/mcp-venv/bin/pip install mcp; .ci/run does)"
        );
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut child = Command::new(&py)
        .arg(root.join("tests/mcp/client.py"))
        .arg(env!("CARGO_BIN_EXE_tracetui"))
        .arg(root.join("tests/fixtures"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the Python client");
    // No hang: the client has 300 s in all; kill it a little after.
    let t = Instant::now();
    while child.try_wait().ok().flatten().is_none() {
        if t.elapsed() > Duration::from_secs(360) {
            let _ = child.kill();
            panic!("the MCP client test hung");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("client output");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(
        out.status.success() && stdout.contains("checks"),
        "the MCP client failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
