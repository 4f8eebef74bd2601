"""Oracle for `tracetui memory SNAPSHOT.pickle` on a real CUDA caching-allocator snapshot: who
allocated, grouped by the first user frame, and the folded lines of memory_viz.

usage:
  python3 docs/oracle/memory_viz_gpu.py SNAPSHOT.pickle [--tracetui BIN] [--memory-viz PATH]
                                        [--write-expected OUT.json]

1. Folded lines: `python -m torch.cuda._memory_viz memory` (its `memory()`, with
   `format_flamegraph` returning the lines) must equal `tracetui memory --json --stacks`'s `folded`.
2. Grouping: every allocation of the trace as memory_viz's replay counts it (a `free_completed`
   without its `alloc` = allocated before the first entry, frames of the free; a block active at
   snapshot time the trace never allocated, frames of the block; every `alloc`) is grouped by its
   user frame, found with memory_viz's own `_frame_filter` on the frames, innermost first: the
   first kept frame with a source line (line > 0, a Python frame); without one the first kept
   frame that is not allocator / tensor-creation / dispatcher machinery; else the first kept
   frame (machinery: allocator, tensor creation, dispatcher, autograd kernels, backend wrappers —
   the list in `formats/snapshot/user_frame.rs`). An alloc at a still-live address ends the earlier
   allocation there (tracetui's `addr_reuse`). Frames are written as `_frame_fmt` does (`file:line:name`, the name alone when the file
   is empty, as tracetui's `Frame::short`). Count, bytes and never-freed bytes per group must
   equal `top_ops` of `tracetui memory --json` (its 10 largest), and the innermost kept frame
   (what memory_viz's flame graph ends in, and what tracetui grouped by before) is shown beside
   for contrast. `--write-expected` writes the 10 largest groups as JSON (the fixture expectation).

memory_viz is torch's `torch/cuda/_memory_viz.py` (`pip install torch`), or the file given with
`--memory-viz` (it needs only the standard library). Exit status 1 when anything differs.
"""
import importlib.util, json, os, pickle, subprocess, sys
from collections import defaultdict

MACHINERY = ["CachingAllocator", "at::detail::empty", "at::native::empty", "at::empty", "empty_cuda",
             "empty_strided", "create_out(", "set_output_raw_strided(", "set_output_strided(",
             "at::meta::", "TensorIteratorBase::", "TensorIterator::",
             "c10::impl::wrap_kernel_functor_unboxed_", "c10::impl::make_boxed_from_unboxed_functor",
             "::redispatch(", "c10::Dispatcher::", "at::_ops::", "VariableType::", "ADInplaceOrView::",
             "at::(anonymous namespace)::wrapper_",
             "at::(anonymous namespace)::(anonymous namespace)::wrapper_"]


def machinery(f):
    base = f["filename"].split("/")[-1]
    return ("CachingAllocator" in f["filename"] or base.startswith(("Register", "VariableType"))
            or any(m in f["name"] for m in MACHINERY))


def load_memory_viz(path):
    if path is None:
        try:
            import torch.cuda._memory_viz as mv  # noqa: F401
            return mv
        except ImportError:
            sys.exit("torch is not installed: pass --memory-viz PATH/_memory_viz.py")
    spec = importlib.util.spec_from_file_location("_memory_viz", path)
    mv = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mv)
    return mv


def short(f):
    if not f["filename"]:
        return f["name"]
    return f"{f['filename'].split('/')[-1]}:{f['line']}:{f['name']}"


def user_frame(mv, frames):
    kept = [f for f in frames if mv._frame_filter(f["name"], f["filename"])]
    for f in kept:
        if f["line"] > 0:
            return short(f)
    for f in kept:
        if not machinery(f):
            return short(f)
    return short(kept[0]) if kept else None


def innermost_kept(mv, frames):
    kept = [f for f in frames if mv._frame_filter(f["name"], f["filename"])]
    return short(kept[0]) if kept else None


