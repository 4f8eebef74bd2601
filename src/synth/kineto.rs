//! A realistic PyTorch Kineto JSON trace generator (benchmarks, property tests).
//!
//! Shape follows `pytorch/kineto` `output_json.cpp`: a header (`schemaVersion`,
//! `deviceProperties`, `distributedInfo`, `baseTimeNanoseconds`), then `traceEvents` with CPU ops
//! nested 4–8 deep under `python_function` frames, `cudaLaunchKernel` runtime events carrying
//! correlation ids, kernels/memcpys on several streams with the same correlation, `ac2g` flow
//! `s`/`f` pairs, `[memory]` instants, `M` metadata and the `Record Window End` footer. Times are
//! µs with three decimals relative to the base. Deterministic for a seed.

use std::io::{self, Write};

/// splitmix64: tiny deterministic PRNG (no dependency).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
}

const PY_FRAMES: &[&str] = &[
    "train.py(212): <module>",
    "train.py(171): train_step",
    "torch/nn/modules/module.py(1736): _wrapped_call_impl",
    "torch/nn/modules/module.py(1747): _call_impl",
    "model.py(88): forward",
    "model.py(54): forward",
    "nn.Module: TransformerBlock_3",
    "nn.Module: Linear_7",
    "torch/optim/optimizer.py(487): wrapper",
    "torch/_tensor.py(626): backward",
];

const OPS: &[&str] = &[
    "aten::linear",
    "aten::addmm",
    "aten::matmul",
    "aten::mm",
    "aten::relu",
    "aten::conv2d",
    "aten::convolution",
    "aten::_convolution",
    "aten::cudnn_convolution",
    "aten::add_",
    "aten::mul",
    "aten::softmax",
    "aten::_softmax",
    "aten::layer_norm",
    "aten::native_layer_norm",
    "aten::dropout",
    "aten::empty",
    "aten::copy_",
    "aten::to",
    "aten::_to_copy",
    "aten::t",
    "aten::transpose",
    "aten::view",
    "aten::reshape",
    "aten::gelu",
    "aten::scaled_dot_product_attention",
];

const KERNELS: &[&str] = &[
    "ampere_sgemm_128x64_tn",
    "ampere_sgemm_64x32_sliced1x4_nn",
    "sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel",
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
    "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*, float const*, float const*, float*, float*, float*)",
    "void cudnn::cnn::conv2d_grouped_direct_kernel<false, true, false, false, 0, 0, int, float, float, float, float, float, float>(cudnn::cnn::GroupedDirectFpropParams, float const*, float const*, float*, float, float, float const*, float const*, float const*, cudnnActivationStruct)",
    "void at::native::unrolled_elementwise_kernel<at::native::GeluCUDAKernelImpl, at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl, at::detail::Array<char*, 2>)",
    "fmha_cutlassF_f16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::half_t, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)",
];

const DIMS: &[&str] = &[
    "[[64, 1024], [1024, 4096], [4096]]",
    "[[64, 4096], [4096, 1024], [1024]]",
    "[[32, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], [], [], []]",
    "[[64, 16, 128, 64], [64, 16, 128, 64], [64, 16, 128, 64]]",
    "[[64, 128, 1024], [1024], [1024], []]",
    "[[64, 1024]]",
    "[[], []]",
    "[]",
];

const TYPES: &[&str] = &[
    "[\"float\", \"float\", \"float\"]",
    "[\"c10::Half\", \"c10::Half\"]",
    "[\"float\", \"Scalar\"]",
    "[\"\"]",
];

const STREAMS: &[u64] = &[7, 20, 24, 28];

fn us(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

/// Counts events and forwards bytes.
struct Out<'w, W: Write> {
    w: &'w mut W,
    events: u64,
    first: bool,
}

impl<W: Write> Out<'_, W> {
    fn event(&mut self, body: std::fmt::Arguments) -> io::Result<()> {
        if !self.first {
            self.w.write_all(b",\n")?;
        }
        self.first = false;
        self.w.write_all(b"  {\n    ")?;
        self.w.write_fmt(body)?;
        self.w.write_all(b"\n  }")?;
        self.events += 1;
        Ok(())
    }
}

