//! A binary snapshot of a loaded [`Capture`]: every column written as little-endian arrays, read
//! back without parsing. Used by the capture cache (`formats::cache`) so that reopening a
//! multi-GB JSON trace costs a copy of its model instead of a parse.
//!
//! Layout: magic `TTSNAP`, a format version, then the capture's parts in a fixed order; every
//! length is checked against the bytes left before anything is allocated, and every id is checked
//! against its table, so a corrupt or truncated snapshot is an error, never a panic or a huge
//! allocation. Captures with lazily read args (XPlane) are not snapshotted.
//!
//! `codec` holds the byte layout (checksum, writer, checked reader, enum codes); `encode` and
//! `decode` walk the capture's parts in the same order. This file only lists and re-exports.

mod codec;
mod decode;
mod encode;

pub use codec::{SnapshotError, VERSION};
pub use decode::decode;
pub use encode::{encode, encode_to, supported};

#[cfg(test)]
mod tests;
