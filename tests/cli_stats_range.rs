//! `tracetui stats --from/--to`: only events starting inside the range (relative to the first
//! event) are counted; bad times are usage errors.

use tracetui::formats::Progress;

const FILE: &str = "tests/fixtures/ui/alexnet.pt.trace.json.gz";

fn counts(args: &[&str]) -> u64 {
    let out = assert_cmd::Command::cargo_bin("tracetui")
        .unwrap()
        .args(["stats", FILE, "--json"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["captures"][0]["stats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["count"].as_u64().unwrap())
        .sum()
}

#[test]
fn from_to_counts_events_starting_in_the_range() {
    let cap = tracetui::formats::load(
        std::path::Path::new(FILE),
        Default::default(),
        &Progress::default(),
    )
    .unwrap();
    let z = cap.time_zero();
    let s = &cap.slices;
    let brute = |a: i64, b: i64| {
        (0..s.len())
            .filter(|&i| s.start[i] - z >= a && s.start[i] - z < b)
            .count() as u64
    };
    // 20 s after the first event, in ps.
    let cut = 20_000_000_000_000i64;
    assert_eq!(counts(&["--to", "20s"]), brute(i64::MIN, cut));
    assert_eq!(counts(&["--from", "20s"]), brute(cut, i64::MAX));
    assert_eq!(counts(&["--from", "20000ms", "--to", "20000000us"]), 0);
    let both = counts(&["--to", "20s"]) + counts(&["--from", "20s"]);
    assert_eq!(both, s.len() as u64, "every slice counted once");
}

#[test]
fn bad_times_are_usage_errors() {
    let out = assert_cmd::Command::cargo_bin("tracetui")
        .unwrap()
        .args(["stats", FILE, "--from", "3 fortnights"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown time unit"));
}
