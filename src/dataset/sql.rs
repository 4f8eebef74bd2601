//! SQL over an exported dataset with Apache DataFusion: the table `events` (schema of
//! [`super::schema`] plus the Hive partition columns found in the directory names).

use arrow::array::{Array, ArrayRef, RecordBatch};
use arrow::datatypes::DataType;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::listing::{
    ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl,
};
use datafusion::prelude::SessionContext;
use std::path::Path;
use std::sync::Arc;

/// A query's result: its batches (dictionary columns decoded to plain strings).
#[derive(Debug, Default)]
pub struct QueryResult {
    /// Column names.
    pub columns: Vec<String>,
    /// The rows, in batches.
    pub batches: Vec<RecordBatch>,
}

impl QueryResult {
    /// Number of rows.
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }

    /// Every cell as text (nulls as `None`), row by row.
    pub fn rows(&self) -> Result<Vec<Vec<Option<String>>>, String> {
        let opts = FormatOptions::default();
        let mut out = Vec::with_capacity(self.num_rows());
        for b in &self.batches {
            let fmts: Vec<ArrayFormatter> = b
                .columns()
                .iter()
                .map(|c| ArrayFormatter::try_new(c.as_ref(), &opts))
                .collect::<Result<_, _>>()
                .map_err(|e| e.to_string())?;
            for r in 0..b.num_rows() {
                out.push(
                    b.columns()
                        .iter()
                        .zip(&fmts)
                        .map(|(c, f)| c.is_valid(r).then(|| f.value(r).to_string()))
                        .collect(),
                );
            }
        }
        Ok(out)
    }

    /// The rows as a JSON array of objects (arrow-json's encoding: integers as numbers, nulls
    /// left out of their object).
    pub fn to_json(&self) -> Result<String, String> {
        let mut w = arrow::json::ArrayWriter::new(Vec::new());
        let refs: Vec<&RecordBatch> = self.batches.iter().collect();
        w.write_batches(&refs).map_err(|e| e.to_string())?;
        w.finish().map_err(|e| e.to_string())?;
        let mut s = String::from_utf8(w.into_inner()).map_err(|e| e.to_string())?;
        if s.is_empty() {
            s.push_str("[]");
        }
        s.push('\n');
        Ok(s)
    }

    /// The rows as CSV with a header line.
    pub fn to_csv(&self) -> Result<String, String> {
        let mut buf = Vec::new();
        {
            let mut w = arrow::csv::WriterBuilder::new()
                .with_header(true)
                .build(&mut buf);
            for b in &self.batches {
                w.write(b).map_err(|e| e.to_string())?;
            }
        }
        if self.batches.is_empty() {
            buf.extend_from_slice(self.columns.join(",").as_bytes());
            buf.push(b'\n');
        }
        String::from_utf8(buf).map_err(|e| e.to_string())
    }
}

/// Dictionary columns as plain strings (every output format takes them).
fn plain(b: RecordBatch) -> Result<RecordBatch, String> {
    let schema = b.schema();
    let mut fields = Vec::with_capacity(b.num_columns());
    let mut cols: Vec<ArrayRef> = Vec::with_capacity(b.num_columns());
    for (f, c) in schema.fields().iter().zip(b.columns()) {
        if let DataType::Dictionary(_, v) = f.data_type() {
            let to = v.as_ref().clone();
            cols.push(arrow::compute::cast(c, &to).map_err(|e| e.to_string())?);
            fields.push(f.as_ref().clone().with_data_type(to));
        } else {
            cols.push(c.clone());
            fields.push(f.as_ref().clone());
        }
    }
    RecordBatch::try_new(Arc::new(arrow::datatypes::Schema::new(fields)), cols)
        .map_err(|e| e.to_string())
}

/// A runtime for DataFusion: worker threads as many as the machine's cores.
fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(crate::threads::cores().max(1))
        .build()
        .map_err(|e| format!("cannot start the query runtime: {e}"))
}

