//! `tracetui export` round trip: every fixture capture exported to Parquet, read back with the
//! `parquet` crate, and every column compared with the model (an independent row-by-row
//! rendering of slices, instants, counter samples and flows); self times against `stats`.
#![cfg(feature = "export")]

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tracetui::analysis::stats::{StatsOptions, compute};
use tracetui::dataset::{CaptureKeys, ExportOptions, PartKey, export_capture};
use tracetui::formats::Progress;
use tracetui::model::{ArgValue, Capture, NO_SLICE, Ps};

/// Every fixture capture that loads.
fn fixtures() -> Vec<(PathBuf, Capture)> {
    let mut out = Vec::new();
    for dir in ["chrome", "cli", "gpu", "ui", "xplane"] {
        let cat = tracetui::discover::discover(&Path::new("tests/fixtures").join(dir)).unwrap();
        for cf in cat.captures() {
            if let Ok(c) = cf.load(&Progress::default()) {
                out.push((cf.path.clone(), c));
            }
        }
    }
    assert!(out.len() >= 15, "only {} fixtures loaded", out.len());
    out
}

/// A column read back: every cell as text, integer, float or null.
#[derive(Clone, Debug, PartialEq)]
enum Cell {
    S(String),
    I(i64),
    F(f64),
    Null,
}

fn cells(a: &ArrayRef) -> Vec<Cell> {
    let a = match a.data_type() {
        DataType::Dictionary(_, _) => arrow_cast::cast(a, &DataType::Utf8).unwrap(),
        _ => a.clone(),
    };
    (0..a.len())
        .map(|i| {
            if a.is_null(i) {
                return Cell::Null;
            }
            match a.data_type() {
                DataType::Utf8 => Cell::S(a.as_string::<i32>().value(i).to_string()),
                DataType::Int64 => Cell::I(a.as_primitive::<Int64Type>().value(i)),
                DataType::Int32 => Cell::I(i64::from(a.as_primitive::<Int32Type>().value(i))),
                DataType::Float64 => Cell::F(a.as_primitive::<Float64Type>().value(i)),
                t => panic!("unexpected type {t}"),
            }
        })
        .collect()
}

/// Reads the files back in order: column names, batches, rows of every row group.
fn read_back(paths: &[PathBuf]) -> (Vec<String>, Vec<RecordBatch>, Vec<i64>) {
    let (mut cols, mut batches, mut groups) = (Vec::new(), Vec::new(), Vec::new());
    for path in paths {
        let f = std::fs::File::open(path).unwrap();
        let b = ParquetRecordBatchReaderBuilder::try_new(f).unwrap();
        groups.extend(b.metadata().row_groups().iter().map(|g| g.num_rows()));
        cols = b
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        batches.extend(b.build().unwrap().map(|r| r.unwrap()));
    }
    (cols, batches, groups)
}

/// The table read back, column name → cells.
fn table(batches: &[RecordBatch]) -> HashMap<String, Vec<Cell>> {
    let mut t: HashMap<String, Vec<Cell>> = HashMap::new();
    for b in batches {
        for (f, a) in b.schema().fields().iter().zip(b.columns()) {
            t.entry(f.name().clone()).or_default().extend(cells(a));
        }
    }
    t
}

fn s(x: &str) -> Cell {
    Cell::S(x.to_string())
}
fn i(x: i64) -> Cell {
    Cell::I(x)
}
fn opt(x: Option<i64>) -> Cell {
    x.map_or(Cell::Null, Cell::I)
}

