//! A hand-made multi-rank Kineto run for the explorer's overview tests (unit and PTY).

use std::path::Path;

const AR: &str = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

/// Compute time of `rank` in step `n`, µs: 60 + rank, rank 2 is 80 µs slower in step 3 and
/// rank 1 30 µs slower in step 5.
pub fn compute(rank: usize, n: usize) -> f64 {
    let extra = match (rank, n) {
        (2, 3) => 80.0,
        (1, 5) => 30.0,
        _ => 0.0,
    };
    60.0 + rank as f64 + extra
}

/// Writes a `world`-rank run into `dir`: six `ProfilerStep#N` steps per rank, each a GEMM of
/// [`compute`] µs then an all-reduce that ends when the slowest rank arrives (so every rank's
/// step ends together and the late rank's peers wait in the collective). The files go to the
/// run directory `dir/job`.
pub fn write_run(dir: &Path, world: usize) {
    let dir = &dir.join("job");
    std::fs::create_dir_all(dir).expect("run dir");
    let mut events: Vec<Vec<String>> = vec![Vec::new(); world];
    let x = |cat: &str, name: &str, pid: i64, tid: i64, ts: f64, dur: f64, args: &str| {
        format!(
            r#"{{"ph":"X","cat":"{cat}","name":"{name}","pid":{pid},"tid":{tid},"ts":{ts},"dur":{dur},"args":{{{args}}}}}"#
        )
    };
    let mut start = 0.0;
    let mut corr = 0;
    for n in 0..6 {
        let slowest = (0..world).map(|r| compute(r, n)).fold(0.0, f64::max);
        let end = start + 10.0 + slowest + 20.0;
        for (r, ev) in events.iter_mut().enumerate() {
            let name = format!("ProfilerStep#{n}");
            ev.push(x(
                "user_annotation",
                &name,
                100,
                100,
                start,
                end - start,
                "",
            ));
            let c = compute(r, n);
            corr += 1;
            let a = format!(r#""correlation":{corr}"#);
            ev.push(x(
                "cuda_runtime",
                "cudaLaunchKernel",
                100,
                100,
                start + 1.0,
                1.0,
                &a,
            ));
            let k = format!(r#""stream":7,"correlation":{corr},"device":0"#);
            ev.push(x("kernel", "gemm", 0, 7, start + 5.0, c, &k));
            corr += 1;
            let a = format!(r#""correlation":{corr}"#);
            ev.push(x(
                "cuda_runtime",
                "cudaLaunchKernel",
                100,
                100,
                start + 2.0,
                1.0,
                &a,
            ));
            let k = format!(
                r#""stream":9,"correlation":{corr},"device":0,"Collective name":"allreduce","In msg nelems":1000,"Out msg nelems":1000,"dtype":"Float","Group size":{world},"Process Group Name":"0","Seq":{n}"#
            );
            let ts = start + 6.0 + c;
            ev.push(x("kernel", AR, 0, 9, ts, end - 2.0 - ts, &k));
        }
        start = end + 5.0;
    }
    for (r, mut ev) in events.into_iter().enumerate() {
        ev.push(
            r#"{"ph":"M","name":"process_labels","pid":0,"tid":0,"args":{"labels":"GPU 0"}}"#
                .into(),
        );
        let doc = format!(
            r#"{{"schemaVersion":1,"distributedInfo":{{"backend":"nccl","rank":{r},"world_size":{world}}},"traceEvents":[{}]}}"#,
            ev.join(",\n")
        );
        let p = dir.join(format!("node_{}.1.pt.trace.json", 100 + r));
        std::fs::write(p, doc).expect("write trace");
    }
}
