//! Capture from the explorer in the app: starting one (the form's `Enter`) and opening what
//! landed (`ui/capture.rs` holds the settings and the background job).

use super::App;
use crate::ui::capture::{CaptureSettings, Done, Running};
use crate::ui::msg::{Cmd, Msg};

impl App {
    /// Starts a capture (one at a time) and remembers the settings in the config file.
    pub(super) fn start_capture(&mut self, s: CaptureSettings, cmds: &mut Vec<Cmd>) -> Vec<Msg> {
        let c = &mut self.state.capture;
        if c.running.is_some() {
            return vec![Msg::Notice("a capture is already running".into())];
        }
        c.running = Some(Running {
            address: s.address.clone(),
            duration: std::time::Duration::from_millis(s.duration_ms),
            started: std::time::Instant::now(),
            elapsed: std::time::Duration::ZERO,
        });
        c.settings = s.clone();
        if let Some(p) = &c.config_path {
            cmds.push(Cmd::SaveCaptureSettings(p.clone(), s.clone()));
        }
        cmds.push(Cmd::Capture {
            settings: s,
            logdir: c.logdir.clone(),
        });
        Vec::new()
    }

    /// A capture finished: opens what landed (listing it first when the watcher has not seen it
    /// yet) and says what failed.
    pub(super) fn on_captured(&mut self, done: Done) -> Vec<Msg> {
        let st = &mut self.state;
        st.capture.running = None;
        let failed = match done.errors.as_slice() {
            [] => String::new(),
            [one] => format!(" · failed: {one}"),
            [first, rest @ ..] => format!(" · {} failed: {first}, …", rest.len() + 1),
        };
        let Some(first) = done.landed.first() else {
            st.notice = Some(format!("capture: nothing landed{failed}"));
            return Vec::new();
        };
        let root = st.capture.logdir.clone();
        let mut index = None;
        for p in &done.landed {
            let i = match st.entries.position(p) {
                Some(i) => i,
                None => {
                    let r = crate::ui::catalog::CaptureRef::from_file(p, &root);
                    st.entries.insert(0, r, false)
                }
            };
            if p == first {
                index = Some(i);
            }
        }
        let name = crate::ui::text::sanitize(&first.display().to_string()).into_owned();
        st.notice = Some(format!(
            "captured {} file{}: opened {name}{failed}",
            done.landed.len(),
            if done.landed.len() == 1 { "" } else { "s" }
        ));
        index.map(Msg::Open).into_iter().collect()
    }
}