/// The expected rows of a capture, one map per row, written straight from the model.
fn expected(c: &Capture) -> Vec<HashMap<&'static str, Cell>> {
    let z = c.time_zero();
    let ns = |t: Ps| (t - z).div_euclid(1000);
    let epoch = |t: Ps| opt(c.origin_epoch_ns.map(|o| o + t.div_euclid(1000)));
    let keys = CaptureKeys::of(c);
    let track_cols = |t: u32, row: &mut HashMap<&'static str, Cell>| {
        let tr = &c.tracks[t as usize];
        row.insert("device", s(&c.process_title(tr.process)));
        row.insert("track", s(&c.track_stable_name(t)));
        row.insert("track_kind", s(tr.kind.name()));
        row.insert("thread_name", s(&c.track_name(t)));
    };
    let mut rows = Vec::new();
    let base = |kind: &str, name: &str, cat: &str, t: Ps| {
        let mut r = HashMap::new();
        r.insert("run", s(&keys.run));
        r.insert("rank", s(&keys.rank));
        r.insert("host", s(&keys.host));
        r.insert("phase", s(kind));
        // `kind` speaks the vocabulary of `stats` for slices, the phase for the rest.
        let k = match kind {
            "slice" => tracetui::analysis::stats::EventKind::of_category(
                tracetui::model::Category::from_cat(cat),
            )
            .name(),
            other => other,
        };
        r.insert("kind", s(k));
        r.insert("name", s(name));
        r.insert("category", s(cat));
        r.insert("start_ns", i(ns(t)));
        r.insert("start_epoch_ns", epoch(t));
        r.insert("step", Cell::Null);
        r
    };
    let sl = &c.slices;
    for id in 0..sl.len() {
        let mut r = base(
            "slice",
            c.strings.get(sl.name[id]),
            c.strings.get(sl.cat(id)),
            sl.start[id],
        );
        track_cols(c.track_of(id as u32), &mut r);
        r.insert("end_ns", i(ns(sl.end(id))));
        r.insert("dur_ns", i(ns(sl.end(id)) - ns(sl.start[id])));
        r.insert("depth", i(i64::from(c.depth(id as u32))));
        r.insert("id", i(id as i64));
        r.insert(
            "parent_id",
            opt((sl.parent[id] != NO_SLICE).then_some(i64::from(sl.parent[id]))),
        );
        let corr = sl.corr(id);
        r.insert("correlation_id", opt((corr != 0).then_some(corr as i64)));
        r.insert("value", Cell::Null);
        r.insert("flow", Cell::Null);
        rows.push((r, sl.args[id]));
    }
    let n = &c.instants;
    for k in 0..n.ts.len() {
        let mut r = base(
            "instant",
            c.strings.get(n.name[k]),
            c.strings.get(n.cat[k]),
            n.ts[k],
        );
        track_cols(n.track[k], &mut r);
        r.insert("end_ns", i(ns(n.ts[k])));
        r.insert("dur_ns", i(0));
        r.insert("id", Cell::Null);
        r.insert("value", Cell::Null);
        rows.push((r, n.args[k]));
    }
    for cs in &c.counters {
        for k in 0..cs.ts.len() {
            let mut r = base("counter", c.strings.get(cs.name), "", cs.ts[k]);
            track_cols(cs.track, &mut r);
            r.insert("dur_ns", Cell::Null);
            r.insert("value", Cell::F(cs.value[k]));
            rows.push((r, Default::default()));
        }
    }
    for f in &c.flows {
        let from = (f.from != NO_SLICE).then_some(f.from);
        let to = (f.to != NO_SLICE).then_some(f.to);
        let anchor = from.or(to);
        let t0 = anchor.map_or(z, |a| sl.start[a as usize]);
        let mut r = base("flow", c.strings.get(f.cat), c.strings.get(f.cat), t0);
        if let Some(a) = anchor {
            track_cols(c.track_of(a), &mut r);
        }
        r.insert("flow", i(f.id as i64));
        // An arrow has no duration: a sum over all rows adds no flow lengths.
        r.insert("dur_ns", Cell::Null);
        r.insert("id", opt(from.map(i64::from)));
        r.insert("flow_to_id", opt(to.map(i64::from)));
        rows.push((r, Default::default()));
    }
    rows.into_iter()
        .map(|(mut r, a)| {
            // args: own entries first, an inherited key already given skipped.
            let mut obj = serde_json::Map::new();
            for (k, v) in c.args.iter(a, &c.strings) {
                let key = c.strings.get(k).to_string();
                if obj.contains_key(&key) {
                    continue;
                }
                let jv = match v {
                    ArgValue::Null => serde_json::Value::Null,
                    ArgValue::Bool(b) => b.into(),
                    ArgValue::I64(x) => x.into(),
                    ArgValue::U64(x) => x.into(),
                    ArgValue::F64(x) => serde_json::Number::from_f64(x)
                        .map_or(serde_json::Value::Null, serde_json::Value::Number),
                    ArgValue::Str(s) => c.strings.get(s).into(),
                    ArgValue::Json(s) => serde_json::from_str(c.strings.get(s))
                        .unwrap_or_else(|_| c.strings.get(s).into()),
                    ArgValue::Bytes(n) => format!("<opaque {n} bytes>").into(),
                };
                obj.insert(key, jv);
            }
            r.insert(
                "args",
                if obj.is_empty() {
                    Cell::Null
                } else {
                    Cell::S(serde_json::Value::Object(obj).to_string())
                },
            );
            r
        })
        .collect()
}

