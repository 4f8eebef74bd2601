//! Writes the rows of a capture to one Parquet file (ZSTD, row groups of bounded size) in a
//! Hive-partitioned dataset directory: `OUT/run=…/rank=…/part-<hash>.parquet`.

use super::keys::{CaptureKeys, self_times};
use super::rows::{BATCH_ROWS, CaptureRows};
use super::schema::PartKey;
use crate::model::Capture;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Columns of (nearly) distinct values, written without a dictionary (see [`props`]).
pub const NO_DICTIONARY: &[&str] = &[
    "start_ns",
    "end_ns",
    "dur_ns",
    "self_time_ns",
    "start_epoch_ns",
    "id",
    "parent_id",
    "correlation_id",
    "flow",
    "flow_to_id",
    "value",
    "args",
];

/// String columns written without min / max statistics (see [`props`]).
pub const NO_STATISTICS: &[&str] = &[
    "track",
    "thread_name",
    "name",
    "hlo_op",
    "hlo_module",
    "tf_op_name",
    "args",
];

/// How a dataset is written.
#[derive(Clone, Debug)]
pub struct ExportOptions {
    /// Partition columns, outermost first.
    pub partition_by: Vec<PartKey>,
    /// Keep the `args` column (JSON text of every event's args).
    pub args: bool,
    /// Rows per row group: bounds the writer's memory (encoded columns of one row group).
    pub row_group_rows: usize,
    /// ZSTD level.
    pub zstd_level: i32,
    /// A capture with more rows than this is split into several part files (by slice id), written
    /// in parallel; the number of files depends only on the row count, so exporting again
    /// replaces the same files.
    pub rows_per_file: usize,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            partition_by: Vec::new(),
            args: true,
            row_group_rows: 256 * 1024,
            zstd_level: 1,
            rows_per_file: 512 << 10,
        }
    }
}

/// (rows, row groups, bytes) of one written file, or why it failed.
type FileResult = Result<(u64, usize, u64), String>;

/// What one capture's export wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// The Parquet files, in row order.
    pub files: Vec<PathBuf>,
    /// Rows written.
    pub rows: u64,
    /// Row groups written.
    pub row_groups: usize,
    /// File size in bytes.
    pub bytes: u64,
}

/// The directory name of one partition value, escaped the way Spark and Hive escape paths
/// (`%XX` for `/`, `=`, `%`, `:` and the other unsafe characters); an empty value is Hive's
/// default partition.
pub fn partition_dir(key: PartKey, value: &str) -> String {
    if value.is_empty() {
        return format!("{}=__HIVE_DEFAULT_PARTITION__", key.name());
    }
    let mut s = format!("{}=", key.name());
    for ch in value.chars() {
        let escape = matches!(
            ch,
            '\u{1}'
                ..='\u{1f}'
                    | '"'
                    | '#'
                    | '%'
                    | '\''
                    | '*'
                    | '/'
                    | ':'
                    | '='
                    | '?'
                    | '\\'
                    | '\u{7f}'
                    | '{'
                    | '['
                    | ']'
                    | '^'
        ) || ch == '\0';
        if escape {
            s.push_str(&format!("%{:02X}", ch as u32));
        } else {
            s.push(ch);
        }
    }
    s
}

/// A stable 64-bit FNV-1a hash (the file name of a capture's part does not change between
/// exports, so exporting again replaces it).
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Where part file `k` of `n` of a capture with `keys` goes below `out`
/// (`part-<hash>.parquet`, or `part-<hash>-<k>.parquet` when there are several).
pub fn part_path(out: &Path, keys: &CaptureKeys, parts: &[PartKey], k: usize, n: usize) -> PathBuf {
    let mut p = out.to_path_buf();
    for &key in parts {
        p.push(partition_dir(key, keys.get(key)));
    }
    let id = fnv(format!("{}\0{}\0{}", keys.run, keys.host, keys.capture).as_bytes());
    if n > 1 {
        p.push(format!("part-{id:016x}-{k}.parquet"));
    } else {
        p.push(format!("part-{id:016x}.parquet"));
    }
    p
}

