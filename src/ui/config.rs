//! The user's config file (`$XDG_CONFIG_HOME/tracetui/config.toml` or `--config PATH`): key
//! rebindings per view and the theme. Errors name the file and line; whatever is valid still
//! applies and the defaults stay in force for the rest. `tracetui --print-config` prints the
//! defaults ([`default_toml`]).

use super::action::Action;
use super::capture::{CaptureSettings, toml_string};
use super::colors::{ColorMode, Theme};
use super::keymap::{Key, Keymap, ViewKind};
use std::fmt;
use std::path::{Path, PathBuf};

/// Keys and theme in force.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// Key bindings.
    pub keymap: Keymap,
    /// Colour by category at start (`palette = "category"`).
    pub by_category: bool,
    /// Light-background variant (`background = "light"`).
    pub light: bool,
    /// Memory budget of the loaded captures in MiB (`[memory] budget_mb`; see `budget.rs`).
    pub memory_mb: Option<u64>,
    /// The capture form's values (`[capture]`; the explorer writes them back after a capture).
    pub capture: CaptureSettings,
    /// The file read (where the capture settings are remembered); `None` for the defaults.
    pub path: Option<PathBuf>,
}

impl Config {
    /// The theme for colour depth `mode`.
    pub fn theme(&self, mode: ColorMode) -> Theme {
        Theme {
            mode,
            light: self.light,
        }
    }
}

/// A problem in the config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file.
    pub path: PathBuf,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{l}: {}", self.path.display(), self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

/// The default config path: `$XDG_CONFIG_HOME/tracetui/config.toml`, else
/// `~/.config/tracetui/config.toml`.
pub fn default_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("tracetui").join("config.toml"))
}

/// Loads the config: `explicit` must exist; the default path may be missing (defaults then).
/// Returns the config with every valid setting applied and the problems found.
pub fn load(explicit: Option<&Path>) -> (Config, Vec<ConfigError>) {
    let path = match explicit {
        Some(p) => p.to_path_buf(),
        None => match default_path() {
            Some(p) if p.exists() => p,
            _ => return (Config::default(), Vec::new()),
        },
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let (mut c, e) = parse(&text, &path);
            c.path = Some(path);
            (c, e)
        }
        Err(e) => (
            Config::default(),
            vec![ConfigError {
                path,
                line: None,
                message: format!("cannot read: {e}"),
            }],
        ),
    }
}

