//! `tracetui roofline` on the real H200 capture (tests/fixtures/torch_gpu, see its
//! PROVENANCE.md): FLOPs per call by hand, device time per row against a brute-force walk of
//! the raw JSON (kernels whose launch lies inside a call of the op on its thread), the time
//! accounting and the order.

use flate2::read::GzDecoder;
use serde_json::Value;
use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

fn capture() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/torch_gpu/worker0.1795774111709892780.pt.trace.json.gz")
        .to_string_lossy()
        .into_owned()
}

mod common;

fn tracetui(args: &[&str]) -> String {
    let (code, out, err) = common::run_cli(args);
    assert_eq!(code, 0, "{err}");
    out
}

fn roofline() -> Value {
    let v: Value =
        serde_json::from_str(&tracetui(&["roofline", &capture(), "--json"])).expect("json");
    v["captures"][0].clone()
}

/// µs with three decimals → ns, exactly.
fn ns(v: &Value) -> i64 {
    (v.as_f64().expect("number") * 1000.0).round() as i64
}

/// Σ kernel ns per (op name, Input Dims) over calls of the op, brute force: a kernel counts
/// for a call when its launch (runtime or driver call, same correlation id) is on the call's
/// thread inside it.
fn brute_force(names: &[&str]) -> HashMap<(String, String), i64> {
    let raw = std::fs::read(capture()).expect("read");
    let mut s = String::new();
    GzDecoder::new(&raw[..])
        .read_to_string(&mut s)
        .expect("gunzip");
    let v: Value = serde_json::from_str(&s).expect("json");
    let ev = v["traceEvents"].as_array().expect("events");
    let mut launch: HashMap<i64, (i64, i64)> = HashMap::new(); // corr → (tid, ts ns)
    for e in ev {
        if (e["cat"] == "cuda_runtime" || e["cat"] == "cuda_driver")
            && let Some(c) = e["args"]["correlation"].as_i64()
        {
            launch.insert(c, (e["tid"].as_i64().unwrap_or(-1), ns(&e["ts"])));
        }
    }
    let kernels: Vec<(i64, i64, i64)> = ev
        .iter()
        .filter(|e| {
            matches!(
                e["cat"].as_str(),
                Some("kernel" | "gpu_memcpy" | "gpu_memset")
            )
        })
        .filter_map(|e| {
            let c = e["args"]["correlation"].as_i64()?;
            let (tid, ts) = *launch.get(&c)?;
            Some((tid, ts, ns(&e["dur"])))
        })
        .collect();
    let mut out = HashMap::new();
    for e in ev {
        let name = e["name"].as_str().unwrap_or("");
        if e["cat"] != "cpu_op" || !names.contains(&name) {
            continue;
        }
        let (tid, a) = (e["tid"].as_i64().unwrap_or(-2), ns(&e["ts"]));
        let b = a + ns(&e["dur"]);
        let dims = serde_json::to_string(&e["args"]["Input Dims"]).expect("dims");
        let d: i64 = kernels
            .iter()
            .filter(|k| k.0 == tid && k.1 >= a && k.1 <= b)
            .map(|k| k.2)
            .sum();
        *out.entry((name.to_string(), dims)).or_insert(0) += d;
    }
    out
}

