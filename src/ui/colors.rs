//! Colours: stable name hash over a contrast-checked palette, category colours, and the colour
//! depth of the terminal (truecolor, 256 colours, or none for `NO_COLOR`).

use crate::model::Category;
use ratatui::style::{Color, Modifier, Style};

/// How many colours the terminal shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorMode {
    /// 24-bit RGB (`COLORTERM=truecolor|24bit`).
    True,
    /// The xterm 256-colour palette.
    Ansi256,
    /// No colour at all (`NO_COLOR`): shades and reverse video only.
    None,
}

impl ColorMode {
    /// Detects the mode from `NO_COLOR` and `COLORTERM` values.
    pub fn detect(no_color: Option<&str>, colorterm: Option<&str>) -> ColorMode {
        if no_color.is_some_and(|v| !v.is_empty()) {
            return ColorMode::None;
        }
        match colorterm.map(str::to_ascii_lowercase).as_deref() {
            Some("truecolor" | "24bit") => ColorMode::True,
            _ => ColorMode::Ansi256,
        }
    }

    /// Detects the mode from the process environment.
    pub fn from_env() -> ColorMode {
        let nc = std::env::var("NO_COLOR").ok();
        let ct = std::env::var("COLORTERM").ok();
        ColorMode::detect(nc.as_deref(), ct.as_deref())
    }
}

/// Colour depth plus background: what every style function needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Theme {
    /// Colour depth of the terminal.
    pub mode: ColorMode,
    /// Light terminal background: fills are darkened so partial cells keep their contrast.
    pub light: bool,
}

impl From<ColorMode> for Theme {
    fn from(mode: ColorMode) -> Theme {
        Theme { mode, light: false }
    }
}

/// Medium-saturation hues readable on dark and light backgrounds.
const PALETTE: [(u8, u8, u8); 16] = [
    (0x4e, 0x79, 0xa7),
    (0xf2, 0x8e, 0x2b),
    (0xe1, 0x57, 0x59),
    (0x76, 0xb7, 0xb2),
    (0x59, 0xa1, 0x4f),
    (0xed, 0xc9, 0x48),
    (0xb0, 0x7a, 0xa1),
    (0xff, 0x9d, 0xa7),
    (0x9c, 0x75, 0x5f),
    (0xba, 0xb0, 0xac),
    (0x3b, 0x8b, 0xc2),
    (0xc4, 0x6f, 0x2b),
    (0x8c, 0xd1, 0x7d),
    (0xd3, 0x72, 0xd6),
    (0x5f, 0xc3, 0xe4),
    (0xa0, 0xcb, 0xe8),
];

