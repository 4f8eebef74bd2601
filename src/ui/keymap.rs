//! The one key table: per view, key → [`Action`] → one-line description. Key dispatch, the `?`
//! help, the status-line hints and the keys section of `docs/ui.md` are all generated from it;
//! `config.toml` can rebind any action ([`super::config`]).

use super::action::Action;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rustc_hash::FxHashMap;
use std::fmt;

/// Which view a binding belongs to. `Global` bindings apply in every view unless the view binds
/// the same key itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ViewKind {
    /// Every view.
    Global,
    /// The capture list.
    Picker,
    /// The timeline of the open capture.
    Timeline,
    /// The key help popup.
    Help,
    /// The search prompt and its results.
    Search,
    /// Table popups: statistics, rankings, GPU breakdown.
    Table,
}

impl ViewKind {
    /// Every kind, in config order.
    pub const ALL: &'static [ViewKind] = &[
        ViewKind::Global,
        ViewKind::Picker,
        ViewKind::Timeline,
        ViewKind::Help,
        ViewKind::Search,
        ViewKind::Table,
    ];

    /// Name of the `[keys.<name>]` table in the config file.
    pub fn name(self) -> &'static str {
        match self {
            ViewKind::Global => "global",
            ViewKind::Picker => "picker",
            ViewKind::Timeline => "timeline",
            ViewKind::Help => "help",
            ViewKind::Search => "search",
            ViewKind::Table => "table",
        }
    }

    /// The kind named `name`.
    pub fn from_name(name: &str) -> Option<ViewKind> {
        ViewKind::ALL.iter().copied().find(|v| v.name() == name)
    }
}

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

/// One row of the default table.
#[derive(Debug)]
pub struct Default {
    /// The view.
    pub view: ViewKind,
    /// The action.
    pub action: Action,
    /// Default keys (parsed with [`Key::parse`]).
    pub keys: &'static [&'static str],
    /// What it does, for help and docs.
    pub desc: &'static str,
}

const fn d(
    view: ViewKind,
    action: Action,
    keys: &'static [&'static str],
    desc: &'static str,
) -> Default {
    Default {
        view,
        action,
        keys,
        desc,
    }
}

use Action as A;
use ViewKind as V;

