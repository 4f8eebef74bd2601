//! Synthetic XSpace files for benchmarks: a `/host:CPU` plane with nested TraceMe-like events and
//! `/device:GPU:N` planes with XLA kernels (correlation, `hlo_op`/`hlo_module`/`kernel_details`
//! ref values, `group_id`), written straight to the wire format (no per-event allocation).

use crate::formats::xplane::generated::{XEventMetadata, XStat, XStatMetadata, x_stat::Value};
use prost::Message;
use prost::encoding::{WireType, encode_key, encode_varint};
use std::io::{self, Write};

/// Shape of a synthetic capture.
#[derive(Clone, Copy, Debug)]
pub struct XPlaneSynth {
    /// Host thread lines.
    pub host_lines: u32,
    /// GPU planes.
    pub gpus: u32,
    /// Stream lines per GPU plane.
    pub streams: u32,
    /// Events per line.
    pub events_per_line: u64,
    /// RNG seed.
    pub seed: u64,
}

impl Default for XPlaneSynth {
    /// 8 M events: 4 host lines + 2 GPUs × 2 streams, 1 M events each.
    fn default() -> Self {
        XPlaneSynth {
            host_lines: 4,
            gpus: 2,
            streams: 2,
            events_per_line: 1_000_000,
            seed: 42,
        }
    }
}

