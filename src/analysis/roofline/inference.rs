//! What the serving ops' models need beyond the op's own recorded inputs: the enclosing
//! serving iteration of a paged-attention call ([`super::paged_attention`]) and the kernels and
//! `TopK` op under a MoE call ([`super::moe`]). Each call gets a context key; calls with equal
//! inputs and key share a row.

use super::cost::{Cost, Why};
use super::shapes::OpInputs;
use super::{moe, paged_attention};
use crate::analysis::serving::annotation;
use crate::analysis::steps::serving;
use crate::model::{ArgValue, Capture, Category, NO_SLICE, Ps, StrId};
use rustc_hash::FxHashMap;

/// A serving op's model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Serving {
    /// Paged attention over the iteration's requests.
    Paged(paged_attention::Layout),
    /// A mixture-of-experts layer.
    Moe(moe::Kind),
}

/// The serving model of an op name, if it has one.
pub fn lookup(name: &str) -> Option<Serving> {
    paged_attention::layout(name)
        .map(Serving::Paged)
        .or_else(|| moe::kind(name).map(Serving::Moe))
}

/// Context lookups over one capture (built on first use).
pub struct Context<'a> {
    c: &'a Capture,
    /// Iterations (start, end, annotation name), in time order.
    iters: Option<Vec<(Ps, Ps, StrId)>>,
    kernel_by_corr: Option<FxHashMap<u64, u32>>,
}

impl<'a> Context<'a> {
    /// No lookups done yet.
    pub fn new(c: &'a Capture) -> Context<'a> {
        Context {
            c,
            iters: None,
            kernel_by_corr: None,
        }
    }

    /// The iteration annotation whose window holds `t`.
    fn iteration_at(&mut self, t: Ps) -> Option<StrId> {
        let c = self.c;
        let iters = self.iters.get_or_insert_with(|| {
            serving::iterations(c)
                .list
                .iter()
                .map(|s| (s.start, s.end, s.name))
                .collect()
        });
        let k = iters.partition_point(|x| x.0 <= t).checked_sub(1)?;
        let x = iters.get(k)?;
        (t < x.1).then_some(x.2)
    }

    /// The kernel name a launch starts: its `kernel` arg (a capture-time launch records it),
    /// else the kernel with its correlation id.
    fn kernel_name(&mut self, launch: usize) -> Option<&'a str> {
        let c = self.c;
        let s = &c.slices;
        if let Some(k) = c.strings.lookup("kernel")
            && let Some(ArgValue::Str(v)) = c.args.get(s.args[launch], k, &c.strings)
        {
            return Some(c.strings.get(v));
        }
        let corr = s.corr(launch);
        if corr == 0 {
            return None;
        }
        let map = self.kernel_by_corr.get_or_insert_with(|| {
            let mut m = FxHashMap::default();
            for i in 0..s.len() {
                if s.kind(i) == Category::Kernel && s.corr(i) != 0 {
                    m.entry(s.corr(i)).or_insert(i as u32);
                }
            }
            m
        });
        map.get(&corr).map(|&k| c.strings.get(s.name[k as usize]))
    }

    /// What the kernels and child ops of MoE call `i` say.
    fn moe_launched(&mut self, i: usize) -> moe::Launched {
        let c = self.c;
        let s = &c.slices;
        let end = s.end(i);
        let mut out = moe::Launched {
            topk: None,
            up: None,
            down: None,
        };
        let mut ogs = 0;
        let track_end = c
            .tracks
            .iter()
            .find(|t| (t.slices.0 as usize..t.slices.1 as usize).contains(&i))
            .map_or(i + 1, |t| t.slices.1 as usize);
        for j in i + 1..track_end {
            if s.start[j] >= end {
                break;
            }
            if !descends_from(c, j, i) {
                continue;
            }
            let kind = s.kind(j);
            if kind == Category::CpuOp && out.topk.is_none() {
                let name = c.strings.get(s.name[j]);
                if name.contains("TopK") {
                    out.topk = concrete(c, j, 1).and_then(|v| v.parse().ok());
                }
            } else if kind == Category::Runtime
                && let Some(k) = self.kernel_name(j)
                && k.to_ascii_lowercase().contains("matmul_ogs")
            {
                let l = k.to_ascii_lowercase();
                let w = moe::Weights::of_kernel(k);
                if ogs == 0 {
                    out.up = Some((l.contains("_swiglu") || l.contains("_glu"), w));
                } else if ogs == 1 {
                    out.down = Some(w);
                }
                ogs += 1;
            }
        }
        out
    }

    /// The context key of call `i` of a serving op (0: no context found).
    pub fn key(&mut self, m: Serving, i: usize) -> u64 {
        match m {
            Serving::Paged(_) => self
                .iteration_at(self.c.slices.start[i])
                .map_or(0, |n| u64::from(n.0) + 1),
            Serving::Moe(_) => self.moe_launched(i).key(),
        }
    }

    /// FLOPs and bytes of a call with inputs `a` and context key `key`, and the context for
    /// people (the iteration annotation; the MoE's top-k, gating and weights).
    pub fn cost(
        &mut self,
        m: Serving,
        i: usize,
        a: &OpInputs,
        key: u64,
    ) -> (Result<Cost, Why>, String) {
        match m {
            Serving::Paged(l) => {
                let name = key
                    .checked_sub(1)
                    .and_then(|k| u32::try_from(k).ok())
                    .map(|k| self.c.strings.get(StrId(k)));
                let it = name.and_then(annotation::parse);
                let what = name.map_or_else(String::new, |n| format!("iteration {n}"));
                (paged_attention::cost(l, a, it.as_ref()), what)
            }
            Serving::Moe(k) => {
                let l = self.moe_launched(i);
                (moe::cost(k, a, &l), l.describe())
            }
        }
    }
}

/// True when `j` lies under `i` (parent chain, at most 256 levels).
fn descends_from(c: &Capture, j: usize, i: usize) -> bool {
    let mut p = c.slices.parent[j];
    for _ in 0..256 {
        if p == NO_SLICE {
            return false;
        }
        if p as usize == i {
            return true;
        }
        p = c.slices.parent[p as usize];
    }
    false
}

/// Concrete input `k` of slice `j`, as text.
fn concrete(c: &Capture, j: usize, k: usize) -> Option<String> {
    let key = c.strings.lookup("Concrete Inputs")?;
    let v = c.args.get(c.slices.args[j], key, &c.strings)?;
    let text = match v {
        ArgValue::Str(s) | ArgValue::Json(s) => c.strings.get(s),
        _ => return None,
    };
    let a = OpInputs::parse(None, None, Some(text));
    Some(a.concrete(k).to_string())
}

/// The cost of one call (slice `i`) of a serving op, device time or not (a capture-time call,
/// a call inside a graph) and the context for people; `None` when the op has no serving model.
pub fn cost_call(c: &Capture, i: usize) -> Option<(Result<Cost, Why>, String)> {
    let name = c.strings.get(*c.slices.name.get(i)?);
    let m = lookup(name)?;
    let arg = |k: &str| {
        let key = c.strings.lookup(k)?;
        match c.args.get(c.slices.args[i], key, &c.strings)? {
            ArgValue::Str(s) | ArgValue::Json(s) => Some(c.strings.get(s)),
            _ => None,
        }
    };
    let a = OpInputs::parse(arg("Input Dims"), arg("Input type"), arg("Concrete Inputs"));
    let mut cx = Context::new(c);
    let key = cx.key(m, i);
    Some(cx.cost(m, i, &a, key))
}
