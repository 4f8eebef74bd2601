//! `tracetui sql`: SQL over an exported dataset (or a log dir exported on the fly) with Apache
//! DataFusion; the table is `events` (docs/export.md).

use clap::Args;
use std::path::PathBuf;

pub(crate) const SQL_AFTER: &str = "\
Examples:
  tracetui sql events/ \"SELECT name, count(*) AS n FROM events WHERE kind = 'slice' GROUP BY name ORDER BY n DESC LIMIT 10\"
  tracetui sql events/ top_kernels --csv                  a named query, by name
  tracetui sql --list                                     the named queries
  tracetui sql events/ \"$(cat my_query.sql)\"           SQL text may begin with a -- comment
  tracetui sql logs/ \"SELECT rank, sum(dur_ns) FROM events GROUP BY rank\" --json

DATASET_OR_LOGDIR is a directory written by `tracetui export` (Hive partitions such as run=…/rank=…
become columns) or a log dir / capture, which is exported to a temporary dataset first. QUERY is
SQL text, the path of a .sql file, or the name of a named query (`--list`; their SQL is in
assets/queries/ and also runs unchanged on DuckDB and Spark SQL). --json prints an array of row objects (nulls left out), --csv a header line
and rows.";

/// Arguments of `sql`.
#[derive(Args, Debug)]
pub struct SqlArgs {
    /// Exported dataset directory, or a log dir / capture file (exported to a temporary dataset)
    #[arg(required_unless_present = "list")]
    pub path: Option<PathBuf>,
    /// SQL over the table `events`, the path of a .sql file, or a named query (`--list`)
    #[arg(required_unless_present = "list", allow_hyphen_values = true)]
    pub query: Option<String>,
    /// List the named queries with their descriptions
    #[arg(long, conflicts_with_all = ["json", "csv"])]
    pub list: bool,
    /// Print a JSON array of row objects
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV with a header line
    #[arg(long)]
    pub csv: bool,
}

/// Runs `sql`.
#[cfg(feature = "sql")]
pub fn cmd_sql(a: &SqlArgs) -> i32 {
    use super::text::{Align, clean, table};
    use crate::dataset::sql;
    if a.list {
        return match super::report::emit(&super::sql_named::list_text()) {
            Ok(()) => 0,
            Err(code) => code,
        };
    }
    let (Some(path), Some(query)) = (a.path.as_ref(), a.query.as_ref()) else {
        return super::fail("sql: a dataset or log dir and a query are needed (or --list)");
    };
    let text = if query.trim_end().ends_with(".sql") && std::path::Path::new(query).is_file() {
        match std::fs::read_to_string(query) {
            Ok(t) => t,
            Err(e) => return super::fail(&format!("{}: cannot read: {e}", clean(query))),
        }
    } else if let Some(named) = super::sql_named::lookup(query.trim()) {
        named.to_string()
    } else {
        query.clone()
    };
    if !path.exists() {
        return super::fail(&format!(
            "{}: no such file or directory",
            clean(&path.display().to_string())
        ));
    }
    let temp = if sql::is_dataset(path) {
        None
    } else {
        match export_temp(path) {
            Ok(t) => Some(t),
            Err(code) => return code,
        }
    };
    let dataset = temp.as_ref().map_or(path.as_path(), |t| t.0.as_path());
    let result = sql::query(dataset, &text);
    drop(temp);
    let r = match result {
        Ok(r) => r,
        Err(e) => {
            let lines: Vec<_> = e.lines().map(clean).collect();
            eprintln!("tracetui: error: {}", lines.join("\n"));
            return 1;
        }
    };
    let out = if a.json {
        r.to_json()
    } else if a.csv {
        r.to_csv()
    } else {
        r.rows().map(|rows| {
            let numeric: Vec<bool> = r
                .batches
                .first()
                .map(|b| {
                    b.schema()
                        .fields()
                        .iter()
                        .map(|f| f.data_type().is_numeric())
                        .collect()
                })
                .unwrap_or_default();
            let header: Vec<(&str, Align)> = r
                .columns
                .iter()
                .enumerate()
                .map(|(k, c)| {
                    let al = if numeric.get(k).copied().unwrap_or(false) {
                        Align::Right
                    } else {
                        Align::Left
                    };
                    (c.as_str(), al)
                })
                .collect();
            let cells: Vec<Vec<String>> = rows
                .into_iter()
                .map(|row| {
                    row.into_iter()
                        .map(|c| c.map_or_else(|| "NULL".into(), |s| clean(&s).into_owned()))
                        .collect()
                })
                .collect();
            let mut s = table("", &header, &cells);
            s.push_str(&format!("({} rows)\n", cells.len()));
            s
        })
    };
    match out {
        Ok(s) => match super::report::emit(&s) {
            Ok(()) => 0,
            Err(code) => code,
        },
        Err(e) => super::fail(&e),
    }
}

/// A temporary dataset directory, removed when dropped.
#[cfg(feature = "sql")]
struct TempDataset(PathBuf);

#[cfg(feature = "sql")]
impl Drop for TempDataset {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Exports every capture under `path` to a temporary dataset (not partitioned: `run`, `rank`
/// and `host` are columns).
#[cfg(feature = "sql")]
fn export_temp(path: &std::path::Path) -> Result<TempDataset, i32> {
    use crate::dataset::{ExportOptions, export_capture};
    let cat = super::report::catalog(path)?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir = std::env::temp_dir().join(format!("tracetui-sql-{}-{nanos:08x}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return Err(super::fail(&format!(
            "{}: cannot create: {e}",
            dir.display()
        )));
    }
    let temp = TempDataset(dir);
    let caps = super::report::captures(&cat);
    let opts = ExportOptions::default();
    let errors = super::load::map_loaded(&caps, super::report::LOAD_THREADS, |cap, loaded| {
        let r = loaded
            .map_err(|e| e.to_string())
            .and_then(|c| export_capture(&c, &temp.0, &opts).map(|_| ()));
        (cap.path.display().to_string(), r.err())
    });
    let code = super::report::finish(
        errors.iter().map(|(p, e)| (p.as_str(), e.as_ref())),
        errors.len(),
    );
    if code != 0 {
        return Err(code);
    }
    Ok(temp)
}

/// Runs `sql` in a build without DataFusion: says so.
#[cfg(not(feature = "sql"))]
pub fn cmd_sql(_: &SqlArgs) -> i32 {
    super::report::feature_missing("`tracetui sql`", "sql")
}