/// Every default binding, in help order within each view.
pub const DEFAULTS: &[Default] = &[
    d(V::Global, A::Quit, &["q", "Ctrl-c"], "quit"),
    d(V::Global, A::Help, &["?"], "this help"),
    d(
        V::Global,
        A::OpenNewest,
        &["O"],
        "open the newest capture (announced when it appears)",
    ),
    d(V::Picker, A::Down, &["j", "Down"], "next capture"),
    d(V::Picker, A::Up, &["k", "Up"], "previous capture"),
    d(V::Picker, A::Top, &["g", "Home"], "first capture"),
    d(V::Picker, A::Bottom, &["G", "End"], "last capture"),
    d(V::Picker, A::Confirm, &["Enter"], "open the capture"),
    d(V::Picker, A::Back, &["Esc"], "back to the open capture"),
    d(
        V::Timeline,
        A::ZoomIn,
        &["w", "+", "="],
        "zoom in (around the selection or the centre)",
    ),
    d(V::Timeline, A::ZoomOut, &["s", "-"], "zoom out"),
    d(V::Timeline, A::PanLeft, &["a", "Left"], "pan left"),
    d(V::Timeline, A::PanRight, &["d", "Right"], "pan right"),
    d(
        V::Timeline,
        A::Down,
        &["j", "Down"],
        "next lane (the selection follows)",
    ),
    d(V::Timeline, A::Up, &["k", "Up"], "previous lane"),
    d(V::Timeline, A::PageDown, &["PgDn"], "page down"),
    d(V::Timeline, A::PageUp, &["PgUp"], "page up"),
    d(V::Timeline, A::Top, &["g"], "first track"),
    d(V::Timeline, A::Bottom, &["G"], "last track"),
    d(V::Timeline, A::NextTrack, &["Tab"], "next track"),
    d(V::Timeline, A::PrevTrack, &["BackTab"], "previous track"),
    d(
        V::Timeline,
        A::PrevSlice,
        &["h"],
        "previous slice on the lane",
    ),
    d(V::Timeline, A::NextSlice, &["l"], "next slice on the lane"),
    d(
        V::Timeline,
        A::Confirm,
        &["Enter"],
        "select the slice under the cursor; again: zoom; process row: fold",
    ),
    d(V::Timeline, A::Parent, &["u"], "select the parent"),
    d(
        V::Timeline,
        A::Fit,
        &["f"],
        "fit the selection (or the marked range)",
    ),
    d(
        V::Timeline,
        A::FitAll,
        &["0", "Home"],
        "show the whole capture",
    ),
    d(
        V::Timeline,
        A::Collapse,
        &["Space"],
        "collapse / expand the process",
    ),
    d(
        V::Timeline,
        A::Partner,
        &["p"],
        "jump to the flow / correlation partner",
    ),
    d(V::Timeline, A::NextPartner, &[">"], "next partner"),
    d(V::Timeline, A::PrevPartner, &["<"], "previous partner"),
    d(
        V::Timeline,
        A::Mark,
        &["m"],
        "mark a range (press at both ends)",
    ),
    d(
        V::Timeline,
        A::ToggleColor,
        &["c"],
        "colour by name / by category",
    ),
    d(
        V::Timeline,
        A::Back,
        &["Esc"],
        "cancel load, clear mark / selection, then the picker",
    ),
    d(
        V::Timeline,
        A::Search,
        &["/"],
        "search every event name (fuzzy; Ctrl-R: regex)",
    ),
    d(
        V::Timeline,
        A::NextHit,
        &["n"],
        "next hit (search occurrence / ranked event)",
    ),
    d(V::Timeline, A::PrevHit, &["N"], "previous hit"),
    d(
        V::Timeline,
        A::HitsInTrack,
        &["T"],
        "n / N: all tracks or the cursor's track only",
    ),
    d(
        V::Timeline,
        A::DimOthers,
        &["D"],
        "dim everything but the hits",
    ),
    d(
        V::Timeline,
        A::OpenStats,
        &["t"],
        "statistics per name (of the marked range, else all)",
    ),
    d(
        V::Timeline,
        A::OpenRank,
        &["o"],
        "optimizable events: what starves the GPU",
    ),
    d(
        V::Timeline,
        A::OpenGpu,
        &["b"],
        "GPU breakdown per device and stream",
    ),
    d(V::Help, A::Down, &["j", "Down"], "scroll down"),
    d(V::Help, A::Up, &["k", "Up"], "scroll up"),
    d(V::Help, A::Back, &["Esc"], "close (any other key too)"),
    d(V::Search, A::Down, &["Down", "Ctrl-n"], "next result"),
    d(
        V::Search,
        A::Up,
        &["Up", "Ctrl-p"],
        "previous result (in an empty prompt: history)",
    ),
    d(V::Search, A::PageDown, &["PgDn"], "page down"),
    d(V::Search, A::PageUp, &["PgUp"], "page up"),
    d(
        V::Search,
        A::Confirm,
        &["Enter"],
        "jump to the first occurrence; n / N step through all",
    ),
    d(V::Search, A::ToggleRegex, &["Ctrl-r"], "fuzzy / regex"),
    d(V::Search, A::Back, &["Esc"], "close"),
    d(V::Table, A::Down, &["j", "Down"], "next row"),
    d(V::Table, A::Up, &["k", "Up"], "previous row"),
    d(V::Table, A::PageDown, &["PgDn"], "page down"),
    d(V::Table, A::PageUp, &["PgUp"], "page up"),
    d(V::Table, A::Top, &["g", "Home"], "first row"),
    d(V::Table, A::Bottom, &["G", "End"], "last row"),
    d(V::Table, A::SortNext, &["s"], "sort by the next column"),
    d(V::Table, A::SortReverse, &["S"], "reverse the sort"),
    d(
        V::Table,
        A::GroupNext,
        &["v"],
        "statistics: group by name / category / hlo_op / tf_op",
    ),
    d(
        V::Table,
        A::FilterCategory,
        &["c"],
        "statistics: only the next category (then all)",
    ),
    d(
        V::Table,
        A::FilterTrack,
        &["T"],
        "statistics: only the cursor's / next track (then all)",
    ),
    d(
        V::Table,
        A::FilterProcess,
        &["P"],
        "statistics: only the cursor's / next process (then all)",
    ),
    d(
        V::Table,
        A::Search,
        &["/"],
        "filter the rows (fuzzy, on the first column)",
    ),
    d(
        V::Table,
        A::Confirm,
        &["Enter"],
        "go to the row's event / hits / track on the timeline",
    ),
    d(V::Table, A::Back, &["Esc"], "close"),
];

