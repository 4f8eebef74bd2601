//! The capture folder's index (`execution_details.json`: `[{file, batch_size, mode}]`) and the
//! batch size of a serving iteration from its annotation (TraceLens's `annotation_utils.py`).

use regex::Regex;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// The index file a capture folder holds.
pub const DETAILS_FILE: &str = "execution_details.json";

/// One captured graph as `execution_details.json` lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureEntry {
    /// The capture trace.
    pub file: PathBuf,
    /// Batch size it was captured for.
    pub batch_size: u64,
    /// `FULL` or `PIECEWISE`.
    pub mode: String,
}

/// Reads `dir/execution_details.json`: the valid entries, and one message per entry skipped.
pub fn read_details(dir: &Path) -> Result<(Vec<CaptureEntry>, Vec<String>), String> {
    let path = dir.join(DETAILS_FILE);
    let text = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let v: serde_json::Value =
        serde_json::from_slice(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let list = v
        .as_array()
        .ok_or_else(|| format!("{}: not a JSON array", path.display()))?;
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for (i, e) in list.iter().enumerate() {
        let file = e.get("file").and_then(|f| f.as_str());
        let bs = e.get("batch_size").and_then(|b| b.as_u64());
        let mode = e.get("mode").and_then(|m| m.as_str());
        match (file, bs, mode) {
            (Some(f), Some(b), Some(m)) if m == "FULL" || m == "PIECEWISE" => {
                out.push(CaptureEntry {
                    file: dir.join(f),
                    batch_size: b,
                    mode: m.to_string(),
                })
            }
            _ => skipped.push(format!(
                "{} entry #{i}: needs file, an integer batch_size and mode FULL or PIECEWISE",
                path.display()
            )),
        }
    }
    Ok((out, skipped))
}

/// The entry for an iteration of `batch_size` that ran `graphs` graph launches: the smallest
/// captured batch size ≥ it (graphs are captured for padded sizes); of its modes, PIECEWISE
/// when the iteration ran several graphs and FULL when one (either when only one exists).
/// `Err` names the nearest sizes there are.
pub fn pick(
    entries: &[CaptureEntry],
    batch_size: u64,
    graphs: usize,
) -> Result<&CaptureEntry, String> {
    let Some(bs) = entries
        .iter()
        .map(|e| e.batch_size)
        .filter(|&b| b >= batch_size)
        .min()
    else {
        let mut sizes: Vec<u64> = entries.iter().map(|e| e.batch_size).collect();
        sizes.sort_unstable();
        sizes.dedup();
        return Err(format!(
            "no graph captured for batch size {batch_size} or more (captured: {sizes:?})"
        ));
    };
    let of = |m: &str| entries.iter().find(|e| e.batch_size == bs && e.mode == m);
    let (full, piece) = (of("FULL"), of("PIECEWISE"));
    match (full, piece) {
        (Some(f), Some(p)) => Ok(if graphs == 1 { f } else { p }),
        (Some(e), None) | (None, Some(e)) => Ok(e),
        (None, None) => Err(format!("no capture for batch size {bs}")),
    }
}

static VLLM_DETAILED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^execute_\d+_context_\d+\(sq(\d+)sk\d+sqsq\d+sqsk\d+\)_generation_\d+\(sq(\d+)sk\d+sqsq\d+sqsk\d+\)")
        .expect("static regex")
});
static VLLM_NATIVE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^execute_context_\d+\((\d+)\)_generation_\d+\((\d+)\)").expect("static regex")
});
static SGLANG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^step\[(EXTEND|DECODE|MIXED)\b([^\]]*)\]").expect("static regex")
});
static ATOM: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(prefill|decode)\[(.*)\]").expect("static regex"));
static DIFFUSION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^execute_diffusion_(\d+)_\d+x\d+").expect("static regex"));
static KV: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(\w+)=(\d+)").expect("static regex"));

/// A serving iteration's annotation, recognised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Iteration {
    /// Batch size in tokens as TraceLens counts it (context + generation query tokens).
    pub batch_size: u64,
    /// True for the detailed annotation variants, which TraceLens prefers when a trace has any.
    pub detailed: bool,
}

