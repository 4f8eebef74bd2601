//! pprof memory profiles (`perftools.profiles.Profile`, gzipped protobuf), as
//! `jax.profiler.save_device_memory_profile()` writes them: the device buffers live when it was
//! called, one sample per (allocation stack, device, kind) with values `allocations/count` and
//! `space/bytes`, labels `kind` (`buffer`, `executable`) and `device` (`cuda:0`, `cpu:0`, ...).
//!
//! Decoded with the prost types in [`generated`] (from `proto/profile.proto`) into the memory
//! model, through the snapshot path ([`Snapshot`]): one memory track per (device, kind), one
//! allocation per sample (all live at the end, at time 0), its call stack from the sample's
//! locations (leaf first; each location's lines innermost first). See docs/memory.md.

#[rustfmt::skip]
#[allow(clippy::all, missing_docs)]
pub mod generated;

use crate::formats::snapshot::types::{SegmentTotals, Snapshot};
use crate::formats::{LoadError, LoadErrorKind};
use crate::model::memory::{EventSource, Frame, MemTrack, MemoryModel, NO_OP};
use generated::Profile;
use prost::Message;
use rustc_hash::FxHashMap;
use std::io::Read;
use std::path::Path;

/// Largest pprof file read (compressed or not): memory profiles are small.
pub const MAX_BYTES: u64 = 256 << 20;

/// True for a file name a pprof profile is written under (`*.prof`, `*.pprof`, `*.pb.gz` that is
/// not an XPlane).
pub fn named_like_pprof(name: &str) -> bool {
    !name.starts_with('.')
        && (name.ends_with(".prof")
            || name.ends_with(".pprof")
            || (name.ends_with(".pb.gz") && !name.ends_with(".xplane.pb.gz")))
}

/// The label of a capture's format (`summary`, the picker): a memory-only file read through the
/// snapshot path is a torch pickle or a pprof profile, told apart by its name.
pub fn format_label(format: crate::model::Format, path: &Path) -> &'static str {
    let pprof = format == crate::model::Format::Snapshot
        && path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(named_like_pprof);
    if pprof { "pprof" } else { format.name() }
}

/// True when `path` is named like a pprof file and decodes as a profile with sample types.
pub fn is_pprof_file(path: &Path) -> bool {
    let named = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(named_like_pprof);
    named && path.is_file() && read_profile(path).is_ok()
}

/// True when `data` may be a pprof profile: gzipped, or a file named like one (`path`).
pub fn maybe_pprof(data: &[u8], path: &Path) -> bool {
    crate::formats::is_gzip(data)
        || path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(named_like_pprof)
}

/// Reads and decodes a (possibly gzipped) profile.
fn read_profile(path: &Path) -> Result<Profile, LoadError> {
    let f = std::fs::File::open(path).map_err(|e| LoadError::io(path, "cannot open", &e))?;
    let mut raw = Vec::new();
    f.take(MAX_BYTES + 1)
        .read_to_end(&mut raw)
        .map_err(|e| LoadError::io(path, "cannot read", &e))?;
    if raw.len() as u64 > MAX_BYTES {
        return Err(LoadError::new(
            LoadErrorKind::Unsupported,
            path,
            None,
            format!(
                "larger than {} MiB: not read as a pprof profile",
                MAX_BYTES >> 20
            ),
        ));
    }
    decode(&raw, path)
}