/// FNV-1a: stable across runs and platforms.
pub fn stable_hash(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Palette index for a name.
pub fn name_slot(name: &str) -> usize {
    (stable_hash(name) % PALETTE.len() as u64) as usize
}

/// Palette index for a category.
pub fn category_slot(c: Category) -> usize {
    (c as usize * 5) % PALETTE.len()
}

fn to_256(r: u8, g: u8, b: u8) -> u8 {
    let q = |v: u8| -> u8 {
        if v < 48 {
            0
        } else if v < 115 {
            1
        } else {
            (v - 35) / 40
        }
    };
    16 + 36 * q(r) + 6 * q(g) + q(b)
}

/// The fill colour and a contrasting text colour for palette slot `slot`.
pub fn slot_colors(theme: Theme, slot: usize) -> (Color, Color) {
    let mode = theme.mode;
    let (mut r, mut g, mut b) = PALETTE[slot % PALETTE.len()];
    if theme.light {
        // Two thirds of the brightness: pale hues (yellow, light blue) stay visible on white.
        let dim = |v: u8| (u16::from(v) * 2 / 3) as u8;
        (r, g, b) = (dim(r), dim(g), dim(b));
    }
    let lum = 299 * u32::from(r) + 587 * u32::from(g) + 114 * u32::from(b);
    let dark_text = lum > 140_000;
    match mode {
        ColorMode::True => (
            Color::Rgb(r, g, b),
            if dark_text {
                Color::Rgb(0, 0, 0)
            } else {
                Color::Rgb(255, 255, 255)
            },
        ),
        ColorMode::Ansi256 => (
            Color::Indexed(to_256(r, g, b)),
            if dark_text {
                Color::Indexed(16)
            } else {
                Color::Indexed(231)
            },
        ),
        ColorMode::None => (Color::Reset, Color::Reset),
    }
}

/// Body, edge and label styles of a diff node whose relative change is `change` (−1..=1):
/// warm (red) when slower, cool (blue) when faster, grey when unchanged, the more saturated the
/// larger the change.
pub fn delta_styles(theme: Theme, change: f64) -> (Style, Style, Style) {
    let c = change.clamp(-1.0, 1.0);
    let k = c.abs().sqrt();
    let mix = |from: u8, to: u8| (f64::from(from) + (f64::from(to) - f64::from(from)) * k) as u8;
    let grey = 150u8;
    let (r, g, b) = if c >= 0.0 {
        (mix(grey, 230), mix(grey, 60), mix(grey, 40))
    } else {
        (mix(grey, 50), mix(grey, 110), mix(grey, 230))
    };
    let (fill, text) = match theme.mode {
        ColorMode::True => (Color::Rgb(r, g, b), Color::Rgb(0, 0, 0)),
        ColorMode::Ansi256 => (Color::Indexed(to_256(r, g, b)), Color::Indexed(16)),
        ColorMode::None => {
            return (
                Style::default(),
                Style::default(),
                Style::default().add_modifier(Modifier::REVERSED),
            );
        }
    };
    (
        Style::default().fg(fill).bg(text),
        Style::default().fg(fill),
        Style::default().fg(text).bg(fill),
    )
}

/// Style of a slice body (`█` cells and label text) for palette slot `slot`.
pub fn body_style(theme: Theme, slot: usize) -> Style {
    let (fill, text) = slot_colors(theme, slot);
    match theme.mode {
        ColorMode::None => Style::default(),
        _ => Style::default().fg(fill).bg(text),
    }
}

/// Style of label characters written over a slice body.
pub fn label_style(theme: Theme, slot: usize) -> Style {
    let (fill, text) = slot_colors(theme, slot);
    match theme.mode {
        ColorMode::None => Style::default().add_modifier(Modifier::REVERSED),
        _ => Style::default().fg(text).bg(fill),
    }
}

/// Style of partial cells (edges, merged shades): the fill colour on the default background.
pub fn edge_style(theme: Theme, slot: usize) -> Style {
    let (fill, _) = slot_colors(theme, slot);
    match theme.mode {
        ColorMode::None => Style::default(),
        _ => Style::default().fg(fill),
    }
}

/// Applies the selection look: reverse video (toggled, so `NO_COLOR` labels flip back).
pub fn selected(style: Style) -> Style {
    if style.add_modifier.contains(Modifier::REVERSED) {
        style
            .remove_modifier(Modifier::REVERSED)
            .add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
    } else {
        style.add_modifier(Modifier::REVERSED | Modifier::BOLD)
    }
}

/// Applies the search-hit look.
pub fn hit(style: Style) -> Style {
    style.add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detect_modes() {
        assert_eq!(
            ColorMode::detect(Some("1"), Some("truecolor")),
            ColorMode::None
        );
        assert_eq!(
            ColorMode::detect(Some(""), Some("truecolor")),
            ColorMode::True
        );
        assert_eq!(ColorMode::detect(None, Some("24bit")), ColorMode::True);
        assert_eq!(ColorMode::detect(None, None), ColorMode::Ansi256);
    }

    #[test]
    fn stable_and_spread() {
        assert_eq!(name_slot("aten::mm"), name_slot("aten::mm"));
        let slots: std::collections::HashSet<_> = ["a", "b", "c", "d", "e", "f", "g", "h"]
            .iter()
            .map(|s| name_slot(s))
            .collect();
        assert!(slots.len() > 3);
        assert!(matches!(
            slot_colors(ColorMode::Ansi256.into(), 0).0,
            Color::Indexed(16..=231)
        ));
    }
}