impl XPlaneSynth {
    /// Total number of XEvents written.
    pub fn event_count(&self) -> u64 {
        u64::from(self.host_lines + self.gpus * self.streams) * self.events_per_line
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Appends protobuf field `tag` as length-delimited `payload`.
pub(crate) fn put_len_field(tag: u32, payload: &[u8], out: &mut Vec<u8>) {
    encode_key(tag, WireType::LengthDelimited, out);
    encode_varint(payload.len() as u64, out);
    out.extend_from_slice(payload);
}

/// Appends protobuf field `tag` as varint `v`.
pub(crate) fn put_varint_field(tag: u32, v: u64, out: &mut Vec<u8>) {
    encode_key(tag, WireType::Varint, out);
    encode_varint(v, out);
}

/// One stat: `(metadata_id, value field number, value)`.
fn put_stat(mid: u64, field: u32, v: u64, out: &mut Vec<u8>, scratch: &mut Vec<u8>) {
    scratch.clear();
    put_varint_field(1, mid, scratch);
    put_varint_field(field, v, scratch);
    put_len_field(4, scratch, out);
}

const S_CORR: u64 = 1;
const S_HLO_OP: u64 = 2;
const S_HLO_MODULE: u64 = 3;
const S_KERNEL_DETAILS: u64 = 4;
const S_GROUP: u64 = 5;
const S_STEP_NUM: u64 = 6;
const S_SRC: u64 = 7;
/// First stat metadata id used as an interned string (ref_value target).
const REF_BASE: u64 = 100;
const N_OPS: u64 = 300;
const N_MODULES: u64 = 6;
const N_DETAILS: u64 = 40;
const N_SRC: u64 = 20;

fn stat_metadata(plane: &mut Vec<u8>) {
    let mut names: Vec<(u64, String)> = vec![
        (S_CORR, "correlation_id".into()),
        (S_HLO_OP, "hlo_op".into()),
        (S_HLO_MODULE, "hlo_module".into()),
        (S_KERNEL_DETAILS, "kernel_details".into()),
        (S_GROUP, "group_id".into()),
        (S_STEP_NUM, "step_num".into()),
        (S_SRC, "_src".into()),
    ];
    let mut id = REF_BASE;
    for i in 0..N_OPS {
        names.push((id, format!("fusion.{i}")));
        id += 1;
    }
    for i in 0..N_MODULES {
        names.push((id, format!("jit_train_step_{i}")));
        id += 1;
    }
    for i in 0..N_DETAILS {
        names.push((
            id,
            format!(
                "regs:{} static_shared:0 dynamic_shared:{} grid:{},1,1 block:256,1,1 occ_pct:50.0",
                32 + i,
                i * 1024,
                80 + i
            ),
        ));
        id += 1;
    }
    for i in 0..N_SRC {
        names.push((id, format!("external/xla/xla/service/module_{i}.cc")));
        id += 1;
    }
    let mut entry = Vec::new();
    for (k, name) in names {
        entry.clear();
        put_varint_field(1, k, &mut entry);
        let m = XStatMetadata {
            id: k as i64,
            name,
            description: String::new(),
        };
        put_len_field(2, &m.encode_to_vec(), &mut entry);
        put_len_field(5, &entry, plane);
    }
}

fn event_metadata(plane: &mut Vec<u8>, names: &[String], with_stats: bool) {
    let mut entry = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let id = i as i64 + 1;
        entry.clear();
        put_varint_field(1, id as u64, &mut entry);
        let stats = if with_stats {
            vec![XStat {
                metadata_id: S_SRC as i64,
                value: Some(Value::RefValue(
                    REF_BASE + N_OPS + N_MODULES + N_DETAILS + (i as u64 % N_SRC),
                )),
            }]
        } else {
            Vec::new()
        };
        let m = XEventMetadata {
            id,
            name: name.clone(),
            display_name: String::new(),
            metadata: Vec::new(),
            stats,
            child_id: Vec::new(),
        };
        put_len_field(2, &m.encode_to_vec(), &mut entry);
        put_len_field(4, &entry, plane);
    }
}

fn line_header(id: i64, name: &str, ts_ns: i64, out: &mut Vec<u8>) {
    put_varint_field(1, id as u64, out);
    put_len_field(2, name.as_bytes(), out);
    put_varint_field(3, ts_ns as u64, out);
}

/// Writes the events of one host line: groups of a parent with 3 nested children.
fn host_events(cfg: &XPlaneSynth, rng: &mut Rng, n_meta: u64, line: &mut Vec<u8>) {
    let (mut ev, mut scratch) = (Vec::new(), Vec::new());
    let mut t: u64 = 1_000_000;
    let mut corr = 1u64;
    let mut i = 0u64;
    while i < cfg.events_per_line {
        let child_dur = 1_000_000 + rng.below(2_000_000);
        let parent_dur = 4 * child_dur;
        for k in 0..4u64 {
            if i >= cfg.events_per_line {
                break;
            }
            ev.clear();
            let (off, dur) = if k == 0 {
                (t, parent_dur)
            } else {
                (t + 100_000 + (k - 1) * (child_dur + 10_000), child_dur)
            };
            put_varint_field(1, 1 + rng.below(n_meta), &mut ev);
            put_varint_field(2, off, &mut ev);
            put_varint_field(3, dur, &mut ev);
            if k == 0 {
                put_stat(S_STEP_NUM, 4, i / 4000, &mut ev, &mut scratch);
            } else {
                put_stat(S_CORR, 3, corr, &mut ev, &mut scratch);
                corr += 1;
            }
            put_len_field(4, &ev, line);
            i += 1;
        }
        t += parent_dur + 200_000 + rng.below(500_000);
    }
}

/// Writes the events of one GPU stream line: back-to-back kernels of XLA ops.
fn gpu_events(cfg: &XPlaneSynth, rng: &mut Rng, n_meta: u64, line: &mut Vec<u8>) {
    let (mut ev, mut scratch) = (Vec::new(), Vec::new());
    let mut t: u64 = 2_000_000;
    let mut op = 0u64;
    for i in 0..cfg.events_per_line {
        if rng.below(3) == 0 {
            op = rng.below(N_OPS);
        }
        let dur = 500_000 + rng.below(5_000_000);
        ev.clear();
        put_varint_field(1, 1 + rng.below(n_meta), &mut ev);
        put_varint_field(2, t, &mut ev);
        put_varint_field(3, dur, &mut ev);
        put_stat(S_CORR, 3, i + 1, &mut ev, &mut scratch);
        put_stat(S_HLO_OP, 7, REF_BASE + op, &mut ev, &mut scratch);
        put_stat(
            S_HLO_MODULE,
            7,
            REF_BASE + N_OPS + (i / 50_000) % N_MODULES,
            &mut ev,
            &mut scratch,
        );
        put_stat(
            S_KERNEL_DETAILS,
            7,
            REF_BASE + N_OPS + N_MODULES + op % N_DETAILS,
            &mut ev,
            &mut scratch,
        );
        put_stat(S_GROUP, 4, i / 20_000, &mut ev, &mut scratch);
        put_len_field(4, &ev, line);
        t += dur + 50_000 + rng.below(200_000);
    }
}

/// Writes a synthetic XSpace to `out`, one plane at a time (memory ≈ one line's bytes).
pub fn write_xspace(cfg: &XPlaneSynth, out: &mut impl Write) -> io::Result<u64> {
    let mut rng = Rng(cfg.seed | 1);
    let mut written = 0u64;
    let mut plane = Vec::new();
    let mut line = Vec::new();
    let mut events = Vec::new();
    let emit_plane = |plane: &mut Vec<u8>, out: &mut dyn Write| -> io::Result<u64> {
        let mut head = Vec::new();
        encode_key(1, WireType::LengthDelimited, &mut head);
        encode_varint(plane.len() as u64, &mut head);
        out.write_all(&head)?;
        out.write_all(plane)?;
        let n = (head.len() + plane.len()) as u64;
        plane.clear();
        Ok(n)
    };

    // Host plane.
    let host_names: Vec<String> = (0..200).map(|i| format!("HostOp::Run{i}")).collect();
    put_len_field(2, b"/host:CPU", &mut plane);
    stat_metadata(&mut plane);
    event_metadata(&mut plane, &host_names, true);
    for l in 0..cfg.host_lines {
        line.clear();
        events.clear();
        // Negative 64-bit hash ids, like real host thread lines.
        let id = -(0x5eed_0000_0000_i64 + i64::from(l));
        line_header(
            id,
            &format!("tf_worker/{id}"),
            1000 + i64::from(l),
            &mut line,
        );
        host_events(cfg, &mut rng, host_names.len() as u64, &mut events);
        line.extend_from_slice(&events);
        put_len_field(3, &line, &mut plane);
    }
    written += emit_plane(&mut plane, out)?;

    // GPU planes.
    let kernel_names: Vec<String> = (0..500)
        .map(|i| format!("void xla::gpu::kernel_{i}<float, 128>(float const*, float*, int)"))
        .collect();
    for g in 0..cfg.gpus {
        put_len_field(2, format!("/device:GPU:{g}").as_bytes(), &mut plane);
        stat_metadata(&mut plane);
        event_metadata(&mut plane, &kernel_names, false);
        for s in 0..cfg.streams {
            line.clear();
            events.clear();
            line_header(
                i64::from(100 + s),
                &format!("Stream #{}(Compute)", 100 + s),
                5000,
                &mut line,
            );
            gpu_events(cfg, &mut rng, kernel_names.len() as u64, &mut events);
            line.extend_from_slice(&events);
            put_len_field(3, &line, &mut plane);
        }
        written += emit_plane(&mut plane, out)?;
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::xplane;

    #[test]
    fn small_synthetic_file_decodes() {
        let cfg = XPlaneSynth {
            events_per_line: 1000,
            ..XPlaneSynth::default()
        };
        let mut bytes = Vec::new();
        let n = write_xspace(&cfg, &mut bytes).unwrap();
        assert_eq!(n as usize, bytes.len());
        let counts = xplane::line_event_counts(&bytes).unwrap();
        assert_eq!(counts.iter().map(|c| c.2).sum::<u64>(), cfg.event_count());
        let c = xplane::load_bytes(&bytes, Default::default(), &Default::default()).unwrap();
        assert!(c.slices.len() as u64 >= cfg.event_count());
        assert!(
            c.tracks
                .iter()
                .any(|t| c.strings.get(t.name).starts_with("XLA Ops - from #"))
        );
    }
}
