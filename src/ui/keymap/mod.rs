//! The one key table: per view, key → [`Action`] → one-line description. Key dispatch, the `?`
//! help, the status-line hints and the keys section of `docs/ui.md` are all generated from it;
//! `config.toml` can rebind any action ([`super::config`]).
//!
//! Files: [`view_kind`] (which view a binding belongs to), [`key`] (a key: parse, normalize,
//! display), [`defaults`] (the default table), [`hints`] (status-line hints), and here the
//! [`Keymap`] in force (defaults plus config rebindings) with dispatch, help rows and docs.

pub mod defaults;
pub mod hints;
pub mod key;
pub mod view_kind;

use super::action::Action;
use defaults::DEFAULTS;
use ratatui::crossterm::event::KeyEvent;
use rustc_hash::FxHashMap;

pub use defaults::Default;
pub use hints::Hint;
pub use key::Key;
pub use view_kind::ViewKind;

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

/// A key that two of the user's own bindings claim in views that share keys (the same view, or
/// one of them global): the later binding keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conflict {
    /// The key.
    pub key: Key,
    /// The binding that lost the key (view, action).
    pub lost: (ViewKind, Action),
    /// The binding that kept it.
    pub kept: (ViewKind, Action),
}

/// True when a key bound in `a` and in `b` would collide (global keys act in every view).
fn shares(a: ViewKind, b: ViewKind) -> bool {
    a == b || a == ViewKind::Global || b == ViewKind::Global
}

impl Keymap {
    /// The defaults with `overrides` (view, action, keys) applied; see [`Keymap::with_conflicts`].
    pub fn with(overrides: &[(ViewKind, Action, Vec<Key>)]) -> Keymap {
        Keymap::with_conflicts(overrides).0
    }

    /// The defaults with `overrides` (view, action, keys) applied, and the keys two overrides
    /// claim. An override that repeats the action's default keys (a `--print-config` copy left
    /// as it was) is not the user's choice and changes nothing. Every other override replaces
    /// the action's keys and takes them away from the other actions of the same view (and of
    /// every view when either is global), defaults and earlier overrides alike: the user's
    /// binding wins over a default of the same key.
    pub fn with_conflicts(overrides: &[(ViewKind, Action, Vec<Key>)]) -> (Keymap, Vec<Conflict>) {
        let mut rows: Vec<(ViewKind, Action, Vec<Key>, &'static str)> = DEFAULTS
            .iter()
            .map(|d| {
                let keys = d.keys.iter().filter_map(|k| Key::parse(k)).collect();
                (d.view, d.action, keys, d.desc)
            })
            .collect();
        let own: Vec<&(ViewKind, Action, Vec<Key>)> = overrides
            .iter()
            .filter(|(v, a, keys)| !rows.iter().any(|r| r.0 == *v && r.1 == *a && r.2 == *keys))
            .collect();
        let mut conflicts = Vec::new();
        for (i, later) in own.iter().enumerate() {
            for earlier in &own[..i] {
                if !shares(earlier.0, later.0) || (earlier.0, earlier.1) == (later.0, later.1) {
                    continue;
                }
                for &key in later.2.iter().filter(|k| earlier.2.contains(k)) {
                    conflicts.push(Conflict {
                        key,
                        lost: (earlier.0, earlier.1),
                        kept: (later.0, later.1),
                    });
                }
            }
        }
        for (view, action, keys) in own {
            for r in rows.iter_mut() {
                if shares(r.0, *view) && !(r.0 == *view && r.1 == *action) {
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
        (Keymap { rows, lookup }, conflicts)
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
        // Global keys (quit, help) first: they stay visible on short terminals. Keys that do
        // not act in the view (`ViewKind::takes`) are left out.
        for v in [ViewKind::Global, view] {
            for (rv, action, keys, desc) in &self.rows {
                if *rv == v && !keys.is_empty() && view.takes(*action) {
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
        self.hints_skipping(view, narrow, &[])
    }

    /// [`Keymap::hints`] without the hints of `skip` (actions with nothing to act on, like
    /// `x device` on a capture without a device).
    pub fn hints_skipping(&self, view: ViewKind, narrow: bool, skip: &[Action]) -> String {
        let Some((list, sep)) = hints::for_view(view, narrow) else {
            return String::new();
        };
        let mut parts = Vec::new();
        for hint in list
            .iter()
            .filter(|h| !h.actions.iter().any(|a| skip.contains(a)))
        {
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
                    ViewKind::Flame => "Flame graph (merged call tree)",
                    ViewKind::Details => "Full details of the selection",
                    ViewKind::Overview => "Run overview (rank × step heatmap)",
                    ViewKind::Aligned => "Aligned ranks (one timeline, busiest device track each)",
                    ViewKind::DiffAlign => "Aligned timelines of a diff (a stream of A over B's)",
                    ViewKind::Roofline => "Roofline chart (ops against the device's roofs)",
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
    use ratatui::crossterm::event::{KeyCode, KeyModifiers};

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
            "w/s zoom  a/d pan  j/k lane  h/l slice  ⏎ select  m mark  p flow  x device  ? help"
        );
        assert_eq!(
            km.hints(ViewKind::Timeline, true),
            "w/s zoom a/d pan j/k h/l ⏎ x device ? help"
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

    #[test]
    fn a_users_key_wins_over_a_default_and_conflicts_are_reported() {
        let x = Key::parse("x").unwrap();
        let ctrl_c = Key::parse("Ctrl-c").unwrap();
        // `--print-config` copied whole: quit moved to `x`, jump_device left at its default `x`.
        let km = Keymap::with(&[
            (ViewKind::Global, Action::Quit, vec![x, ctrl_c]),
            (ViewKind::Timeline, Action::JumpDevice, vec![x]),
        ]);
        let ev = KeyEvent::from(KeyCode::Char('x'));
        assert_eq!(km.action(ViewKind::Timeline, &ev), Some(Action::Quit));
        assert!(km.keys(ViewKind::Timeline, Action::JumpDevice).is_empty());
        // Two of the user's own bindings on one key: reported, the later keeps it.
        let y = Key::parse("y").unwrap();
        let (km, conflicts) = Keymap::with_conflicts(&[
            (ViewKind::Global, Action::Quit, vec![y]),
            (ViewKind::Timeline, Action::ZoomIn, vec![y]),
        ]);
        assert_eq!(
            conflicts,
            vec![Conflict {
                key: y,
                lost: (ViewKind::Global, Action::Quit),
                kept: (ViewKind::Timeline, Action::ZoomIn),
            }]
        );
        let ev = KeyEvent::from(KeyCode::Char('y'));
        assert_eq!(km.action(ViewKind::Timeline, &ev), Some(Action::ZoomIn));
        // Different views that do not share keys: no conflict.
        let (_, conflicts) = Keymap::with_conflicts(&[
            (ViewKind::Picker, Action::Down, vec![y]),
            (ViewKind::Timeline, Action::ZoomIn, vec![y]),
        ]);
        assert!(conflicts.is_empty());
    }
}
