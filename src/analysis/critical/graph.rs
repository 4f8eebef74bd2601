//! The critical-path graph of one step — nodes at the begin and end of events, weighted edges —
//! and its longest path (docs/critical-path.md).
//!
//! The longest path is a dynamic program over a topological order found with Kahn's algorithm
//! on a compressed adjacency built from the edge list: linear in nodes + edges, and every array
//! is reused from step to step ([`Graph::clear`]). Ties between equally long predecessors go to
//! the one whose source node is latest (the dependency that was satisfied last binds).

use crate::model::{NO_SLICE, Ps};

/// What an edge's time on the path was spent on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A CPU operator's own time (between its children's boundaries).
    CpuOp,
    /// A CUDA/HIP runtime or driver call's own time.
    Runtime,
    /// Time on a thread outside every operator: Python, the framework, the engine.
    Gap,
    /// A launch call's start → its device activity's start.
    LaunchDelay,
    /// A compute kernel's run time.
    Kernel,
    /// A memory copy or set on the device.
    Memcpy,
    /// A collective communication kernel.
    Communication,
    /// Idle time between two activities on one stream.
    KernelGap,
    /// A blocking call returning after the device work it waited for finished.
    SyncWait,
    /// A zero-weight dependency (call stack, sync, thread, runtime lock).
    Dependency,
}

impl Kind {
    /// Every kind, in output order.
    pub const ALL: [Kind; 10] = [
        Kind::CpuOp,
        Kind::Runtime,
        Kind::Gap,
        Kind::LaunchDelay,
        Kind::Kernel,
        Kind::Memcpy,
        Kind::Communication,
        Kind::KernelGap,
        Kind::SyncWait,
        Kind::Dependency,
    ];

    /// Lower-case name used in output (`by_kind` keys).
    pub fn name(self) -> &'static str {
        match self {
            Kind::CpuOp => "cpu_op",
            Kind::Runtime => "runtime",
            Kind::Gap => "gap",
            Kind::LaunchDelay => "launch_delay",
            Kind::Kernel => "kernel",
            Kind::Memcpy => "memcpy",
            Kind::Communication => "communication",
            Kind::KernelGap => "kernel_gap",
            Kind::SyncWait => "sync_wait",
            Kind::Dependency => "dependency",
        }
    }

    /// HTA's `bound_by` class of this kind (`CriticalPathAnalysis.bound_by`), or "" for
    /// dependencies.
    pub fn hta_bound(self) -> &'static str {
        match self {
            Kind::CpuOp | Kind::Runtime | Kind::Gap | Kind::SyncWait => "cpu_bound",
            Kind::LaunchDelay => "gpu_kernel_launch_overhead",
            Kind::Kernel | Kind::Memcpy => "gpu_compute_bound",
            Kind::Communication => "gpu_communication_bound",
            Kind::KernelGap => "gpu_kernel_kernel_overhead",
            Kind::Dependency => "",
        }
    }

    /// Host-side time (a thread was busy or between ops).
    pub fn is_host(self) -> bool {
        matches!(self, Kind::CpuOp | Kind::Runtime | Kind::Gap)
    }
}

/// One edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    /// Source node.
    pub src: u32,
    /// Destination node.
    pub dst: u32,
    /// Time on the path, ps.
    pub weight: Ps,
    /// What the time was.
    pub kind: Kind,
    /// The event the time is attributed to, or `NO_SLICE`.
    pub event: u32,
}

/// The graph of one step: node times and the edge list, plus scratch for the longest path.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    /// Node time, ps.
    pub ts: Vec<Ps>,
    /// Edges, in any order.
    pub edges: Vec<Edge>,
    /// Edges whose negative weight was raised to 0 (HTA does the same for -1).
    pub negative: u64,
    off: Vec<u32>,
    adj: Vec<u32>,
    indeg: Vec<u32>,
    order: Vec<u32>,
    dist: Vec<Ps>,
    pred: Vec<u32>,
}

/// The longest path found by [`Graph::longest_path`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LongestPath {
    /// Its length, ps.
    pub length: Ps,
    /// Its edges (indexes into [`Graph::edges`]), first to last.
    pub edges: Vec<u32>,
    /// Nodes left out of the topological order because they lie on a cycle (0 for a DAG).
    pub cyclic: usize,
}

impl Graph {
    /// Empties the graph, keeping its allocations.
    pub fn clear(&mut self) {
        self.ts.clear();
        self.edges.clear();
        self.negative = 0;
    }

    /// Adds a node at time `ts`; returns its index.
    #[inline]
    pub fn node(&mut self, ts: Ps) -> u32 {
        self.ts.push(ts);
        (self.ts.len() - 1) as u32
    }

    /// Adds an edge of weight `dst.ts - src.ts` (0 for [`Kind::Dependency`]); a negative
    /// weight is raised to 0 and counted.
    #[inline]
    pub fn edge(&mut self, src: u32, dst: u32, kind: Kind, event: u32) {
        let w = if kind == Kind::Dependency {
            0
        } else {
            self.ts[dst as usize] - self.ts[src as usize]
        };
        self.edge_w(src, dst, w, kind, event);
    }

    /// Adds an edge of weight `w`.
    #[inline]
    pub fn edge_w(&mut self, src: u32, dst: u32, w: Ps, kind: Kind, event: u32) {
        if src == dst {
            return;
        }
        let weight = if w < 0 {
            self.negative += 1;
            0
        } else {
            w
        };
        self.edges.push(Edge {
            src,
            dst,
            weight,
            kind,
            event,
        });
    }