/// Parses config text; `path` names it in errors.
pub fn parse(text: &str, path: &Path) -> (Config, Vec<ConfigError>) {
    let mut errors = Vec::new();
    let mut cfg = Config::default();
    let err = |line: Option<usize>, message: String| ConfigError {
        path: path.to_path_buf(),
        line,
        message,
    };
    let table: toml::Table = match text.parse() {
        Ok(t) => t,
        Err(e) => {
            let line = e.span().map(|s| line_of(text, s.start));
            let msg = e.message().trim().to_string();
            return (cfg, vec![err(line, format!("not valid TOML: {msg}"))]);
        }
    };
    let mut overrides = Vec::new();
    for (section, value) in &table {
        match (section.as_str(), value) {
            ("theme", toml::Value::Table(t)) => {
                for (k, v) in t {
                    let line = find_line(text, "theme", k);
                    match (k.as_str(), v.as_str()) {
                        ("palette", Some("name")) => cfg.by_category = false,
                        ("palette", Some("category")) => cfg.by_category = true,
                        ("background", Some("dark")) => cfg.light = false,
                        ("background", Some("light")) => cfg.light = true,
                        ("palette", _) => errors
                            .push(err(line, "palette must be \"name\" or \"category\"".into())),
                        ("background", _) => errors
                            .push(err(line, "background must be \"dark\" or \"light\"".into())),
                        _ => errors.push(err(
                            line,
                            format!("unknown theme setting `{k}` (known: palette, background)"),
                        )),
                    }
                }
            }
            ("memory", toml::Value::Table(t)) => {
                for (k, v) in t {
                    let line = find_line(text, "memory", k);
                    match (k.as_str(), v.as_integer()) {
                        ("budget_mb", Some(n)) if n > 0 => cfg.memory_mb = Some(n as u64),
                        ("budget_mb", _) => errors.push(err(
                            line,
                            "budget_mb must be a positive number of MiB".into(),
                        )),
                        _ => errors.push(err(
                            line,
                            format!("unknown memory setting `{k}` (known: budget_mb)"),
                        )),
                    }
                }
            }
            ("capture", toml::Value::Table(t)) => {
                let c = &mut cfg.capture;
                for (k, v) in t {
                    let line = find_line(text, "capture", k);
                    let level = |max: i64| v.as_integer().filter(|n| (0..=max).contains(n));
                    match k.as_str() {
                        "address" => match v.as_str() {
                            Some(a) => c.address = a.to_string(),
                            None => errors.push(err(line, "address must be a string".into())),
                        },
                        "duration_ms" => match v.as_integer().filter(|&n| n > 0) {
                            Some(n) => c.duration_ms = n as u64,
                            None => errors.push(err(
                                line,
                                "duration_ms must be a positive number of ms".into(),
                            )),
                        },
                        "host_tracer_level" => match level(3) {
                            Some(n) => c.host_level = n as u32,
                            None => errors.push(err(line, "host_tracer_level is 0–3".into())),
                        },
                        "device_tracer_level" | "python_tracer_level" => match level(1) {
                            Some(n) if k == "device_tracer_level" => c.device_level = n as u32,
                            Some(n) => c.python_level = n as u32,
                            None => errors.push(err(line, format!("{k} is 0 or 1"))),
                        },
                        _ => errors.push(err(
                            line,
                            format!(
                                "unknown capture setting `{k}` (known: address, duration_ms, \
                                 host_tracer_level, device_tracer_level, python_tracer_level)"
                            ),
                        )),
                    }
                }
            }
            ("keys", toml::Value::Table(views)) => {
                for (vname, v) in views {
                    let header = format!("keys.{vname}");
                    let Some(view) = ViewKind::from_name(vname) else {
                        let names: Vec<&str> = ViewKind::ALL.iter().map(|v| v.name()).collect();
                        errors.push(err(
                            find_header(text, &header),
                            format!(
                                "unknown view `[keys.{vname}]` (known: {})",
                                names.join(", ")
                            ),
                        ));
                        continue;
                    };
                    let toml::Value::Table(binds) = v else {
                        errors.push(err(
                            find_header(text, &header),
                            format!("`keys.{vname}` must be a table"),
                        ));
                        continue;
                    };
                    for (aname, keys) in binds {
                        let line = find_line(text, &header, aname);
                        let Some(action) = Action::from_name(aname) else {
                            errors.push(err(
                                line,
                                format!("unknown action `{aname}` in [keys.{vname}] (tracetui --print-config lists them)"),
                            ));
                            continue;
                        };
                        let names: Vec<&str> = match keys {
                            toml::Value::String(s) => vec![s.as_str()],
                            toml::Value::Array(a) => a.iter().filter_map(|k| k.as_str()).collect(),
                            _ => Vec::new(),
                        };
                        if names.is_empty()
                            && !matches!(keys, toml::Value::Array(a) if a.is_empty())
                        {
                            errors.push(err(
                                line,
                                format!("`{aname}` must be a key name or a list of key names"),
                            ));
                            continue;
                        }
                        let mut parsed = Vec::new();
                        let mut ok = true;
                        for n in names {
                            match Key::parse(n) {
                                Some(k) => parsed.push(k),
                                None => {
                                    errors.push(err(
                                        line,
                                        format!(
                                            "unknown key name `{}` for `{aname}`",
                                            n.escape_debug()
                                        ),
                                    ));
                                    ok = false;
                                }
                            }
                        }
                        if ok {
                            overrides.push((view, action, parsed));
                        }
                    }
                }
            }
            _ => errors.push(err(
                find_header(text, section),
                format!("unknown section `{section}` (known: [theme], [memory], [capture], [keys.<view>])"),
            )),
        }
    }
    let (keymap, conflicts) = Keymap::with_conflicts(&overrides);
    cfg.keymap = keymap;
    for c in conflicts {
        let at = |(v, a): (ViewKind, Action)| format!("`{}` in [keys.{}]", a.name(), v.name());
        errors.push(err(
            find_line(text, &format!("keys.{}", c.kept.0.name()), c.kept.1.name()),
            format!(
                "key `{}` is bound to {} and to {}: {} keeps it",
                c.key,
                at(c.lost),
                at(c.kept),
                at(c.kept)
            ),
        ));
    }
    // Tables come back sorted by key: report in file order.
    errors.sort_by_key(|e| e.line);
    (cfg, errors)
}

