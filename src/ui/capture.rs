//! Capture from the explorer (`C`): the settings the form edits (remembered in the config
//! file's `[capture]` section), the running capture the status line counts down, and the
//! background job that asks the profiler servers for a trace (`crate::capture::grpc`) and
//! reports where it landed. The new capture then opens like any other (docs/capture.md).

use std::path::{Path, PathBuf};
use std::time::Duration;

/// What the capture form edits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureSettings {
    /// `HOST:PORT` of the profiler server; several separated by commas (one per host).
    pub address: String,
    /// How long the server traces, ms.
    pub duration_ms: u64,
    /// Host tracer level 0–3 (2 records allocator events).
    pub host_level: u32,
    /// Device tracer level 0–1.
    pub device_level: u32,
    /// Python tracer level 0–1.
    pub python_level: u32,
}

impl Default for CaptureSettings {
    fn default() -> Self {
        CaptureSettings {
            address: "localhost:9999".into(),
            duration_ms: 2000,
            host_level: 2,
            device_level: 1,
            python_level: 1,
        }
    }
}

impl CaptureSettings {
    /// The addresses, trimmed, empty ones left out.
    pub fn addresses(&self) -> Vec<String> {
        self.address
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .map(str::to_string)
            .collect()
    }

    /// What is wrong with the settings, if anything (the form shows it and does not start).
    pub fn problem(&self) -> Option<String> {
        if self.addresses().is_empty() {
            return Some("an address is needed (HOST:PORT)".into());
        }
        if self.duration_ms == 0 {
            return Some("the duration must be at least 1 ms".into());
        }
        if self.host_level > 3 {
            return Some("host tracer level is 0–3".into());
        }
        if self.device_level > 1 || self.python_level > 1 {
            return Some("device and python tracer levels are 0 or 1".into());
        }
        None
    }

    /// The `[capture]` section of the config file for these settings.
    pub fn to_toml(&self) -> String {
        format!(
            "[capture]\naddress = {}\nduration_ms = {}\nhost_tracer_level = {}\n\
             device_tracer_level = {}\npython_tracer_level = {}\n",
            toml_string(&self.address),
            self.duration_ms,
            self.host_level,
            self.device_level,
            self.python_level
        )
    }
}

/// `s` as a TOML basic string (quoted; `\`, `"` and control characters escaped).
pub fn toml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `text` (a config file) with its `[capture]` section replaced by `s`'s (appended when there
/// is none); every other line is kept as it was.
pub fn with_settings(text: &str, s: &CaptureSettings) -> String {
    let mut out = String::with_capacity(text.len() + 160);
    let mut inside = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            inside = t == "[capture]";
        }
        if !inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    if !out.is_empty() && !out.ends_with("\n\n") {
        out.push('\n');
    }
    out.push_str(&s.to_toml());
    out
}

/// Writes `s` into the config file at `path` (created with its folder when missing).
pub fn save_settings(path: &Path, s: &CaptureSettings) -> std::io::Result<()> {
    let old = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, with_settings(&old, s))
}

/// A capture in progress, for the status line.
#[derive(Clone, Debug)]
pub struct Running {
    /// The addresses asked, as typed.
    pub address: String,
    /// How long the servers trace.
    pub duration: Duration,
    /// When it started.
    pub started: std::time::Instant,
    /// Time since it started, as of the last tick (the update sets it; drawing reads it).
    pub elapsed: Duration,
}

impl Running {
    /// `capturing HOST · 1.4 s left`, then `waiting for HOST…` once the trace time is over.
    pub fn status(&self) -> String {
        let who = crate::ui::text::fit(&self.address, 28);
        match self.duration.checked_sub(self.elapsed) {
            Some(left) if !left.is_zero() => {
                format!("capturing {who} · {:.1} s left", left.as_secs_f64())
            }
            _ => format!("waiting for {who}…"),
        }
    }
}

/// What one capture gave.
#[derive(Clone, Debug, Default)]
pub struct Done {
    /// Files that landed (one per address that answered).
    pub landed: Vec<PathBuf>,
    /// `ADDRESS: why` for each address that did not.
    pub errors: Vec<String>,
}

