"""Oracle for `tracetui memory SNAPSHOT.pickle`: builds CUDA allocator snapshots with the structure
torch documents (`torch.cuda.memory._snapshot` docstring) and checks tracetui against torch's own
`torch/cuda/_memory_viz.py` on them.

usage:
  python3 docs/oracle/memory_snapshot.py make DIR                 write the snapshot pickles
  python3 docs/oracle/memory_snapshot.py check DIR [--tracetui BIN] [--memory-viz PATH]
          [--write-expected]

`make` writes snap_multi.pickle (3 devices, ring buffer truncated, an OOM, a `snapshot` entry,
frames with interpreter frames that memory_viz filters, a legacy `history` block, a block without
frames, addresses above 2^32), snap_expandable.pickle (expandable segments: segment_map /
segment_unmap) and snap_small.pickle (protocol 2, a segments-only list), all deterministic.

`check` runs memory_viz's `memory` and `segments` (folded lines, before flamegraph.pl) and `segsum`
(`stats`) on each pickle and compares them with `tracetui memory --json --stacks`: the same folded
lines in the same order, and the same totals printed with memory_viz's own size formatting. It also
replays each device trace by the rule of pytorch.org/memory_viz (memory released at free_completed;
a free without its alloc was allocated before the trace; blocks active at snapshot time that the
trace never allocated too) and compares peak allocated / reserved and the counts. With
--write-expected it writes DIR/*.memory.txt, *.segments.txt, *.stats.txt for the Rust tests.

memory_viz is imported from torch (`torch.cuda._memory_viz`, pure Python, it needs no GPU) or
loaded from --memory-viz PATH (a copy of that file).
"""
import importlib.util, json, os, pickle, random, subprocess, sys

FRAMES = [
    {"filename": "/home/u/train.py", "line": 42, "name": "train_step"},
    {"filename": "/usr/lib/python3.11/site-packages/torch/nn/modules/module.py", "line": 1736, "name": "_call_impl"},
    {"filename": "Python/ceval.c", "line": 0, "name": "_PyEval_EvalFrameDefault"},
    {"filename": "??", "line": 0, "name": "torch::unwind::unwind()"},
    {"filename": "/home/u/model.py", "line": 7, "name": "attn"},
    {"filename": "/home/u/model.py", "line": 19, "name": "mlp"},
]


def stack(rng):
    # innermost first, as torch writes them
    inner = rng.choice([FRAMES[4], FRAMES[5]])
    return [FRAMES[3], inner, FRAMES[2], FRAMES[1], FRAMES[0]] if rng.random() < 0.7 else [inner, FRAMES[0]]


SEG = 20 << 20


