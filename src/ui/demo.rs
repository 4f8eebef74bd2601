//! A deterministic synthetic capture shaped like a PyTorch training run (nested CPU ops, kernel
//! launches correlated with GPU kernels, a memory counter), for UI tests and the frame bench.

use crate::model::{
    ArgValue, Capture, CaptureBuilder, Format, Key, ProcessKind, SourceInfo, TrackKind,
};

const OPS: [&str; 6] = [
    "aten::conv2d",
    "aten::relu",
    "aten::batch_norm",
    "aten::addmm",
    "aten::add_",
    "aten::max_pool2d",
];

const KERNELS: [&str; 4] = [
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
    "implicit_convolve_sgemm",
    "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1>(cudnnTensorStruct)",
    "ampere_sgemm_128x64_nn",
];

/// A capture with `steps` profiler steps of `ops` CPU ops each (about `steps × (3 + 3·ops)`
/// slices): a CPU thread (step › forward/backward › op › launch), a GPU stream with one kernel per
/// op (correlated), and a memory counter. `evil` adds a slice named with control characters.
pub fn capture(steps: u64, ops: u64, evil: bool) -> Capture {
    let mut b = CaptureBuilder::new();
    let p = b.process(Key::Int(4242));
    let pname = b.intern("python3");
    {
        let pr = b.process_mut(p);
        pr.name = pname;
        pr.kind = ProcessKind::Host;
        pr.sort_index = 0;
    }
    let th = b.track(p, Key::Int(59811), TrackKind::Thread);
    let tname = b.intern("thread 59811 (main)");
    b.track_mut(th).name = tname;
    let g = b.process(Key::Int(0));
    let gname = b.intern("GPU 0");
    {
        let pr = b.process_mut(g);
        pr.name = gname;
        pr.kind = ProcessKind::Gpu;
        pr.sort_index = 1;
    }
    let st = b.track(g, Key::Int(7), TrackKind::GpuStream);
    let sname = b.intern("stream 7");
    b.track_mut(st).name = sname;
    let cpu_op = b.intern("cpu_op");
    let rt = b.intern("cuda_runtime");
    let kern = b.intern("kernel");
    let ann = b.intern("user_annotation");
    let launch = b.intern("cudaLaunchKernel");
    let fwd = b.intern("forward");
    let bwd = b.intern("backward");
    let ops_ids: Vec<_> = OPS.iter().map(|o| b.intern(o)).collect();
    let k_ids: Vec<_> = KERNELS.iter().map(|o| b.intern(o)).collect();
    let k_dims = b.intern("Input Dims");
    let k_seq = b.intern("Sequence number");
    let mem = b.intern("memory");
    let evil_name = b.intern("evil\x1b[2J\x07name\r\n");
    let mut rng: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let us = 1_000_000i64; // ps per µs
    let op_len = 40 * us;
    let gap = 5 * us;
    let step_len = 2 * (ops as i64) * (op_len + gap) + 40 * us;
    let mut corr = 1u64;
    for s in 0..steps as i64 {
        let t = s * (step_len + 100 * us);
        let name = b.intern(&format!("ProfilerStep#{s}"));
        b.add_slice(th, t, step_len, name, ann, Default::default(), 0);
        let half = (ops as i64) * (op_len + gap) + 10 * us;
        for (phase, pn) in [(0i64, fwd), (1, bwd)] {
            let ps = t + 10 * us + phase * half;
            b.add_slice(th, ps, half - 10 * us, pn, ann, Default::default(), 0);
            for o in 0..ops as i64 {
                let os = ps + 2 * us + o * (op_len + gap);
                let jitter = (next() % 10) as i64 * us;
                let len = op_len - jitter;
                let k = (next() % OPS.len() as u64) as usize;
                b.args.begin();
                let dims = b.intern("[[32, 3, 224, 224], [64, 3, 7, 7]]");
                b.args.push(k_dims, ArgValue::Str(dims));
                b.args.push(k_seq, ArgValue::I64(s * 1000 + o));
                let args = b.args.finish();
                let name = if evil && s == 0 && o == 0 && phase == 0 {
                    evil_name
                } else {
                    ops_ids[k]
                };
                b.add_slice(th, os, len, name, cpu_op, args, 0);
                b.add_slice(
                    th,
                    os + len / 2,
                    5 * us,
                    launch,
                    rt,
                    Default::default(),
                    corr,
                );
                let ks = os + len / 2 + 8 * us;
                let kn = k_ids[(next() % KERNELS.len() as u64) as usize];
                b.add_slice(st, ks, len - 4 * us, kn, kern, Default::default(), corr);
                corr += 1;
            }
        }
        b.add_counter(p, mem, t, (s % 7) as f64 * 1e6);
        b.add_counter(p, mem, t + step_len / 2, ((s % 7) as f64 + 3.0) * 1e6);
    }
    b.finish(
        SourceInfo {
            path: "demo.pt.trace.json".into(),
            run: "demo".into(),
            host: "worker0".into(),
            file_bytes: 0,
        },
        Format::Kineto,
    )
}
