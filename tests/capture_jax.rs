//! Against the real thing: a JAX program running `jax.profiler.start_server`, captured with
//! `tracetui capture`, then loaded. Skipped with a message where `python3 -c "import jax"` fails.
#![cfg(feature = "capture")]

fn load(p: &std::path::Path) -> Result<tracetui::model::Capture, tracetui::formats::LoadError> {
    tracetui::formats::load(
        p,
        tracetui::model::SourceInfo::default(),
        &tracetui::formats::Progress::default(),
    )
}

use std::process::{Command, Stdio};
use std::time::Duration;

const PROGRAM: &str = r#"
import sys, time, jax, jax.numpy as jnp
jax.profiler.start_server(int(sys.argv[1]))
print("ready", flush=True)
@jax.jit
def step(w, x):
    return jnp.tanh(x @ w).sum()
w = jnp.ones((256, 256)); x = jnp.ones((64, 256))
deadline = time.time() + 60
while time.time() < deadline:
    step(w, x).block_until_ready()
"#;

#[test]
fn captures_a_real_jax_program() {
    let jax = Command::new("python3")
        .args(["-c", "import jax"])
        .stderr(Stdio::null())
        .status();
    if !jax.is_ok_and(|s| s.success()) {
        eprintln!("skipped: python3 -c 'import jax' fails (pip install jax to run this test)");
        return;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new("python3")
        .args(["-c", PROGRAM, &port.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    use std::io::BufRead;
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "ready");
    std::thread::sleep(Duration::from_secs(2));
    let d = tempfile::tempdir().unwrap();
    let out = assert_cmd::Command::cargo_bin("tracetui")
        .unwrap()
        .args([
            "capture",
            &format!("localhost:{port}"),
            "--duration-ms",
            "1000",
            "--json",
            "--logdir",
        ])
        .arg(d.path())
        .output()
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    eprintln!("{}", String::from_utf8_lossy(&out.stdout));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let path = v["hosts"][0]["path"].as_str().unwrap().to_string();
    let cap = load(std::path::Path::new(&path)).expect("the capture loads");
    let s = assert_cmd::Command::cargo_bin("tracetui")
        .unwrap()
        .args(["summary", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&s.stdout);
    eprintln!("{} slices; summary {} bytes", cap.slices.len(), text.len());
    assert!(!cap.slices.is_empty());
    assert!(
        text.contains("python") || text.contains("Python"),
        "python tracks expected"
    );
    assert!(text.contains("XLA"), "XLA lines expected");
}