def device(dev, rng, n, expandable=False, keep=None, oom=False):
    t = 1_700_000_000_000_000 + dev * 1000
    base = (0x7F00_0000_0000 + (dev << 36))
    segs = []  # dict(address, total_size, stream, blocks=[[addr, size, state, requested, frames]])
    entries = []
    live = {}

    def tick():
        nonlocal t
        t += rng.randint(1, 40)
        return t

    def new_segment():
        addr = base + len(segs) * (SEG * 2)
        s = {"address": addr, "total_size": SEG, "stream": 0 if dev != 1 else 7, "blocks": [[addr, SEG, "inactive", 0, None]]}
        segs.append(s)
        act = "segment_map" if expandable else "segment_alloc"
        entries.append({"action": act, "addr": addr, "size": SEG, "stream": s["stream"], "time_us": tick(), "frames": []})
        return s

    def alloc(size, requested, frames):
        for s in segs:
            for k, b in enumerate(s["blocks"]):
                if b[2] == "inactive" and b[1] >= size:
                    rest = b[1] - size
                    s["blocks"][k] = [b[0], size, "active_allocated", requested, frames]
                    if rest:
                        s["blocks"].insert(k + 1, [b[0] + size, rest, "inactive", 0, None])
                    return s, b[0]
        s = new_segment()
        return alloc(size, requested, frames)

    def free(addr):
        for s in segs:
            for k, b in enumerate(s["blocks"]):
                if b[0] == addr:
                    b[2] = "inactive"
                    b[3] = 0
                    b[4] = None
                    # merge with inactive neighbours
                    merged = []
                    for x in s["blocks"]:
                        if merged and merged[-1][2] == "inactive" and x[2] == "inactive":
                            merged[-1][1] += x[1]
                        else:
                            merged.append(list(x))
                    s["blocks"] = merged
                    return s

    for i in range(n):
        if live and rng.random() < 0.45:
            addr = rng.choice(sorted(live))
            size, frames = live.pop(addr)
            s = free(addr)
            for act in ("free_requested", "free_completed"):
                entries.append({"action": act, "addr": addr, "size": size, "stream": s["stream"], "time_us": tick(), "frames": frames})
        else:
            size = rng.choice([512, 1024, 4096, 1 << 20, 3 << 20, 6 << 20])
            requested = size - rng.randint(0, 511)
            frames = stack(rng)
            s, addr = alloc(size, requested, frames)
            live[addr] = (size, frames)
            entries.append({"action": "alloc", "addr": addr, "size": size, "stream": s["stream"], "time_us": tick(), "frames": frames})
        if expandable and i == n // 2:
            # unmap an entirely free segment, if any
            for s in list(segs):
                if all(b[2] == "inactive" for b in s["blocks"]):
                    segs.remove(s)
                    entries.append({"action": "segment_unmap", "addr": s["address"], "size": s["total_size"], "stream": s["stream"], "time_us": tick(), "frames": []})
                    break
        if i == n // 3:
            entries.append({"action": "snapshot", "addr": 0, "size": 0, "stream": 0, "time_us": tick(), "frames": []})
    if oom:
        entries.append({"action": "oom", "addr": 0, "size": 40 << 30, "stream": 0, "time_us": tick(), "device_free": 123 << 20, "frames": stack(rng)})
    if keep is not None:
        entries = entries[-keep:]  # the ring buffer of max_entries
    out_segs = []
    for s in segs:
        blocks = []
        for addr, size, state, requested, frames in s["blocks"]:
            b = {"address": addr, "size": size, "requested_size": requested if state != "inactive" else 0, "state": state, "frames": frames or []}
            blocks.append(b)
        out_segs.append({
            "device": dev, "address": s["address"], "total_size": s["total_size"], "stream": s["stream"],
            "segment_type": "large", "segment_pool_id": (0, 0), "is_expandable": expandable,
            "allocated_size": sum(b["size"] for b in blocks if b["state"] == "active_allocated"),
            "active_size": sum(b["size"] for b in blocks if b["state"].startswith("active")),
            "requested_size": sum(b["requested_size"] for b in blocks), "frames": [], "blocks": blocks,
        })
    return out_segs, entries


def make(d):
    os.makedirs(d, exist_ok=True)
    rng = random.Random(25)
    segs, traces = [], []
    for dev, (n, keep, oom) in enumerate([(120, 150, True), (80, 60, False), (0, None, False)]):
        s, e = device(dev, rng, n, keep=keep, oom=oom)
        segs += s
        traces.append(e)
    # device 2: one segment only, no trace; a legacy block (history) and a block without frames
    segs.append({"device": 2, "address": 1 << 40, "total_size": 2 << 20, "stream": 0, "segment_type": "small",
                 "segment_pool_id": (0, 0), "is_expandable": False, "allocated_size": 1536, "active_size": 1536,
                 "requested_size": 1500, "frames": [],
                 "blocks": [{"size": 1024, "state": "active_allocated",
                             "history": [{"addr": 1 << 40, "real_size": 700, "frames": [FRAMES[5], FRAMES[0]]},
                                         {"addr": 1 << 40, "real_size": 200}]},
                            {"address": (1 << 40) + 1024, "size": 512, "requested_size": 500, "state": "active_allocated"},
                            {"address": (1 << 40) + 1536, "size": (2 << 20) - 1536, "requested_size": 0, "state": "inactive", "frames": []}]})
    with open(os.path.join(d, "snap_multi.pickle"), "wb") as f:
        pickle.dump({"segments": segs, "device_traces": traces, "allocator_settings": {"expandable_segments": False}}, f, protocol=4)
    s, e = device(0, rng, 150, expandable=True)
    with open(os.path.join(d, "snap_expandable.pickle"), "wb") as f:
        pickle.dump({"segments": s, "device_traces": [e]}, f, protocol=5)
    s, _ = device(0, rng, 12)
    with open(os.path.join(d, "snap_small.pickle"), "wb") as f:
        pickle.dump(s, f, protocol=2)


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