/// The `ListingTableUrl` of a local dataset directory or file.
fn table_url(path: &Path) -> Result<ListingTableUrl, String> {
    let abs = std::path::absolute(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut s = abs.to_string_lossy().into_owned();
    if abs.is_dir() && !s.ends_with('/') {
        s.push('/');
    }
    ListingTableUrl::parse(&s).map_err(|e| format!("{}: {e}", path.display()))
}

/// Registers the dataset at `path` (a directory of `.parquet` files, Hive-partitioned or not,
/// or one file) as table `events` of `ctx`.
pub async fn register_events(ctx: &SessionContext, path: &Path) -> Result<(), String> {
    let url = table_url(path)?;
    let opts = ListingOptions::new(Arc::new(ParquetFormat::default()))
        .with_file_extension(".parquet")
        .with_table_partition_cols(partition_cols(path));
    let state = ctx.state();
    let config = ListingTableConfig::new(url)
        .with_listing_options(opts)
        .infer_schema(&state)
        .await
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let table = ListingTable::try_new(config).map_err(|e| format!("{}: {e}", path.display()))?;
    ctx.register_table("events", Arc::new(table))
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// The Hive partition columns of the dataset at `path`, outermost first: the `key=value`
/// directory levels. A column whose values are all integers (`rank=10`) is `Int64`, as DuckDB
/// (`hive_types_autocast`) and Spark (`partitionColumnTypeInference`) read it by default, so the
/// named queries order ranks 0, 1, 2, …, 10 on all three engines; other columns are strings.
pub fn partition_cols(path: &Path) -> Vec<(String, DataType)> {
    let mut cols: Vec<(String, bool)> = Vec::new();
    let mut level: Vec<std::path::PathBuf> = vec![path.to_path_buf()];
    while !level.is_empty() && cols.len() < 8 {
        let mut next = Vec::new();
        let mut key: Option<String> = None;
        let mut ints = true;
        for dir in &level {
            let Ok(rd) = std::fs::read_dir(dir) else {
                continue;
            };
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let Some((k, v)) = name.split_once('=') else {
                    continue;
                };
                if !e.file_type().is_ok_and(|t| t.is_dir()) {
                    continue;
                }
                if key.get_or_insert_with(|| k.to_string()) != k {
                    continue;
                }
                ints &= v.parse::<i64>().is_ok();
                next.push(e.path());
            }
        }
        let Some(k) = key else { break };
        cols.push((k, ints));
        level = next;
    }
    cols.into_iter()
        .map(|(k, ints)| {
            let t = if ints {
                DataType::Int64
            } else {
                DataType::Utf8
            };
            (k, t)
        })
        .collect()
}

/// Runs `sql` over the dataset at `path`.
pub fn query(path: &Path, sql: &str) -> Result<QueryResult, String> {
    let rt = runtime()?;
    rt.block_on(async {
        let ctx = SessionContext::new();
        register_events(&ctx, path).await?;
        let df = ctx.sql(sql).await.map_err(|e| e.to_string())?;
        let columns = df
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        let batches = df.collect().await.map_err(|e| e.to_string())?;
        let batches = batches
            .into_iter()
            .map(plain)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(QueryResult { columns, batches })
    })
}

/// True when `path` is an exported dataset: a `.parquet` file, or a directory holding one
/// (at any depth) and no capture files.
pub fn is_dataset(path: &Path) -> bool {
    fn walk(dir: &Path, depth: usize) -> bool {
        if depth > 8 {
            return false;
        }
        let Ok(rd) = std::fs::read_dir(dir) else {
            return false;
        };
        let mut subdirs = Vec::new();
        for e in rd.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            if name.ends_with(".parquet") {
                return true;
            }
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                subdirs.push(p);
            }
        }
        subdirs.iter().any(|d| walk(d, depth + 1))
    }
    if path.is_file() {
        return path.extension().is_some_and(|e| e == "parquet");
    }
    walk(path, 0)
}
