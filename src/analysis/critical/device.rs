//! Device edges of a step's graph — activities, launch → activity, activity → activity on a
//! stream, device → host syncs — and, in the full mode, the waits HTA does not see: blocking
//! calls waiting for the device, and threads waiting for other threads.

use super::build::Builder;
use super::graph::Kind;
use super::options::Mode;
use super::roles::{self, SYNC_CALL, activity_kind};
use crate::model::{NO_SLICE, Ps};

impl Builder<'_> {
    /// HTA: the activity a `Stream Wait Event` / `Event Sync` marker waits for: the last launch
    /// onto the recorded stream before its `cudaEventRecord` call.
    fn hta_recorded(&self, marker: u32) -> Option<u32> {
        let c = self.c;
        let a = c.slices.args[marker as usize];
        let arg = |k: &str| {
            let key = c.strings.lookup(k)?;
            c.args.get(a, key, &c.strings)?.as_i64(&c.strings)
        };
        let rec = self
            .roles
            .launches
            .launch_of(arg("wait_on_cuda_event_record_corr_id")? as u64);
        if rec == NO_SLICE {
            return None;
        }
        self.hta_events
            .previous(arg("wait_on_stream")?, c.slices.start[rec as usize])
    }

    /// HTA: the GPU → GPU waits of the step's `Stream Wait Event` markers, as (waiting
    /// activity, activity it waits for).
    fn hta_kernel_syncs(&mut self) {
        let c = self.c;
        self.kernel_sync.clear();
        for &(id, k) in &self.syncs {
            if c.slice_name(id) != "Stream Wait Event" {
                continue;
            }
            let call = self.roles.launch_of(c, k as usize, id);
            let (Some(src), Some(dst)) = (
                self.hta_recorded(id),
                self.hta_events.next(
                    c,
                    k as usize,
                    c.track_of(call),
                    c.slices.start[call as usize],
                ),
            ) else {
                continue;
            };
            self.kernel_sync.push((dst, src));
        }
        self.kernel_sync.sort_unstable();
    }

    /// Full mode: a blocking call (a synchronize, a device-to-host copy) that returned after
    /// device work finished inside it waited for that work: edge activity end → call end, and
    /// the call's own time is left out (the wait edge carries its end).
    pub(super) fn gpu_waits(&mut self) {
        let c = self.c;
        self.ends.clear();
        for &id in &self.acts {
            let l = self.roles_launch(id);
            self.ends
                .push((self.end(id), self.node_of[id as usize] + 1, self.start(l)));
        }
        self.ends.sort_unstable_by_key(|e| e.0);
        for hi in 0..self.host.len() {
            let id = self.host[hi];
            let fl = self.roles.flags(c, id);
            if fl & roles::BLOCKING == 0 {
                continue;
            }
            let (s, e) = (self.start(id), self.end(id));
            let mut target = None::<(Ps, u32)>;
            if fl & SYNC_CALL != 0 {
                let j = self.ends.partition_point(|x| x.0 <= e);
                for &(end, node, ls) in self.ends[..j].iter().rev().take(16) {
                    if end <= s {
                        break;
                    }
                    if ls < s {
                        target = Some((end, node));
                        break;
                    }
                }
            } else if c.slice_name(id).contains("Memcpy") || c.slice_name(id).contains("memcpy") {
                for &(call, act) in &self.blocking_acts {
                    let end = self.end(act);
                    if call == id && roles::is_d2h(c.slice_name(act)) && end > s && end <= e {
                        target = Some((end, self.node_of[act as usize] + 1));
                    }
                }
            }
            if let Some((_, node)) = target {
                let sn = self.node_of[id as usize];
                self.waited[sn as usize] = true;
                self.g.edge(node, sn + 1, Kind::SyncWait, id);
            }
        }
    }

    fn roles_launch(&self, id: u32) -> u32 {
        let t = self.c.track_of(id);
        let k = self.roles.streams.partition_point(|&x| x < t);
        self.roles.launch_of(self.c, k, id)
    }

    /// Full mode: a thread waiting for other threads (`run_backward`) continues on them — fork
    /// from its last operator before their first, join from their last operator to its next
    /// one — and its gap across the wait is dropped; then every remaining gap edge is added.
    pub(super) fn thread_waits(&mut self) {
        let c = self.c;
        for wi in 0..self.waits.len() {
            let (a, w) = self.waits[wi];
            let (ws, we) = (self.start(w), self.end(w));
            let proc_a = c.tracks[self.roles.threads[a as usize] as usize].process;
            let (mut first, mut last) = (None::<u32>, None::<u32>);
            for b in 0..self.roles.threads.len() {
                let tb = &c.tracks[self.roles.threads[b] as usize];
                if b == a as usize || tb.process != proc_a {
                    continue;
                }
                let tops = &self.tops[self.top_off[b] as usize..self.top_off[b + 1] as usize];
                let i = tops.partition_point(|&(s, _)| self.g.ts[s as usize] < ws);
                let j = tops.partition_point(|&(_, e)| self.g.ts[e as usize] <= we);
                if i >= j {
                    continue;
                }
                let (f, l) = (tops[i].0, tops[j - 1].1);
                if first.is_none_or(|x| self.g.ts[f as usize] < self.g.ts[x as usize]) {
                    first = Some(f);
                }
                if last.is_none_or(|x| self.g.ts[l as usize] > self.g.ts[x as usize]) {
                    last = Some(l);
                }
            }
            let (Some(f), Some(l)) = (first, last) else {
                continue;
            };
            let (ft, lt) = (self.g.ts[f as usize], self.g.ts[l as usize]);
            let tops = &self.tops
                [self.top_off[a as usize] as usize..self.top_off[a as usize + 1] as usize];
            let i = tops.partition_point(|&(_, e)| self.g.ts[e as usize] <= ft);
            let p = i.checked_sub(1).map(|k| tops[k].1);
            let j = tops.partition_point(|&(s, _)| self.g.ts[s as usize] < lt);
            let n = tops.get(j).map(|t| t.0);
            let (pt, nt) = (
                p.map_or(Ps::MIN, |x| self.g.ts[x as usize]),
                n.map_or(Ps::MAX, |x| self.g.ts[x as usize]),
            );
            // Gaps are grouped by thread and in time order within one: visit only thread `a`'s
            // from `pt` on. A dropped gap becomes a self-loop (never added).
            let ts = &self.g.ts;
            let from = self
                .gaps
                .partition_point(|g| (g.3, ts[g.0 as usize]) < (a, pt));
            for gap in &mut self.gaps[from..] {
                let (gs, gd) = (ts[gap.0 as usize], ts[gap.1 as usize]);
                if gap.3 != a || gs >= we {
                    break;
                }
                if gd <= nt && gd > ws {
                    gap.1 = gap.0;
                }
            }
            if let Some(p) = p {
                self.g.edge(p, f, Kind::Gap, w);
            }
            if let Some(n) = n {
                self.g.edge(l, n, Kind::Gap, w);
            }
        }
        for k in 0..self.gaps.len() {
            let (s, d, ev, _) = self.gaps[k];
            if s != d {
                self.g.edge(s, d, Kind::Gap, ev);
            }
        }
    }

    /// Activity edges: its own time; how it was joined (HTA: launch delay when the stream's
    /// queue was empty, else kernel → kernel; full: both, the later-satisfied
    /// one binds); HTA's device → host syncs from `cuda_sync` markers.
    pub(super) fn device_edges(&mut self) {
        let c = self.c;
        let hta = self.opts.mode == Mode::Hta;
        let n = self.roles.streams.len();
        self.last.clear();
        self.last.resize(n, NO_SLICE);
        let mut order = std::mem::take(&mut self.order);
        order.clear();
        for k in 0..n {
            for j in self.act_off[k]..self.act_off[k + 1] {
                let id = self.acts[j as usize];
                order.push((self.start(id), id, k as u32));
            }
        }
        if hta {
            self.hta_kernel_syncs();
            for &(id, k) in &self.syncs {
                order.push((self.end(id), id, k | (1 << 31)));
            }
            order.sort_unstable_by_key(|&(ts, id, k)| (ts, k & (1 << 31), id));
        }
        for &(_, id, kk) in &order {
            let k = (kk & !(1 << 31)) as usize;
            if kk & (1 << 31) != 0 {
                self.hta_sync(id, k);
                continue;
            }
            let sn = self.node_of[id as usize];
            let en = sn + 1;
            let kind = if self.graphs.rep(id).is_some() {
                Kind::Kernel
            } else {
                activity_kind(c, id, self.roles.xplane).unwrap_or(Kind::Kernel)
            };
            self.g.edge(sn, en, kind, id);
            let l = self.roles.launch_of(c, k, id);
            let ln = self.node_of[l as usize];
            let prev = self.last[k];
            if hta {
                self.hta_join(id, k, l, ln, sn, prev);
            } else {
                if ln != NO_SLICE {
                    self.g.edge(ln, sn, Kind::LaunchDelay, l);
                }
                if prev != NO_SLICE && self.g.ts[prev as usize] <= self.g.ts[sn as usize] {
                    self.g
                        .edge(prev, sn, Kind::KernelGap, self.node_ev[prev as usize]);
                } else if prev != NO_SLICE {
                    // It started while the stream's latest-ending activity still ran (a CUDA
                    // graph runs independent nodes at once on one stream): it waited for that
                    // one's start, not its end. An end → start edge would weigh less than 0
                    // and, raised to 0, lengthen every path through it past the time it spans.
                    let p = self.node_ev[prev as usize];
                    let pk = activity_kind(c, p, self.roles.xplane).unwrap_or(Kind::Kernel);
                    // An activity's start node is the one before its end node.
                    self.g.edge(prev - 1, sn, pk, p);
                }
            }
            if prev == NO_SLICE || hta || self.g.ts[en as usize] >= self.g.ts[prev as usize] {
                self.last[k] = en;
            }
        }
        self.order = order;
    }

    fn hta_join(&mut self, id: u32, k: usize, l: u32, ln: u32, sn: u32, prev: u32) {
        let c = self.c;
        let tr = &c.tracks[self.roles.streams[k] as usize];
        let q = self
            .queue
            .get(self.roles.launch_index(k) + (id - tr.slices.0) as usize)
            .copied()
            .unwrap_or((-1, -1));
        let ls = self.start(l);
        let mut launched = false;
        let mut added = false;
        // A Stream Wait Event: a zero-weight edge from the activity waited for.
        let mut sync_end = None::<Ps>;
        if let Ok(i) = self.kernel_sync.binary_search_by_key(&id, |x| x.0) {
            let src = self.kernel_sync[i].1;
            let n = self.node_of[src as usize];
            if n != NO_SLICE {
                self.g.edge(n + 1, sn, Kind::Dependency, NO_SLICE);
                sync_end = Some(self.g.ts[n as usize + 1]);
                added = true;
            }
        }
        if q == (1, 0)
            && ln != NO_SLICE
            && (prev == NO_SLICE || self.g.ts[prev as usize] < ls)
            && sync_end.is_none_or(|e| e < ls)
        {
            self.g.edge(ln, sn, Kind::LaunchDelay, NO_SLICE);
            launched = true;
        } else if prev != NO_SLICE && sync_end.is_none_or(|e| e < self.g.ts[prev as usize]) {
            self.g
                .edge(prev, sn, Kind::KernelGap, self.node_ev[prev as usize]);
        } else if !added {
            self.skipped.unlinked_kernels += 1;
        }
        if self.opts.zero_weight_launch_edges && !launched && ln != NO_SLICE {
            self.g.edge_w(ln, sn, 0, Kind::Dependency, NO_SLICE);
        }
    }

    /// HTA `handle_cuda_sync`: `Context Sync` joins the last activity of every stream to the
    /// sync call's end, `Stream Sync` the last of its stream.
    fn hta_sync(&mut self, id: u32, k: usize) {
        let c = self.c;
        let l = self.roles.launch_of(c, k, id);
        let call_end = self.node_of[l as usize] + 1;
        match c.slice_name(id) {
            "Context Sync" => {
                for s in 0..self.last.len() {
                    let p = self.last[s];
                    if p != NO_SLICE {
                        self.g.edge(p, call_end, Kind::Dependency, NO_SLICE);
                    }
                }
            }
            "Stream Sync" => {
                let p = self.last[k];
                if p != NO_SLICE {
                    self.g.edge(p, call_end, Kind::Dependency, NO_SLICE);
                }
            }
            "Stream Wait Event" => {}
            "Event Sync" => match self.hta_recorded(id).map(|s| self.node_of[s as usize]) {
                Some(n) if n != NO_SLICE => {
                    self.g.edge(n + 1, call_end, Kind::Dependency, NO_SLICE)
                }
                _ => self.skipped.event_syncs += 1,
            },
            _ => self.skipped.event_syncs += 1,
        }
    }
}