/// Writes a Kineto-shaped trace of about `target_events` events (at least a handful) and returns
/// the exact number of events written.
pub fn write_kineto_trace(w: &mut impl Write, target_events: usize, seed: u64) -> io::Result<u64> {
    let mut r = Rng(seed ^ 0x5eed_0000_0000_0001);
    let pid: u64 = 2921 + r.below(1000);
    let tid = pid;
    let bwd_tid = pid + 17;
    let base_ns: u64 = 1_759_300_000_000_000_000;
    write!(
        w,
        "\n{{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    {{\n      \"id\": 0, \"name\": \"NVIDIA A100-SXM4-80GB\", \"totalGlobalMem\": 85097971712,\n      \"computeMajor\": 8, \"computeMinor\": 0,\n      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n      \"regsPerBlock\": 65536, \"warpSize\": 32,\n      \"sharedMemPerBlock\": 49152, \"numSms\": 108\n    }}\n  ],\n  \"record_shapes\": 1,\n  \"with_stack\": 1,\n  \"distributedInfo\": {{\"backend\": \"nccl\", \"rank\": 0, \"world_size\": 8, \"pg_count\": 1, \"nccl_version\": \"2.21.5\"}},\n  \"cupti_version\": 24,\n  \"cuda_runtime_version\": 12040,\n  \"cuda_driver_version\": 12040,\n  \"trace_id\": \"{:016X}\",\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": {base_ns},\n  \"traceEvents\": [\n",
        r.next()
    )?;
    let mut o = Out {
        w,
        events: 0,
        first: true,
    };
    let mut t: u64 = 5_835_906_374_584; // ns from base
    let t0 = t;
    let mut gpu_t: u64 = t + 50_000;
    let mut ext_id: u64 = 1;
    let mut corr: u64 = 100_000;
    let mut ev_idx: u64 = 0;
    let mut py_id: u64 = 1;
    let mut total_alloc: u64 = 1 << 30;
    let target = target_events.max(1) as u64;
    while o.events < target {
        // One op tree: 2-3 python frames, then cpu ops, leaf launches a kernel.
        let thread = if r.below(4) == 0 { bwd_tid } else { tid };
        let depth = 4 + r.below(5) as usize; // 4..=8
        let py_depth = 2 + r.below(2) as usize;
        let leaf_dur = 8_000 + r.below(60_000);
        let mut durs = vec![0u64; depth];
        durs[depth - 1] = leaf_dur;
        for d in (0..depth - 1).rev() {
            durs[d] = durs[d + 1] + 2_000 + r.below(9_000);
        }
        let mut start = t;
        let op_name = r.pick(OPS);
        for (d, &dur) in durs.iter().enumerate() {
            if d < py_depth {
                let name = r.pick(PY_FRAMES);
                o.event(format_args!(
                    "\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"{name}\", \"pid\": {pid}, \"tid\": {thread},\n    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      \"Python parent id\": {}, \"Python id\": {}, \"Python thread\": 0\n    }}",
                    us(start),
                    us(dur),
                    py_id.saturating_sub(1),
                    py_id
                ))?;
                py_id += 1;
            } else if d + 1 < depth {
                let name = if d == py_depth { op_name } else { r.pick(OPS) };
                let dims = r.pick(DIMS);
                let types = r.pick(TYPES);
                let stack = (r.below(6), r.below(9));
                o.event(format_args!(
                    "\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"{name}\", \"pid\": {pid}, \"tid\": {thread},\n    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      \"External id\": {ext_id},\"Record function id\": 0, \"Sequence number\": {}, \"Fwd thread id\": 0, \"Ev Idx\": {ev_idx}, \"Input Dims\": {dims}, \"Input type\": {types}, \"Call stack\": \"model.py({}): forward;torch/nn/modules/module.py(1747): _call_impl;train.py({}): train_step\"\n    }}",
                    us(start),
                    us(dur),
                    ext_id / 3,
                    50 + stack.0,
                    160 + stack.1
                ))?;
                ext_id += 1;
                ev_idx += 1;
            } else {
                // Leaf: the runtime launch; kernel + flow pair on the GPU.
                corr += 1;
                let stream = STREAMS[r.below(STREAMS.len() as u64) as usize];
                let memcpy = r.below(10) == 0;
                let launch = if memcpy {
                    "cudaMemcpyAsync"
                } else {
                    "cudaLaunchKernel"
                };
                o.event(format_args!(
                    "\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"{launch}\", \"pid\": {pid}, \"tid\": {thread},\n    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      \"External id\": {ext_id}, \"cbid\": {}, \"correlation\": {corr}\n    }}",
                    us(start),
                    us(dur),
                    if memcpy { 41 } else { 211 }
                ))?;
                o.event(format_args!(
                    "\"ph\": \"s\", \"id\": {corr}, \"pid\": {pid}, \"tid\": {thread}, \"ts\": {},\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"",
                    us(start)
                ))?;
                gpu_t = gpu_t.max(start + 4_000) + r.below(3_000);
                let kdur = 2_000 + r.below(400_000);
                if memcpy {
                    let bytes = 4096 << r.below(12);
                    o.event(format_args!(
                        "\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD (Pageable -> Device)\", \"pid\": 0, \"tid\": {stream},\n    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      \"External id\": {ext_id},\n      \"device\": 0, \"context\": 1,\n      \"stream\": {stream}, \"correlation\": {corr},\n      \"bytes\": {bytes}, \"memory bandwidth (GB/s)\": {:.3}\n    }}",
                        us(gpu_t),
                        us(kdur),
                        bytes as f64 / kdur as f64
                    ))?;
                } else {
                    let k = r.pick(KERNELS);
                    let g = 1 + r.below(1024);
                    o.event(format_args!(
                        "\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"{k}\", \"pid\": 0, \"tid\": {stream},\n    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      \"External id\": {ext_id},\n      \"queued\": 0, \"device\": 0, \"context\": 1,\n      \"stream\": {stream}, \"correlation\": {corr},\n      \"registers per thread\": {}, \"shared memory\": {},\n      \"blocks per SM\": {:.6},\n      \"warps per SM\": {:.6},\n      \"grid\": [{g}, 1, 1],\n      \"block\": [256, 1, 1],\n      \"est. achieved occupancy %\": {}\n    }}",
                        us(gpu_t),
                        us(kdur),
                        32 + 8 * r.below(20),
                        1024 * r.below(48),
                        g as f64 / 108.0,
                        g as f64 * 8.0 / 108.0,
                        r.below(100)
                    ))?;
                }
                o.event(format_args!(
                    "\"ph\": \"f\", \"id\": {corr}, \"pid\": 0, \"tid\": {stream}, \"ts\": {},\n    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"",
                    us(gpu_t)
                ))?;
                gpu_t += kdur;
                ext_id += 1;
            }
            start += 1_000 + r.below(1_000);
        }
        if r.below(3) == 0 {
            let bytes = 512u64 << r.below(16);
            total_alloc = total_alloc.wrapping_add(bytes) % (70u64 << 30);
            o.event(format_args!(
                "\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\",\n    \"pid\": {pid}, \"tid\": {thread},\n    \"ts\": {},\n    \"args\": {{\n      \"Total Reserved\": {}, \"Total Allocated\": {total_alloc}, \"Bytes\": {bytes}, \"Addr\": {}, \"Device Id\": 0, \"Device Type\": 1\n    }}",
                us(start),
                (total_alloc / (2 << 20) + 1) * (2 << 20),
                0x7f00_0000_0000u64 + r.below(1 << 32) * 512
            ))?;
        }
        t += durs[0] + 2_000 + r.below(20_000);
    }
    // Metadata and footer, as Kineto writes them.
    o.event(format_args!(
        "\"name\": \"process_name\", \"ph\": \"M\", \"ts\": {}, \"pid\": {pid}, \"tid\": 0,\n    \"args\": {{\n      \"name\": \"python {pid}\"\n    }}",
        us(t0)
    ))?;
    o.event(format_args!(
        "\"name\": \"process_labels\", \"ph\": \"M\", \"ts\": {}, \"pid\": {pid}, \"tid\": 0,\n    \"args\": {{\n      \"labels\": \"CPU\"\n    }}",
        us(t0)
    ))?;
    o.event(format_args!(
        "\"name\": \"process_name\", \"ph\": \"M\", \"ts\": {}, \"pid\": 0, \"tid\": 0,\n    \"args\": {{\n      \"name\": \"python {pid}\"\n    }}",
        us(t0)
    ))?;
    o.event(format_args!(
        "\"name\": \"process_labels\", \"ph\": \"M\", \"ts\": {}, \"pid\": 0, \"tid\": 0,\n    \"args\": {{\n      \"labels\": \"GPU 0\"\n    }}",
        us(t0)
    ))?;
    for (k, s) in STREAMS.iter().enumerate() {
        o.event(format_args!(
            "\"name\": \"thread_name\", \"ph\": \"M\", \"ts\": {}, \"pid\": 0, \"tid\": {s},\n    \"args\": {{\n      \"name\": \"stream {s} \"\n    }}",
            us(t0)
        ))?;
        o.event(format_args!(
            "\"name\": \"thread_sort_index\", \"ph\": \"M\", \"ts\": {}, \"pid\": 0, \"tid\": {s},\n    \"args\": {{\n      \"sort_index\": {}\n    }}",
            us(t0),
            k + 1
        ))?;
    }
    for th in [tid, bwd_tid] {
        o.event(format_args!(
            "\"name\": \"thread_name\", \"ph\": \"M\", \"ts\": {}, \"pid\": {pid}, \"tid\": {th},\n    \"args\": {{\n      \"name\": \"thread {th} (python)\"\n    }}",
            us(t0)
        ))?;
    }
    o.event(format_args!(
        "\"ph\": \"X\", \"cat\": \"Trace\", \"ts\": {}, \"dur\": {},\n    \"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\",\n    \"name\": \"PyTorch Profiler (0)\",\n    \"args\": {{\n      \"Op count\": 0\n    }}",
        us(t0),
        us(t.max(gpu_t) - t0)
    ))?;
    o.event(format_args!(
        "\"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\",\n    \"pid\": \"\", \"tid\": \"\", \"ts\": {}",
        us(t.max(gpu_t) + 1000)
    ))?;
    let n = o.events;
    o.w.write_all(b"\n],\n  \"traceName\": \"synthetic.pt.trace.json\"\n}\n")?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_valid_json() {
        let mut a = Vec::new();
        let n = write_kineto_trace(&mut a, 500, 7).unwrap();
        let mut b = Vec::new();
        assert_eq!(write_kineto_trace(&mut b, 500, 7).unwrap(), n);
        assert_eq!(a, b);
        assert!(n >= 500);
        let v: serde_json::Value = serde_json::from_slice(&a).unwrap();
        assert_eq!(v["traceEvents"].as_array().unwrap().len() as u64, n);
    }
}