def allocations(data):
    """(bytes, frames, never freed) of every allocation memory_viz's replay counts."""
    out = []
    traces = data.get("device_traces", [])
    devs = max([len(traces) - 1] + [s.get("device", 0) for s in data["segments"]])
    for dev in range(devs + 1):
        entries = traces[dev] if dev < len(traces) else []
        live = {}
        for e in entries:
            if e["action"] == "alloc":
                live[e["addr"]] = True
            elif e["action"] == "free_completed" and not live.pop(e["addr"], False):
                out.append((e["size"], e.get("frames", []), False))
        for s in data["segments"]:
            if s.get("device", 0) != dev:
                continue
            addr = s["address"]
            for b in s["blocks"]:
                if b["state"].startswith("active") and addr not in live:
                    out.append((b["size"], b.get("frames", []), True))
                addr += b["size"]
        open_ = {}
        for e in entries:
            if e["action"] == "alloc":
                if e["addr"] in open_:  # a still-live address reused: the earlier one ends
                    k = open_[e["addr"]]
                    out[k] = (out[k][0], out[k][1], False)
                open_[e["addr"]] = len(out)
                out.append((e["size"], e.get("frames", []), True))
            elif e["action"] == "free_completed" and e["addr"] in open_:
                k = open_.pop(e["addr"])
                out[k] = (out[k][0], out[k][1], False)
    return out


def main():
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    path = sys.argv[1]
    args = sys.argv[2:]
    binary = args[args.index("--tracetui") + 1] if "--tracetui" in args else "target/debug/tracetui"
    mv = load_memory_viz(args[args.index("--memory-viz") + 1] if "--memory-viz" in args else None)
    with open(path, "rb") as f:
        data = pickle.load(f)
    if isinstance(data, list):
        data = {"segments": data, "device_traces": []}
    ok = True

    theirs = mv.memory(data, format_flamegraph=lambda s: s).splitlines()
    js = json.loads(subprocess.run([binary, "memory", path, "--json", "--stacks"], check=True,
                                   capture_output=True, text=True).stdout)["captures"][0]
    same = js["folded"] == theirs
    ok &= same
    print(f"folded lines: memory_viz {len(theirs)}, tracetui {len(js['folded'])}: "
          f"{'SAME' if same else 'DIFFER'}")

    groups = defaultdict(lambda: [0, 0, 0])
    before = defaultdict(int)
    allocs = allocations(data)
    for size, frames, live in allocs:
        g = groups[user_frame(mv, frames) or "(no op)"]
        g[0] += 1
        g[1] += size
        g[2] += size if live else 0
        before[innermost_kept(mv, frames) or "(no op)"] += size
    top = sorted(groups.items(), key=lambda kv: (-kv[1][1], kv[0]))[:10]
    print(f"\n{len(allocs)} allocations, {sum(a[0] for a in allocs) / 2**30:.2f} GiB; "
          f"{len(groups)} user frames (innermost kept frames: {len(before)}, the largest "
          f"{max(before.values(), default=0) / 2**30:.2f} GiB under "
          f"{max(before, key=before.get, default='-')[:60]})")
    mine = {t["name"]: t for t in js["tracks"][0]["top_ops"]} if js["tracks"] else {}
    print(f"{'user frame (first Python line, else first non-allocator frame)':<64} {'count':>6} "
          f"{'MiB':>9} {'live MiB':>9}  tracetui")
    for name, (n, b, live) in top:
        t = mine.get(name)
        same = t is not None and (t["count"], t["bytes"], t["live_bytes"]) == (n, b, live)
        ok &= same
        print(f"{name[:64]:<64} {n:>6} {b / 2**20:>9.2f} {live / 2**20:>9.2f}  "
              f"{'SAME' if same else 'DIFFER ' + str(t and (t['count'], t['bytes'], t['live_bytes']))}")
    if "--write-expected" in args:
        out = args[args.index("--write-expected") + 1]
        with open(out, "w") as f:
            json.dump([{"name": k, "count": v[0], "bytes": v[1], "live_bytes": v[2]} for k, v in top],
                      f, indent=1)
            f.write("\n")
    print(f"\n{'ALL SAME' if ok else 'DIFFERENCES'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
