//! Steps and ranks (`tracetui steps`, `tracetui ranks`, `analysis::steps`, `analysis::ranks`):
//! hand-made multi-rank Kineto traces with hand-computed answers (skew, exposed communication,
//! a missing rank, a rank with fewer steps, no GPU, a host clock offset by a known amount), a
//! brute-force reference for the per-step device parts, and the real fixtures.

use proptest::prelude::*;
use serde_json::Value;
use std::path::Path;
use tracetui::analysis::steps::{self, StepOptions, StepSource};
use tracetui::formats::{self, Progress};
use tracetui::model::{Capture, SourceInfo};

const US: f64 = 1000.0; // ns per µs

/// A Kineto trace written by hand: host thread pid 100 / tid 100, GPU device 0.
#[derive(Default)]
struct Trace {
    events: Vec<String>,
    corr: u64,
}

impl Trace {
    /// A complete event on (pid, tid) spanning (ts, dur) µs.
    fn x(
        &mut self,
        cat: &str,
        name: &str,
        (pid, tid): (i64, i64),
        (ts, dur): (f64, f64),
        args: &str,
    ) {
        self.events.push(format!(
            r#"{{"ph":"X","cat":"{cat}","name":"{name}","pid":{pid},"tid":{tid},"ts":{ts},"dur":{dur},"args":{{{args}}}}}"#
        ));
    }
    fn step(&mut self, n: i64, ts: f64, dur: f64) {
        self.x(
            "user_annotation",
            &format!("ProfilerStep#{n}"),
            (100, 100),
            (ts, dur),
            "",
        );
    }
    /// A launch at `launch` and its activity `[ts, ts + dur)` on `stream`.
    fn kernel(
        &mut self,
        cat: &str,
        name: &str,
        (stream, launch): (i64, f64),
        (ts, dur): (f64, f64),
        extra: &str,
    ) {
        self.corr += 1;
        let c = self.corr;
        self.x(
            "cuda_runtime",
            "cudaLaunchKernel",
            (100, 100),
            (launch, 1.0),
            &format!(r#""correlation":{c}"#),
        );
        let sep = if extra.is_empty() { "" } else { "," };
        self.x(
            cat,
            name,
            (0, stream),
            (ts, dur),
            &format!(r#""stream":{stream},"correlation":{c},"device":0{sep}{extra}"#),
        );
    }
    fn write(&self, path: &Path, dist: Option<(i64, i64)>, shift_us: f64) {
        let mut ev = self.events.clone();
        if shift_us != 0.0 {
            ev = ev
                .iter()
                .map(|e| {
                    let v: Value = serde_json::from_str(e).expect("own json");
                    let mut v = v;
                    let ts = v["ts"].as_f64().expect("ts") + shift_us;
                    v["ts"] = serde_json::json!(ts);
                    v.to_string()
                })
                .collect();
        }
        ev.push(
            r#"{"ph":"M","name":"process_labels","pid":0,"tid":0,"args":{"labels":"GPU 0"}}"#
                .into(),
        );
        let dist = dist.map_or(String::new(), |(r, w)| {
            format!(r#""distributedInfo":{{"backend":"nccl","rank":{r},"world_size":{w}}},"#)
        });
        let doc = format!(
            r#"{{"schemaVersion":1,{dist}"traceEvents":[{}]}}"#,
            ev.join(",\n")
        );
        std::fs::write(path, doc).expect("write trace");
    }
}

fn coll_args(seq: i64) -> String {
    format!(
        r#""Collective name":"allreduce","In msg nelems":1000,"Out msg nelems":1000,"dtype":"Float","Group size":2,"Process Group Name":"0","Seq":{seq}"#
    )
}

const AR: &str = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

/// One rank of the hand-made run: two steps [0,100) [100,200) µs; collective 0 on stream 9
/// starts at `c0` and ends at 80, collective 1 starts at `c1` and ends at 190.
fn rank_trace(c0: f64, c1: f64) -> Trace {
    let mut t = Trace::default();
    t.step(1, 0.0, 100.0);
    t.step(2, 100.0, 100.0);
    t.x(
        "user_annotation",
        "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
        (100, 100),
        (0.0, 10.0),
        "",
    );
    t.kernel("kernel", "gemm", (7, 15.0), (20.0, 40.0), "");
    t.kernel("kernel", AR, (9, 45.0), (c0, 80.0 - c0), &coll_args(0));
    t.kernel("kernel", "gemm", (7, 125.0), (130.0, 20.0), "");
    t.kernel(
        "gpu_memcpy",
        "Memcpy HtoD (Pageable -> Device)",
        (7, 140.0),
        (155.0, 10.0),
        "",
    );
    t.kernel("kernel", AR, (9, 120.0), (c1, 190.0 - c1), &coll_args(1));
    t
}

fn run_json(cmd: &str, path: &Path) -> Value {
    let out = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("tracetui"))
        .arg(cmd)
        .arg(path)
        .arg("--json")
        .output()
        .expect("run tracetui");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON output")
}

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64()
        .unwrap_or_else(|| panic!("{k} missing in {v}"))
}

/// Ranks 0 and 1 on host nodeA (same clock), rank 2 on nodeB whose clock runs 1000 µs ahead;
/// world size 4, so rank 3 is missing. Rank 1 arrives 20 µs / 5 µs late at the two collectives,
/// rank 2 10 µs / 2 µs late (in aligned time).
fn hand_run(dir: &Path) {
    rank_trace(50.0, 170.0).write(&dir.join("nodeA_100.1.pt.trace.json"), Some((0, 4)), 0.0);
    rank_trace(70.0, 175.0).write(&dir.join("nodeA_200.1.pt.trace.json"), Some((1, 4)), 0.0);
    rank_trace(60.0, 172.0).write(&dir.join("nodeB_300.1.pt.trace.json"), Some((2, 4)), 1000.0);
}

#[test]
fn steps_of_one_rank_every_part() {
    let d = tempfile::tempdir().expect("tempdir");
    hand_run(d.path());
    let v = run_json("steps", &d.path().join("nodeA_100.1.pt.trace.json"));
    let c = &v["captures"][0];
    assert_eq!(c["source"], "profiler_step");
    assert_eq!(c["device"], 0);
    let s = c["steps"].as_array().expect("steps");
    assert_eq!(s.len(), 2);
    // Step 1 [0,100): gemm [20,60), all-reduce [50,80); idle [0,20) and [80,100) wait for the
    // host (the next activities were launched at 15 and 125, after the gaps began).
    let s1 = &s[0];
    assert_eq!(s1["step"], 1);
    assert_eq!(s1["start_ns"], 0);
    let want1 = [
        ("dur_ns", 100.0),
        ("compute_ns", 40.0),
        ("communication_ns", 30.0),
        ("exposed_communication_ns", 20.0),
        ("memory_ns", 0.0),
        ("other_ns", 0.0),
        ("idle_ns", 40.0),
        ("host_wait_ns", 40.0),
        ("kernel_wait_ns", 0.0),
        ("idle_other_ns", 0.0),
        ("input_ns", 10.0),
    ];
    for (k, want) in want1 {
        assert_eq!(f(s1, k), want * US, "step 1 {k}");
    }
    // Step 2 [100,200): host wait [100,130), gemm [130,150), kernel wait [150,155) (memcpy
    // launched at 140), memcpy [155,165), kernel wait [165,170) (all-reduce launched at 120),
    // all-reduce [170,190), other idle [190,200) (nothing follows).
    let s2 = &s[1];
    let want2 = [
        ("dur_ns", 100.0),
        ("compute_ns", 20.0),
        ("communication_ns", 20.0),
        ("exposed_communication_ns", 20.0),
        ("memory_ns", 10.0),
        ("idle_ns", 50.0),
        ("host_wait_ns", 30.0),
        ("kernel_wait_ns", 10.0),
        ("idle_other_ns", 10.0),
        ("input_ns", 0.0),
    ];
    for (k, want) in want2 {
        assert_eq!(f(s2, k), want * US, "step 2 {k}");
    }
    // The recording ends with step 2 (nothing after 200 µs): it may be cut off.
    assert_eq!(s2["partial"], true);
    assert_eq!(s1["partial"], false);
}

#[test]
fn ranks_skew_clock_offset_missing_rank_stragglers() {
    let d = tempfile::tempdir().expect("tempdir");
    hand_run(d.path());
    let v = run_json("ranks", d.path());
    let runs = v["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 1, "{v}");
    let r = &runs[0];
    assert_eq!(r["world_size"], 4);
    assert_eq!(r["missing_ranks"], serde_json::json!([3]));
    let ranks = r["ranks"].as_array().expect("ranks");
    let nums: Vec<i64> = ranks
        .iter()
        .map(|x| x["rank"].as_i64().unwrap_or(-1))
        .collect();
    assert_eq!(nums, vec![0, 1, 2]);
    // nodeB's clock is 1000 µs ahead: estimated from the collective ends.
    let offs: Vec<f64> = ranks.iter().map(|x| f(x, "clock_offset_ns")).collect();
    assert_eq!(offs, vec![0.0, 0.0, 1000.0 * US]);
    for x in ranks {
        assert_eq!(x["steps"], 2);
        assert_eq!(f(x, "step_mean_ns"), 100.0 * US);
        assert_eq!(f(x, "step_p50_ns"), 100.0 * US);
        assert_eq!(f(x, "step_max_ns"), 100.0 * US);
    }
    // HTA overlap: rank 0 comm [50,80) ∪ [170,190) = 50 µs, overlapped by gemm [20,60): 10 µs.
    assert!((f(&ranks[0], "comm_comp_overlap") - 0.2).abs() < 1e-12);
    assert_eq!(f(&ranks[1], "comm_comp_overlap"), 0.0);
    // Collectives: matched by (group, Seq), skews in aligned time.
    let cs = r["collectives"].as_array().expect("collectives");
    assert_eq!(cs.len(), 2);
    let c0 = &cs[0];
    assert_eq!(c0["name"], "all_reduce");
    assert_eq!(c0["group"], "0");
    assert_eq!(c0["index"], 0);
    assert_eq!(c0["ranks"], 3);
    assert_eq!(f(c0, "skew_start_ns"), 20.0 * US);
    assert_eq!(f(c0, "skew_end_ns"), 0.0);
    assert_eq!(f(c0, "dur_min_ns"), 10.0 * US);
    assert_eq!(f(c0, "dur_max_ns"), 30.0 * US);
    // nccl-tests: S = 1000 floats = 4000 B; algbw = S / t = 4000 B / 10 µs = 0.4 GB/s;
    // busbw = algbw × 2(n−1)/n with n = 2 (Group size).
    assert_eq!(c0["bytes"], 4000);
    assert!((f(c0, "algbw_gbps") - 0.4).abs() < 1e-12);
    assert!((f(c0, "busbw_gbps") - 0.4).abs() < 1e-12);
    assert_eq!(c0["last_rank"], 1);
    let c1 = &cs[1];
    assert_eq!(c1["index"], 1);
    assert_eq!(f(c1, "skew_start_ns"), 5.0 * US);
    assert_eq!(c1["last_rank"], 1);
    // Arrivals: rank 1 last at both; rank 0 waited 20 + 5 µs, rank 2 10 + 3 µs.
    let last: Vec<i64> = ranks
        .iter()
        .map(|x| x["arrived_last"].as_i64().unwrap_or(-1))
        .collect();
    assert_eq!(last, vec![0, 2, 0]);
    let wait: Vec<f64> = ranks.iter().map(|x| f(x, "wait_ns")).collect();
    assert_eq!(wait, vec![25.0 * US, 0.0, 13.0 * US]);
    // HTA's ranking works on raw clocks: rank 2's clock is 1000 µs ahead, so HTA (and we, by
    // its definition) rank 1 and 2 as the potential stragglers, each flagged in both steps.
    assert_eq!(r["stragglers"], serde_json::json!([1, 2]));
    let score: Vec<i64> = ranks
        .iter()
        .map(|x| x["straggler_score"].as_i64().unwrap_or(-1))
        .collect();
    assert_eq!(score, vec![0, 2, 2]);
}

#[test]
fn fewer_steps_no_gpu_and_no_distributed_info() {
    let d = tempfile::tempdir().expect("tempdir");
    let mut a = Trace::default();
    for n in 0..3 {
        a.step(n, n as f64 * 50.0, 50.0);
    }
    a.write(&d.path().join("w0.1.pt.trace.json"), None, 0.0);
    let mut b = Trace::default();
    for n in 0..2 {
        b.step(n, n as f64 * 60.0, 60.0);
    }
    b.write(&d.path().join("w1.1.pt.trace.json"), None, 0.0);
    let v = run_json("ranks", d.path());
    let r = &v["runs"][0];
    // No distributedInfo: ranks by worker name order, world size = captures.
    assert_eq!(r["world_size"], 2);
    let ranks = r["ranks"].as_array().expect("ranks");
    assert_eq!(ranks[0]["host"], "w0");
    assert_eq!(ranks[0]["steps"], 3);
    assert_eq!(ranks[1]["steps"], 2);
    assert_eq!(f(&ranks[1], "step_mean_ns"), 60.0 * US);
    assert!(ranks[0]["comm_comp_overlap"].is_null());
    assert_eq!(r["stragglers"], serde_json::json!([]));
    assert_eq!(r["collectives"], serde_json::json!([]));
    let s = run_json("steps", &d.path().join("w0.1.pt.trace.json"));
    let c = &s["captures"][0];
    assert!(c["device"].is_null());
    assert_eq!(c["steps"].as_array().map(Vec::len), Some(3));
    assert_eq!(f(&c["steps"][2], "idle_ns"), 0.0);
}

fn load(path: &Path) -> Capture {
    formats::load(path, SourceInfo::default(), &Progress::default()).expect("load")
}

#[test]
fn no_steps_is_one_step_and_regex_steps() {
    let d = tempfile::tempdir().expect("tempdir");
    let mut t = Trace::default();
    t.x(
        "user_annotation",
        "train_step_7",
        (100, 100),
        (0.0, 30.0),
        "",
    );
    t.x(
        "user_annotation",
        "train_step_8",
        (100, 100),
        (40.0, 30.0),
        "",
    );
    t.x("cpu_op", "aten::mm", (100, 100), (45.0, 5.0), "");
    let p = d.path().join("t.json");
    t.write(&p, None, 0.0);
    let c = load(&p);
    let s = steps::find(&c, &StepOptions::default());
    assert_eq!(s.source, StepSource::Whole);
    assert_eq!(s.steps.len(), 1);
    assert_eq!((s.steps[0].start, s.steps[0].end), (0, 70_000_000));
    let opts = StepOptions {
        regex: Some(regex::Regex::new(r"^train_step_(\d+)$").expect("regex")),
        ..StepOptions::default()
    };
    let s = steps::find(&c, &opts);
    assert_eq!(s.source, StepSource::Regex);
    let got: Vec<(i64, i64, i64)> = s.steps.iter().map(|x| (x.number, x.start, x.end)).collect();
    assert_eq!(got, vec![(7, 0, 30_000_000), (8, 40_000_000, 70_000_000)]);
    assert!(
        s.steps[1].partial,
        "the last step ends at the capture's end"
    );
    assert_eq!(s.at(45_000_000), Some(1));
    assert_eq!(s.at(35_000_000), None);
}

#[test]
fn real_fixtures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    // JAX StepTraceAnnotation (step_num stats), CPU only.
    let c = load(&root.join("xplane/vm.xplane.pb"));
    let s = steps::find(&c, &StepOptions::default());
    assert_eq!(s.source, StepSource::StepNum);
    let nums: Vec<i64> = s.steps.iter().map(|x| x.number).collect();
    assert_eq!(nums, vec![0, 1, 2, 3, 4]);
    // Kineto ProfilerStep#N on a ROCm capture: HTA's get_profiler_steps gives [1, 2].
    let c = load(&root.join("chrome/mi250_minitoy_train_ROCm6_2_kineto.json.gz"));
    let s = steps::find(&c, &StepOptions::default());
    assert_eq!(s.source, StepSource::ProfilerStep);
    let nums: Vec<i64> = s.steps.iter().map(|x| x.number).collect();
    assert_eq!(nums, vec![1, 2]);
    let parts = steps::breakdown(&c, &s, &StepOptions::default(), None);
    for (st, p) in s.steps.iter().zip(&parts) {
        for d in p.devices.iter().filter(|d| d.has_data()) {
            let sum = d.compute + d.exposed_communication + d.memory + d.other + d.idle;
            assert_eq!(sum, st.dur(), "device {} step {}", d.device, st.number);
            assert_eq!(d.idle, d.host_wait + d.kernel_wait + d.idle_other);
        }
    }
}

/// Brute force over 1 µs ticks: what each tick of a step is, by the rules of docs/steps.md.
fn brute(acts: &[(i64, i64, u8, i64)], lo: i64, hi: i64, thr: i64) -> [i64; 7] {
    // [compute, exposed comm, memory, other, host, kernel, idle other]
    let mut out = [0i64; 7];
    for t in lo..hi {
        let on: Vec<u8> = acts
            .iter()
            .filter(|a| a.0 <= t && t < a.1)
            .map(|a| a.2)
            .collect();
        if !on.is_empty() {
            let k = if on.contains(&0) {
                0
            } else if on.contains(&1) {
                1
            } else if on.contains(&2) {
                2
            } else {
                3
            };
            out[k] += 1;
            continue;
        }
        let prev_end = acts.iter().filter(|a| a.1 <= t).map(|a| a.1).max();
        let next = acts.iter().filter(|a| a.0 > t).min_by_key(|a| a.0);
        let cause = match (prev_end, next) {
            (_, None) => 6,
            (None, Some(_)) => 4,
            (Some(pe), Some(n)) => {
                if n.3 > pe {
                    4
                } else if n.0 - pe < thr {
                    5
                } else {
                    6
                }
            }
        };
        out[cause] += 1;
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn parts_match_brute_force(
        raw in prop::collection::vec((0i64..200, 1i64..40, 0u8..4, 0i64..3, 0i64..60), 1..12),
        cuts in prop::collection::vec(1i64..260, 1..4),
    ) {
        // Distinct starts keep "the activity that ends a gap" unambiguous.
        let mut seen = std::collections::BTreeSet::new();
        let acts: Vec<(i64, i64, u8, i64, i64)> = raw
            .into_iter()
            .filter(|a| seen.insert(a.0))
            .map(|(s, d, k, stream, back)| (s, s + d, k, stream, (s - back).max(0)))
            .collect();
        let names = ["gemm", "ncclKernel_AllReduce", "Memcpy DtoD", "Context Sync"];
        let mut t = Trace::default();
        let mut bounds = cuts;
        bounds.push(0);
        bounds.push(260);
        bounds.sort_unstable();
        bounds.dedup();
        for (n, w) in bounds.windows(2).enumerate() {
            t.step(n as i64, w[0] as f64, (w[1] - w[0]) as f64);
        }
        for a in &acts {
            let cat = if a.2 == 2 { "gpu_memcpy" } else { "kernel" };
            t.kernel(cat, names[a.2 as usize], (7 + a.3, a.4 as f64), (a.0 as f64, (a.1 - a.0) as f64), "");
        }
        let d = tempfile::tempdir().expect("tempdir");
        let p = d.path().join("p.json");
        t.write(&p, None, 0.0);
        let c = load(&p);
        let opts = StepOptions { idle_threshold: 30_000_000, ..StepOptions::default() };
        let s = steps::find(&c, &opts);
        prop_assert_eq!(s.steps.len(), bounds.len() - 1);
        let parts = steps::breakdown(&c, &s, &opts, None);
        let flat: Vec<(i64, i64, u8, i64)> = acts.iter().map(|a| (a.0, a.1, a.2, a.4)).collect();
        // What the device recorded: its first activity's start to its last end; a step outside
        // it has no device data (all parts 0).
        let first = acts.iter().map(|a| a.0).min().unwrap_or(0);
        let last = acts.iter().map(|a| a.1).max().unwrap_or(0);
        for (st, p) in s.steps.iter().zip(&parts) {
            let (lo, hi) = (st.start / 1_000_000, st.end / 1_000_000);
            let outside = hi <= first || lo >= last;
            let want = if outside { [0; 7] } else { brute(&flat, lo, hi, 30) };
            let d = &p.devices[0];
            prop_assert_eq!(d.no_data, outside, "step {:?}", st);
            let got = [d.compute, d.exposed_communication, d.memory, d.other, d.host_wait, d.kernel_wait, d.idle_other]
                .map(|x| x / 1_000_000);
            prop_assert_eq!(got, want, "step {:?}", st);
        }
    }
}

#[test]
fn heatmap_matrix_of_the_hand_run() {
    use tracetui::analysis::ranks::{self, Metric};
    let d = tempfile::tempdir().expect("tempdir");
    hand_run(d.path());
    let opts = StepOptions::default();
    let sums: Vec<_> = [
        "nodeA_100.1.pt.trace.json",
        "nodeA_200.1.pt.trace.json",
        "nodeB_300.1.pt.trace.json",
    ]
    .iter()
    .map(|n| {
        let mut c = load(&d.path().join(n));
        c.source.host = n.split('.').next().unwrap_or("").to_string();
        ranks::summarize(&c, &opts)
    })
    .collect();
    let refs: Vec<_> = sums.iter().collect();
    let (cols, v) = ranks::matrix(&refs, &[0, 0, 1_000_000], Metric::StartSkew);
    assert_eq!(cols, vec![1, 2]);
    assert_eq!(v, vec![Some(0.0); 6], "aligned, every step starts together");
    let (_, v) = ranks::matrix(&refs, &[0, 0, 0], Metric::StartSkew);
    assert_eq!(v[4], Some(1.0e9), "unaligned, rank 2 starts 1000 µs late");
    let (_, v) = ranks::matrix(&refs, &[0, 0, 0], Metric::IdleRatio);
    assert_eq!(v[0], Some(0.4));
    let (_, v) = ranks::matrix(&refs, &[0, 0, 0], Metric::ExposedComm);
    assert_eq!(v[0], Some(20.0e6));
    let (_, v) = ranks::matrix(&refs, &[0, 0, 0], Metric::Input);
    assert_eq!(v[0], Some(10.0e6));
}

/// Old captures: no collective args, and the NCCL stream numbered differently on each rank —
/// matched by kernel name and order on the rank's communication stream.
#[test]
fn ranks_match_by_name_and_order_without_args() {
    let d = tempfile::tempdir().expect("tempdir");
    for (rank, (stream, c0, c1)) in [(9, 50.0, 170.0), (13, 70.0, 175.0)]
        .into_iter()
        .enumerate()
    {
        let mut t = Trace::default();
        t.step(1, 0.0, 100.0);
        t.step(2, 100.0, 100.0);
        t.kernel("kernel", "gemm", (7, 15.0), (20.0, 40.0), "");
        let old = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)";
        t.kernel("kernel", old, (stream, 45.0), (c0, 80.0 - c0), "");
        t.kernel("kernel", old, (stream, 120.0), (c1, 190.0 - c1), "");
        t.write(
            &d.path().join(format!("host_{rank}.1.pt.trace.json")),
            Some((rank as i64, 2)),
            0.0,
        );
    }
    let v = run_json("ranks", d.path());
    let cs = v["runs"][0]["collectives"].as_array().expect("collectives");
    assert_eq!(cs.len(), 2, "{v}");
    for (c, (index, skew)) in cs.iter().zip([(0, 20.0), (1, 5.0)]) {
        assert_eq!(c["name"], "all_reduce");
        assert!(c["group"].is_null());
        assert_eq!(c["index"], index);
        assert_eq!(c["ranks"], 2);
        assert_eq!(f(c, "skew_start_ns"), skew * US);
        assert!(c["bytes"].is_null() && c["busbw_gbps"].is_null());
        assert_eq!(c["last_rank"], 1);
    }
}