/// 1-based line of byte offset `at`.
fn line_of(text: &str, at: usize) -> usize {
    text[..at.min(text.len())]
        .bytes()
        .filter(|&b| b == b'\n')
        .count()
        + 1
}

/// Line of the `[header]` line.
fn find_header(text: &str, header: &str) -> Option<usize> {
    text.lines()
        .position(|l| {
            l.trim()
                .trim_start_matches('[')
                .trim_end_matches(']')
                .trim()
                == header
        })
        .map(|i| i + 1)
}

/// Line where `key` is assigned inside table `header` (or as a dotted key elsewhere).
fn find_line(text: &str, header: &str, key: &str) -> Option<usize> {
    let mut current = String::new();
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if t.starts_with('[') {
            current = t.trim_matches(|c| c == '[' || c == ']').trim().to_string();
            continue;
        }
        let Some((k, _)) = t.split_once('=') else {
            continue;
        };
        let k = k.trim().trim_matches('"');
        let full = if current.is_empty() {
            k.to_string()
        } else {
            format!("{current}.{k}")
        };
        if full == format!("{header}.{key}") {
            return Some(i + 1);
        }
    }
    None
}

/// The default config, commented, as `--print-config` prints it.
pub fn default_toml() -> String {
    let km = Keymap::default();
    let mut s = String::from(
        "# tracetui configuration. Put it at $XDG_CONFIG_HOME/tracetui/config.toml\n\
         # (~/.config/tracetui/config.toml) or pass --config PATH. Every setting is optional:\n\
         # what you leave out keeps its default. Key names: a character (w, +, G), Enter, Esc,\n\
         # Tab, BackTab, Space, Backspace, Delete, Left, Right, Up, Down, Home, End, PgUp, PgDn,\n\
         # F1-F12, with Ctrl-, Alt- or Shift- in front. A key you give to an action is taken away\n\
         # from the other actions of the same view ([keys.global]: of every view), even where\n\
         # they still list it as printed here; two of your own bindings of one key are reported.\n\n\
         [theme]\n\
         # \"name\": slices coloured by a hash of their name; \"category\": by category (toggle: c).\n\
         palette = \"name\"\n\
         # \"dark\" or \"light\" terminal background.\n\
         background = \"dark\"\n\n\
         [memory]\n\
         # MiB of loaded captures kept in memory; beyond it the least recently used is dropped\n\
         # (it reloads when opened). Default: half the available memory; $TRACETUI_MEMORY_MB wins.\n\
         # budget_mb = 4096\n\n\
         [capture]\n\
         # The capture form (C): profiler server address(es), trace time, tracer levels. The\n\
         # explorer writes the values of its last capture here.\n\
         # address = \"localhost:9999\"\n\
         # duration_ms = 2000\n\
         # host_tracer_level = 2\n\
         # device_tracer_level = 1\n\
         # python_tracer_level = 1\n",
    );
    for &v in ViewKind::ALL {
        s.push_str(&format!("\n[keys.{}]\n", v.name()));
        for (rv, a, keys, desc) in km.rows() {
            if rv != v {
                continue;
            }
            let k: Vec<String> = keys.iter().map(|k| toml_string(&k.to_string())).collect();
            s.push_str(&format!("{} = [{}]  # {desc}\n", a.name(), k.join(", ")));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::crossterm::event::{KeyCode, KeyEvent};

    fn p() -> &'static Path {
        Path::new("config.toml")
    }

    #[test]
    fn defaults_round_trip_through_print_config() {
        let (cfg, errors) = parse(&default_toml(), p());
        assert!(errors.is_empty(), "{errors:?}");
        let d = Keymap::default();
        let a: Vec<_> = cfg
            .keymap
            .rows()
            .map(|r| (r.0, r.1, r.2.to_vec()))
            .collect();
        let b: Vec<_> = d.rows().map(|r| (r.0, r.1, r.2.to_vec())).collect();
        assert_eq!(a, b);
    }

    #[test]
    fn rebinds_and_theme() {
        let text = "[theme]\npalette = \"category\"\nbackground = \"light\"\n\n[keys.timeline]\nzoom_in = \"i\"\nzoom_out = [\"o\", \"Ctrl-o\"]\n";
        let (cfg, errors) = parse(text, p());
        assert!(errors.is_empty(), "{errors:?}");
        assert!(cfg.by_category && cfg.light);
        let act = |c| {
            cfg.keymap
                .action(ViewKind::Timeline, &KeyEvent::from(KeyCode::Char(c)))
        };
        assert_eq!(act('i'), Some(Action::ZoomIn));
        assert_eq!(act('o'), Some(Action::ZoomOut));
        assert_eq!(act('w'), None);
        // Untouched bindings keep their defaults.
        assert_eq!(act('a'), Some(Action::PanLeft));
    }

    #[test]
    fn errors_name_the_line_and_keep_the_rest() {
        let text = "[keys.timeline]\nzoom_in = \"i\"\nzoom_inn = \"x\"\npan_left = \"Hyper-q\"\n[keys.nowhere]\nquit = \"q\"\n[theme]\nbackground = \"grey\"\n";
        let (cfg, errors) = parse(text, p());
        let lines: Vec<_> = errors.iter().map(|e| e.line).collect();
        assert_eq!(
            lines,
            vec![Some(3), Some(4), Some(5), Some(8)],
            "{errors:?}"
        );
        assert!(errors[0].message.contains("unknown action `zoom_inn`"));
        assert!(errors[1].message.contains("unknown key name `Hyper-q`"));
        assert!(errors[0].to_string().starts_with("config.toml:3: "));
        // The valid line applied; the bad ones left the defaults.
        let act = |c| {
            cfg.keymap
                .action(ViewKind::Timeline, &KeyEvent::from(KeyCode::Char(c)))
        };
        assert_eq!(act('i'), Some(Action::ZoomIn));
        assert_eq!(act('a'), Some(Action::PanLeft));
    }

    #[test]
    fn memory_budget_setting() {
        let (cfg, errors) = parse("[memory]\nbudget_mb = 512\n", p());
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(cfg.memory_mb, Some(512));
        let (cfg, errors) = parse("[memory]\nbudget_mb = -3\nspill = 1\n", p());
        assert_eq!(cfg.memory_mb, None);
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert_eq!(errors[0].line, Some(2));
    }

    #[test]
    fn syntax_error_keeps_defaults() {
        let (cfg, errors) = parse("[keys.timeline\nzoom_in = 'i'\n", p());
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].line, Some(1));
        assert!(errors[0].message.starts_with("not valid TOML"));
        assert_eq!(
            cfg.keymap
                .action(ViewKind::Timeline, &KeyEvent::from(KeyCode::Char('w'))),
            Some(Action::ZoomIn)
        );
    }

    #[test]
    fn own_binding_beats_a_default_and_conflicts_are_reported() {
        // `--print-config` output with quit moved from `q` to `x` (jump_device keeps its `x`).
        let text =
            default_toml().replace("quit = [\"q\", \"Ctrl-C\"]", "quit = [\"x\", \"Ctrl-C\"]");
        assert!(text.contains("quit = [\"x\""));
        let (cfg, errors) = parse(&text, p());
        assert!(errors.is_empty(), "{errors:?}");
        let x = KeyEvent::from(KeyCode::Char('x'));
        assert_eq!(
            cfg.keymap.action(ViewKind::Timeline, &x),
            Some(Action::Quit)
        );
        // Two bindings of the user's on one key: reported at the line of the one keeping it.
        let text = "[keys.global]\nquit = \"y\"\n\n[keys.timeline]\nzoom_in = \"y\"\n";
        let (_, errors) = parse(text, p());
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].line, Some(5));
        assert_eq!(
            errors[0].message,
            "key `y` is bound to `quit` in [keys.global] and to `zoom_in` in [keys.timeline]: `zoom_in` in [keys.timeline] keeps it"
        );
    }
}
