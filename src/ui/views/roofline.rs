//! The roofline chart (`L`): the open capture's ops as points on log–log axes — arithmetic
//! intensity (FLOP/byte) across, achieved TFLOP/s up — under the device's roofs (memory
//! bandwidth × intensity, capped at a compute peak): one labelled roof per precision the rows
//! are measured against, each point in its roof's colour, or (`m`) the selected op's roof
//! only; the chart says which. Beside it the list of ops sorted by the time running at the
//! roof would save, and the view's key hints below. `j`/`k` select, `Enter` makes the selected
//! op's kernels the hits and jumps to the first, `?` lists the keys. See docs/roofline.md.

use super::View;
use crate::analysis::roofline::{self, Roofline, attribute};
use crate::index::Cell;
use crate::ui::action::Action;
use crate::ui::hits::HitList;
use crate::ui::keymap::ViewKind;
use crate::ui::msg::Msg;
use crate::ui::state::State;
use crate::ui::text;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::widgets::canvas::{Canvas, Line};
use ratatui::widgets::{Block, Borders, Widget};
use std::any::Any;

/// The roofline of the open capture with a selected row.
#[derive(Debug)]
pub struct RooflineView {
    /// The computed roofline.
    pub roof: Roofline,
    /// Selected row (index into `roof.rows`).
    pub selected: usize,
    /// Draw the roof of every precision present (else the selected op's only).
    pub all_roofs: bool,
}

/// One roof to draw: compute peak, bandwidth (TB/s), its label (`bf16 matrix`).
#[derive(Clone, Debug, PartialEq)]
pub struct Roof {
    /// Compute peak, TFLOP/s.
    pub tflops: f64,
    /// Memory bandwidth, TB/s.
    pub tbps: f64,
    /// Whose peak it is.
    pub label: String,
}

/// Colours of the roofs, in order of first appearance.
const ROOF_COLORS: [Color; 5] = [
    Color::Yellow,
    Color::Magenta,
    Color::Green,
    Color::LightBlue,
    Color::LightRed,
];

impl RooflineView {
    /// The roofline of the loaded capture (`Err`: why there is nothing to show).
    pub fn open(st: &State) -> Result<RooflineView, String> {
        let l = st.loaded().ok_or("no capture loaded")?;
        let roof = roofline::compute(&l.cap);
        if roof.rows.is_empty() {
            return Err(match roof.note {
                Some(n) => format!("roofline: nothing modelled: {n}"),
                None => "roofline: no op with a perf model launched device work".into(),
            });
        }
        Ok(RooflineView {
            roof,
            selected: 0,
            all_roofs: true,
        })
    }

    /// The roof of row `i`, when its device has both peaks.
    fn roof_of(&self, i: usize) -> Option<Roof> {
        let r = &self.roof.rows[i];
        Some(Roof {
            tflops: r.peak_tflops.filter(|&p| p > 0.0)?,
            tbps: r.peak_tbps.filter(|&p| p > 0.0)?,
            label: r.roof_label()?,
        })
    }

    /// The roofs drawn: every distinct one among the rows (most rows first… in row order), or
    /// the selected op's.
    pub fn roofs(&self) -> Vec<Roof> {
        if !self.all_roofs {
            return self.roof_of(self.selected).into_iter().collect();
        }
        let mut out: Vec<Roof> = Vec::new();
        for i in 0..self.roof.rows.len() {
            if let Some(r) = self.roof_of(i)
                && !out.contains(&r)
            {
                out.push(r);
            }
        }
        out
    }

    /// (log10 intensity, log10 TFLOP/s) of row `i`, when both are known and positive.
    fn point(&self, i: usize) -> Option<(f64, f64)> {
        let r = &self.roof.rows[i];
        let (x, y) = (r.intensity()?, r.tflops()?);
        (x > 0.0 && y > 0.0).then(|| (x.log10(), y.log10()))
    }

    /// Axis bounds (log10), with room for the roof.
    fn bounds(&self) -> ([f64; 2], [f64; 2]) {
        let pts: Vec<(f64, f64)> = (0..self.roof.rows.len())
            .filter_map(|i| self.point(i))
            .collect();
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for &(x, y) in &pts {
            (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
        }
        for r in self.roofs() {
            y1 = y1.max(r.tflops.log10());
            x1 = x1.max((r.tflops / r.tbps).log10());
        }
        if pts.is_empty() {
            (x0, x1, y0, y1) = (-1.0, 3.0, -3.0, 3.0);
        }
        (
            [x0.floor() - 0.5, x1.ceil() + 0.5],
            [y0.floor() - 0.5, y1.ceil() + 0.5],
        )
    }
}

fn fmt(v: Option<f64>, p: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.p$}"))
}