/// Decodes profile bytes, gunzipping them first when they start with the gzip magic.
pub fn decode(raw: &[u8], path: &Path) -> Result<Profile, LoadError> {
    let mut buf = Vec::new();
    let bytes = crate::formats::source::maybe_gunzip(raw, path, &mut buf, MAX_BYTES * 8)?;
    let p = Profile::decode(bytes).map_err(|e| {
        LoadError::new(
            LoadErrorKind::Corrupt,
            path,
            None,
            format!("not a pprof profile (perftools.profiles.Profile): {e}"),
        )
    })?;
    let fail = |m: String| Err(LoadError::new(LoadErrorKind::NotATrace, path, None, m));
    if p.string_table.first().is_some_and(|s| !s.is_empty()) {
        return fail("not a pprof profile: string_table[0] must be empty".into());
    }
    if p.sample_type.is_empty() {
        return fail("not a pprof profile: no sample types".into());
    }
    let n = p.string_table.len() as i64;
    let bad_str = |i: i64| !(0..n).contains(&i);
    if p.sample_type
        .iter()
        .any(|t| bad_str(t.r#type) || bad_str(t.unit))
    {
        return fail("pprof: a sample type names a string out of the string table".into());
    }
    Ok(p)
}

/// Reads a pprof memory profile into the memory model.
pub fn load(path: &Path) -> Result<Snapshot, LoadError> {
    let p = read_profile(path)?;
    to_snapshot(&p, path)
}

/// The index of the sample value named `ty` (`space`, `allocations`), else of the first one
/// whose unit is `unit`.
fn value_index(p: &Profile, ty: &str, unit: &str) -> Option<usize> {
    let s = |i: i64| p.string_table.get(i as usize).map_or("", String::as_str);
    p.sample_type
        .iter()
        .position(|t| s(t.r#type) == ty)
        .or_else(|| p.sample_type.iter().position(|t| s(t.unit) == unit))
}

/// The memory model of a decoded profile: one track per (device, kind) label pair, one
/// allocation per sample, live at the end; counts are the samples' `allocations` values.
pub fn to_snapshot(p: &Profile, path: &Path) -> Result<Snapshot, LoadError> {
    let s = |i: i64| p.string_table.get(i as usize).map_or("", String::as_str);
    let Some(space) = value_index(p, "space", "bytes") else {
        let types: Vec<String> = p
            .sample_type
            .iter()
            .map(|t| format!("{}/{}", s(t.r#type), s(t.unit)))
            .collect();
        return Err(LoadError::new(
            LoadErrorKind::Unsupported,
            path,
            None,
            format!(
                "a pprof profile without a bytes value (sample types {}): not a memory profile",
                types.join(", ")
            ),
        ));
    };
    let count = value_index(p, "allocations", "count");
    let functions: FxHashMap<u64, &generated::Function> =
        p.function.iter().map(|f| (f.id, f)).collect();
    let locations: FxHashMap<u64, &generated::Location> =
        p.location.iter().map(|l| (l.id, l)).collect();
    let mut model = MemoryModel {
        source: EventSource::SnapshotTrace,
        ..MemoryModel::default()
    };
    let mut tracks: FxHashMap<(String, String), usize> = FxHashMap::default();
    let mut loc_frames: FxHashMap<u64, Vec<u32>> = FxHashMap::default();
    let mut missing_locations = 0u64;
    let mut frames: Vec<u32> = Vec::new();
    for (k, smp) in p.sample.iter().enumerate() {
        let (mut device, mut kind) = (String::new(), String::new());
        for l in &smp.label {
            match s(l.key) {
                "device" => device = s(l.str).to_string(),
                "kind" => kind = s(l.str).to_string(),
                _ => {}
            }
        }
        if device.is_empty() {
            device = "(no device label)".into();
        }
        frames.clear();
        for id in &smp.location_id {
            if let Some(f) = loc_frames.get(id) {
                frames.extend_from_slice(f);
                continue;
            }
            let Some(loc) = locations.get(id) else {
                missing_locations += 1;
                continue;
            };
            let ids: Vec<u32> = loc
                .line
                .iter()
                .map(|ln| {
                    let f = functions.get(&ln.function_id);
                    model.stacks.frame(Frame {
                        name: f.map_or_else(
                            || format!("0x{:x}", loc.address),
                            |f| s(f.name).to_string(),
                        ),
                        file: f.map_or(String::new(), |f| s(f.filename).to_string()),
                        line: ln.line,
                    })
                })
                .collect();
            let ids = if ids.is_empty() {
                vec![model.stacks.frame(Frame {
                    name: format!("0x{:x}", loc.address),
                    file: String::new(),
                    line: 0,
                })]
            } else {
                ids
            };
            frames.extend_from_slice(&ids);
            loc_frames.insert(*id, ids);
        }
        let stack = model.stacks.stack(&frames);
        let ti = *tracks
            .entry((device.clone(), kind.clone()))
            .or_insert_with(|| {
                model.tracks.push(MemTrack {
                    device,
                    allocator: kind,
                    ..MemTrack::default()
                });
                model.tracks.len() - 1
            });
        let tr = &mut model.tracks[ti];
        let bytes = smp.value.get(space).copied().unwrap_or(0);
        let n = count
            .and_then(|c| smp.value.get(c).copied())
            .map_or(1, |c| c.max(0) as u64);
        tr.counts.allocs += n;
        if bytes == 0 {
            tr.counts.zero_size += 1;
            continue;
        }
        tr.allocs.push(0, bytes, 0, NO_OP, stack, k as u32);
    }
    for t in &mut model.tracks {
        let total: i64 = t.allocs.bytes.iter().sum();
        t.ts = vec![0];
        t.allocated = vec![total];
        t.reserved = vec![total];
    }
    // Most bytes first, then by device and kind.
    model.tracks.sort_by(|a, b| {
        b.allocated[0]
            .cmp(&a.allocated[0])
            .then_with(|| a.device.cmp(&b.device))
            .then_with(|| a.allocator.cmp(&b.allocator))
    });
    let mut notes = vec![format!(
        "pprof memory profile: {} samples, live buffers at the time it was written (no timeline)",
        p.sample.len()
    )];
    if missing_locations > 0 {
        notes.push(format!(
            "{missing_locations} location ids not in the profile (frames left out)"
        ));
    }
    Ok(Snapshot {
        model,
        segments: Vec::new(),
        totals: SegmentTotals::default(),
        entries: p.sample.len() as u64,
        origin_us: p.time_nanos / 1000,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &[u8] = include_bytes!("../../../tests/fixtures/memory/jax_cpu.memory.prof");

    #[test]
    fn jax_memory_profile_by_device_kind_and_stack() {
        let path = Path::new("jax_cpu.memory.prof");
        let p = decode(FIXTURE, path).unwrap();
        let snap = to_snapshot(&p, path).unwrap();
        let m = &snap.model;
        // Buffers on cpu:0 (two 256 KiB arrays and 4000 B), then the executables (0 B, no device).
        let labels: Vec<(String, String)> = m
            .tracks
            .iter()
            .map(|t| (t.device.clone(), t.allocator.clone()))
            .collect();
        assert_eq!(
            labels,
            [
                ("cpu:0".to_string(), "buffer".to_string()),
                ("(no device label)".to_string(), "executable".to_string())
            ]
        );
        let buf = &m.tracks[0];
        assert_eq!(buf.allocated, vec![262_144 * 2 + 4000]);
        assert_eq!((buf.allocs.len(), buf.counts.allocs), (3, 3));
        assert!(
            buf.allocs
                .end
                .iter()
                .all(|&e| e == crate::model::memory::LIVE_AT_END)
        );
        let exe = &m.tracks[1];
        assert_eq!(
            (exe.allocs.len(), exe.counts.allocs, exe.counts.zero_size),
            (0, 5, 5)
        );
        // The 4000 B buffer was allocated in `make_ids` of the generator script.
        let i = buf.allocs.bytes.iter().position(|&b| b == 4000).unwrap();
        let frames: Vec<&Frame> = m
            .stacks
            .get(buf.allocs.stack[i])
            .iter()
            .map(|&f| &m.stacks.frames[f as usize])
            .collect();
        let site = frames
            .iter()
            .find(|f| f.file.ends_with("gen_jax_memory_prof.py"))
            .unwrap();
        assert_eq!((site.name.as_str(), site.line), ("make_ids", 13));
        assert!(snap.notes[0].contains("8 samples"));
    }

    #[test]
    fn bad_files_say_why() {
        let path = Path::new("bad.prof");
        let e = decode(b"\x0a\xff\xff\xff", path).unwrap_err();
        assert!(e.message.contains("not a pprof profile"), "{e}");
        let e = decode(b"\x1f\x8b\x08\x00garbage", path).unwrap_err();
        assert!(e.message.starts_with("gzip:"), "{e}");
        // A valid profile without a bytes value: not a memory profile.
        let p = Profile {
            sample_type: vec![generated::ValueType { r#type: 1, unit: 2 }],
            string_table: vec![String::new(), "samples".into(), "count".into()],
            ..Profile::default()
        };
        let e = to_snapshot(&p, path).unwrap_err();
        assert!(e.message.contains("samples/count"), "{e}");
        // string_table[0] must be empty; sample types must name strings in the table.
        let mut q = p.clone();
        q.string_table[0] = "x".into();
        let e = decode(&q.encode_to_vec(), path).unwrap_err();
        assert!(e.message.contains("string_table[0]"), "{e}");
        let mut q = p;
        q.sample_type[0].unit = 9;
        assert!(decode(&q.encode_to_vec(), path).is_err());
        assert!(named_like_pprof("memory.prof") && named_like_pprof("heap.pb.gz"));
        assert!(!named_like_pprof("vm.xplane.pb.gz") && !named_like_pprof("trace.json"));
    }
}
