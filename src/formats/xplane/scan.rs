//! First pass over the wire: XSpace → planes → line headers, without touching event bodies
//! (each event is skipped by its length). Gives the time origin and per-line event counts.

use super::wire::{LEN, Reader, WireError, expect_len};

/// One XLine's header fields and the reader over the whole line message.
#[derive(Clone, Copy, Debug)]
pub struct LineHead<'a> {
    /// The whole XLine message (events are walked from it in the second pass).
    pub r: Reader<'a>,
    /// `id`.
    pub id: i64,
    /// `display_id`.
    pub display_id: i64,
    /// `name`.
    pub name: &'a [u8],
    /// `display_name`.
    pub display_name: &'a [u8],
    /// `timestamp_ns`.
    pub timestamp_ns: i64,
    /// `duration_ps`.
    pub duration_ps: i64,
    /// Number of XEvents.
    pub events: u64,
}

impl<'a> LineHead<'a> {
    /// A line not scanned yet: only its reader.
    fn unscanned(r: Reader<'a>) -> Self {
        LineHead {
            r,
            id: 0,
            display_id: 0,
            name: &[],
            display_name: &[],
            timestamp_ns: 0,
            duration_ps: 0,
            events: 0,
        }
    }

    /// Row key: `display_id` if non-zero, else `id`.
    pub fn key(&self) -> i64 {
        if self.display_id != 0 {
            self.display_id
        } else {
            self.id
        }
    }

    /// Row title bytes: `display_name` if non-empty, else `name`.
    pub fn title(&self) -> &[u8] {
        if self.display_name.is_empty() {
            self.name
        } else {
            self.display_name
        }
    }
}

/// One XPlane's top-level pieces.
#[derive(Clone, Debug, Default)]
pub struct PlaneScan<'a> {
    /// `id`.
    pub id: i64,
    /// `name`.
    pub name: &'a [u8],
    /// Line headers in file order.
    pub lines: Vec<LineHead<'a>>,
    /// `event_metadata` map entries (`{1: key, 2: XEventMetadata}`).
    pub event_metadata: Vec<Reader<'a>>,
    /// `stat_metadata` map entries (`{1: key, 2: XStatMetadata}`).
    pub stat_metadata: Vec<Reader<'a>>,
    /// Plane `stats` (XStat messages).
    pub stats: Vec<Reader<'a>>,
    /// Byte offset just past the plane's message in the input.
    pub end: usize,
}

/// The XSpace's top-level pieces.
#[derive(Clone, Debug, Default)]
pub struct SpaceScan<'a> {
    /// Planes in file order.
    pub planes: Vec<PlaneScan<'a>>,
    /// `errors`.
    pub errors: Vec<&'a [u8]>,
    /// `warnings`.
    pub warnings: Vec<&'a [u8]>,
    /// `hostnames`.
    pub hostnames: Vec<&'a [u8]>,
    /// Set when the input is truncated or corrupt after some complete planes: the first error;
    /// `planes` then holds only the planes that end before it (the decodable prefix).
    pub cut: Option<Box<WireError>>,
}

impl SpaceScan<'_> {
    /// Earliest non-zero line timestamp (ns) of the whole space.
    pub fn min_timestamp_ns(&self) -> Option<i64> {
        self.planes
            .iter()
            .flat_map(|p| p.lines.iter())
            .map(|l| l.timestamp_ns)
            .filter(|&t| t != 0)
            .min()
    }

    /// Total number of XEvents.
    pub fn event_count(&self) -> u64 {
        self.planes
            .iter()
            .flat_map(|p| p.lines.iter())
            .map(|l| l.events)
            .sum()
    }
}

/// Scans the top level of an XSpace. Lines are scanned (headers read, events counted) on two
/// threads for large inputs; the first error in file order is reported.
///
/// A file that is truncated or corrupt after at least one complete plane keeps the planes before
/// the first error ([`SpaceScan::cut`] says where); with no complete plane the error is returned.
pub fn scan_space(bytes: &[u8]) -> Result<SpaceScan<'_>, Box<WireError>> {
    let mut s = scan_top(bytes)?;
    if let Err(mut e) = scan_lines(&mut s) {
        e.truncated = false; // inside a complete plane
        // Keep the planes that end before the bad line (they scanned cleanly).
        let keep = s.planes.partition_point(|p| p.end <= e.offset as usize);
        if keep == 0 {
            return Err(e);
        }
        s.planes.truncate(keep);
        s.cut = Some(e);
        scan_lines(&mut s)?;
    }
    Ok(s)
}