/// Capture state of the explorer.
#[derive(Clone, Debug, Default)]
pub struct CaptureState {
    /// The form's values (from the config file, then the last capture's).
    pub settings: CaptureSettings,
    /// The capture in progress.
    pub running: Option<Running>,
    /// The log dir captures go under (the one open in the explorer, else `.`).
    pub logdir: PathBuf,
    /// The config file the settings are remembered in (`None`: not remembered).
    pub config_path: Option<PathBuf>,
}

/// Runs a capture of `s` into `logdir` on a background thread; `done` gets the outcome.
#[cfg(feature = "capture")]
pub fn spawn(
    s: CaptureSettings,
    logdir: PathBuf,
    done: impl FnOnce(Done) + Send + 'static,
) -> std::io::Result<()> {
    use crate::capture::{grpc, logdir as dirs};
    std::thread::Builder::new()
        .name("tracetui-capture".into())
        .spawn(move || {
            let o = grpc::Options {
                duration_ms: s.duration_ms,
                host_tracer_level: s.host_level,
                device_tracer_level: s.device_level,
                python_tracer_level: s.python_level,
                logdir,
                ..grpc::Options::default()
            };
            let addresses = s.addresses();
            let out = match grpc::capture(&addresses, &dirs::session_id_now(), &o) {
                Ok(results) => {
                    let mut d = Done::default();
                    for r in results {
                        match r.outcome {
                            Ok(l) => d.landed.push(l.path().to_path_buf()),
                            Err(e) => d.errors.push(format!("{}: {e}", r.address)),
                        }
                    }
                    d
                }
                Err(e) => Done {
                    landed: Vec::new(),
                    errors: vec![format!("cannot start the capture: {e}")],
                },
            };
            done(out);
        })
        .map(|_| ())
}

/// Without the `capture` feature there is no gRPC client: says so.
#[cfg(not(feature = "capture"))]
pub fn spawn(
    _s: CaptureSettings,
    _logdir: PathBuf,
    done: impl FnOnce(Done) + Send + 'static,
) -> std::io::Result<()> {
    done(Done {
        landed: Vec::new(),
        errors: vec!["this tracetui was built without the `capture` feature".into()],
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_capture_section_is_replaced_and_the_rest_kept() {
        let s = CaptureSettings {
            address: "tpu-0:9012, tpu-1:9012".into(),
            duration_ms: 500,
            ..CaptureSettings::default()
        };
        let old = "# mine\n[theme]\npalette = \"category\"\n\n[capture]\naddress = \"x:1\"\n\
                   duration_ms = 9\n[keys.timeline]\nzoom_in = [\"i\"]\n";
        let new = with_settings(old, &s);
        assert!(new.starts_with("# mine\n[theme]\npalette = \"category\"\n"));
        assert!(new.contains("[keys.timeline]\nzoom_in = [\"i\"]\n"));
        assert!(!new.contains("x:1"));
        assert_eq!(new.matches("[capture]").count(), 1);
        // Parses back as TOML with the new values.
        let t: toml::Table = new.parse().expect("valid TOML");
        let c = t["capture"].as_table().expect("table");
        assert_eq!(c["address"].as_str(), Some("tpu-0:9012, tpu-1:9012"));
        assert_eq!(c["duration_ms"].as_integer(), Some(500));
        assert_eq!(s.addresses(), vec!["tpu-0:9012", "tpu-1:9012"]);
        // Appended to an empty file.
        assert_eq!(with_settings("", &s), s.to_toml());
    }

    #[test]
    fn problems_and_countdown() {
        let mut s = CaptureSettings::default();
        assert_eq!(s.problem(), None);
        s.address = " , ".into();
        assert!(s.problem().is_some());
        s.address = "h:1".into();
        s.host_level = 4;
        assert!(s.problem().is_some());
        let mut r = Running {
            started: std::time::Instant::now(),
            address: "h:1".into(),
            duration: Duration::from_millis(2000),
            elapsed: Duration::from_millis(600),
        };
        assert_eq!(r.status(), "capturing h:1 · 1.4 s left");
        r.elapsed = Duration::from_millis(2500);
        assert_eq!(r.status(), "waiting for h:1…");
    }
}
