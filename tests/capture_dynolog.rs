//! `tracetui capture --dynolog` against a fake dynolog daemon: the exact bytes of the request
//! (native-endian i32 length, then JSON with the Kineto config lines), the reply handling, the
//! per-pid output files, and "no process matched".

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;

/// Serves one connection: records the request frame, answers with `reply`, and (like the
/// matched processes would) writes each `<log>_<pid>.json` file.
fn fake_daemon(reply: &'static str, write_files: bool) -> (String, mpsc::Receiver<Vec<u8>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut len = [0u8; 4];
        s.read_exact(&mut len).unwrap();
        let n = i32::from_ne_bytes(len) as usize;
        let mut body = vec![0u8; n];
        s.read_exact(&mut body).unwrap();
        let mut frame = len.to_vec();
        frame.extend_from_slice(&body);
        let req: serde_json::Value = serde_json::from_slice(&body).unwrap();
        tx.send(frame).unwrap();
        s.write_all(&(reply.len() as i32).to_ne_bytes()).unwrap();
        s.write_all(reply.as_bytes()).unwrap();
        if write_files {
            let cfg = req["config"].as_str().unwrap();
            let log = cfg
                .lines()
                .find_map(|l| l.strip_prefix("ACTIVITIES_LOG_FILE="))
                .unwrap();
            let r: serde_json::Value = serde_json::from_str(reply).unwrap();
            for pid in r["processesMatched"].as_array().unwrap() {
                let f = log.replace(".json", &format!("_{}.json", pid));
                std::fs::write(f, br#"{"traceEvents":[{"ph":"X","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":5}]}"#).unwrap();
            }
        }
    });
    (addr, rx)
}

/// Runs `tracetui capture --dynolog ADDR ARGS… --log-file LOG`.
fn dynolog(addr: &str, args: &[&str], log: &std::path::Path) -> std::process::Output {
    assert_cmd::Command::cargo_bin("tracetui")
        .unwrap()
        .args(["capture", "--dynolog", addr])
        .args(args)
        .arg("--log-file")
        .arg(log)
        .output()
        .unwrap()
}

#[test]
fn the_request_bytes_are_what_dyno_gputrace_sends() {
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("trace.json");
    let (addr, rx) = fake_daemon(
        r#"{"processesMatched":[4242,77],"activityProfilersTriggered":[4242,77]}"#,
        true,
    );
    let out = dynolog(
        &addr,
        &[
            "--iterations",
            "3",
            "--with-stack",
            "--record-shapes",
            "--job-id",
            "12",
            "--pids",
            "4242,77",
            "--json",
        ],
        &log,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let frame = rx.recv().unwrap();
    let n = i32::from_ne_bytes(frame[..4].try_into().unwrap()) as usize;
    assert_eq!(n, frame.len() - 4);
    let req: serde_json::Value = serde_json::from_slice(&frame[4..]).unwrap();
    assert_eq!(req["fn"], "setKinetOnDemandRequest");
    assert_eq!(req["job_id"], 12);
    assert_eq!(req["pids"], serde_json::json!([4242, 77]));
    assert_eq!(req["process_limit"], 3);
    assert_eq!(
        req["config"].as_str().unwrap(),
        format!(
            "ACTIVITIES_LOG_FILE={}\nPROFILE_START_ITERATION=0\nPROFILE_START_ITERATION_ROUNDUP=1\nACTIVITIES_ITERATIONS=3\n\
             PROFILE_REPORT_INPUT_SHAPES=true\nPROFILE_WITH_STACK=true\nPROFILE_WITH_FLOPS=false\nPROFILE_WITH_MODULES=false",
            log.display()
        )
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["processes_matched"], serde_json::json!([4242, 77]));
    let landed = v["landed"].as_array().unwrap();
    assert_eq!(landed.len(), 2);
    assert!(landed[0].as_str().unwrap().ends_with("trace_4242.json"));
}

#[test]
fn duration_and_memory_lines() {
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("m.json");
    let (addr, rx) = fake_daemon(
        r#"{"processesMatched":[5],"activityProfilersTriggered":[5]}"#,
        true,
    );
    let out = dynolog(&addr, &["--duration-ms", "750", "--profile-memory"], &log);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let frame = rx.recv().unwrap();
    let req: serde_json::Value = serde_json::from_slice(&frame[4..]).unwrap();
    let cfg = req["config"].as_str().unwrap();
    assert!(cfg.contains("\nPROFILE_START_TIME=0\nACTIVITIES_DURATION_MSECS=750\nPROFILE_REPORT_INPUT_SHAPES=false\nPROFILE_PROFILE_MEMORY=true\nPROFILE_MEMORY=true\nPROFILE_MEMORY_DURATION_MSECS=750\nPROFILE_WITH_STACK=false"), "{cfg}");
    assert_eq!(req["pids"], serde_json::json!([0]));
    assert!(String::from_utf8_lossy(&out.stdout).contains("m_5.json: written"));
}

#[test]
fn no_process_matched_is_explained() {
    let d = tempfile::tempdir().unwrap();
    let (addr, _rx) = fake_daemon(
        r#"{"processesMatched":[],"activityProfilersTriggered":[]}"#,
        false,
    );
    let out = dynolog(&addr, &[], &d.path().join("t.json"));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("KINETO_USE_DAEMON=1") && err.contains("--enable_ipc_monitor"),
        "{err}"
    );
}

#[test]
fn a_closed_port_and_a_bad_reply_are_errors() {
    let d = tempfile::tempdir().unwrap();
    let free = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .to_string();
    let out = dynolog(&free, &[], &d.path().join("t.json"));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot reach dynolog"));

    let (addr, _rx) = fake_daemon("not json \u{1b}[2J", false);
    let out = dynolog(&addr, &[], &d.path().join("t.json"));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unexpected") && !err.contains('\u{1b}'),
        "{err}"
    );
}
