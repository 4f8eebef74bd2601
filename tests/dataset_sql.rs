//! `tracetui sql` over exported fixtures: Hive partitions discovered by DataFusion, and each
//! named query of assets/queries/ against the in-memory analyses (`stats`, `gpu`) or a
//! brute-force rendering of its definition over the model.
#![cfg(feature = "sql")]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tracetui::analysis::gpu::{GpuOptions, analyze};
use tracetui::analysis::stats::{StatsOptions, compute};
use tracetui::dataset::sql::query;
use tracetui::dataset::{CaptureKeys, CaptureRows, ExportOptions, PartKey, export_capture};
use tracetui::formats::Progress;
use tracetui::model::Capture;

fn fixtures() -> Vec<(PathBuf, Capture)> {
    let mut out = Vec::new();
    for dir in ["chrome", "cli", "gpu", "ui", "xplane"] {
        let cat = tracetui::discover::discover(&Path::new("tests/fixtures").join(dir)).unwrap();
        for cf in cat.captures() {
            // The cut copy of alexnet (load-warning tests) has alexnet's run and rank: the
            // queries group by run and rank, so it would add its rows to alexnet's.
            if cf.path.to_string_lossy().contains(".truncated.") {
                continue;
            }
            if let Ok(c) = cf.load(&Progress::default()) {
                out.push((cf.path.clone(), c));
            }
        }
    }
    out
}

fn named(q: &str) -> String {
    std::fs::read_to_string(format!("assets/queries/{q}.sql")).unwrap()
}

/// Runs `sql`; rows as column name → text cell.
fn rows(dataset: &Path, sql: &str) -> Vec<HashMap<String, Option<String>>> {
    let r = query(dataset, sql).unwrap_or_else(|e| panic!("{e}\n{sql}"));
    r.rows()
        .unwrap()
        .into_iter()
        .map(|row| r.columns.iter().cloned().zip(row).collect())
        .collect()
}

fn int(r: &HashMap<String, Option<String>>, k: &str) -> i64 {
    r[k].as_deref().unwrap().parse().unwrap()
}
fn text<'a>(r: &'a HashMap<String, Option<String>>, k: &str) -> &'a str {
    r[k].as_deref().unwrap_or("")
}

fn export_all(caps: &[(PathBuf, Capture)], parts: &[PartKey]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let opts = ExportOptions {
        partition_by: parts.to_vec(),
        ..ExportOptions::default()
    };
    for (_, c) in caps {
        export_capture(c, dir.path(), &opts).unwrap();
    }
    dir
}

#[test]
fn hive_partitions_become_columns() {
    let mut caps = fixtures();
    // A run name that needs escaping in a directory name comes back decoded.
    caps[0].1.source.run = "a/b=c 50%:x".into();
    let dir = export_all(&caps, &[PartKey::Run, PartKey::Rank]);
    let mut want: HashMap<(String, String), u64> = HashMap::new();
    for (_, c) in &caps {
        let k = CaptureKeys::of(c);
        let n: usize = CaptureRows::new(c, &[], false, 4096)
            .map(|b| b.unwrap().num_rows())
            .sum();
        *want.entry((k.run, k.rank)).or_default() += n as u64;
    }
    let got: HashMap<(String, String), u64> = rows(
        dir.path(),
        "SELECT run, rank, COUNT(*) AS n FROM events GROUP BY run, rank",
    )
    .iter()
    .map(|r| {
        (
            (text(r, "run").to_string(), text(r, "rank").to_string()),
            int(r, "n") as u64,
        )
    })
    .collect();
    assert!(want.keys().any(|k| k.0 == "a/b=c 50%:x"));
    assert_eq!(got, want);
}