/// The top level: planes (their line readers) and the space's string lists.
fn scan_top(bytes: &[u8]) -> Result<SpaceScan<'_>, Box<WireError>> {
    let mut r = Reader::new(bytes, 0);
    let mut s = SpaceScan::default();
    while !r.is_empty() {
        if let Err(e) = top_field(&mut r, &mut s) {
            if s.planes.is_empty() {
                return Err(e);
            }
            s.cut = Some(e);
            break;
        }
    }
    Ok(s)
}

/// One field of the XSpace message.
fn top_field<'a>(r: &mut Reader<'a>, s: &mut SpaceScan<'a>) -> Result<(), Box<WireError>> {
    let (f, wt) = r.key()?;
    match (f, wt) {
        (1, _) => {
            // An error inside a complete plane is corruption, not a cut file.
            let mut p = scan_plane(expect_len(r, wt, "XSpace.planes")?).map_err(|mut e| {
                e.truncated = false;
                e
            })?;
            p.end = r.offset();
            s.planes.push(p);
        }
        (2, LEN) => s.errors.push(r.bytes()?),
        (3, LEN) => s.warnings.push(r.bytes()?),
        (4, LEN) => s.hostnames.push(r.bytes()?),
        _ => r.skip(wt)?,
    }
    Ok(())
}

/// Scans every line's header fields and counts its events.
fn scan_lines(s: &mut SpaceScan<'_>) -> Result<(), Box<WireError>> {
    let mut lines: Vec<&mut LineHead<'_>> = s
        .planes
        .iter_mut()
        .flat_map(|p| p.lines.iter_mut())
        .collect();
    let total: usize = lines.iter().map(|l| l.r.data().len()).sum();
    let scan_all = |ls: &mut [&mut LineHead<'_>]| -> Result<(), Box<WireError>> {
        for l in ls.iter_mut() {
            **l = scan_line(l.r)?;
        }
        Ok(())
    };
    if total < PARALLEL_SCAN_MIN || lines.len() < 2 {
        scan_all(&mut lines)?;
    } else {
        // Split where half of the line bytes lie before.
        let mut acc = 0usize;
        let k = lines
            .iter()
            .position(|l| {
                acc += l.r.data().len();
                acc >= total / 2
            })
            .map_or(1, |k| (k + 1).min(lines.len() - 1));
        let (a, b) = lines.split_at_mut(k);
        let (ra, rb) = std::thread::scope(|sc| {
            let h = sc.spawn(|| scan_all(b));
            let ra = scan_all(a);
            (ra, h.join().unwrap_or(Ok(())))
        });
        ra?;
        rb?;
    }
    Ok(())
}

/// Line bytes from which `scan_space` scans lines on two threads.
const PARALLEL_SCAN_MIN: usize = 8 << 20;

fn scan_plane(mut r: Reader<'_>) -> Result<PlaneScan<'_>, Box<WireError>> {
    let mut p = PlaneScan::default();
    while !r.is_empty() {
        let (f, wt) = r.key()?;
        match (f, wt) {
            (1, _) if wt != LEN => p.id = r.scalar(wt)? as i64,
            (2, LEN) => p.name = r.bytes()?,
            (3, _) => p
                .lines
                .push(LineHead::unscanned(expect_len(&mut r, wt, "XPlane.lines")?)),
            (4, _) => p
                .event_metadata
                .push(expect_len(&mut r, wt, "XPlane.event_metadata")?),
            (5, _) => p
                .stat_metadata
                .push(expect_len(&mut r, wt, "XPlane.stat_metadata")?),
            (6, _) => p.stats.push(expect_len(&mut r, wt, "XPlane.stats")?),
            _ => r.skip(wt)?,
        }
    }
    Ok(p)
}

fn scan_line(r: Reader<'_>) -> Result<LineHead<'_>, Box<WireError>> {
    let mut h = LineHead::unscanned(r);
    let mut r = r;
    while !r.is_empty() {
        let (f, wt) = r.key()?;
        match (f, wt) {
            (1, _) if wt != LEN => h.id = r.scalar(wt)? as i64,
            (10, _) if wt != LEN => h.display_id = r.scalar(wt)? as i64,
            (2, LEN) => h.name = r.bytes()?,
            (11, LEN) => h.display_name = r.bytes()?,
            (3, _) if wt != LEN => h.timestamp_ns = r.scalar(wt)? as i64,
            (9, _) if wt != LEN => h.duration_ps = r.scalar(wt)? as i64,
            (4, _) => {
                expect_len(&mut r, wt, "XLine.events")?;
                h.events += 1;
            }
            _ => r.skip(wt)?,
        }
    }
    Ok(h)
}