#[test]
fn gemm_and_attention_rows_match_hand_formulas_and_brute_force_device_time() {
    let r = roofline();
    assert_eq!(r["device"]["name"], "NVIDIA H200");
    assert_eq!(r["device"]["peaks"]["mem_tbps"], 4.8);
    let rows = r["rows"].as_array().expect("rows");
    let find = |name: &str, dims: &str| {
        rows.iter()
            .find(|x| x["name"] == name && x["input_dims"] == dims)
            .unwrap_or_else(|| panic!("no row {name} {dims}"))
    };
    let mm = find("aten::mm", "[[512,384],[384,128]]");
    assert_eq!(mm["flops"], 2.0 * 512.0 * 128.0 * 384.0);
    assert_eq!(
        mm["bytes"],
        ((512 * 384 + 384 * 128 + 512 * 128) * 4) as f64
    );
    assert_eq!(
        (mm["dtype"].as_str(), mm["precision"].as_str()),
        (Some("float"), Some("fp32"))
    );
    let addmm = find("aten::addmm", "[[128],[512,128],[128,128],[],[]]");
    assert_eq!(addmm["flops"], (2 * 512 * 128 * 128 + 512 * 128) as f64);
    let sdpa = find(
        "aten::_scaled_dot_product_efficient_attention",
        "[[16,4,32,32],[16,4,32,32],[16,4,32,32],[],[],[],[],[]]",
    );
    assert_eq!(sdpa["flops"], 4.0 * 16.0 * 4.0 * 32.0 * 32.0 * 32.0);
    let ln = find("aten::layer_norm", "[[16,32,128],[],[128],[128],[],[]]");
    assert_eq!(ln["family"], "norm");
    // Device time: the brute-force walk of the raw JSON, for ops no other modelled op encloses.
    let bf = brute_force(&[
        "aten::mm",
        "aten::addmm",
        "aten::_scaled_dot_product_efficient_attention",
        "aten::_scaled_dot_product_efficient_attention_backward",
    ]);
    let mut checked = 0;
    for x in rows
        .iter()
        .filter(|x| x["family"] == "gemm" || x["family"] == "attention")
    {
        let key = (
            x["name"].as_str().unwrap_or("").to_string(),
            x["input_dims"].as_str().unwrap_or("").to_string(),
        );
        let want = bf
            .get(&key)
            .unwrap_or_else(|| panic!("no brute force for {key:?}"));
        assert_eq!(x["device_ns"].as_i64(), Some(*want), "{key:?}");
        checked += 1;
    }
    assert!(checked >= 15, "{checked}");
    // Achieved figures.
    let (f, c, d) = (
        mm["flops"].as_f64().unwrap(),
        mm["count"].as_f64().unwrap(),
        mm["device_ns"].as_f64().unwrap(),
    );
    assert!((mm["tflops"].as_f64().unwrap() - f * c / d / 1e3).abs() < 1e-9);
    assert_eq!(mm["bound"], "compute");
    let pct = 100.0 * (f * c / 67e12 * 1e9) / d;
    assert!((mm["peak_pct"].as_f64().unwrap() - pct).abs() < 1e-6 * pct);
}

