//! Object-store log dirs against a local S3-compatible server (moto in server mode, started by
//! the test; skipped with a message when moto is not installed — `.ci/run` installs it): the
//! listing and ranged GETs give exactly what loading the same files from disk gives, for
//! `summary` and `stats`; a second run fetches nothing; an object removed from the bucket
//! leaves the mirror.
#![cfg(feature = "cloud")]

use assert_cmd::Command;
use object_store::aws::AmazonS3Builder;
use object_store::path::Path as ObjPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

struct Moto(Child);

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `moto_server` (or `python3 -m moto.server`) on a free port.
fn start_moto() -> Option<(Moto, u16)> {
    let port = TcpListener::bind("127.0.0.1:0")
        .ok()?
        .local_addr()
        .ok()?
        .port();
    let p = port.to_string();
    let tries: [(&str, Vec<&str>); 2] = [
        ("moto_server", vec!["-H", "127.0.0.1", "-p", &p]),
        (
            "python3",
            vec!["-m", "moto.server", "-H", "127.0.0.1", "-p", &p],
        ),
    ];
    for (bin, args) in tries {
        let Ok(child) = std::process::Command::new(bin)
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
        else {
            continue;
        };
        let mut m = Moto(child);
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(20) {
            if let Ok(Some(_)) = m.0.try_wait() {
                break; // exited: not installed
            }
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Some((m, port));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        drop(m);
    }
    None
}

/// `PUT /bucket` (moto accepts unsigned requests).
fn create_bucket(port: u16, bucket: &str) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "PUT /{bucket} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut resp = String::new();
    let _ = s.read_to_string(&mut resp);
    assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
}

const ENV: [(&str, &str); 4] = [
    ("AWS_ACCESS_KEY_ID", "testing"),
    ("AWS_SECRET_ACCESS_KEY", "testing"),
    ("AWS_REGION", "us-east-1"),
    ("AWS_ALLOW_HTTP", "true"),
];

fn store(port: u16, bucket: &str) -> impl ObjectStore {
    let mut b = AmazonS3Builder::new()
        .with_bucket_name(bucket)
        .with_endpoint(format!("http://127.0.0.1:{port}"))
        .with_allow_http(true);
    for (k, v) in ENV {
        if let Ok(key) = k.to_ascii_lowercase().parse() {
            b = b.with_config(key, v);
        }
    }
    b.build().unwrap()
}

/// The local log dir: an XProf session, a PyTorch run and plain Chrome JSON, plus files that
/// are not captures.
fn layout(root: &Path) -> Vec<(String, PathBuf)> {
    let f = |p: &str| PathBuf::from("tests/fixtures").join(p);
    let files = vec![
        (
            "plugins/profile/2024_01_01_00_00_00/vm.xplane.pb",
            f("xplane/vm.xplane.pb"),
        ),
        (
            "plugins/profile/2024_01_01_00_00_00/tf_bert_gpu.xplane.pb.gz",
            f("xplane/tf_bert_gpu.xplane.pb.gz"),
        ),
        (
            "torch/worker0.1795311589169457977.pt.trace.json.gz",
            f("cli/worker0.1795311589169457977.pt.trace.json.gz"),
        ),
        ("other/simple_trace.json", f("chrome/simple_trace.json")),
        ("other/vm.line_counts.json", f("cli/vm.line_counts.json")),
        ("other/notes.txt", f("chrome/PROVENANCE.md")),
    ];
    let mut out = Vec::new();
    for (rel, src) in files {
        let dest = root.join(rel);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(&src, &dest).unwrap();
        out.push((rel.to_string(), dest));
    }
    out
}

fn run(args: &[&str], env: &[(&str, String)]) -> (i32, String, String) {
    let mut c = Command::cargo_bin("tracetui").unwrap();
    c.args(args);
    for (k, v) in ENV {
        c.env(k, v);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The JSON report with every path made relative to its root (local dir or mirror) and the
/// captures in path order (runs are listed newest first, and the mirror's modification times
/// are the objects' while the local copies' are the copy times).
fn normalized(json: &str, root: &Path) -> serde_json::Value {
    let text = json
        .replace(&format!("{}/", root.display()), "ROOT/")
        .replace(&root.display().to_string(), "ROOT");
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    if let Some(caps) = v["captures"].as_array_mut() {
        caps.sort_by_key(|c| c["path"].as_str().unwrap_or("").to_string());
    }
    v
}

#[test]
fn s3_log_dir_loads_like_the_same_files_on_disk() {
    let Some((_moto, port)) = start_moto() else {
        eprintln!(
            "SKIPPED: moto is not installed (pip install 'moto[server]'); the object-store test \
             needs a local S3-compatible server"
        );
        return;
    };
    create_bucket(port, "traces");
    let tmp = tempfile::tempdir().unwrap();
    let local = tmp.path().join("logs");
    let files = layout(&local);
    let s3 = store(port, "traces");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for (rel, path) in &files {
        let bytes = std::fs::read(path).unwrap();
        rt.block_on(s3.put(
            &ObjPath::from(format!("logs/{rel}")),
            PutPayload::from(bytes),
        ))
        .unwrap();
    }
    let cache = tmp.path().join("cache");
    let env = vec![
        ("AWS_ENDPOINT", format!("http://127.0.0.1:{port}")),
        ("TRACETUI_CACHE_DIR", cache.display().to_string()),
        ("HOME", tmp.path().display().to_string()),
    ];
    let mirror = cache.join("remote");
    for cmd in ["summary", "stats"] {
        let (code, remote_out, err) = run(&[cmd, "s3://traces/logs", "--json"], &env);
        assert_eq!(code, 0, "{err}");
        let (code, local_out, err2) = run(&[cmd, local.to_str().unwrap(), "--json"], &env);
        assert_eq!(code, 0, "{err2}");
        let mdir = std::fs::read_dir(&mirror)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let r = normalized(&remote_out, &mdir);
        let l = normalized(&local_out, &local);
        assert_eq!(r, l, "{cmd}: remote and local differ\n{err}");
        assert_eq!(r["captures"].as_array().unwrap().len(), 4, "{cmd}");
        if cmd == "summary" {
            assert!(err.contains("fetched 4 capture(s)"), "{err}");
        } else {
            assert!(!err.contains("fetched"), "second run fetched again: {err}");
        }
    }
    // A removed object leaves the mirror; one capture fewer.
    rt.block_on(s3.delete(&ObjPath::from("logs/other/simple_trace.json")))
        .unwrap();
    let (code, out, err) = run(&["summary", "s3://traces/logs", "--json"], &env);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["captures"].as_array().unwrap().len(), 3);
    // One object by URL.
    let (code, out, err) = run(
        &[
            "summary",
            "s3://traces/logs/plugins/profile/2024_01_01_00_00_00/vm.xplane.pb",
            "--json",
        ],
        &env,
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["captures"].as_array().unwrap().len(), 1);
    assert_eq!(v["captures"][0]["format"], "xplane");
    // A missing bucket prefix: no captures, exit 1.
    let (code, _, err) = run(&["summary", "s3://traces/nothing-here"], &env);
    assert_eq!(code, 1, "{err}");
}