fn props(o: &ExportOptions) -> Result<WriterProperties, String> {
    let level = ZstdLevel::try_new(o.zstd_level).map_err(|e| e.to_string())?;
    // The writer dictionary-encodes every column unless told otherwise: on columns whose values
    // are (nearly) all distinct — times, ids, `args` JSON — it only hashes each value into a
    // table that grows to its size limit per column chunk and then falls back to plain encoding.
    let mut b = WriterProperties::builder().set_compression(Compression::ZSTD(level));
    for col in NO_DICTIONARY {
        b = b.set_column_dictionary_enabled(ColumnPath::from(*col), false);
    }
    // Min / max statistics cost the writer two string comparisons per row and column; on long
    // free text (kernel names, JSON) they prune nothing, so only the short categorical columns
    // (run, rank, kind, category, …) and the numbers keep them.
    for col in NO_STATISTICS {
        b = b.set_column_statistics_enabled(ColumnPath::from(*col), EnabledStatistics::None);
    }
    Ok(b.set_max_row_group_row_count(Some(o.row_group_rows.max(1)))
        .set_created_by(format!("tracetui {}", env!("CARGO_PKG_VERSION")))
        .build())
}

/// Writes every row of `c` into its part files below `out`: one file, or, past
/// [`ExportOptions::rows_per_file`] rows, one per share of the slices (the last one also holds the
/// instants, counter samples and flows), encoded on parallel threads.
pub fn export_capture(c: &Capture, out: &Path, o: &ExportOptions) -> Result<Written, String> {
    let rows = c.slices.len()
        + c.instants.ts.len()
        + c.counters.iter().map(|s| s.ts.len()).sum::<usize>()
        + c.flows.len();
    let n = rows.div_ceil(o.rows_per_file.max(1)).clamp(1, 64);
    let keys = CaptureKeys::of(c);
    let self_ps = Arc::new(self_times(c));
    let ns = c.slices.len();
    let jobs: Vec<(PathBuf, std::ops::Range<usize>, bool)> = (0..n)
        .map(|k| {
            (
                part_path(out, &keys, &o.partition_by, k, n),
                k * ns / n..(k + 1) * ns / n,
                k + 1 == n,
            )
        })
        .collect();
    let threads = crate::threads::cores().clamp(1, n);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<FileResult> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                sc.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some((path, range, rest)) = jobs.get(k) else {
                            break;
                        };
                        let rows = CaptureRows::range(
                            c,
                            self_ps.clone(),
                            range.clone(),
                            *rest,
                            &o.partition_by,
                            o.args,
                            BATCH_ROWS,
                        );
                        done.push((k, write_file(rows, path, out, o)));
                    }
                    done
                })
            })
            .collect();
        let mut all: Vec<(usize, FileResult)> = handles
            .into_iter()
            .flat_map(|h| {
                h.join()
                    .unwrap_or_else(|_| vec![(usize::MAX, Err("the writer panicked".into()))])
            })
            .collect();
        all.sort_by_key(|r| r.0);
        all.into_iter().map(|r| r.1).collect()
    });
    let mut w = Written::default();
    for (r, (path, _, _)) in results.into_iter().zip(&jobs) {
        let (rows, groups, bytes) = r?;
        w.files.push(path.clone());
        w.rows += rows;
        w.row_groups += groups;
        w.bytes += bytes;
    }
    Ok(w)
}

/// Writes `rows` to `path` (under a hidden temporary name, then renamed into place, so readers
/// never see half a file); returns (rows, row groups, bytes).
fn write_file(mut rows: CaptureRows<'_>, path: &Path, out: &Path, o: &ExportOptions) -> FileResult {
    let dir = path.parent().unwrap_or(out);
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let file = std::fs::File::create(&tmp)
        .map_err(|e| format!("{}: cannot create: {e}", tmp.display()))?;
    let result = (|| {
        let mut w = ArrowWriter::try_new(
            std::io::BufWriter::with_capacity(1 << 20, file),
            rows.schema(),
            Some(props(o)?),
        )
        .map_err(|e| e.to_string())?;
        let mut n = 0u64;
        for batch in rows.by_ref() {
            let batch = batch?;
            n += batch.num_rows() as u64;
            w.write(&batch).map_err(|e| e.to_string())?;
        }
        let meta = w.close().map_err(|e| e.to_string())?;
        Ok::<_, String>((n, meta.num_row_groups()))
    })();
    let (n, groups) = match result {
        Ok(v) => v,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(format!("{}: {e}", path.display()));
        }
    };
    std::fs::rename(&tmp, path)
        .map_err(|e| format!("{}: cannot rename into place: {e}", path.display()))?;
    let bytes = std::fs::metadata(path).map_or(0, |m| m.len());
    Ok((n, groups, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_dirs_escape_like_hive() {
        assert_eq!(partition_dir(PartKey::Run, "a/b=c"), "run=a%2Fb%3Dc");
        assert_eq!(partition_dir(PartKey::Rank, "3"), "rank=3");
        assert_eq!(
            partition_dir(PartKey::Host, ""),
            "host=__HIVE_DEFAULT_PARTITION__"
        );
        assert_eq!(partition_dir(PartKey::Run, "50%:x"), "run=50%25%3Ax");
    }
}
