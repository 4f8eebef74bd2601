//! `tracetui event PATH ID`: one event by the id `search --json` prints — what the explorer's
//! details pane shows (times, self time, parents, args, call stack, flow and correlation
//! partners) plus its children and the device work it launched or the op that launched it
//! ([`crate::ui::event_info`], the same code). The MCP `event` tool prints its `--json`.

use super::report::{emit, fail, one_loaded, to_json};
use super::text::clean;
use crate::ui::event_info::{EventInfo, EventRef, event_info};
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;

pub const EVENT_AFTER: &str = "\
Examples:
  tracetui search run.pt.trace.json.gz aten::mm --json   the `id` of each first occurrence
  tracetui event run.pt.trace.json.gz 1234               that event: details, parents, children,
                                                         launched kernels, flows
  tracetui event run.pt.trace.json.gz 1234 --json

Times are from the capture's zero (its earliest event), as in `search`.";

/// Arguments of `event`.
#[derive(Args, Debug)]
pub struct EventArgs {
    /// Capture file (or a dir holding one capture)
    pub path: PathBuf,
    /// Event id: the `id` `search --json` prints for an occurrence (a slice id)
    pub id: u32,
    /// Print JSON (the explorer's details of the event) instead of text
    #[arg(long)]
    pub json: bool,
}

/// `event --json`.
#[derive(Serialize, Debug)]
pub struct EventJson {
    /// File read.
    pub path: String,
    /// Run name.
    pub run: String,
    /// Host / worker.
    pub host: String,
    /// The event.
    pub event: EventInfo,
}

/// Runs `event`.
pub fn cmd_event(a: &EventArgs) -> i32 {
    let (cap, l) = match one_loaded("event", &a.path) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let Some(info) = event_info(&l, a.id) else {
        return fail(&format!(
            "event: {} has no event {} (ids are 0..{}; `search --json` prints them)",
            clean(&cap.path.display().to_string()),
            a.id,
            l.cap.slices.len()
        ));
    };
    let out = EventJson {
        path: cap.path.display().to_string(),
        run: cap.run.clone(),
        host: cap.host.clone(),
        event: info,
    };
    let printed = if a.json {
        emit(&to_json(&out))
    } else {
        emit(&render_text(&out))
    };
    match printed {
        Ok(()) => 0,
        Err(code) => code,
    }
}

fn d(ns: i64) -> String {
    super::text::dur(ns as f64 * 1000.0)
}

fn one(r: &EventRef) -> String {
    format!(
        "#{} {} · {} @ {} ({})",
        r.id,
        clean(&r.name),
        clean(&r.track),
        d(r.start_ns),
        d(r.dur_ns)
    )
}

/// The event for people: one fact a line, names cleaned for the terminal.
pub fn render_text(o: &EventJson) -> String {
    let e = &o.event;
    let mut s = format!("{}\n", clean(&o.path));
    let cat = if e.category.is_empty() {
        "-".to_string()
    } else {
        clean(&e.category).into_owned()
    };
    s.push_str(&format!(
        "   {}\n   dur {} · self {} · depth {} · start {} · end {} · {} · {}\n",
        one(&e.event),
        d(e.event.dur_ns),
        d(e.self_ns),
        e.depth,
        d(e.event.start_ns),
        d(e.end_ns),
        cat,
        e.track_kind
    ));
    if e.correlation != 0 {
        s.push_str(&format!("   correlation {}\n", e.correlation));
    }
    if e.args_not_read {
        s.push_str("   the file changed on disk since loading: args not read\n");
    }
    for a in &e.args {
        s.push_str(&format!(
            "   arg {} = {}\n",
            clean(&a.name),
            clean(&a.value)
        ));
    }
    if !e.call_stack.is_empty() {
        s.push_str("   call stack:\n");
        for f in &e.call_stack {
            s.push_str(&format!("     {}\n", clean(f)));
        }
    }
    for p in &e.parents {
        s.push_str(&format!("   parent   {}\n", one(p)));
    }
    for c in &e.children {
        s.push_str(&format!("   child    {}\n", one(c)));
    }
    if e.children_count > e.children.len() {
        s.push_str(&format!("   … {} children in all\n", e.children_count));
    }
    for p in &e.partners {
        s.push_str(&format!("   {:<11} {}\n", p.relation, one(&p.event)));
    }
    // Launched device work not already listed as a direct partner.
    for k in e
        .launched
        .iter()
        .filter(|k| !e.partners.iter().any(|p| p.event.id == k.id))
    {
        s.push_str(&format!("   launched {}\n", one(k)));
    }
    if e.launched_count > e.launched.len() {
        s.push_str(&format!(
            "   … {} launched device events in all\n",
            e.launched_count
        ));
    }
    if let Some(op) = &e.launching_op {
        s.push_str(&format!("   launching op {}\n", one(op)));
    }
    s
}