def replay(data):
    """Per device: the rule of pytorch.org/memory_viz, in plain Python."""
    out = []
    traces = data.get("device_traces", [])
    devs = max([len(traces) - 1] + [s.get("device", 0) for s in data["segments"]])
    for dev in range(devs + 1):
        entries = traces[dev] if dev < len(traces) else []
        live, before, seg_delta = set(), [], 0
        for e in entries:
            a = e["action"]
            if a == "alloc":
                live.add(e["addr"])
            elif a == "free_completed":
                if e["addr"] in live:
                    live.discard(e["addr"])
                else:
                    before.append(e["size"])
            elif a in ("segment_alloc", "segment_map"):
                seg_delta += e["size"]
            elif a in ("segment_free", "segment_unmap"):
                seg_delta -= e["size"]
        untraced, reserved_end = 0, 0
        for s in data["segments"]:
            if s.get("device", 0) != dev:
                continue
            reserved_end += s["total_size"]
            addr = s["address"]
            for b in s["blocks"]:
                if b["state"].startswith("active") and addr not in live:
                    untraced += b["size"]
                addr += b["size"]
        if not entries and reserved_end == 0:
            continue
        alloc = sum(before) + untraced
        res = reserved_end - seg_delta
        peak_a, peak_r = alloc, res
        counts = {"allocs": 0, "frees": 0}
        for e in entries:
            a = e["action"]
            if a == "alloc":
                alloc += e["size"]; counts["allocs"] += 1
            elif a == "free_completed":
                alloc -= e["size"]; counts["frees"] += 1
            elif a in ("segment_alloc", "segment_map"):
                res += e["size"]
            elif a in ("segment_free", "segment_unmap"):
                res -= e["size"]
            peak_a, peak_r = max(peak_a, alloc), max(peak_r, res)
        out.append({"device": f"cuda:{dev}", "peak_allocated": peak_a, "peak_reserved": peak_r,
                    "unmatched_frees": len(before), **counts})
    return out


def check(d, binary, mv_path, write_expected):
    mv = load_memory_viz(mv_path)
    ok = True
    for name in sorted(os.listdir(d)):
        if not name.endswith(".pickle"):
            continue
        path = os.path.join(d, name)
        with open(path, "rb") as f:
            data = pickle.load(f)
        if isinstance(data, list):
            data = {"segments": data, "traces": []}
        folded = mv.memory(data, format_flamegraph=lambda s: s)
        folded_seg = mv.segments(data, format_flamegraph=lambda s: s)
        stats = mv.segsum(data)
        if write_expected:
            stem = path[: -len(".pickle")]
            for ext, text in ((".memory.txt", folded), (".segments.txt", folded_seg), (".stats.txt", stats)):
                with open(stem + ext, "w") as f:
                    f.write(text)
        r = json.loads(subprocess.run([binary, "memory", path, "--json", "--stacks"], check=True,
                                      capture_output=True, text=True).stdout)["captures"][0]
        ours = r["folded"]
        same_lines = ours == folded.splitlines()
        same_seg = r["folded_segments"] == folded_seg.splitlines()
        t = r["segments"]
        lines = [f"segments: {t['segments']}", f"total_reserved: {mv.Bytes(t['total_reserved'])}",
                 f"total_allocated: {mv.Bytes(t['total_allocated'])}",
                 f"total_free: {mv._report_free(t['free_external'], t['free_internal'])}"]
        same_totals = all(l in stats.splitlines() for l in lines)
        rep = replay(data)
        mine = [{"device": x["device"], "peak_allocated": x["peak_allocated"], "peak_reserved": x["peak_reserved"],
                 "unmatched_frees": x["unmatched_frees"], "allocs": x["allocs"], "frees": x["frees"]}
                for x in r["tracks"]]
        same_replay = mine == rep
        print(f"{name}: memory folded lines {len(folded.splitlines())} {'SAME' if same_lines else 'DIFFER'}; "
              f"segments folded lines {len(folded_seg.splitlines())} {'SAME' if same_seg else 'DIFFER'}; "
              f"stats totals {'SAME' if same_totals else 'DIFFER'} ({'; '.join(lines)}); "
              f"trace replay {'SAME' if same_replay else 'DIFFER'} {rep}")
        if not (same_lines and same_seg and same_totals and same_replay):
            ok = False
            if not same_replay:
                print("  tracetui:", mine)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("make", "check"):
        sys.exit(__doc__)
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        args = sys.argv[3:]
        binary = args[args.index("--tracetui") + 1] if "--tracetui" in args else "target/release/tracetui"
        mv_path = args[args.index("--memory-viz") + 1] if "--memory-viz" in args else None
        check(sys.argv[2], binary, mv_path, "--write-expected" in args)