#[test]
fn round_trip_every_column_of_every_fixture() {
    let dir = tempfile::tempdir().unwrap();
    let mut total = 0;
    for (path, c) in fixtures() {
        // Small row groups and files, so that bigger fixtures span several of each.
        let opts = ExportOptions {
            row_group_rows: 1000,
            rows_per_file: 7000,
            ..ExportOptions::default()
        };
        let out = dir.path().join(path.file_name().unwrap());
        let w = export_capture(&c, &out, &opts).unwrap();
        let (cols, batches, groups) = read_back(&w.files);
        let want = expected(&c);
        assert_eq!(w.rows as usize, want.len(), "{}", path.display());
        assert_eq!(w.files.len(), want.len().div_ceil(7000).max(1));
        assert!(groups.iter().all(|&g| g <= 1000), "{groups:?}");
        assert_eq!(groups.iter().sum::<i64>() as usize, want.len());
        assert_eq!(w.row_groups, groups.len());
        assert_eq!(cols.len(), 33);
        let t = table(&batches);
        for (k, row) in want.iter().enumerate() {
            for (col, v) in row {
                let got = &t[*col][k];
                if *col == "args" {
                    // Compare as JSON values (the writer's float text may differ).
                    let parse = |c: &Cell| match c {
                        Cell::S(x) => serde_json::from_str::<serde_json::Value>(x).unwrap(),
                        _ => serde_json::Value::Null,
                    };
                    assert_eq!(parse(got), parse(v), "{} row {k} args", path.display());
                } else {
                    assert_eq!(got, v, "{} row {k} column {col}", path.display());
                }
            }
        }
        // Self times: per name, the sums equal `stats` over every slice (all categories).
        let st = compute(
            &c,
            &StatsOptions {
                every: true,
                ..StatsOptions::default()
            },
        );
        let mut by_name: HashMap<String, (i64, i64, u64)> = HashMap::new();
        let cols = (&t["phase"], &t["name"], &t["dur_ns"], &t["self_time_ns"]);
        for (((kind, name), d), sf) in cols.0.iter().zip(cols.1).zip(cols.2).zip(cols.3) {
            if *kind != s("slice") {
                continue;
            }
            let Cell::S(name) = name else { panic!() };
            let name = tracetui::analysis::stats::group_name(name).to_string();
            let e = by_name.entry(name).or_default();
            if let (Cell::I(d), Cell::I(sf)) = (d, sf) {
                e.0 += d;
                e.1 += sf;
                e.2 += 1;
            }
        }
        // XPlane aggregated (untimed) events are in `stats` rows but not in the dataset.
        let mut agg: HashMap<String, (u64, i64)> = HashMap::new();
        for a in &c.aggregated {
            let e = agg.entry(c.strings.get(a.name).to_string()).or_default();
            e.0 += a.occurrences;
            e.1 += a.dur / 1000;
        }
        // `stats` keeps kinds apart (a `ProfilerStep#1` host annotation and its GPU-stream
        // mirror are two rows): the dataset's per-name sums are over every kind.
        let mut stats_by_name: HashMap<&str, (u64, i64, i64)> = HashMap::new();
        for row in st.rows.iter().filter(|r| r.min_ps.is_some()) {
            let e = stats_by_name.entry(row.name.as_str()).or_default();
            e.0 += row.count;
            e.1 += row.total_ps;
            e.2 += row.self_ps;
        }
        for (name, &(count, total_ps, self_ps)) in &stats_by_name {
            let (tot, slf, n) = by_name.get(*name).copied().unwrap_or_default();
            let (an, ad) = agg.get(*name).copied().unwrap_or_default();
            let (n, tot, slf) = (n + an, tot + ad, slf + ad);
            assert_eq!(n, count, "{} {}", path.display(), name);
            // Whole-ns flooring per event: within one ns per event of the ps sums.
            let tol = n as i64 + 1;
            assert!(
                (tot - total_ps / 1000).abs() <= tol && (slf - self_ps / 1000).abs() <= tol,
                "{} {}: total {tot} vs {}, self {slf} vs {}",
                path.display(),
                name,
                total_ps / 1000,
                self_ps / 1000
            );
        }
        total += want.len();
    }
    assert!(total > 10_000, "only {total} rows");
}

#[test]
fn partitioned_files_leave_out_partition_columns_and_args_none_drops_args() {
    let (_, c) = fixtures()
        .into_iter()
        .find(|(p, _)| p.to_string_lossy().contains("rank-34"))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let opts = ExportOptions {
        partition_by: vec![PartKey::Run, PartKey::Rank],
        args: false,
        ..ExportOptions::default()
    };
    let w = export_capture(&c, dir.path(), &opts).unwrap();
    assert_eq!(w.files.len(), 1);
    let rel = w.files[0].strip_prefix(dir.path()).unwrap();
    let parts: Vec<String> = rel
        .components()
        .map(|p| p.as_os_str().to_string_lossy().into_owned())
        .collect();
    assert_eq!(parts[1], "rank=34", "{rel:?}");
    assert!(parts[0].starts_with("run="), "{rel:?}");
    let (cols, _, _) = read_back(&w.files);
    assert!(
        !cols
            .iter()
            .any(|c| c == "run" || c == "rank" || c == "args")
    );
    assert_eq!(cols.len(), 30);
    // Exporting again replaces the same part file.
    let again = export_capture(&c, dir.path(), &opts).unwrap();
    assert_eq!(again.files, w.files);
}