/// A status-line hint: the first key of each action, `/`-joined, then a label.
pub struct Hint {
    /// Actions whose first keys are shown.
    pub actions: &'static [Action],
    /// Label after the keys (may be empty).
    pub label: &'static str,
}

const fn h(actions: &'static [Action], label: &'static str) -> Hint {
    Hint { actions, label }
}

/// Hints of the picker.
const PICKER_HINTS: &[Hint] = &[
    h(&[A::Down, A::Up], "move"),
    h(&[A::Confirm], "open"),
    h(&[A::Help], "help"),
    h(&[A::Quit], "quit"),
];
/// Hints of the timeline on wide terminals.
const TIMELINE_HINTS: &[Hint] = &[
    h(&[A::ZoomIn, A::ZoomOut], "zoom"),
    h(&[A::PanLeft, A::PanRight], "pan"),
    h(&[A::Down, A::Up], "lane"),
    h(&[A::PrevSlice, A::NextSlice], "slice"),
    h(&[A::Confirm], "select"),
    h(&[A::Parent], "parent"),
    h(&[A::Mark], "mark"),
    h(&[A::Partner], "flow"),
    h(&[A::Help], "help"),
];
/// Hints of the timeline below 100 columns.
const TIMELINE_HINTS_NARROW: &[Hint] = &[
    h(&[A::ZoomIn, A::ZoomOut], "zoom"),
    h(&[A::PanLeft, A::PanRight], "pan"),
    h(&[A::Down, A::Up], ""),
    h(&[A::PrevSlice, A::NextSlice], ""),
    h(&[A::Confirm], ""),
    h(&[A::Help], "help"),
];