#[test]
fn top_kernels_equal_stats_summed_over_captures() {
    let caps = fixtures();
    let dir = export_all(&caps, &[PartKey::Run]);
    let opts = StatsOptions {
        cats: Some(vec!["kernel".into()]),
        ..Default::default()
    };
    let mut want: HashMap<String, (u64, i64)> = HashMap::new();
    for (_, c) in &caps {
        for r in compute(c, &opts).rows {
            let e = want.entry(r.name).or_default();
            e.0 += r.count;
            e.1 += r.total_ps / 1000;
        }
    }
    assert!(want.len() > 10, "fixtures with kernels: {}", want.len());
    let sql = named("top_kernels").replace("LIMIT 50", "");
    let got = rows(dir.path(), &sql);
    assert_eq!(got.len(), want.len());
    for r in &got {
        let name = text(r, "name");
        let (n, total) = want[name];
        assert_eq!(int(r, "calls") as u64, n, "{name}");
        assert_eq!(int(r, "total_ns"), total, "{name}");
    }
    // Ordered by total, largest first.
    let totals: Vec<i64> = got.iter().map(|r| int(r, "total_ns")).collect();
    assert!(totals.windows(2).all(|w| w[0] >= w[1]));
}

#[test]
fn step_time_per_rank_equals_the_profiler_steps() {
    let caps = fixtures();
    let dir = export_all(&caps, &[PartKey::Run, PartKey::Rank]);
    let got = rows(dir.path(), &named("step_time_per_rank"));
    let mut checked = 0;
    for (path, c) in &caps {
        let k = CaptureKeys::of(c);
        let mine: Vec<_> = got
            .iter()
            .filter(|r| text(r, "run") == k.run && text(r, "rank") == k.rank)
            .collect();
        // Against stats: count and total of the host `ProfilerStep*` row (stats keeps the
        // GPU-stream mirrors Kineto writes apart, as kind `gpu_annotation`).
        let st = compute(c, &StatsOptions::default());
        let row = st.rows.iter().find(|r| {
            r.name == "ProfilerStep*" && r.kind == tracetui::analysis::stats::EventKind::Annotation
        });
        assert_eq!(
            mine.len() as u64,
            row.map_or(0, |r| r.count),
            "{}",
            path.display()
        );
        let total: i64 = mine.iter().map(|r| int(r, "step_ns")).sum();
        assert_eq!(
            total,
            row.map_or(0, |r| r.total_ps / 1000),
            "{}",
            path.display()
        );
        // And each step against its slice.
        for r in &mine {
            let name = format!("ProfilerStep#{}", int(r, "step"));
            let id = (0..c.slices.len())
                .find(|&i| {
                    c.slice_name(i as u32) == name
                        && c.tracks[c.track_of(i as u32) as usize].kind
                            != tracetui::model::TrackKind::GpuStream
                })
                .unwrap();
            assert_eq!(int(r, "step_ns"), c.slices.dur[id] / 1000);
            checked += 1;
        }
    }
    assert!(checked >= 4, "only {checked} steps in the fixtures");
}

#[test]
fn gpu_idle_per_rank_equals_the_gpu_analysis() {
    // Kineto GPU streams and the `Stream #N` lines of XPlane GPU planes alike.
    let caps: Vec<_> = fixtures();
    assert!(
        caps.iter()
            .any(|(_, c)| c.format == Some(tracetui::model::Format::XPlane)),
        "an XPlane GPU capture among the fixtures"
    );
    let dir = export_all(&caps, &[PartKey::Run, PartKey::Rank]);
    let got = rows(dir.path(), &named("gpu_idle_per_rank"));
    let mut checked = 0;
    for (path, c) in &caps {
        let k = CaptureKeys::of(c);
        let rep = analyze(c, &GpuOptions::default());
        let mine: Vec<_> = got
            .iter()
            .filter(|r| text(r, "run") == k.run && text(r, "rank") == k.rank)
            .collect();
        assert_eq!(mine.len(), rep.devices.len(), "{}", path.display());
        for d in &rep.devices {
            let r = mine
                .iter()
                .find(|r| text(r, "device") == d.device_name)
                .unwrap_or_else(|| panic!("{}: no row for {}", path.display(), d.device_name));
            assert_eq!(
                int(r, "idle_ns"),
                d.breakdown.idle() / 1000,
                "{}",
                path.display()
            );
            assert_eq!(
                int(r, "kernel_time_ns"),
                (d.breakdown.window.1 - d.breakdown.window.0) / 1000
            );
            checked += 1;
        }
    }
    assert!(checked >= 3, "only {checked} GPU devices in the fixtures");
}

