//! The GPU breakdown (`b`): one row per device stream with HTA's figures (see `docs/gpu.md`):
//! the window (first start … last end), busy split into compute / communication / memory /
//! other, idle (window − busy) split into host wait / kernel wait / other, queue length and
//! launch delay, with an inline bar of busy over the window; the note gives the busy time of
//! work launched before the trace. `Enter` moves
//! the timeline cursor to the stream.

use super::table::{Column, Key, Row, TableView, Target};
use crate::analysis::gpu::{GpuOptions, analyze};
use crate::model::Ps;
use crate::ui::keymap::ViewKind;
use crate::ui::ruler::format_dur;
use crate::ui::state::State;

/// Builds the GPU breakdown table of the open capture (`None` when nothing is loaded).
pub fn gpu_view(st: &State) -> Option<TableView> {
    let l = st.loaded()?;
    let rep = analyze(&l.cap, &GpuOptions::default());
    let pct = |x: Ps, of: Ps| {
        if of > 0 {
            format!("{:.0}%", x as f64 * 100.0 / of as f64)
        } else {
            "-".into()
        }
    };
    let us = |v: Option<f64>| v.map_or("-".to_string(), |ps| format_dur(ps as Ps));
    let rows = rep
        .streams
        .iter()
        .map(|s| {
            let b = &s.breakdown;
            let w = (b.window.1 - b.window.0).max(0);
            let idle = b.idle();
            Row {
                cells: vec![
                    format!("{} · {}", s.info.device_name, s.info.stream_name),
                    format_dur(w),
                    format_dur(b.busy),
                    pct(b.compute, b.busy),
                    pct(b.communication, b.busy),
                    pct(b.memory, b.busy),
                    pct(b.other, b.busy),
                    format_dur(idle),
                    pct(s.idle.host_wait, idle),
                    pct(s.idle.kernel_wait, idle),
                    s.queue.max.to_string(),
                    format!("{:.1}", s.queue.mean),
                    us(s.launch.delay_p50),
                    us(s.launch.delay_p99),
                    pct(b.busy, w),
                ],
                keys: vec![
                    Key::Text(format!("{:08}{:08}", s.info.device, s.info.stream)),
                    Key::Num(w as f64),
                    Key::Num(b.busy as f64),
                    Key::Num(b.compute as f64),
                    Key::Num(b.communication as f64),
                    Key::Num(b.memory as f64),
                    Key::Num(b.other as f64),
                    Key::Num(idle as f64),
                    Key::Num(s.idle.host_wait as f64),
                    Key::Num(s.idle.kernel_wait as f64),
                    Key::Num(s.queue.max as f64),
                    Key::Num(s.queue.mean),
                    Key::Num(s.launch.delay_p50.unwrap_or(0.0)),
                    Key::Num(s.launch.delay_p99.unwrap_or(0.0)),
                    Key::Num(if w > 0 { b.busy as f64 / w as f64 } else { 0.0 }),
                ],
                target: Target::Track(s.info.track),
                bar: (w > 0).then(|| b.busy as f64 / w as f64),
            }
        })
        .collect::<Vec<_>>();
    let col = |name, width, right| Column { name, width, right };
    let n = rows.len();
    let mut t = TableView::new(
        ViewKind::Table,
        format!(
            "GPU breakdown · {} devices · {n} streams",
            rep.devices.len()
        ),
        vec![
            col("device · stream", 0, false),
            col("window", 9, true),
            col("busy", 9, true),
            col("comp", 5, true),
            col("comm", 5, true),
            col("mem", 5, true),
            col("other", 5, true),
            col("idle", 9, true),
            col("host", 5, true),
            col("kern", 5, true),
            col("q max", 5, true),
            col("q avg", 5, true),
            col("dly p50", 9, true),
            col("dly p99", 9, true),
            col("busy % window", 13, false),
        ],
        rows,
    );
    t.note = if n == 0 {
        "no GPU activity in this capture".into()
    } else {
        "window = first start … last end of the stream's activities; comp/comm/mem/other % of \
         busy; idle = window − busy, host/kern % of idle (host wait / kernel wait < 30 µs)"
            .into()
    };
    let unlinked: Ps = rep.devices.iter().map(|d| d.unlinked_busy).sum();
    if unlinked > 0 {
        t.note = format!(
            "{} busy from device work launched before the trace (no launch in the file) · {}",
            format_dur(unlinked),
            t.note
        );
    }
    Some(t)
}
