//! The iteration annotations serving engines write around each engine step, parsed as
//! TraceLens parses them (`TraceUtils/annotation_utils.py`, `IterationAnnotation`): vLLM
//! `execute_{N}_context_{R_C}(sq…sk…sqsq…sqsk…)_generation_{R_G}(…)` and its native
//! `execute_context_{R_C}({tokens})_generation_{R_G}({tokens})`, SGLang
//! `step[EXTEND|DECODE|MIXED bs=… toks=… c_sq=… …]`, ATOM `prefill[…]` / `decode[…]` and xDiT
//! `execute_diffusion_{bs}_{WxH}`. The detailed forms carry the per-request aggregates the
//! paged-attention roofline needs (Σ N_Q, Σ N_KV, Σ N_Q², Σ N_Q·N_KV for context and generation
//! requests, docs/roofline.md).

use regex::Regex;
use std::sync::LazyLock;

/// Which format an annotation was written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// vLLM with the sq/sk aggregates (TraceLens's patch).
    VllmDetailed,
    /// vLLM's own `execute_context_…_generation_…`.
    VllmNative,
    /// SGLang `step[…]` with the aggregates.
    SglangDetailed,
    /// SGLang `step[MODE bs=… toks=…]`.
    SglangNative,
    /// ATOM `prefill[…]` / `decode[…]` with `sqsq=` / `sqsk=`.
    AtomDetailed,
    /// ATOM without the aggregates.
    AtomNative,
    /// xDiT `execute_diffusion_{bs}_{WxH}`.
    Diffusion,
}

impl Format {
    /// True for the formats tried first when looking for iterations (TraceLens's primary
    /// tier: the detailed vLLM, ATOM and SGLang forms).
    pub fn primary(self) -> bool {
        matches!(
            self,
            Format::VllmDetailed | Format::AtomDetailed | Format::SglangDetailed
        )
    }
}

/// What an iteration runs: TraceLens's `classify_phase`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Context (prefill) requests only.
    Prefill,
    /// Generation (decode) requests only.
    Decode,
    /// Both in one iteration (TraceLens: `prefilldecode`).
    Mixed,
    /// Neither (a diffusion step, or an empty iteration).
    Other,
}

impl Phase {
    /// Lower-case name used in output.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Prefill => "prefill",
            Phase::Decode => "decode",
            Phase::Mixed => "mixed",
            Phase::Other => "other",
        }
    }
}

/// The per-request aggregates of one iteration, split into context (`c_`) and generation
/// (`g_`) requests: Σ N_Q (`sq`), Σ N_KV (`sk`), Σ N_Q² (`sqsq`), Σ N_Q·N_KV (`sqsk`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Aggregates {
    /// Σ N_Q over context requests.
    pub c_sq: u64,
    /// Σ N_KV over context requests.
    pub c_sk: u64,
    /// Σ N_Q² over context requests.
    pub c_sqsq: u64,
    /// Σ N_Q·N_KV over context requests.
    pub c_sqsk: u64,
    /// Σ N_Q over generation requests.
    pub g_sq: u64,
    /// Σ N_KV over generation requests.
    pub g_sk: u64,
    /// Σ N_Q² over generation requests.
    pub g_sqsq: u64,
    /// Σ N_Q·N_KV over generation requests.
    pub g_sqsk: u64,
}

/// One parsed iteration annotation (TraceLens's `IterationAnnotation` fields).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Iteration {
    /// Which format matched.
    pub format: Format,
    /// Context (prefill) requests, R_C.
    pub context_requests: u64,
    /// Generation (decode) requests, R_G.
    pub generation_requests: u64,
    /// Tokens of the context requests.
    pub context_tokens: u64,
    /// Tokens of the generation requests.
    pub generation_tokens: u64,
    /// Batch size as TraceLens reports it (tokens in the batch, where known).
    pub batch_size: u64,
    /// The aggregates (zero where the format has none).
    pub agg: Aggregates,
    /// The format carries the sq/sk aggregates (the paged-attention roofline needs them).
    pub has_sqsk: bool,
    /// Diffusion resolution (`1024x1024`).
    pub resolution: Option<String>,
}

impl Iteration {
    /// R_C + R_G.
    pub fn requests(&self) -> u64 {
        self.context_requests + self.generation_requests
    }

    /// Prefill, decode, mixed or other.
    pub fn phase(&self) -> Phase {
        match (self.context_requests > 0, self.generation_requests > 0) {
            (true, true) => Phase::Mixed,
            (true, false) => Phase::Prefill,
            (false, true) => Phase::Decode,
            (false, false) => Phase::Other,
        }
    }

