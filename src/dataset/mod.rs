//! Columnar datasets of captures (docs/export.md): `tracetui export` writes every slice,
//! instant, counter sample and flow of a capture as Parquet rows (one schema, [`schema`]), and
//! `tracetui sql` queries such datasets with Apache DataFusion ([`sql`]).

pub mod columns;
pub mod keys;
pub mod rows;
pub mod schema;
#[cfg(feature = "sql")]
pub mod sql;
pub mod writer;

pub use keys::CaptureKeys;
pub use rows::CaptureRows;
pub use schema::PartKey;
pub use writer::{ExportOptions, Written, export_capture};