#[test]
fn time_is_accounted_for_and_rows_sort_by_time_saved() {
    let r = roofline();
    let total = r["total_device_ns"].as_i64().unwrap();
    let (m, u) = (
        r["modelled_device_ns"].as_i64().unwrap(),
        r["unmodelled_device_ns"].as_i64().unwrap(),
    );
    // Rounding to ns per row may differ from rounding the sum by a few ns.
    assert!(
        (m + u - total).abs() <= r["rows"].as_array().unwrap().len() as i64,
        "{m} + {u} vs {total}"
    );
    assert!(u > 0 && r["unmodelled_top"].as_array().unwrap().len() == 5);
    let top: i64 = r["unmodelled_top"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["device_ns"].as_i64().unwrap())
        .sum();
    assert!(top <= u);
    let saved: Vec<f64> = r["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["saved_ns"].as_f64().unwrap())
        .collect();
    assert!(saved.windows(2).all(|w| w[0] >= w[1]));
    // linear / matmul defer to the addmm / mm inside them.
    assert!(
        r["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|x| x["name"] != "aten::linear" && x["name"] != "aten::matmul")
    );
    assert!(r["nested_calls"].as_u64().unwrap() > 0);
    let text = tracetui(&["roofline", &capture()]);
    assert!(
        text.contains("of device time") && text.contains("not modelled: top 5:"),
        "{text}"
    );
    assert!(text.contains("device NVIDIA H200"));
}

#[test]
fn xplane_gpu_ops_costed_from_the_hlo_protos_as_xprof() {
    // The H200 JAX capture: its GPU plane names the device; its HLO ops carry no cost stats, so
    // FLOPs and bytes come from the HLO modules of /host:metadata. Expected figures: XProf
    // 2.24.2's own op_profile of the same capture (docs/oracle/xprof_roofline.py): per op its
    // rawFlops and rawBytesAccessedArray[0] over its 4 occurrences.
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/xplane/h200_jax_gpu_attn.xplane.pb.gz");
    let v: Value = serde_json::from_str(&tracetui(&["roofline", &p.to_string_lossy(), "--json"]))
        .expect("json");
    let r = &v["captures"][0];
    assert_eq!(r["device"]["name"], "NVIDIA H200");
    assert_eq!(r["device"]["source"], "xplane");
    assert_eq!(
        (
            r["device"]["sms"].as_i64(),
            r["device"]["compute_capability"].as_str()
        ),
        (Some(132), Some("9.0"))
    );
    let rows = r["rows"].as_array().expect("rows");
    let mut got: Vec<(String, String, u64, f64, f64)> = rows
        .iter()
        .map(|x| {
            (
                x["name"].as_str().unwrap_or("").to_string(),
                x["input_dims"].as_str().unwrap_or("").to_string(),
                x["count"].as_u64().unwrap_or(0),
                x["flops"].as_f64().unwrap_or(-1.0) * 4.0,
                x["bytes"].as_f64().unwrap_or(-1.0) * 4.0,
            )
        })
        .collect();
    got.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut want = Vec::new();
    for m in [
        "jit_autotune_fn_0(9948)",
        "jit_autotune_fn_1(26486)",
        "jit_autotune_fn_2(43024)",
    ] {
        want.push((
            "custom-call.1".to_string(),
            m.to_string(),
            4,
            4_294_967_296.0,
            16_777_216.0,
        ));
        want.push((
            "triton_softmax.2".to_string(),
            m.to_string(),
            4,
            796_880_896.0,
            33_554_432.0,
        ));
    }
    want.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    assert_eq!(got, want);
    // The 30 train steps ran as one CUDA graph each: the XLA Ops line names the command buffer,
    // not the HLO ops (XProf's op profile leaves them out too): counted as not modelled.
    assert_eq!(r["unmodelled_top"][0]["name"], "command_buffer_1");
    assert_eq!(r["unmodelled_top"][0]["count"], 30);
    assert_eq!(
        r["modelled_device_ns"].as_i64().unwrap() + r["unmodelled_device_ns"].as_i64().unwrap(),
        r["total_device_ns"].as_i64().unwrap()
    );
    assert!(r["note"].as_str().unwrap().contains("HLO modules"));
}

#[test]
fn side_stream_casts_and_host_copies_are_measured_against_what_they_use() {
    // The side-stream capture (tests/fixtures/torch_gpu, `--prefetch`): bf16 autocast casts
    // `_to_copy(x float, dtype=15)` and the input copied host → device from pinned memory.
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/torch_gpu/worker0.1795887060116290334.pt.trace.json.gz");
    let p = p.to_string_lossy();
    let v: Value = serde_json::from_str(&tracetui(&["roofline", &p, "--json"])).expect("json");
    let r = &v["captures"][0];
    let rows = r["rows"].as_array().expect("rows");
    // float → bf16: 4 bytes read + 2 written per element (was 8, 113 % of HBM).
    let cast = rows
        .iter()
        .find(|x| {
            x["name"] == "aten::_to_copy"
                && x["input_dims"] == "[[512,8,1024],[],[],[],[],[],[]]"
                && x["concrete_inputs"]
                    .as_str()
                    .unwrap_or("")
                    .contains("\"15\"")
        })
        .expect("float → bf16 cast row");
    assert_eq!(cast["bytes"], 512.0 * 8.0 * 1024.0 * 6.0);
    assert!(cast["peak_pct"].as_f64().unwrap() < 100.0, "{cast}");
    assert_eq!(cast["beyond_peak"], false);
    for x in rows {
        assert!(x["peak_pct"].as_f64().unwrap_or(0.0) <= 100.0, "{x}");
        assert!(x["saved_ns"].as_f64().unwrap() <= x["device_ns"].as_f64().unwrap());
        assert!(
            !x["precision_from"].as_str().unwrap_or("").is_empty(),
            "{x}"
        );
    }
    // The pinned H2D copies are not a row: counted apart against PCIe Gen5 (64 GB/s).
    assert_eq!(r["host_link"], "PCIe Gen5 x16");
    assert_eq!(r["host_link_gbytes_per_s"], 64.0);
    let t = r["transfers"].as_array().expect("transfers");
    let h2d = t
        .iter()
        .find(|x| x["link"] == "host_to_device")
        .expect("H2D copies");
    assert_eq!(h2d["name"], "Memcpy HtoD (Pinned -> Device)");
    assert_eq!(h2d["count"], 3);
    // Three 8×512×1024 float inputs.
    assert_eq!(h2d["bytes"], 3.0 * 8.0 * 512.0 * 1024.0 * 4.0);
    let pct = h2d["peak_pct"].as_f64().unwrap();
    assert!(pct > 50.0 && pct <= 100.0, "{h2d}");
    let total = r["total_device_ns"].as_i64().unwrap();
    let parts: i64 = [
        "modelled_device_ns",
        "transfer_device_ns",
        "unmodelled_device_ns",
    ]
    .iter()
    .map(|k| r[*k].as_i64().unwrap())
    .sum();
    assert!((parts - total).abs() <= 3, "{parts} vs {total}");
    let text = tracetui(&["roofline", &p]);
    assert!(
        text.contains("Memcpy HtoD (Pinned -> Device)")
            && text.contains("host↔device copies against the host link (PCIe Gen5 x16, 64 GB/s"),
        "{text}"
    );
    assert!(
        text.contains("peak bf16 matrix ← input type c10::BFloat16"),
        "{text}"
    );
}

#[test]
fn jax_f32_gemms_say_which_precision_their_hlo_asked_for() {
    // The H200 JAX capture's three autotune programs run one f32 cuBLAS GEMM each, with
    // operand precision DEFAULT, HIGH and HIGHEST (their backend configs): TF32 for the first
    // two, full FP32 for the last; never the bf16 peak.
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/xplane/h200_jax_gpu_attn.xplane.pb.gz");
    let v: Value = serde_json::from_str(&tracetui(&["roofline", &p.to_string_lossy(), "--json"]))
        .expect("json");
    let rows = v["captures"][0]["rows"].as_array().expect("rows").clone();
    let gemm = |m: &str| {
        rows.iter()
            .find(|x| x["name"] == "custom-call.1" && x["input_dims"] == m)
            .unwrap_or_else(|| panic!("no GEMM of {m}"))
            .clone()
    };
    for (m, peak, tflops, why) in [
        ("jit_autotune_fn_0(9948)", "tf32 matrix", 494.7, "DEFAULT"),
        ("jit_autotune_fn_1(26486)", "tf32 matrix", 494.7, "HIGH"),
        ("jit_autotune_fn_2(43024)", "fp32 vector", 67.0, "HIGHEST"),
    ] {
        let g = gemm(m);
        assert_eq!(g["peak_of"], peak, "{g}");
        assert_eq!(g["peak_tflops"], tflops, "{g}");
        assert!(g["precision_from"].as_str().unwrap().contains(why), "{g}");
    }
    // Vector fusions at the FP32 vector peak; XLA's cycle-weighted FLOPs put the softmax a
    // hair above it: flagged, with the peak named.
    for x in rows.iter().filter(|x| x["name"] == "triton_softmax.2") {
        assert_eq!(x["peak_of"], "fp32 vector");
        let pct = x["peak_pct"].as_f64().unwrap();
        assert_eq!(x["beyond_peak"], pct > 100.0);
    }
}