    fn new(format: Format) -> Iteration {
        Iteration {
            format,
            context_requests: 0,
            generation_requests: 0,
            context_tokens: 0,
            generation_tokens: 0,
            batch_size: 1,
            agg: Aggregates::default(),
            has_sqsk: false,
            resolution: None,
        }
    }
}

fn re(p: &str) -> Option<Regex> {
    Regex::new(p).ok()
}

static VLLM_DETAILED: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        r"^execute_(\d+)_context_(\d+)\(sq(\d+)sk(\d+)sqsq(\d+)sqsk(\d+)\)_generation_(\d+)\(sq(\d+)sk(\d+)sqsq(\d+)sqsk(\d+)\)",
    )
});
static VLLM_NATIVE: LazyLock<Option<Regex>> =
    LazyLock::new(|| re(r"^execute_context_(\d+)\((\d+)\)_generation_(\d+)\((\d+)\)"));
static SGLANG_DETAILED: LazyLock<Option<Regex>> =
    LazyLock::new(|| re(r"^step\[(?:EXTEND|DECODE|MIXED)\b[^\]]*sqsq=\d+[^\]]*\]"));
static SGLANG_NATIVE: LazyLock<Option<Regex>> =
    LazyLock::new(|| re(r"^step\[(\w+)\s+bs=(\d+)(?:\s+toks=(\d+))?\]"));
static SGLANG_ANY: LazyLock<Option<Regex>> =
    LazyLock::new(|| re(r"^step\[(?:EXTEND|DECODE|MIXED)\b.*\]"));
static ATOM: LazyLock<Option<Regex>> = LazyLock::new(|| re(r"^(prefill|decode)\[(.*)\]"));
static ATOM_KV: LazyLock<Option<Regex>> =
    LazyLock::new(|| re(r"(\w+)=(\[[^\]]*\](?:\.\.\.\+\d+)?|\S+)"));
static KV_INT: LazyLock<Option<Regex>> = LazyLock::new(|| re(r"(\w+)=(\d+)"));
static DIFFUSION: LazyLock<Option<Regex>> =
    LazyLock::new(|| re(r"^execute_diffusion_(\d+)_(\d+x\d+)"));

fn int(s: Option<&str>) -> u64 {
    s.and_then(|s| s.parse().ok()).unwrap_or(0)
}

/// The first integer in `s` (`117/128` → 117: a CUDA-graph padded batch).
fn first_int(s: &str) -> u64 {
    let d: String = s
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(char::is_ascii_digit)
        .collect();
    d.parse().unwrap_or(0)
}

fn vllm_detailed(name: &str) -> Option<Iteration> {
    let m = VLLM_DETAILED.as_ref()?.captures(name)?;
    let g = |i: usize| int(m.get(i).map(|x| x.as_str()));
    let mut it = Iteration::new(Format::VllmDetailed);
    it.context_requests = g(2);
    it.agg = Aggregates {
        c_sq: g(3),
        c_sk: g(4),
        c_sqsq: g(5),
        c_sqsk: g(6),
        g_sq: g(8),
        g_sk: g(9),
        g_sqsq: g(10),
        g_sqsk: g(11),
    };
    it.generation_requests = g(7);
    it.context_tokens = it.agg.c_sq;
    it.generation_tokens = it.agg.g_sq;
    it.batch_size = it.agg.c_sq + it.agg.g_sq;
    it.has_sqsk = true;
    Some(it)
}

fn vllm_native(name: &str) -> Option<Iteration> {
    let m = VLLM_NATIVE.as_ref()?.captures(name)?;
    let g = |i: usize| int(m.get(i).map(|x| x.as_str()));
    let mut it = Iteration::new(Format::VllmNative);
    it.context_requests = g(1);
    it.context_tokens = g(2);
    it.generation_requests = g(3);
    it.generation_tokens = g(4);
    it.agg.c_sq = it.context_tokens;
    it.agg.g_sq = it.generation_tokens;
    it.batch_size = it.agg.c_sq + it.agg.g_sq;
    Some(it)
}