impl View for RooflineView {
    fn kind(&self) -> ViewKind {
        ViewKind::Roofline
    }

    fn on_key(&mut self, _key: &KeyEvent, action: Option<Action>, st: &State) -> Vec<Msg> {
        let n = self.roof.rows.len();
        match action {
            Some(Action::Down) => self.selected = (self.selected + 1).min(n.saturating_sub(1)),
            Some(Action::Up) => self.selected = self.selected.saturating_sub(1),
            Some(Action::Top) => self.selected = 0,
            Some(Action::Bottom) => self.selected = n.saturating_sub(1),
            Some(Action::Back) => return vec![Msg::Pop],
            Some(Action::Help) => return vec![super::help::help_for(ViewKind::Roofline)],
            Some(Action::CycleMetric) => self.all_roofs = !self.all_roofs,
            Some(Action::Quit) => return vec![Msg::Pop, Msg::Quit],
            Some(Action::Confirm) => {
                let Some(l) = st.loaded() else {
                    return vec![Msg::Pop];
                };
                let r = &self.roof.rows[self.selected];
                let mut calls = r.slices.clone();
                calls.sort_unstable();
                let mut ids = attribute::activities_of(&l.cap, &calls);
                if ids.is_empty() {
                    ids = calls;
                }
                let label = format!("kernels of {}", text::fit(&text::sanitize(&r.name), 30));
                let hits = HitList::in_order(&l.cap, label, ids);
                return match hits.ids.first() {
                    Some(&first) => vec![Msg::Pop, Msg::JumpTo(first), Msg::SetHits(hits)],
                    None => vec![Msg::Notice("no timed kernel for that op".into())],
                };
            }
            _ => {}
        }
        Vec::new()
    }

