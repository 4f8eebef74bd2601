//! Grouping of the statistics table on a real XPlane capture (`vm.xplane.pb`, a JAX CPU
//! capture): by the `hlo_op` stat with a `(none)` row for events without it, by category, and
//! the same through `tracetui stats --group-by`. Every event is in exactly one group.

use tracetui::analysis::stats::{GroupBy, StatsOptions, compute};
use tracetui::formats::Progress;
use tracetui::model::{ArgValue, Capture};

const FILE: &str = "tests/fixtures/xplane/vm.xplane.pb";

fn load() -> Capture {
    tracetui::formats::load(
        std::path::Path::new(FILE),
        Default::default(),
        &Progress::default(),
    )
    .unwrap()
}

fn json(args: &[&str]) -> (Option<i32>, serde_json::Value) {
    let out = assert_cmd::Command::cargo_bin("tracetui")
        .unwrap()
        .args(["stats", FILE, "--json"])
        .args(args)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out.status.code(), v)
}

#[test]
fn hlo_op_groups_match_the_events_stats() {
    let c = load();
    let t = compute(
        &c,
        &StatsOptions {
            group: GroupBy::HloOp,
            ..Default::default()
        },
    );
    let by_name = |n: &str| t.rows.iter().find(|r| r.name == n).expect(n);
    // Brute force over the events' stats.
    let key = c
        .strings
        .lookup("hlo_op")
        .expect("capture has hlo_op stats");
    let hlo = |i: usize| match c.args.get(c.slices.args[i], key, &c.strings) {
        Some(ArgValue::Str(s)) => Some(c.strings.get(s).to_string()),
        _ => None,
    };
    let n = c.slices.len();
    let with = |name: &str| (0..n).filter(|&i| hlo(i).as_deref() == Some(name)).count();
    let none = (0..n).filter(|&i| hlo(i).is_none()).count();
    assert_eq!((by_name("dot.3").count, with("dot.3")), (5, 5));
    assert_eq!(
        (by_name("wrapped_subtract").count, with("wrapped_subtract")),
        (40, 40)
    );
    assert_eq!(by_name("(none)").count as usize, none);
    assert_eq!(none, 15829);
    assert_eq!(t.rows.len(), 25);
    // Nothing dropped: the groups partition the timed events (no aggregated ones here).
    let events: u64 = t.rows.iter().map(|r| r.count).sum();
    let plain = compute(&c, &StatsOptions::default());
    assert_eq!(events, plain.rows.iter().map(|r| r.count).sum::<u64>());
    assert_eq!(t.total_self_ps, plain.total_self_ps);
    // 21.024 ms as `tracetui stats` prints it, exact to the ps.
    assert_eq!(by_name("dot.3").total_ps, 21_023_924_000);
}

#[test]
fn cli_group_by() {
    let (code, v) = json(&["--group-by", "hlo_op"]);
    assert_eq!(code, Some(0));
    let cap = &v["captures"][0];
    assert_eq!(cap["group_by"], "hlo_op");
    assert_eq!(cap["names"], 25);
    let rows = cap["stats"].as_array().unwrap();
    let none = rows.iter().find(|r| r["name"] == "(none)").unwrap();
    assert_eq!(none["count"], 15829);
    let (code, v) = json(&["--group-by", "category"]);
    assert_eq!(code, Some(0));
    let (_, plain) = json(&[]);
    let sum = |v: &serde_json::Value| -> u64 {
        v["captures"][0]["stats"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["count"].as_u64().unwrap())
            .sum()
    };
    assert_eq!(sum(&v), sum(&plain));
    // --unified names only apply to name grouping.
    let (code, _) = json(&["--group-by", "tf_op", "--unified"]);
    assert_eq!(code, Some(2));
}