fn sglang_detailed(name: &str) -> Option<Iteration> {
    if !SGLANG_DETAILED.as_ref()?.is_match(name) {
        return None;
    }
    let body = &name[name.find('[')? + 1..name.rfind(']')?];
    let mode = body.split_whitespace().next().unwrap_or("");
    let kv: Vec<(&str, &str)> = KV_INT
        .as_ref()?
        .captures_iter(body)
        .filter_map(|c| Some((c.get(1)?.as_str(), c.get(2)?.as_str())))
        .collect();
    // Python's dict keeps the last value of a repeated key.
    let get = |k: &str| int(kv.iter().rev().find(|(key, _)| *key == k).map(|x| x.1));
    let mut it = Iteration::new(Format::SglangDetailed);
    let (bs, toks) = (get("bs"), get("toks"));
    it.agg = Aggregates {
        c_sq: get("c_sq"),
        c_sk: get("c_sk"),
        c_sqsq: get("c_sqsq"),
        c_sqsk: get("c_sqsk"),
        g_sq: get("g_sq"),
        g_sk: get("g_sk"),
        g_sqsq: get("g_sqsq"),
        g_sqsk: get("g_sqsk"),
    };
    match mode {
        "DECODE" => {
            it.generation_requests = bs;
            it.generation_tokens = it.agg.g_sq;
        }
        "EXTEND" => {
            it.context_requests = bs;
            it.context_tokens = it.agg.c_sq;
        }
        _ => {
            it.context_requests = get("c");
            it.generation_requests = get("g");
            it.context_tokens = it.agg.c_sq;
            it.generation_tokens = it.agg.g_sq;
        }
    }
    it.batch_size = [it.agg.c_sq + it.agg.g_sq, toks, bs]
        .into_iter()
        .find(|&v| v != 0)
        .unwrap_or(0);
    it.has_sqsk = true;
    Some(it)
}

fn sglang_native(name: &str) -> Option<Iteration> {
    if !SGLANG_ANY.as_ref()?.is_match(name) {
        return None;
    }
    let m = SGLANG_NATIVE.as_ref()?.captures(name)?;
    let kind = m.get(1)?.as_str();
    let bs = int(m.get(2).map(|x| x.as_str()));
    let toks = int(m.get(3).map(|x| x.as_str()));
    let mut it = Iteration::new(Format::SglangNative);
    if kind == "DECODE" {
        it.generation_requests = bs;
        it.generation_tokens = bs;
        it.agg.g_sq = bs;
    } else {
        it.context_requests = bs;
        it.context_tokens = toks;
        it.agg.c_sq = toks;
    }
    let sum = it.agg.c_sq + it.agg.g_sq;
    it.batch_size = if sum != 0 { sum } else { bs };
    Some(it)
}

fn atom(name: &str) -> Option<Iteration> {
    let m = ATOM.as_ref()?.captures(name)?;
    let (phase, body) = (m.get(1)?.as_str(), m.get(2)?.as_str());
    let kv: Vec<(&str, &str)> = ATOM_KV
        .as_ref()?
        .captures_iter(body)
        .filter_map(|c| Some((c.get(1)?.as_str(), c.get(2)?.as_str())))
        .collect();
    let raw = |k: &str| kv.iter().rev().find(|(key, _)| *key == k).map(|x| x.1);
    let get = |k: &str| int(raw(k));
    let detailed = raw("sqsq").is_some() && raw("sqsk").is_some();
    let mut it = Iteration::new(if detailed {
        Format::AtomDetailed
    } else {
        Format::AtomNative
    });
    let bs = raw("bs").map_or(0, first_int);
    let tokens = get("tok");
    let (sk, sqsq, sqsk) = (get("sk"), get("sqsq"), get("sqsk"));
    if phase == "prefill" {
        it.context_requests = bs;
        it.context_tokens = tokens;
        it.agg.c_sq = tokens;
        it.agg.c_sk = sk;
        it.agg.c_sqsq = sqsq;
        it.agg.c_sqsk = sqsk;
    } else {
        it.generation_requests = bs;
        it.generation_tokens = tokens;
        it.agg.g_sq = tokens;
        it.agg.g_sk = sk;
        it.agg.g_sqsq = sqsq;
        it.agg.g_sqsk = sqsk;
    }
    it.batch_size = tokens;
    it.has_sqsk = detailed;
    Some(it)
}

fn diffusion(name: &str) -> Option<Iteration> {
    let m = DIFFUSION.as_ref()?.captures(name)?;
    let mut it = Iteration::new(Format::Diffusion);
    it.batch_size = int(m.get(1).map(|x| x.as_str()));
    it.resolution = m.get(2).map(|x| x.as_str().to_string());
    Some(it)
}

