//! The capture cache through the real binary: the second command on a file reads the snapshot
//! and prints exactly what the parse printed; a changed trace, a damaged entry or
//! `TRACETUI_CACHE=off` fall back to parsing.

use assert_cmd::Command;
use std::fs;
use std::path::Path;

fn fixture() -> &'static Path {
    Path::new("tests/fixtures/chrome/alexnet_cuda_sync.json.gz")
}

fn run(args: &[&str], cache: &Path, extra: &[(&str, &str)]) -> String {
    let mut c = Command::cargo_bin("tracetui").unwrap();
    c.args(args)
        .env("TRACETUI_CACHE_DIR", cache)
        .env("TRACETUI_CACHE_MIN_MB", "0")
        .env_remove("TRACETUI_CACHE");
    for (k, v) in extra {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn entries(cache: &Path) -> Vec<std::path::PathBuf> {
    fs::read_dir(cache)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "snap"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn second_open_reads_the_snapshot_and_prints_the_same() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");
    let trace = d.path().join("w.pt.trace.json.gz");
    fs::copy(fixture(), &trace).unwrap();
    let t = trace.to_str().unwrap();
    for cmd in [
        vec!["summary", "--json", t],
        vec!["stats", "--json", t],
        vec!["rank", "--json", t],
        vec!["gpu", "--json", t],
    ] {
        let first = run(&cmd, &cache, &[]);
        assert_eq!(entries(&cache).len(), 1, "{cmd:?}");
        let second = run(&cmd, &cache, &[]);
        assert_eq!(first, second, "{cmd:?}");
        let off = run(&cmd, &cache, &[("TRACETUI_CACHE", "off")]);
        assert_eq!(first, off, "{cmd:?}");
    }
    // A capped load never comes from (or goes to) the cache: the whole capture is cached.
    let capped = run(
        &["summary", "--json", "--max-events", "100", t],
        &cache,
        &[],
    );
    let v: serde_json::Value = serde_json::from_str(&capped).unwrap();
    assert!(
        v["captures"][0]["events"].as_u64().unwrap() <= 100,
        "{capped}"
    );
    let snap = entries(&cache).remove(0);
    // A damaged entry is a miss: same output, and the entry is rewritten.
    let mut bytes = fs::read(&snap).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x5a;
    fs::write(&snap, &bytes).unwrap();
    let before = run(
        &["summary", "--json", t],
        &cache,
        &[("TRACETUI_CACHE", "off")],
    );
    assert_eq!(run(&["summary", "--json", t], &cache, &[]), before);
    assert_ne!(
        fs::read(&snap).unwrap(),
        bytes,
        "damaged entry not replaced"
    );
    // A rewritten trace (different content, new mtime) is parsed again, not served stale.
    std::thread::sleep(std::time::Duration::from_millis(20));
    let cpu = "tests/fixtures/chrome/worker0.torch-cpu-cnn.pt.trace.json.gz";
    fs::copy(cpu, &trace).unwrap();
    let fresh = run(&["summary", "--json", t], &cache, &[]);
    let direct = run(
        &["summary", "--json", t],
        &cache,
        &[("TRACETUI_CACHE", "off")],
    );
    assert_eq!(fresh, direct);
    assert_ne!(fresh, before);
    assert_eq!(entries(&cache).len(), 1);
    // `tracetui cache` lists the entry for this trace, current; `--clear` empties the cache.
    let listing: serde_json::Value =
        serde_json::from_str(&run(&["cache", "--json"], &cache, &[])).unwrap();
    let e = &listing["entries"][0];
    let canon = fs::canonicalize(&trace).unwrap();
    assert_eq!(e["trace"].as_str(), canon.to_str());
    assert_eq!(e["current"], true);
    assert!(e["bytes"].as_u64().unwrap() > 1000);
    let text = run(&["cache"], &cache, &[]);
    assert!(text.contains("1 entries"), "{text}");
    // A trace changed since: listed as stale.
    fs::copy(fixture(), &trace).unwrap();
    let listing: serde_json::Value =
        serde_json::from_str(&run(&["cache", "--json"], &cache, &[])).unwrap();
    assert_eq!(listing["entries"][0]["current"], false);
    assert!(run(&["cache", "--clear"], &cache, &[]).contains("removed 1"));
    assert!(entries(&cache).is_empty());
}

#[test]
fn small_files_and_cache_off_write_nothing() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");
    let t = fixture().to_str().unwrap();
    let mut c = Command::cargo_bin("tracetui").unwrap();
    c.args(["summary", t])
        .env("TRACETUI_CACHE_DIR", &cache)
        .env_remove("TRACETUI_CACHE_MIN_MB")
        .assert()
        .success();
    assert!(entries(&cache).is_empty());
    run(&["summary", t], &cache, &[("TRACETUI_CACHE", "off")]);
    assert!(entries(&cache).is_empty());
}
