//! One key with its modifiers ([`Key`]): normalized from terminal events, parsed from and
//! displayed as the names used in `config.toml`, the help and the docs.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::fmt;

/// A key with its modifiers (Shift is folded into the character for printable keys).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    /// The key.
    pub code: KeyCode,
    /// Ctrl / Alt (Shift only for non-character keys).
    pub mods: KeyModifiers,
}

impl Key {
    /// The normalized key of a terminal event.
    pub fn from_event(k: &KeyEvent) -> Key {
        let mut mods =
            k.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT);
        let code = match k.code {
            KeyCode::Char(c) => {
                mods.remove(KeyModifiers::SHIFT);
                // Ctrl-letters arrive lower-case on most terminals; compare case-insensitively.
                if mods.contains(KeyModifiers::CONTROL) {
                    KeyCode::Char(c.to_ascii_lowercase())
                } else {
                    KeyCode::Char(c)
                }
            }
            KeyCode::BackTab => {
                mods.remove(KeyModifiers::SHIFT);
                KeyCode::BackTab
            }
            c => c,
        };
        Key { code, mods }
    }

    /// Parses a key name: a character (`w`, `+`, `G`), a named key (`Enter`, `Esc`, `Tab`,
    /// `BackTab`, `Space`, `Backspace`, `Delete`, `Left`, `Right`, `Up`, `Down`, `Home`, `End`,
    /// `PageUp`/`PgUp`, `PageDown`/`PgDn`, `F1`…`F12`, or the arrows `←→↑↓`), optionally after
    /// `Ctrl-`, `Alt-` or `Shift-` (`-` or `+` as separator, any case).
    pub fn parse(s: &str) -> Option<Key> {
        let mut mods = KeyModifiers::NONE;
        let mut rest = s;
        loop {
            let lower = rest.to_ascii_lowercase();
            let mut stripped = false;
            for (prefix, m) in [
                ("ctrl", KeyModifiers::CONTROL),
                ("c", KeyModifiers::CONTROL),
                ("alt", KeyModifiers::ALT),
                ("a", KeyModifiers::ALT),
                ("shift", KeyModifiers::SHIFT),
                ("s", KeyModifiers::SHIFT),
            ] {
                for sep in ['-', '+'] {
                    let p = format!("{prefix}{sep}");
                    if lower.len() > p.len() && lower.starts_with(&p) {
                        mods |= m;
                        rest = &rest[p.len()..];
                        stripped = true;
                        break;
                    }
                }
                if stripped {
                    break;
                }
            }
            if !stripped {
                break;
            }
        }
        let mut chars = rest.chars();
        let code = match (chars.next(), chars.next()) {
            (Some(c), None) => match c {
                '←' => KeyCode::Left,
                '→' => KeyCode::Right,
                '↑' => KeyCode::Up,
                '↓' => KeyCode::Down,
                ' ' => KeyCode::Char(' '),
                c if c.is_control() => return None,
                c => KeyCode::Char(c),
            },
            _ => match rest.to_ascii_lowercase().as_str() {
                "enter" | "return" => KeyCode::Enter,
                "esc" | "escape" => KeyCode::Esc,
                "tab" => KeyCode::Tab,
                "backtab" => KeyCode::BackTab,
                "space" => KeyCode::Char(' '),
                "backspace" => KeyCode::Backspace,
                "delete" | "del" => KeyCode::Delete,
                "insert" => KeyCode::Insert,
                "left" => KeyCode::Left,
                "right" => KeyCode::Right,
                "up" => KeyCode::Up,
                "down" => KeyCode::Down,
                "home" => KeyCode::Home,
                "end" => KeyCode::End,
                "pageup" | "pgup" => KeyCode::PageUp,
                "pagedown" | "pgdn" => KeyCode::PageDown,
                f if f.starts_with('f') => {
                    let n: u8 = f[1..].parse().ok()?;
                    if !(1..=12).contains(&n) {
                        return None;
                    }
                    KeyCode::F(n)
                }
                _ => return None,
            },
        };
        // Shift-Tab is BackTab; Shift with a character is the character itself.
        let code = match code {
            KeyCode::Tab if mods.contains(KeyModifiers::SHIFT) => {
                mods.remove(KeyModifiers::SHIFT);
                KeyCode::BackTab
            }
            KeyCode::Char(c) if mods.contains(KeyModifiers::SHIFT) => {
                mods.remove(KeyModifiers::SHIFT);
                KeyCode::Char(c.to_ascii_uppercase())
            }
            KeyCode::Char(c) if mods.contains(KeyModifiers::CONTROL) => {
                KeyCode::Char(c.to_ascii_lowercase())
            }
            c => c,
        };
        Some(Key { code, mods })
    }

    /// The short symbol used in status-line hints (`⏎` for Enter, else the display name).
    pub fn hint(&self) -> String {
        if self.code == KeyCode::Enter && self.mods.is_empty() {
            "⏎".into()
        } else {
            self.to_string()
        }
    }
}

impl fmt::Display for Key {
    /// The name shown in help and docs; [`Key::parse`] reads it back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.mods.contains(KeyModifiers::CONTROL) {
            f.write_str("Ctrl-")?;
        }
        if self.mods.contains(KeyModifiers::ALT) {
            f.write_str("Alt-")?;
        }
        if self.mods.contains(KeyModifiers::SHIFT) {
            f.write_str("Shift-")?;
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("Space"),
            KeyCode::Char(c) if self.mods.contains(KeyModifiers::CONTROL) => {
                write!(f, "{}", c.to_ascii_uppercase())
            }
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::Left => f.write_str("←"),
            KeyCode::Right => f.write_str("→"),
            KeyCode::Up => f.write_str("↑"),
            KeyCode::Down => f.write_str("↓"),
            KeyCode::Enter => f.write_str("Enter"),
            KeyCode::Esc => f.write_str("Esc"),
            KeyCode::Tab => f.write_str("Tab"),
            KeyCode::BackTab => f.write_str("Shift-Tab"),
            KeyCode::Backspace => f.write_str("Backspace"),
            KeyCode::Delete => f.write_str("Delete"),
            KeyCode::Insert => f.write_str("Insert"),
            KeyCode::Home => f.write_str("Home"),
            KeyCode::End => f.write_str("End"),
            KeyCode::PageUp => f.write_str("PgUp"),
            KeyCode::PageDown => f.write_str("PgDn"),
            KeyCode::F(n) => write!(f, "F{n}"),
            other => write!(f, "{other:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_display_round_trip() {
        for s in [
            "w",
            "+",
            "G",
            "Enter",
            "Esc",
            "Tab",
            "Shift-Tab",
            "Space",
            "←",
            "PgDn",
            "Ctrl-C",
            "F5",
            "Home",
            "<",
            ">",
            "?",
        ] {
            let k = Key::parse(s).unwrap_or_else(|| panic!("{s}"));
            assert_eq!(Key::parse(&k.to_string()), Some(k), "{s}");
        }
        assert_eq!(Key::parse("ctrl+c"), Key::parse("Ctrl-c"));
        assert_eq!(Key::parse("S-Tab"), Key::parse("BackTab"));
        assert_eq!(Key::parse("Left"), Key::parse("←"));
        assert_eq!(Key::parse("Shift-g"), Key::parse("G"));
        for bad in ["", "Ctrl-", "F13", "Hyper-x", "\u{1b}", "enterr"] {
            assert_eq!(Key::parse(bad), None, "{bad:?}");
        }
    }
}
