//! The segment map of an allocator snapshot (the memory table's last `v` scope when the
//! capture is a `*.pickle`): one row per segment the caching allocator holds at snapshot time —
//! address, device, stream, type, size, bytes allocated in it, free bytes, blocks — with a bar
//! of how full it is, largest first. `Enter` lists the segment's blocks (offset, size,
//! requested, state, call site), what `_memory_viz segments` draws.

use super::table::{Column, Key, Row, TableView, Target};
use crate::formats::snapshot::{Block, Segment};
use crate::ui::keymap::ViewKind;
use crate::ui::memory::{Memory, mem_bytes};
use crate::ui::text;

/// The block state that holds live memory.
const ACTIVE: &str = "active_allocated";

/// Bytes allocated in a segment (requested sizes of its active blocks) and the bytes of its
/// blocks that are not active.
fn fill(s: &Segment) -> (i64, i64) {
    let allocated = s
        .blocks
        .iter()
        .filter(|b| b.state == ACTIVE)
        .map(|b| b.requested)
        .sum();
    let free = s
        .blocks
        .iter()
        .filter(|b| b.state != ACTIVE)
        .map(|b| b.size)
        .sum();
    (allocated, free)
}

/// The address shown for a segment (also how `Enter` finds it again).
fn address(s: &Segment) -> String {
    format!("{:#x}", s.address)
}

/// The segment map of `m`'s snapshot, largest segment first.
pub fn table(m: &Memory) -> TableView {
    let col = |name, width, right| Column { name, width, right };
    let (mut reserved, mut allocated) = (0i64, 0i64);
    let rows: Vec<Row> = m
        .segments
        .iter()
        .map(|s| {
            let (alloc, free) = fill(s);
            reserved += s.total_size;
            allocated += alloc;
            let kind = if s.is_expandable {
                format!("{} expandable", s.segment_type)
            } else {
                s.segment_type.clone()
            };
            let kind = text::sanitize(&kind).into_owned();
            Row {
                cells: vec![
                    address(s),
                    format!("cuda:{}", s.device),
                    s.stream.to_string(),
                    kind.clone(),
                    mem_bytes(s.total_size),
                    mem_bytes(alloc),
                    mem_bytes(free),
                    s.blocks.len().to_string(),
                ],
                keys: vec![
                    Key::Num(s.address as f64),
                    Key::Num(s.device as f64),
                    Key::Num(s.stream as f64),
                    Key::Text(kind),
                    Key::Num(s.total_size as f64),
                    Key::Num(alloc as f64),
                    Key::Num(free as f64),
                    Key::Num(s.blocks.len() as f64),
                ],
                target: Target::None,
                bar: (s.total_size > 0).then(|| alloc as f64 / s.total_size as f64),
            }
        })
        .collect();
    let n = rows.len();
    let mut t = TableView::new(
        ViewKind::Table,
        format!(
            "segments at snapshot time: {n} segments, {} reserved, {} allocated",
            mem_bytes(reserved),
            mem_bytes(allocated)
        ),
        vec![
            col("address", 16, false),
            col("device", 7, false),
            col("stream", 6, true),
            col("type", 10, false),
            col("size", 10, true),
            col("allocated", 10, true),
            col("free", 10, true),
            col("blocks", 0, true),
        ],
        rows,
    );
    t.note = "bar: allocated ÷ size · Enter: the segment's blocks".into();
    t.sort_by(4, false);
    t
}

/// The blocks of the segment shown at `address` on `device`, in address order.
pub fn blocks(m: &Memory, device: &str, address_text: &str) -> Option<TableView> {
    let s = m
        .segments
        .iter()
        .find(|s| format!("cuda:{}", s.device) == device && address(s) == address_text)?;
    let col = |name, width, right| Column { name, width, right };
    let mut offset = 0i64;
    let rows: Vec<Row> = s
        .blocks
        .iter()
        .map(|b: &Block| {
            let at = offset;
            offset += b.size;
            let site = m
                .stack_text(b.stack)
                .split(" ← ")
                .next()
                .unwrap_or_default()
                .to_string();
            let state = text::sanitize(&b.state).into_owned();
            Row {
                cells: vec![
                    format!("+{at:#x}"),
                    mem_bytes(b.size),
                    mem_bytes(b.requested),
                    state.clone(),
                    site.clone(),
                ],
                keys: vec![
                    Key::Num(at as f64),
                    Key::Num(b.size as f64),
                    Key::Num(b.requested as f64),
                    Key::Text(state),
                    Key::Text(site),
                ],
                target: Target::None,
                bar: None,
            }
        })
        .collect();
    let mut t = TableView::new(
        ViewKind::Table,
        format!(
            "segment {} on {device}: {} blocks, {}",
            address(s),
            s.blocks.len(),
            mem_bytes(s.total_size)
        ),
        vec![
            col("offset", 14, false),
            col("size", 10, true),
            col("requested", 10, true),
            col("state", 20, false),
            col("call site", 0, false),
        ],
        rows,
    );
    t.note = "blocks in address order".into();
    Some(t)
}
