//! `tracetui export`: every capture under a path to a Parquet dataset (docs/export.md).

use clap::{Args, ValueEnum};
use serde::Serialize;
use std::path::PathBuf;

pub(crate) const EXPORT_AFTER: &str = "\
Examples:
  tracetui export logs/ --parquet events/                     one part file per capture
  tracetui export logs/ --parquet events/ --partition-by run,rank
  tracetui export trace.pt.trace.json.gz --parquet out/ --args none --json

One row per slice, instant, counter sample and flow (column `kind`), with the schema of
docs/export.md: names and categories dictionary-encoded, ZSTD, row groups of 256Ki rows (memory
stays bounded by one loaded capture plus one row group). --partition-by writes Hive-style
directories (run=…/rank=…/part-<hash>.parquet) that DataFusion, DuckDB and Spark discover; the
part name depends only on the capture, so exporting again replaces it. Query with `tracetui sql`.";

/// What the `args` column holds.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgsMode {
    /// Every event's args as one JSON object
    Json,
    /// No `args` column (smaller files)
    None,
}

/// Arguments of `export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Log dir or capture file
    pub path: PathBuf,
    /// Write a Parquet dataset into this directory (created; existing part files of the same
    /// captures are replaced)
    #[arg(long, value_name = "OUT")]
    pub parquet: PathBuf,
    /// Hive partition columns, outermost first: any of run, rank, host
    #[arg(long, value_name = "COLS", value_delimiter = ',')]
    pub partition_by: Vec<String>,
    /// The `args` column
    #[arg(long, value_enum, default_value = "json")]
    pub args: ArgsMode,
    /// Print JSON (stable shape, see docs/cli.md) instead of text
    #[arg(long)]
    pub json: bool,
}

/// One capture of `export --json`.
#[derive(Serialize, Clone, Debug, Default)]
pub struct CaptureExport {
    /// File read.
    pub path: String,
    /// Run name.
    pub run: String,
    /// Host / worker.
    pub host: String,
    /// Rank written (`distributedInfo.rank`, else the host).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<String>,
    /// Why loading or writing failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The part files written (several for a capture of more than 512 Ki rows).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// Rows written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows: Option<u64>,
    /// Row groups written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub row_groups: Option<usize>,
    /// Size of the part file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// Size of the capture file read.
    pub input_bytes: u64,
    /// Load warnings (kind: count), carried over so nothing is dropped silently.
    pub warnings: Vec<String>,
}

/// Text report of one capture.
pub fn render_text(r: &CaptureExport) -> String {
    use super::text::{bytes, capture_head};
    let mut o = match capture_head(&r.path, &r.run, &r.host, "", r.error.as_ref()) {
        Ok(o) => o,
        Err(o) => return o,
    };
    o.push_str(&format!(
        "   {} rows, {} row groups, {} (input {}) -> {}\n",
        r.rows.unwrap_or(0),
        r.row_groups.unwrap_or(0),
        bytes(r.bytes.unwrap_or(0)),
        bytes(r.input_bytes),
        super::text::clean(&r.files.join(", "))
    ));
    for w in &r.warnings {
        o.push_str(&format!("   warning: {}\n", super::text::clean(w)));
    }
    o
}

/// Runs `export`.
#[cfg(feature = "export")]
pub fn cmd_export(a: &ExportArgs) -> i32 {
    use crate::dataset::{ExportOptions, PartKey, export_capture};
    let mut parts = Vec::new();
    for p in &a.partition_by {
        match PartKey::parse(p) {
            Ok(k) if !parts.contains(&k) => parts.push(k),
            Ok(_) => {}
            Err(e) => {
                eprintln!("tracetui: error: {}", super::text::clean(&e));
                return 2;
            }
        }
    }
    let opts = ExportOptions {
        partition_by: parts,
        args: a.args == ArgsMode::Json,
        ..ExportOptions::default()
    };
    if let Err(e) = std::fs::create_dir_all(&a.parquet) {
        return super::fail(&format!("{}: cannot create: {e}", a.parquet.display()));
    }
    let out = a.parquet.clone();
    super::report::report(
        &a.path,
        a.json,
        |cap, loaded| {
            let mut r = CaptureExport {
                path: cap.path.display().to_string(),
                run: cap.run.clone(),
                host: cap.host.clone(),
                input_bytes: cap.bytes,
                ..CaptureExport::default()
            };
            match loaded {
                Err(e) => r.error = Some(e.to_string()),
                Ok(c) => {
                    r.rank = Some(crate::dataset::CaptureKeys::of(&c).rank);
                    r.warnings = c
                        .warnings
                        .iter()
                        .map(|w| format!("{} ×{}: {}", w.kind, w.count, w.message))
                        .collect();
                    match export_capture(&c, &out, &opts) {
                        Ok(w) => {
                            r.files = w.files.iter().map(|p| p.display().to_string()).collect();
                            r.rows = Some(w.rows);
                            r.row_groups = Some(w.row_groups);
                            r.bytes = Some(w.bytes);
                        }
                        Err(e) => r.error = Some(e),
                    }
                }
            }
            r
        },
        render_text,
        |r| (r.path.as_str(), r.error.as_ref()),
    )
}

/// Runs `export` in a build without Parquet support: says so.
#[cfg(not(feature = "export"))]
pub fn cmd_export(_: &ExportArgs) -> i32 {
    super::report::feature_missing("`tracetui export`", "export")
}
