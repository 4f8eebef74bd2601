"""Record a PyTorch GPU capture the way large-model users run: bf16 autocast and a whole training
step captured once as a CUDA graph and replayed, beside an eager bf16 forward in every step; then
torch's own answers for the same profile (needs a CUDA GPU; not run by CI).

usage: gen_torch_graph_capture.py LOGDIR STEPS [--d-model N] [--layers N] [--compile]

--prefetch: no graph: an eager bf16 step whose input is copied host → device from pinned memory
on a side stream (non_blocking, the stream waited for), so two streams and H2D copies.
--compile: instead of the hand-captured graph, the model runs through
torch.compile(mode="reduce-overhead") (Inductor's Triton kernels replayed by cudagraph trees),
forward and backward, with an eager AdamW step.

Writes, like ../shared/tools/gen_torch_capture.py, per capture FILE.pt.trace.json.gz and beside it
FILE.key_averages.json (torch's key_averages(): count, self/total CPU µs, self device µs, memory
columns), FILE.stacks.txt / FILE.stacks_device.txt (export_stacks, self CPU / self CUDA time),
FILE.optimizable.json (BasicEvaluation.rank_events(10)), and LOGDIR/memory_snapshot.pickle (the
caching allocator's snapshot, graph pools included). In the trace the graph's kernels share the
correlation id of one `cudaGraphLaunch`; the eager forward launches its kernels one by one.
"""
import json, os, sys, time
import torch, torch.nn as nn
from torch.profiler import profile, ProfilerActivity, schedule


def arg(flag, default):
    return int(sys.argv[sys.argv.index(flag) + 1]) if flag in sys.argv else default


logdir, steps = sys.argv[1], int(sys.argv[2])
d_model, layers = arg("--d-model", 1024), arg("--layers", 4)
os.makedirs(logdir, exist_ok=True)
torch.manual_seed(0)
dev = "cuda"
layer = nn.TransformerEncoderLayer(d_model=d_model, nhead=8, dim_feedforward=4 * d_model,
                                   batch_first=True)
model = nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False).to(dev)
head = nn.Linear(d_model, 1000).to(dev)
params = list(model.parameters()) + list(head.parameters())
opt = torch.optim.AdamW(params, lr=1e-4, capturable=True)
batch, seq = 8, 512
static_x = torch.randn(batch, seq, d_model, device=dev)
static_y = torch.randint(0, 1000, (batch,), device=dev)


def train_step():
    with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False):
        out = head(model(static_x).mean(dim=1))
        loss = nn.functional.cross_entropy(out, static_y)
    loss.backward()
    opt.step()
    return loss


compiled = "--compile" in sys.argv
if "--prefetch" in sys.argv:
    copy_stream = torch.cuda.Stream()
    host_x = torch.randn(batch, seq, d_model).pin_memory()

    def replay():
        with torch.cuda.stream(copy_stream):
            nx = host_x.to(dev, non_blocking=True)
        torch.cuda.current_stream().wait_stream(copy_stream)
        nx.record_stream(torch.cuda.current_stream())
        static_x.copy_(nx)
        opt.zero_grad(set_to_none=True)
        return train_step()

    for _ in range(3):
        static_loss = replay()
    torch.cuda.synchronize()
elif compiled:
    opt = torch.optim.AdamW(params, lr=1e-4)
    cmodel = torch.compile(model, mode="reduce-overhead")

    def replay():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = head(cmodel(static_x).mean(dim=1))
            loss = nn.functional.cross_entropy(out, static_y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    for _ in range(4):  # compiles, records the cudagraph trees
        static_loss = replay()
    torch.cuda.synchronize()
else:
    # Warm up on a side stream (cuBLAS handles, optimizer state), then capture one whole step.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            train_step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        static_loss = train_step()
    replay = graph.replay


def handler(prof):
    path = os.path.join(logdir, f"worker0.{time.time_ns()}.pt.trace.json.gz")
    prof.export_chrome_trace(path)
    rows = [{"name": e.key, "count": e.count, "self_cpu_us": e.self_cpu_time_total,
             "cpu_total_us": e.cpu_time_total,
             "self_device_us": getattr(e, "self_device_time_total", 0),
             "self_cpu_mem": e.self_cpu_memory_usage, "cpu_mem": e.cpu_memory_usage,
             "self_device_mem": getattr(e, "self_device_memory_usage", 0),
             "device_mem": getattr(e, "device_memory_usage", 0)} for e in prof.key_averages()]
    stem = path.replace(".gz", "").replace(".pt.trace.json", "")
    with open(stem + ".key_averages.json", "w") as f:
        json.dump(rows, f, indent=0)
    prof.export_stacks(stem + ".stacks.txt", metric="self_cpu_time_total")
    prof.export_stacks(stem + ".stacks_device.txt", metric="self_cuda_time_total")
    try:
        from torch.profiler._utils import BasicEvaluation
        ev = BasicEvaluation(prof.profiler)
        top = ev.rank_events(10)
        with open(stem + ".optimizable.json", "w") as f:
            json.dump([{"name": k.event.name, "start_ns": k.event.start_time_ns,
                        "dur_ns": k.event.duration_time_ns, "self_ns": ev.metrics[k].self_time_ns,
                        "idle_ns": ev.metrics[k].idle_time_ns,
                        "queue_depth": ev.metrics[k].queue_depth} for k in top], f, indent=0)
    except Exception as err:  # the ranking is a bonus; the capture is already written
        print("BasicEvaluation failed:", err, file=sys.stderr)


torch.cuda.memory._record_memory_history(max_entries=100000)
eval_x = torch.randn(batch, seq, d_model, device=dev)
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
             schedule=schedule(wait=1, warmup=1, active=3, repeat=1), on_trace_ready=handler,
             record_shapes=True, with_stack=True, profile_memory=True,
             experimental_config=torch._C._profiler._ExperimentalConfig(verbose=True)) as p:
    for i in range(steps):
        with torch.profiler.record_function("data_loading"):
            static_x.copy_(torch.randn_like(static_x))
        replay()
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            with torch.profiler.record_function("eval_forward"):
                head(model(eval_x).mean(dim=1)).argmax(dim=-1).cpu()
        p.step()
torch.cuda.synchronize()
torch.cuda.memory._dump_snapshot(os.path.join(logdir, "memory_snapshot.pickle"))
torch.cuda.memory._record_memory_history(enabled=None)
print("loss", float(static_loss.detach()))