/// Parses an iteration annotation; formats are tried in TraceLens's order (each detailed form
/// before its native one), the first that parses wins. `None`: not an iteration annotation.
pub fn parse(name: &str) -> Option<Iteration> {
    // Cheap prefilter: every format starts with one of these.
    if !(name.starts_with("execute_")
        || name.starts_with("step[")
        || name.starts_with("prefill[")
        || name.starts_with("decode["))
    {
        return None;
    }
    vllm_detailed(name)
        .or_else(|| vllm_native(name))
        .or_else(|| sglang_detailed(name))
        .or_else(|| sglang_native(name))
        .or_else(|| atom(name))
        .or_else(|| diffusion(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vllm_detailed_and_native() {
        let it = parse("execute_6147_context_2(sq6144sk7144sqsq20971520sqsk23019520)_generation_3(sq3sk6144sqsq3sqsk6144)").unwrap();
        assert_eq!(it.format, Format::VllmDetailed);
        assert_eq!((it.context_requests, it.generation_requests), (2, 3));
        assert_eq!(
            it.agg,
            Aggregates {
                c_sq: 6144,
                c_sk: 7144,
                c_sqsq: 20971520,
                c_sqsk: 23019520,
                g_sq: 3,
                g_sk: 6144,
                g_sqsq: 3,
                g_sqsk: 6144
            }
        );
        assert_eq!(it.batch_size, 6147);
        assert_eq!(it.phase(), Phase::Mixed);
        assert!(it.has_sqsk);
        let it = parse("execute_context_0(0)_generation_64(64)").unwrap();
        assert_eq!(it.format, Format::VllmNative);
        assert_eq!((it.generation_requests, it.generation_tokens), (64, 64));
        assert_eq!(it.phase(), Phase::Decode);
        assert!(!it.has_sqsk);
    }

    #[test]
    fn sglang_forms() {
        let it = parse("step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 g_sk=12 g_sqsq=1 g_sqsk=12]").unwrap();
        assert_eq!(it.format, Format::SglangDetailed);
        assert_eq!((it.context_requests, it.generation_requests), (1, 1));
        assert_eq!(it.agg.c_sqsk, 40);
        assert_eq!(it.batch_size, 6);
        let it = parse("step[DECODE bs=64 g_sq=128 g_sqsq=256 g_sqsk=262144 g_sk=131072]").unwrap();
        assert_eq!(it.generation_requests, 64);
        assert_eq!(it.generation_tokens, 128);
        assert_eq!(it.phase(), Phase::Decode);
        let it = parse("step[EXTEND bs=15 toks=15360]").unwrap();
        assert_eq!(it.format, Format::SglangNative);
        assert_eq!((it.context_requests, it.context_tokens), (15, 15360));
        assert_eq!(it.batch_size, 15360);
        let it = parse("step[DECODE bs=32]").unwrap();
        assert_eq!((it.generation_requests, it.batch_size), (32, 32));
        // MIXED with neither toks nor aggregates: bs is the only count.
        let it = parse("step[MIXED bs=2]").unwrap();
        assert_eq!((it.context_requests, it.batch_size), (2, 2));
    }

    #[test]
    fn atom_forms() {
        let it = parse("prefill[bs=6 tok=17408 ctx=[4096, 4096, 4096]...+3]").unwrap();
        assert_eq!(it.format, Format::AtomNative);
        assert_eq!((it.context_requests, it.context_tokens), (6, 17408));
        let it = parse("decode[bs=117/128 tok=117 d=117]").unwrap();
        assert_eq!(it.generation_requests, 117);
        let it = parse("decode[bs=128 tok=384 p=2 d=126 sqsq=132612 sqsk=1114112 sk=258048 tbo=1]")
            .unwrap();
        assert_eq!(it.format, Format::AtomDetailed);
        assert_eq!(
            (it.agg.g_sq, it.agg.g_sk, it.agg.g_sqsq, it.agg.g_sqsk),
            (384, 258048, 132612, 1114112)
        );
        assert_eq!(it.batch_size, 384);
    }

    #[test]
    fn diffusion_and_others() {
        let it = parse("execute_diffusion_1_1024x1024").unwrap();
        assert_eq!(it.format, Format::Diffusion);
        assert_eq!(it.resolution.as_deref(), Some("1024x1024"));
        assert_eq!(it.phase(), Phase::Other);
        assert!(parse("ProfilerStep#3").is_none());
        assert!(parse("execute_model").is_none());
        assert!(parse("step[WARMUP]").is_none());
        assert!(parse("capture_32_FULL").is_none());
    }
}
