//! The one schema of an exported events dataset (docs/export.md): one row per slice, instant,
//! counter sample and flow. Column names follow XProf's events DB (`create_events_db`) where
//! they mean the same thing.

use arrow_schema::{DataType, Field, Schema, SchemaRef};
use std::sync::Arc;

/// Columns a dataset can be partitioned by (Hive-style `key=value` directories).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PartKey {
    /// The run (XProf session, PyTorch run directory).
    Run,
    /// The rank (distributed rank when the capture states it, else the host).
    Rank,
    /// The host or worker.
    Host,
}

impl PartKey {
    /// Column name.
    pub fn name(self) -> &'static str {
        match self {
            PartKey::Run => "run",
            PartKey::Rank => "rank",
            PartKey::Host => "host",
        }
    }

    /// Parses `run`, `rank` or `host`.
    pub fn parse(s: &str) -> Result<PartKey, String> {
        match s.trim() {
            "run" => Ok(PartKey::Run),
            "rank" => Ok(PartKey::Rank),
            "host" => Ok(PartKey::Host),
            o => Err(format!(
                "cannot partition by `{o}` (expected run, rank or host)"
            )),
        }
    }
}

/// The type of a dictionary-encoded string column (names repeat: stored once per row group).
pub fn dict_utf8() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
}

/// Every column, in file order: (name, type, nullable). `run`, `rank` and `host` are left out
/// of the files of a dataset partitioned by them (they come back from the directory names).
pub const COLUMNS: &[(&str, Col, bool)] = &[
    ("run", Col::Dict, false),
    ("rank", Col::Dict, false),
    ("host", Col::Dict, false),
    ("capture", Col::Dict, false),
    ("device", Col::Dict, false),
    ("device_kind", Col::Dict, false),
    ("track", Col::Dict, false),
    ("track_kind", Col::Dict, false),
    ("thread_id", Col::I64, true),
    ("thread_name", Col::Dict, false),
    ("stream_id", Col::I64, true),
    ("phase", Col::Dict, false),
    ("kind", Col::Dict, false),
    ("name", Col::Dict, false),
    ("category", Col::Dict, false),
    ("category_class", Col::Dict, false),
    ("start_ns", Col::I64, false),
    ("end_ns", Col::I64, false),
    ("dur_ns", Col::I64, true),
    ("self_time_ns", Col::I64, true),
    ("start_epoch_ns", Col::I64, true),
    ("depth", Col::I32, true),
    ("id", Col::I64, true),
    ("parent_id", Col::I64, true),
    ("correlation_id", Col::I64, true),
    ("flow", Col::I64, true),
    ("flow_to_id", Col::I64, true),
    ("value", Col::F64, true),
    ("step", Col::I64, true),
    ("hlo_op", Col::Dict, true),
    ("hlo_module", Col::Dict, true),
    ("tf_op_name", Col::Dict, true),
    ("args", Col::Utf8, true),
];

/// Storage class of a column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Col {
    /// Dictionary-encoded string.
    Dict,
    /// Plain string.
    Utf8,
    /// 64-bit integer.
    I64,
    /// 32-bit integer.
    I32,
    /// 64-bit float.
    F64,
}

impl Col {
    fn data_type(self) -> DataType {
        match self {
            Col::Dict => dict_utf8(),
            Col::Utf8 => DataType::Utf8,
            Col::I64 => DataType::Int64,
            Col::I32 => DataType::Int32,
            Col::F64 => DataType::Float64,
        }
    }
}

/// The file schema: every column but the partition keys in `parts`, and `args` only when kept.
pub fn file_schema(parts: &[PartKey], args: bool) -> SchemaRef {
    let fields: Vec<Field> = COLUMNS
        .iter()
        .filter(|(n, _, _)| !parts.iter().any(|p| p.name() == *n) && (args || *n != "args"))
        .map(|&(n, t, null)| Field::new(n, t.data_type(), null))
        .collect();
    Arc::new(Schema::new(fields))
}