/// The effective bindings: defaults with the config's rebindings applied.
#[derive(Debug, Clone)]
pub struct Keymap {
    /// (view, action) → keys, in table order.
    rows: Vec<(ViewKind, Action, Vec<Key>, &'static str)>,
    lookup: FxHashMap<(ViewKind, Key), Action>,
}

impl std::default::Default for Keymap {
    fn default() -> Self {
        Keymap::with(&[])
    }
}

impl Keymap {
    /// The defaults with `overrides` (view, action, keys) applied: an override replaces the
    /// action's keys and takes its keys away from other actions of the same view (and from
    /// global actions when the view is global).
    pub fn with(overrides: &[(ViewKind, Action, Vec<Key>)]) -> Keymap {
        let mut rows: Vec<(ViewKind, Action, Vec<Key>, &'static str)> = DEFAULTS
            .iter()
            .map(|d| {
                let keys = d.keys.iter().filter_map(|k| Key::parse(k)).collect();
                (d.view, d.action, keys, d.desc)
            })
            .collect();
        for (view, action, keys) in overrides {
            for r in rows.iter_mut() {
                let shares = r.0 == *view || *view == ViewKind::Global || r.0 == ViewKind::Global;
                if shares && !(r.0 == *view && r.1 == *action) {
                    r.2.retain(|k| !keys.contains(k));
                }
            }
            match rows.iter_mut().find(|r| r.0 == *view && r.1 == *action) {
                Some(r) => r.2 = keys.clone(),
                None => rows.push((*view, *action, keys.clone(), "(from config)")),
            }
        }
        let mut lookup = FxHashMap::default();
        for (view, action, keys, _) in &rows {
            for k in keys {
                lookup.entry((*view, *k)).or_insert(*action);
            }
        }
        Keymap { rows, lookup }
    }

    /// The action of `key` in `view` (the view's own bindings first, then the global ones).
    pub fn action(&self, view: ViewKind, key: &KeyEvent) -> Option<Action> {
        let k = Key::from_event(key);
        self.lookup
            .get(&(view, k))
            .or_else(|| self.lookup.get(&(ViewKind::Global, k)))
            .copied()
    }

    /// Keys bound to `action` in `view` (falling back to the global binding).
    pub fn keys(&self, view: ViewKind, action: Action) -> &[Key] {
        self.rows
            .iter()
            .find(|r| r.0 == view && r.1 == action)
            .or_else(|| {
                self.rows
                    .iter()
                    .find(|r| r.0 == ViewKind::Global && r.1 == action)
            })
            .map_or(&[], |r| &r.2)
    }

    /// Help rows: the global ones, then `view`'s: (keys joined by " / ", description).
    pub fn help_rows(&self, view: ViewKind) -> Vec<(String, &'static str)> {
        let mut out = Vec::new();
        // Global keys (quit, help) first: they stay visible on short terminals.
        for v in [ViewKind::Global, view] {
            for (rv, _, keys, desc) in &self.rows {
                if *rv == v && !keys.is_empty() {
                    let k: Vec<String> = keys.iter().map(Key::to_string).collect();
                    out.push((k.join(" / "), *desc));
                }
            }
            if view == ViewKind::Global {
                break;
            }
        }
        out
    }

    /// The status-line hints of `view` (`narrow` below 100 columns).
    pub fn hints(&self, view: ViewKind, narrow: bool) -> String {
        let (list, sep) = match view {
            ViewKind::Picker => (PICKER_HINTS, "  "),
            ViewKind::Timeline if narrow => (TIMELINE_HINTS_NARROW, " "),
            ViewKind::Timeline => (TIMELINE_HINTS, "  "),
            _ => return String::new(),
        };
        let mut parts = Vec::new();
        for hint in list {
            let keys: Vec<String> = hint
                .actions
                .iter()
                .filter_map(|&a| self.keys(view, a).first().map(Key::hint))
                .collect();
            if keys.is_empty() {
                continue;
            }
            let mut s = keys.join("/");
            if !hint.label.is_empty() {
                s.push(' ');
                s.push_str(hint.label);
            }
            parts.push(s);
        }
        parts.join(sep)
    }

    /// Every binding as (view, action, keys, description), in table order.
    pub fn rows(&self) -> impl Iterator<Item = (ViewKind, Action, &[Key], &'static str)> {
        self.rows.iter().map(|r| (r.0, r.1, r.2.as_slice(), r.3))
    }

    /// The generated keys section of `docs/ui.md` (Markdown tables, one per view).
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        for &v in ViewKind::ALL {
            s.push_str(&format!(
                "\n### {} (`[keys.{}]`)\n\n| keys | action | does |\n|---|---|---|\n",
                match v {
                    ViewKind::Global => "Everywhere",
                    ViewKind::Picker => "Capture picker",
                    ViewKind::Timeline => "Timeline",
                    ViewKind::Help => "Help popup",
                    ViewKind::Search => "Search prompt (printable keys type text)",
                    ViewKind::Table => "Tables: statistics, rankings, GPU",
                },
                v.name()
            ));
            for (rv, a, keys, desc) in self.rows() {
                if rv != v {
                    continue;
                }
                let k: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
                s.push_str(&format!("| {} | `{}` | {desc} |\n", k.join(" "), a.name()));
            }
        }
        s
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

    #[test]
    fn every_default_key_parses() {
        for d in DEFAULTS {
            for k in d.keys {
                assert!(Key::parse(k).is_some(), "{k} in {:?}", d.action);
            }
        }
    }

    #[test]
    fn no_key_bound_twice_in_one_view() {
        let km = Keymap::default();
        for &v in ViewKind::ALL {
            let mut seen = FxHashMap::default();
            for (rv, a, keys, _) in km.rows() {
                if rv != v && !(rv == ViewKind::Global && v != ViewKind::Global) {
                    continue;
                }
                for k in keys {
                    if let Some(prev) = seen.insert(*k, a) {
                        // A view may shadow a global key on purpose only with the same action.
                        assert_eq!(prev, a, "{k} bound to {prev:?} and {a:?} in {v:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn every_action_is_reachable() {
        let km = Keymap::default();
        for &a in Action::ALL {
            assert!(
                km.rows()
                    .any(|(_, ra, keys, _)| ra == a && !keys.is_empty()),
                "{a:?} has no key"
            );
        }
    }

    #[test]
    fn dispatch_prefers_the_view_then_global() {
        let km = Keymap::default();
        let ev = |c: KeyCode| KeyEvent::from(c);
        assert_eq!(
            km.action(ViewKind::Timeline, &ev(KeyCode::Char('w'))),
            Some(Action::ZoomIn)
        );
        assert_eq!(
            km.action(ViewKind::Picker, &ev(KeyCode::Char('q'))),
            Some(Action::Quit)
        );
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(km.action(ViewKind::Timeline, &ctrl_c), Some(Action::Quit));
        let shift_g = KeyEvent::new(KeyCode::Char('G'), KeyModifiers::SHIFT);
        assert_eq!(
            km.action(ViewKind::Timeline, &shift_g),
            Some(Action::Bottom)
        );
        let back_tab = KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT);
        assert_eq!(
            km.action(ViewKind::Timeline, &back_tab),
            Some(Action::PrevTrack)
        );
        assert_eq!(km.action(ViewKind::Picker, &ev(KeyCode::Char('w'))), None);
    }

    #[test]
    fn hints_match_the_table() {
        let km = Keymap::default();
        assert_eq!(
            km.hints(ViewKind::Timeline, false),
            "w/s zoom  a/d pan  j/k lane  h/l slice  ⏎ select  u parent  m mark  p flow  ? help"
        );
        assert_eq!(
            km.hints(ViewKind::Timeline, true),
            "w/s zoom a/d pan j/k h/l ⏎ ? help"
        );
        assert_eq!(
            km.hints(ViewKind::Picker, false),
            "j/k move  ⏎ open  ? help  q quit"
        );
    }

    #[test]
    fn override_replaces_keys_and_frees_them_elsewhere() {
        let i = Key::parse("i").unwrap();
        let w = Key::parse("w").unwrap();
        let km = Keymap::with(&[(ViewKind::Timeline, Action::ZoomIn, vec![i])]);
        assert_eq!(km.keys(ViewKind::Timeline, Action::ZoomIn), &[i]);
        assert_eq!(
            km.action(ViewKind::Timeline, &KeyEvent::from(KeyCode::Char('w'))),
            None
        );
        // Taking `d` for zoom_in removes it from pan_right.
        let d = Key::parse("d").unwrap();
        let km = Keymap::with(&[(ViewKind::Timeline, Action::ZoomIn, vec![w, d])]);
        assert!(!km.keys(ViewKind::Timeline, Action::PanRight).contains(&d));
        assert_eq!(
            km.hints(ViewKind::Timeline, false).split("  ").nth(1),
            Some("a/→ pan")
        );
    }
}