    fn draw(&self, st: &State, buf: &mut Buffer, area: Rect, _cells: &mut Vec<Cell>) {
        if area.width < 20 || area.height < 7 {
            return;
        }
        // The view's key hints on its last line.
        let hints = st.keymap.hints(ViewKind::Roofline, area.width < 100);
        let w = area.width as usize;
        buf.set_stringn(
            area.x,
            area.y + area.height - 1,
            text::fit(&hints, w),
            w,
            Style::default().add_modifier(Modifier::DIM),
        );
        let area = Rect {
            height: area.height - 1,
            ..area
        };
        let sel = &self.roof.rows[self.selected];
        let dev = match &self.roof.device {
            Some(d) if d.peaks.is_some() => text::sanitize(&d.name).into_owned(),
            Some(d) => format!("{} (no peaks: no roof)", text::sanitize(&d.name)),
            None => "unknown device (no roof)".into(),
        };
        let total = self.roof.total_device_ps.max(1) as f64;
        let chart_w = (area.width * 3 / 5).max(10);
        let mut title = format!(
            " roofline · {dev} · {} ops · {:.1}% of device time not modelled ",
            self.roof.rows.len(),
            100.0 * self.roof.unmodelled_ps() as f64 / total
        );
        if title.chars().count() + 2 > usize::from(chart_w) {
            title = format!(
                " {dev} · {} ops · {:.1}% not modelled ",
                self.roof.rows.len(),
                100.0 * self.roof.unmodelled_ps() as f64 / total
            );
        }
        let chart = Rect {
            width: chart_w,
            ..area
        };
        let list = Rect {
            x: area.x + chart_w,
            width: area.width - chart_w,
            ..area
        };
        let (xb, yb) = self.bounds();
        let roofs = self.roofs();
        let color_of = |label: Option<String>| {
            label
                .and_then(|l| roofs.iter().position(|r| r.label == l))
                .map(|k| ROOF_COLORS[k % ROOF_COLORS.len()])
        };
        let pts: Vec<(usize, f64, f64, Option<Color>)> = (0..self.roof.rows.len())
            .filter_map(|i| {
                let c = color_of(self.roof.rows[i].roof_label());
                self.point(i).map(|(x, y)| (i, x, y, c))
            })
            .collect();
        let which = if self.all_roofs {
            format!(" roofs: every precision present ({}) ", roofs.len())
        } else {
            format!(
                " roof: the selected op's ({}) ",
                sel.roof_label().unwrap_or_else(|| "none".into())
            )
        };
        let label_w = roofs.iter().map(|r| r.label.len() + 6).max().unwrap_or(0) as f64;
        let cols = f64::from(chart_w.saturating_sub(2).max(1));
        Canvas::default()
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .title(title)
                    .title_bottom(which),
            )
            .marker(Marker::Braille)
            .x_bounds(xb)
            .y_bounds(yb)
            .paint(|ctx| {
                for (k, r) in roofs.iter().enumerate() {
                    let color = ROOF_COLORS[k % ROOF_COLORS.len()];
                    let (peak, bw) = (r.tflops.log10(), r.tbps.log10());
                    let ridge = peak - bw;
                    // Memory roof: log y = log bw + log x, up to the ridge; then the compute roof.
                    let x0 = xb[0].min(ridge);
                    ctx.draw(&Line {
                        x1: x0,
                        y1: bw + x0,
                        x2: ridge,
                        y2: peak,
                        color,
                    });
                    ctx.draw(&Line {
                        x1: ridge,
                        y1: peak,
                        x2: xb[1],
                        y2: peak,
                        color,
                    });
                }
                ctx.layer();
                for &(i, x, y, c) in &pts {
                    if i != self.selected {
                        let st = match (self.all_roofs, c) {
                            (true, Some(c)) => Style::default().fg(c),
                            _ => Style::default().fg(Color::Cyan),
                        };
                        ctx.print(x, y, ratatui::text::Span::styled("•", st));
                    }
                }
                if let Some(&(_, x, y, _)) = pts.iter().find(|p| p.0 == self.selected) {
                    ctx.print(
                        x,
                        y,
                        ratatui::text::Span::styled(
                            "◆",
                            Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
                        ),
                    );
                }
                // Labels at the right end of each compute roof, over the points.
                for (k, r) in roofs.iter().enumerate() {
                    let color = ROOF_COLORS[k % ROOF_COLORS.len()];
                    let x = xb[1] - (xb[1] - xb[0]) * (label_w / cols).min(0.9);
                    ctx.print(
                        x,
                        r.tflops.log10(),
                        ratatui::text::Span::styled(
                            format!("{} {:.0}", r.label, r.tflops),
                            Style::default().fg(color),
                        ),
                    );
                }
                ctx.print(xb[0], yb[1], format!("10^{:.0} TF/s", yb[1].floor()));
                ctx.print(xb[0], yb[0], format!("10^{:.0}", yb[0].ceil()));
                ctx.print(
                    xb[1] - (xb[1] - xb[0]) / 6.0,
                    yb[0],
                    format!("10^{:.0} F/B", xb[1].floor()),
                );
            })
            .render(chart, buf);
        // The list: selected op's details, then the rows.
        let block = Block::default()
            .borders(Borders::ALL)
            .title(" ops (time saved at the roof) ");
        let inner = block.inner(list);
        block.render(list, buf);
        let w = inner.width as usize;
        let y = std::cell::Cell::new(inner.y);
        let line = |buf: &mut Buffer, s: &str, st: Style| {
            if y.get() < inner.y + inner.height {
                buf.set_stringn(inner.x, y.get(), text::fit(&text::sanitize(s), w), w, st);
                y.set(y.get() + 1);
            }
        };
        let dim = Style::default().add_modifier(Modifier::DIM);
        line(
            buf,
            &format!("{} {}", sel.name, sel.input_dims),
            Style::default().add_modifier(Modifier::BOLD),
        );
        line(
            buf,
            &format!(
                "{} × {}  {} TFLOP/s  {} TB/s  {} FLOP/B",
                sel.count,
                crate::ui::ruler::format_dur(sel.device_ps),
                fmt(sel.tflops(), 2),
                fmt(sel.tbytes_per_s(), 3),
                fmt(sel.intensity(), 1)
            ),
            Style::default(),
        );
        line(
            buf,
            &format!(
                "peak {} {} TFLOP/s",
                sel.roof_label().unwrap_or_else(|| "none".into()),
                fmt(sel.peak_tflops, 0)
            ),
            dim,
        );
        line(
            buf,
            &format!(
                "{}% of the {} roof{}",
                fmt(sel.peak_pct(), 1),
                sel.bound()
                    .map_or("unknown".to_string(), |b| format!("{b:?}").to_lowercase()),
                if sel.beyond_peak() {
                    " (above it!)"
                } else {
                    ""
                },
            ),
            dim,
        );
        line(buf, &format!("← {}", sel.precision_from), dim);
        if let Some(c) = super::findings::concerning(st, &sel.name, &sel.slices, None) {
            line(buf, &c, Style::default());
        }
        line(buf, "", dim);
        let room = (inner.y + inner.height).saturating_sub(y.get()) as usize;
        let first = self.selected.saturating_sub(room.saturating_sub(1));
        for (i, r) in self.roof.rows.iter().enumerate().skip(first).take(room) {
            let s = format!(
                "{:>6} {:>8} {} {}",
                r.peak_pct().map_or("-".into(), |p| format!("{p:.1}%")),
                fmt(r.tflops(), 2),
                r.name,
                r.input_dims
            );
            let st = if i == self.selected {
                Style::default().add_modifier(Modifier::REVERSED)
            } else {
                Style::default()
            };
            line(buf, &s, st);
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}