    /// The longest path (by summed weight) of the graph, from any node to any node. Among
    /// equally long paths into a node, the one arriving from the latest source wins; among
    /// equally long paths overall, the one ending latest.
    pub fn longest_path(&mut self) -> LongestPath {
        let n = self.ts.len();
        self.off.clear();
        self.off.resize(n + 1, 0);
        self.indeg.clear();
        self.indeg.resize(n, 0);
        for e in &self.edges {
            self.off[e.src as usize + 1] += 1;
            self.indeg[e.dst as usize] += 1;
        }
        for i in 0..n {
            self.off[i + 1] += self.off[i];
        }
        self.adj.clear();
        self.adj.resize(self.edges.len(), 0);
        // Fill with a moving cursor per node (reuses `pred` as the cursor array).
        self.pred.clear();
        self.pred.extend_from_slice(&self.off[..n]);
        for (k, e) in self.edges.iter().enumerate() {
            let s = e.src as usize;
            self.adj[self.pred[s] as usize] = k as u32;
            self.pred[s] += 1;
        }
        // Kahn's algorithm; `order` doubles as the queue.
        self.order.clear();
        self.order
            .extend((0..n as u32).filter(|&v| self.indeg[v as usize] == 0));
        let mut head = 0;
        while head < self.order.len() {
            let v = self.order[head] as usize;
            head += 1;
            for a in self.off[v]..self.off[v + 1] {
                let d = self.edges[self.adj[a as usize] as usize].dst as usize;
                self.indeg[d] -= 1;
                if self.indeg[d] == 0 {
                    self.order.push(d as u32);
                }
            }
        }
        let cyclic = n - self.order.len();
        self.dist.clear();
        self.dist.resize(n, 0);
        self.pred.clear();
        self.pred.resize(n, NO_SLICE);
        for &v in &self.order {
            let v = v as usize;
            let dv = self.dist[v];
            for a in self.off[v]..self.off[v + 1] {
                let k = self.adj[a as usize];
                let e = &self.edges[k as usize];
                let d = e.dst as usize;
                let cand = dv + e.weight;
                let better = cand > self.dist[d]
                    || (cand == self.dist[d]
                        && (self.pred[d] == NO_SLICE
                            || self.ts[v]
                                > self.ts[self.edges[self.pred[d] as usize].src as usize]));
                if better {
                    self.dist[d] = cand;
                    self.pred[d] = k;
                }
            }
        }
        let mut end = None::<usize>;
        for &v in &self.order {
            let v = v as usize;
            end = match end {
                Some(b)
                    if self.dist[b] > self.dist[v]
                        || (self.dist[b] == self.dist[v] && self.ts[b] >= self.ts[v]) =>
                {
                    Some(b)
                }
                _ => Some(v),
            };
        }
        let mut out = LongestPath {
            cyclic,
            ..LongestPath::default()
        };
        let Some(mut v) = end else {
            return out;
        };
        out.length = self.dist[v];
        while self.pred[v] != NO_SLICE {
            let k = self.pred[v];
            out.edges.push(k);
            v = self.edges[k as usize].src as usize;
        }
        out.edges.reverse();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Longest path length by trying every path from every node (exponential; small graphs).
    fn brute(n: usize, edges: &[(u32, u32, Ps)]) -> Ps {
        fn from(v: u32, edges: &[(u32, u32, Ps)]) -> Ps {
            edges
                .iter()
                .filter(|e| e.0 == v)
                .map(|e| e.2 + from(e.1, edges))
                .max()
                .unwrap_or(0)
        }
        (0..n as u32).map(|v| from(v, edges)).max().unwrap_or(0)
    }

    proptest! {
        #[test]
        fn matches_brute_force_on_random_dags(
            n in 1usize..9,
            raw in proptest::collection::vec((0u32..9, 0u32..9, 0i64..50), 0..20),
        ) {
            let mut g = Graph::default();
            for i in 0..n {
                g.node(i as Ps);
            }
            // Edges only from lower to higher index: a DAG.
            let edges: Vec<(u32, u32, Ps)> = raw
                .into_iter()
                .map(|(a, b, w)| (a % n as u32, b % n as u32, w))
                .filter(|(a, b, _)| a < b)
                .collect();
            for &(a, b, w) in &edges {
                g.edge_w(a, b, w, Kind::CpuOp, NO_SLICE);
            }
            let p = g.longest_path();
            prop_assert_eq!(p.length, brute(n, &edges));
            prop_assert_eq!(p.cyclic, 0);
            // The returned edges chain and sum to the length.
            let sum: Ps = p.edges.iter().map(|&k| g.edges[k as usize].weight).sum();
            prop_assert_eq!(sum, p.length);
            for w in p.edges.windows(2) {
                prop_assert_eq!(g.edges[w[0] as usize].dst, g.edges[w[1] as usize].src);
            }
        }
    }

    #[test]
    fn ties_go_to_the_latest_source_and_cycles_are_counted() {
        let mut g = Graph::default();
        let (a, b, c) = (g.node(0), g.node(5), g.node(10));
        g.edge(a, c, Kind::LaunchDelay, 1);
        g.edge(a, b, Kind::Kernel, 2);
        g.edge(b, c, Kind::KernelGap, 3);
        let p = g.longest_path();
        assert_eq!(p.length, 10);
        assert_eq!(p.edges.len(), 2);
        assert_eq!(g.edges[p.edges[1] as usize].kind, Kind::KernelGap);
        g.edge_w(c, a, 1, Kind::Dependency, NO_SLICE);
        assert_eq!(g.longest_path().cyclic, 3);
        let mut h = Graph::default();
        let (x, y) = (h.node(5), h.node(1));
        h.edge(x, y, Kind::CpuOp, NO_SLICE);
        assert_eq!((h.negative, h.longest_path().length), (1, 0));
    }
}