#[test]
fn collective_skew_is_the_shift_between_ranks() {
    // Two ranks of one run: the same capture, the second started 5 µs later.
    let load = || {
        let (_, mut c) = fixtures()
            .into_iter()
            .find(|(p, _)| p.to_string_lossy().contains("rank-34"))
            .unwrap();
        c.metadata = Default::default();
        c
    };
    let (mut a, mut b) = (load(), load());
    a.source.host = "r0".into();
    b.source.host = "r1".into();
    b.origin_epoch_ns = b.origin_epoch_ns.map(|o| o + 5_000);
    assert!(a.origin_epoch_ns.is_some());
    let caps = vec![(PathBuf::from("a"), a), (PathBuf::from("b"), b)];
    let dir = export_all(&caps, &[PartKey::Run, PartKey::Rank]);
    let got = rows(dir.path(), &named("collective_skew_per_step"));
    // Brute force over the model: collectives starting inside a ProfilerStep#N.
    let c = &caps[0].1;
    let steps: Vec<usize> = (0..c.slices.len())
        .filter(|&i| c.slice_name(i as u32).starts_with("ProfilerStep#"))
        .collect();
    let mut want = 0;
    for i in 0..c.slices.len() {
        let n = c.slice_name(i as u32);
        let coll = n.starts_with("nccl") || n.starts_with("gloo:") || n.contains("ncclKernel");
        if coll
            && steps.iter().any(|&s| {
                c.slices.start[i] >= c.slices.start[s] && c.slices.start[i] < c.slices.end(s)
            })
        {
            want += 1;
        }
    }
    assert!(want >= 2, "only {want} collectives");
    assert_eq!(got.len(), want);
    for r in &got {
        assert_eq!(int(r, "ranks"), 2);
        assert_eq!(int(r, "skew_ns"), 5_000);
    }
}

/// Integer ranks in the partition paths are integers in SQL, as DuckDB and Spark read them: a
/// run of twelve ranks orders 0, 1, 2, …, 11 (text would give 0, 1, 10, 11, 2, …).
#[test]
fn integer_rank_partitions_order_as_numbers() {
    let load = || {
        let cat = tracetui::discover::discover(Path::new("tests/fixtures/cli")).unwrap();
        let cf = cat.captures().next().unwrap().clone();
        cf.load(&Progress::default()).unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let opts = ExportOptions {
        partition_by: vec![PartKey::Run, PartKey::Rank],
        ..ExportOptions::default()
    };
    for r in 0..12 {
        let mut c = load();
        c.metadata = Default::default();
        c.source.host = r.to_string();
        export_capture(&c, dir.path(), &opts).unwrap();
    }
    let got = rows(
        dir.path(),
        "SELECT rank, arrow_typeof(rank) AS t FROM events GROUP BY rank ORDER BY rank",
    );
    let ranks: Vec<i64> = got.iter().map(|r| int(r, "rank")).collect();
    assert_eq!(ranks, (0..12).collect::<Vec<_>>());
    assert_eq!(text(&got[0], "t"), "Int64");
    // Host names stay text.
    let dir = export_all(&[(PathBuf::from("a"), load())], &[PartKey::Host]);
    let got = rows(
        dir.path(),
        "SELECT arrow_typeof(host) AS t FROM events LIMIT 1",
    );
    assert_eq!(text(&got[0], "t"), "Utf8");
}
