//! Every example in the `--help` of every command runs (issue 52 §2: "every example in `--help`
//! does what its text says; a test runs each one").
//!
//! The examples are read from the binary's own help (lines `  tracetui CMD …` of each
//! command's epilogue), their placeholder paths replaced by fixtures of the same kind (a
//! PyTorch GPU capture for `trace.pt.trace.json`, an XPlane for `vm.xplane.pb`, a log dir with
//! both for `logs/`), a trailing `| jq …` or `> FILE` cut. Each must exit 0 with output; a
//! `--json` one must print JSON. Commands that need the network, a running job, a feature the
//! default build leaves out or run until stopped (`capture`, `watch`, `sql`, `export`, `mcp`) and the
//! explorer itself are listed as skipped, by name, so a new command's examples are not
//! forgotten silently.

use std::path::{Path, PathBuf};
use std::process::Command;

const SKIPPED: [&str; 7] = [
    "capture",
    "watch",
    "sql",
    "export",
    "completions",
    "man",
    "mcp",
];

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_tracetui"))
}

fn fixture(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(p)
}

fn help(args: &[&str]) -> String {
    let out = Command::new(bin()).args(args).output().expect("run --help");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Splits a shell line into words (single and double quotes, no expansion).
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for ch in line.chars() {
        match (quote, ch) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(ch);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            (None, c) => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The command part of an example line: the text before its comment (two or more spaces),
/// a pipe or a redirection.
fn command_of(line: &str) -> String {
    let t = line.trim_start();
    let mut end = t.len();
    for pat in ["  ", " | ", " > "] {
        if let Some(i) = t.find(pat) {
            end = end.min(i);
        }
    }
    t[..end].trim().to_string()
}

/// A log dir holding a PyTorch GPU capture and a JAX XPlane run.
fn logs_dir(root: &Path) -> PathBuf {
    let d = root.join("logs");
    let run = d.join("plugins/profile/2026_01_01_00_00_00");
    std::fs::create_dir_all(&run).expect("mkdir");
    std::fs::copy(fixture("cli/vm.xplane.pb"), run.join("vm.xplane.pb")).expect("copy");
    std::fs::copy(
        fixture("torch_gpu/worker0.1795774111709892780.pt.trace.json.gz"),
        d.join("worker0.1795774111709892780.pt.trace.json.gz"),
    )
    .expect("copy");
    d
}

/// A run dir with one PyTorch capture (`diff runA/ runB/` compares one capture each).
fn run_a(root: &Path) -> PathBuf {
    let a = root.join("run_a");
    std::fs::create_dir_all(&a).expect("mkdir");
    std::fs::copy(
        fixture("torch_gpu/worker0.1795882105227733644.pt.trace.json.gz"),
        a.join("worker0.1795882105227733644.pt.trace.json.gz"),
    )
    .expect("copy");
    a
}

/// The fixture standing for a placeholder path of the examples, if the word is one.
fn stand_in(word: &str, logs: &Path, run_a: &Path, other: &Path) -> Option<PathBuf> {
    let torch = fixture("torch_gpu/worker0.1795774111709892780.pt.trace.json.gz");
    let torch_b = fixture("torch_gpu/worker0.1795887060116290334.pt.trace.json.gz");
    Some(match word {
        "trace.pt.trace.json"
        | "base.pt.trace.json"
        | "a.json"
        | "trace.json"
        | "run/worker0.123.pt.trace.json.gz"
        | "trace.pt.trace.json.gz"
        | "run.pt.trace.json.gz" => torch,
        "new.pt.trace.json" | "b.json" => torch_b,
        "vm.xplane.pb" => fixture("cli/vm.xplane.pb"),
        "snap.pickle" => fixture("memory/snap_small.pickle"),
        "memory.prof" => fixture("memory/jax_cpu.memory.prof"),
        "logs/" | "run/" | "runs/" => logs.to_path_buf(),
        "runA/" => run_a.to_path_buf(),
        "runB/" => other.to_path_buf(),
        _ => return None,
    })
}

#[test]
fn every_help_example_runs() {
    let top = help(&["--help"]);
    let commands: Vec<String> = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help")
        .collect();
    assert!(commands.len() >= 10, "commands: {commands:?}");
    let tmp = tempfile::tempdir().expect("tempdir");
    let logs = logs_dir(tmp.path());
    let other = {
        let d = tmp.path().join("other");
        std::fs::create_dir_all(&d).expect("mkdir");
        std::fs::copy(
            fixture("torch_gpu/worker0.1795887060116290334.pt.trace.json.gz"),
            d.join("worker0.1795887060116290334.pt.trace.json.gz"),
        )
        .expect("copy");
        d
    };
    let run_a = run_a(tmp.path());
    let mut jobs: Vec<(String, Vec<String>)> = Vec::new();
    let mut pages: Vec<Vec<&str>> = vec![vec!["--help"]];
    pages.extend(commands.iter().map(|c| vec![c.as_str(), "--help"]));
    for page in &pages {
        let text = help(page);
        for line in text.lines() {
            let c = command_of(line);
            if !c.starts_with("tracetui ") {
                continue;
            }
            let w = words(&c);
            let Some(sub) = w.get(1) else { continue };
            // The explorer itself (`tracetui PATH`) and the skipped commands are not run.
            if !commands.contains(sub) || SKIPPED.contains(&sub.as_str()) || c.contains("$(") {
                continue;
            }
            let args: Vec<String> = w[1..]
                .iter()
                .map(|a| match (sub.as_str(), a.as_str()) {
                    // Steps and times scaled to the fixtures (steps 2–4, ~200 ms long).
                    ("diff", "10..20") => "3..4".to_string(),
                    ("stacks", "1s") => "10ms".to_string(),
                    ("stacks", "2s") => "60ms".to_string(),
                    _ => stand_in(a, &logs, &run_a, &other)
                        .map(|p| p.display().to_string())
                        .unwrap_or_else(|| a.clone()),
                })
                .collect();
            jobs.push((c, args));
        }
    }
    // Two at a time (CI has two cores).
    let results: Vec<(String, Result<(), String>)> = std::thread::scope(|sc| {
        let halves: Vec<_> = [0, 1]
            .map(|k| {
                let jobs = &jobs;
                let dir = tmp.path();
                sc.spawn(move || {
                    jobs.iter()
                        .skip(k)
                        .step_by(2)
                        .map(|(c, args)| (c.clone(), run_one(dir, c, args)))
                        .collect::<Vec<_>>()
                })
            })
            .into_iter()
            .collect();
        halves
            .into_iter()
            .flat_map(|h| h.join().expect("runner thread"))
            .collect()
    });
    let ran: Vec<&String> = results
        .iter()
        .filter(|r| r.1.is_ok())
        .map(|r| &r.0)
        .collect();
    let failed: Vec<String> = results
        .iter()
        .filter_map(|r| r.1.as_ref().err().map(|e| format!("{}\n   {e}", r.0)))
        .collect();
    assert!(ran.len() >= 30, "only {} examples ran: {ran:#?}", ran.len());
    assert!(
        failed.is_empty(),
        "examples that fail:\n{}",
        failed.join("\n")
    );
}

/// Runs one example in `dir`: exit 0 with output (stdout, or the `-o` file), JSON for `--json`.
fn run_one(dir: &Path, c: &str, args: &[String]) -> Result<(), String> {
    {
        {
            let t0 = std::time::Instant::now();
            let out = Command::new(bin())
                .args(args)
                .current_dir(dir)
                .env("TRACETUI_CACHE", "off")
                .output()
                .map_err(|e| e.to_string())?;
            eprintln!("{:>6} ms  {c}", t0.elapsed().as_millis());
            let stdout = String::from_utf8_lossy(&out.stdout);
            // `-o FILE` writes there instead of stdout.
            let written = args
                .iter()
                .position(|a| a == "-o" || a == "--output")
                .and_then(|i| args.get(i + 1))
                .and_then(|f| std::fs::metadata(dir.join(f)).ok())
                .is_some_and(|m| m.len() > 0);
            let ok = out.status.success()
                && (written || !stdout.trim().is_empty())
                && (!args.iter().any(|a| a == "--json")
                    || serde_json::from_str::<serde_json::Value>(&stdout).is_ok());
            if ok {
                Ok(())
            } else {
                Err(format!(
                    "exit {:?}; stderr: {}",
                    out.status.code(),
                    String::from_utf8_lossy(&out.stderr)
                        .lines()
                        .take(3)
                        .collect::<Vec<_>>()
                        .join(" / ")
                ))
            }
        }
    }
}

/// The stats examples do what their text says: the first is torch's `key_averages()` (the
/// default table of a PyTorch capture), `--all-events` gives python frames rows.
#[test]
fn stats_examples_say_what_they_do() {
    let text = help(&["stats", "--help"]);
    assert!(
        text.contains("tracetui stats trace.pt.trace.json\n"),
        "{text}"
    );
    assert!(text.contains("torch key_averages()"), "{text}");
    let run = |extra: &[&str]| -> serde_json::Value {
        let out = Command::new(bin())
            .arg("stats")
            .arg(fixture(
                "torch_gpu/worker0.1795774111709892780.pt.trace.json.gz",
            ))
            .arg("--json")
            .args(extra)
            .env("TRACETUI_CACHE", "off")
            .output()
            .expect("run");
        serde_json::from_slice(&out.stdout).expect("json")
    };
    let dflt = run(&[]);
    assert_eq!(
        dflt["captures"][0]["event_set"]["preset"],
        "torch_key_averages"
    );
    let all = run(&["--all-events"]);
    let kinds = |v: &serde_json::Value| -> Vec<String> {
        v["captures"][0]["stats"]
            .as_array()
            .expect("rows")
            .iter()
            .map(|r| r["kind"].as_str().unwrap_or("").to_string())
            .collect()
    };
    assert!(!kinds(&dflt).iter().any(|k| k == "python"));
    assert!(kinds(&all).iter().any(|k| k == "python"));
}
