//! `M` (metadata) events: process names and labels (which also set the process kind), sort
//! indexes, thread names (kept until `finalize` applies them to the thread and the device stream
//! of their key).

use super::apply::Loader;
use super::raw::RawEvent;
use crate::model::{ArgValue, ArgsRef, ProcessKind, StrId};

impl Loader<'_> {
    fn arg_str(&self, args: ArgsRef, key: StrId) -> Option<StrId> {
        match self.b.args.get(args, key, &self.b.strings)? {
            ArgValue::Str(s) | ArgValue::Json(s) => Some(s),
            _ => None,
        }
    }

    pub(super) fn metadata(&mut self, ev: &RawEvent) {
        let name = self.b.strings.get(ev.name);
        let pk = Self::pid_key(ev.pid);
        match name {
            "process_name" | "process_labels" => {
                let key = if name == "process_name" {
                    self.k.name
                } else {
                    self.k.labels
                };
                let is_name = name == "process_name";
                let Some(v) = self.arg_str(ev.args, key) else {
                    return;
                };
                let text = self.b.strings.get(v);
                let kind = if text.contains("GPU") {
                    Some(ProcessKind::Gpu)
                } else if text.contains("TPU") {
                    Some(ProcessKind::Tpu)
                } else if text.contains("/host:") || text == "CPU" {
                    Some(ProcessKind::Host)
                } else {
                    None
                };
                let p = self.b.process(pk);
                let pr = self.b.process_mut(p);
                if is_name {
                    pr.name = v;
                } else {
                    pr.label = v;
                }
                if let Some(k) = kind {
                    pr.kind = k;
                }
            }
            "process_sort_index" => {
                let v = self.b.args.get(ev.args, self.k.sort_index, &self.b.strings);
                if let Some(i) = v.and_then(|v| v.as_i64(&self.b.strings)) {
                    let p = self.b.process(pk);
                    self.b.process_mut(p).sort_index = i;
                    self.sorted_processes.push(p);
                }
            }
            "thread_name" => {
                let Some(v) = self.arg_str(ev.args, self.k.name) else {
                    return;
                };
                let tk = Self::tid_key(ev.pid, ev.tid);
                self.thread_meta.push((pk, tk, Some(v), None));
            }
            "thread_sort_index" => {
                let v = self.b.args.get(ev.args, self.k.sort_index, &self.b.strings);
                if let Some(i) = v.and_then(|v| v.as_i64(&self.b.strings)) {
                    let tk = Self::tid_key(ev.pid, ev.tid);
                    self.thread_meta.push((pk, tk, None, Some(i)));
                }
            }
            _ => self.unknown_meta += 1,
        }
    }
}