/// The iteration an annotation names (vLLM `execute_…`, SGLang `step[…]`, ATOM
/// `prefill[…]`/`decode[…]`, xDiT `execute_diffusion_…`), with its batch size.
pub fn iteration(name: &str) -> Option<Iteration> {
    let num = |s: Option<regex::Match>| s.and_then(|m| m.as_str().parse::<u64>().ok()).unwrap_or(0);
    if let Some(c) = VLLM_DETAILED.captures(name) {
        return Some(Iteration {
            batch_size: num(c.get(1)) + num(c.get(2)),
            detailed: true,
        });
    }
    if let Some(c) = VLLM_NATIVE.captures(name) {
        return Some(Iteration {
            batch_size: num(c.get(1)) + num(c.get(2)),
            detailed: false,
        });
    }
    if let Some(c) = SGLANG.captures(name) {
        let body = c.get(2).map_or("", |m| m.as_str());
        let kv = |k: &str| {
            KV.captures_iter(body)
                .find(|c| &c[1] == k)
                .and_then(|c| c[2].parse::<u64>().ok())
                .unwrap_or(0)
        };
        let detailed = body.contains("sqsq=");
        let (bs, toks) = (kv("bs"), kv("toks"));
        let batch_size = if detailed {
            match kv("c_sq") + kv("g_sq") {
                0 if toks > 0 => toks,
                0 => bs,
                n => n,
            }
        } else if &c[1] == "DECODE" {
            bs
        } else if toks > 0 {
            toks
        } else {
            bs
        };
        return Some(Iteration {
            batch_size,
            detailed,
        });
    }
    if let Some(c) = ATOM.captures(name) {
        let body = c.get(2).map_or("", |m| m.as_str());
        let tok = KV
            .captures_iter(body)
            .find(|c| &c[1] == "tok")
            .and_then(|c| c[2].parse::<u64>().ok())
            .unwrap_or(0);
        return Some(Iteration {
            batch_size: tok,
            detailed: body.contains("sqsq="),
        });
    }
    DIFFUSION.captures(name).map(|c| Iteration {
        batch_size: num(c.get(1)),
        detailed: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_sizes_of_annotations() {
        let bs = |n: &str| iteration(n).map(|i| (i.batch_size, i.detailed));
        assert_eq!(
            bs("execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)"),
            Some((32, true))
        );
        assert_eq!(
            bs("execute_context_2(6144)_generation_3(3)"),
            Some((6147, false))
        );
        assert_eq!(bs("step[DECODE bs=64]"), Some((64, false)));
        assert_eq!(bs("step[EXTEND bs=2 toks=14721]"), Some((14721, false)));
        assert_eq!(
            bs("step[DECODE bs=64 g_sq=128 g_sqsq=256 g_sqsk=262144 g_sk=131072]"),
            Some((128, true))
        );
        assert_eq!(bs("decode[bs=117/128 tok=117 d=117]"), Some((117, false)));
        assert_eq!(bs("execute_diffusion_1_1024x1024"), Some((1, false)));
        assert_eq!(bs("aten::mm"), None);
    }

    #[test]
    fn pick_rounds_up_and_chooses_the_mode() {
        let e = |b, m: &str| CaptureEntry {
            file: PathBuf::from(format!("{b}{m}")),
            batch_size: b,
            mode: m.into(),
        };
        let entries = [e(8, "FULL"), e(32, "FULL"), e(32, "PIECEWISE")];
        assert_eq!(pick(&entries, 5, 1).map(|e| e.batch_size), Ok(8));
        assert_eq!(pick(&entries, 20, 1).map(|e| e.mode.as_str()), Ok("FULL"));
        assert_eq!(
            pick(&entries, 20, 3).map(|e| e.mode.as_str()),
            Ok("PIECEWISE")
        );
        assert!(pick(&entries, 33, 1).unwrap_err().contains("[8, 32]"));
    }
}
