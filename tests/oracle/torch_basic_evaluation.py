#!/usr/bin/env python3
"""Independent cross-check of `tracetui rank --compat` (not run by CI).

Transcribes torch's `BasicEvaluation` (pytorch/pytorch torch/profiler/_utils.py: compute_self_time,
compute_queue_depth, compute_idle_time, rank_events, EventKey.intervals_overlap, index_of_first_match,
argmax, source_code_location) onto a Kineto JSON trace with the input mapping of docs/analysis.md, runs it,
and compares with `tracetui rank --compat --json`. torch itself is not needed: the float32 scores are
computed with Python floats rounded through `array('f')`.

usage: torch_basic_evaluation.py TRACE.json[.gz] [--top N] [--tracetui PATH]
"""
import argparse, array, gzip, json, math, operator, re, subprocess, sys
from collections import deque

TREE_CATS = {"cpu_op", "Operator", "operator", "user_annotation", "cuda_runtime", "Runtime",
             "xpu_runtime", "mtia_runtime", "privateuse1_runtime", "glow_runtime", "cuda_driver",
             "xpu_driver", "privateuse1_driver", "python_function"}
# Activities torch's deviceTypeFromActivity reports as CUDA: kernels, memcpy, memset, GPU user
# annotations, sync events and CUPTI profiler ranges (all on GPU stream tracks in the JSON).
GPU_CATS = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset", "gpu_user_annotation",
            "cuda_sync", "cuda_profiler_range"}
LAUNCH = ("cudaLaunchKernel", "cudaLaunchKernelExC", "__cudaLaunchKernel",
          "cudaLaunchCooperativeKernel", "cudaLaunchCooperativeKernelMultiDevice")


def ns(us):
    # Kineto µs with three decimals → integer ns, as tracetui parses them (no float detour).
    s = repr(us) if isinstance(us, float) else str(us)
    if "e" in s or "E" in s:
        return round(us * 1000)
    whole, _, frac = s.partition(".")
    frac = (frac + "000")[:3]
    neg = whole.startswith("-")
    v = abs(int(whole)) * 1000 + int(frac)
    return -v if neg else v


class Ev:
    __slots__ = ("id", "name", "start_time_ns", "end_time_ns", "duration_time_ns", "children",
                 "parent", "corr", "track")

    def __init__(self, i, e):
        self.id = i
        self.name = e.get("name", "")
        self.start_time_ns = ns(e["ts"])
        self.duration_time_ns = ns(e.get("dur", 0))
        self.end_time_ns = self.start_time_ns + self.duration_time_ns
        self.children = []
        self.parent = None
        self.corr = (e.get("args") or {}).get("correlation")
        self.track = (e.get("pid"), e.get("tid"))

    def start_ns(self):
        return self.start_time_ns

    def duration_ns(self):
        return self.duration_time_ns


class Interval:
    def __init__(self, start, end, queue_depth=0):
        self.start, self.end, self.queue_depth = start, end, queue_depth


def intervals_overlap(event, intervals):  # EventKey.intervals_overlap, verbatim logic
    overlap_time = 0
    intervals = sorted(intervals, key=lambda x: x.start)
    if intervals:
        overlap_start = max(event.start_time_ns, intervals[0].start)
        overlap_end = min(event.end_time_ns, intervals[0].end)
        if overlap_start < overlap_end:
            overlap_time += overlap_end - overlap_start
    i, j = 0, 1
    while j < len(intervals):
        prev_interval = intervals[i]
        curr_interval = intervals[j]
        j += 1
        if prev_interval.end > curr_interval.start:
            if prev_interval.end > curr_interval.end:
                j += 1
                continue
            else:
                curr_interval.start = prev_interval.end
                i = j
        overlap_start = max(event.start_time_ns, curr_interval.start)
        overlap_end = min(event.end_time_ns, curr_interval.end)
        if overlap_start < overlap_end:
            overlap_time += overlap_end - overlap_start
    return overlap_time


def index_of_first_match(seq, predicate, start=0, end=None):
    if end is None or end >= len(seq):
        end = len(seq)
    for i in range(start, end):
        if predicate(seq[i]):
            return i
    return None


def argmax(seq, key=lambda x: x, start=0, end=None):
    seq = seq[start:end]
    if len(seq) == 0:
        return None
    return seq.index(max(seq, key=key)) + start


def source_code_location(event):
    while event is not None:
        if re.search(r"\.py\(.*\)", event.name) is None:
            event = event.parent
            continue
        return event.name
    return None


def f32(x):
    return array.array("f", [x])[0]


def build(trace):
    evs = trace["traceEvents"] if isinstance(trace, dict) else trace
    xs = [e for e in evs if e.get("ph") == "X" and "ts" in e]
    tree, gpu = [], []
    for i, e in enumerate(xs):
        cat = (e.get("cat") or "").split(",")[0].strip()
        if cat in TREE_CATS:
            tree.append(Ev(i, e))
        elif cat in GPU_CATS:
            gpu.append(Ev(i, e))
    # Containment nesting per thread (torch rule), events sorted by (start asc, end desc).
    by_track = {}
    for e in tree:
        by_track.setdefault(e.track, []).append(e)
    roots = []
    for evs_t in by_track.values():
        evs_t.sort(key=lambda e: (e.start_time_ns, -e.end_time_ns, e.id))
        stack = []
        for e in evs_t:
            while stack and (e.start_time_ns >= stack[-1].end_time_ns or e.end_time_ns > stack[-1].end_time_ns):
                stack.pop()
            if stack:
                e.parent = stack[-1]
                stack[-1].children.append(e)
            else:
                roots.append(e)
            stack.append(e)
    roots.sort(key=lambda e: (e.start_time_ns, e.id))
    launches = [e for e in tree if any(e.name.startswith(p) for p in LAUNCH)]
    kernels = [e for e in gpu if all(w not in e.name.lower() for w in ("mem", "cpy", "alloc", "free"))]
    return roots, launches, kernels


def evaluate(roots, launches, kernels, length):
    metrics = {}
    stack = deque(roots)
    while stack:  # compute_self_time
        cur = stack.pop()
        self_time = cur.duration_time_ns
        for ch in cur.children:
            self_time -= ch.duration_time_ns
            stack.append(ch)
        metrics[cur] = {"self": self_time, "dur": cur.duration_time_ns, "idle": 0, "qd": 0}
    events = sorted(metrics.keys(), key=lambda e: e.start_time_ns)
    # compute_queue_depth (launches/kernels sorted by start; ties by file order).
    L = sorted(launches, key=lambda e: (e.start_ns(), e.id))
    G = sorted(kernels, key=lambda e: (e.start_ns(), e.id))
    mapping, last = {}, 0
    for l in L:
        idx = None
        if l.corr is not None:
            idx = index_of_first_match(G, lambda x: x.corr == l.corr, start=last)
        mapping[l] = idx
        last = idx if idx is not None else last
    cur_k, spawned = 0, -1
    tagged = [(e.start_ns(), 0, e) for e in L] + [(e.start_ns(), 1, e) for e in G] + \
             [(e.start_time_ns, 2, e) for e in events]
    tagged.sort(key=lambda t: (t[0], t[1]))  # stable sort of L ++ G ++ T by start
    Q = []
    for _, kind, e in tagged:
        if kind == 0 and mapping.get(e) is not None:
            spawned = mapping[e]
        while cur_k < len(G) and G[cur_k].start_ns() <= e.start_time_ns:
            cur_k += 1
        depth = max(spawned - cur_k + 1, 0)
        if kind < 2:
            Q.append(Interval(e.start_time_ns, e.end_time_ns, depth))
        else:
            metrics[e]["qd"] = depth
    # compute_idle_time
    idle, idle_start, I = False, 0, []
    if Q and events:
        I += [Interval(events[0].start_time_ns, Q[0].start), Interval(Q[-1].end, events[-1].end_time_ns)]
    for p in Q:
        if p.queue_depth == 0 and not idle:
            idle_start, idle = p.end, True
        if p.queue_depth > 0 and idle:
            I.append(Interval(idle_start, p.start))
            idle = False
    for e in list(metrics.keys()):
        metrics[e]["idle"] = intervals_overlap(e, I)
    # rank_events
    R = list(reversed(Q))
    v = [p.queue_depth for p in R]
    D, i = [], 0
    while i < len(v):
        if v[i] > 0:
            i += 1
            continue
        for j in range(i + 1, len(v)):
            z = index_of_first_match(v, lambda x: x <= 0, start=j)
            p = argmax(v, start=j, end=z)
            if p is not None and v[p] >= 4:
                D.append(Interval(R[p].start, R[i].start))
                i = z if z is not None else i
                break
        i += 1
    cand = [e for e in metrics.keys() if intervals_overlap(e, D)]
    scores = {}
    if cand:
        frac = [f32(metrics[e]["idle"] / metrics[e]["dur"] if metrics[e]["dur"] else 0.0) for e in cand]
        selft = [f32(float(metrics[e]["self"])) for e in cand]

        def z(xs):
            n = len(xs)
            m = sum(xs) / n
            sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1)) if n > 1 else float("nan")
            m, sd = f32(m), f32(sd)
            return [f32((x - m) / sd) if sd not in (0.0,) and not math.isnan(sd) else float("nan") for x in xs]

        zs = [f32(a + f32(0.6) * b) if not (math.isnan(a) or math.isnan(b)) else float("nan")
              for a, b in zip(z(frac), z(selft))]
        order = [e for _, e in sorted(zip(zs, cand), key=operator.itemgetter(0), reverse=True)]
        scores = dict(zip(cand, zs))
        cand = order
    top = cand[:length]
    return {
        "queue_depth_max": max((p.queue_depth for p in Q), default=0),
        "launches": len(L), "kernels": len(G),
        "linked": sum(1 for l in L if mapping[l] is not None),
        "events": len(metrics), "falling_phases": len(D), "candidates": len(cand),
        "optimizable": [{
            "name": e.name, "ts_ns": e.start_time_ns, "dur_ns": e.duration_time_ns,
            "self_ns": metrics[e]["self"], "idle_ns": metrics[e]["idle"],
            "idle_fraction": metrics[e]["idle"] / metrics[e]["dur"] if metrics[e]["dur"] else 0.0,
            "queue_depth": metrics[e]["qd"], "score": scores.get(e), "source": source_code_location(e),
        } for e in top],
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--tracetui", default="target/release/tracetui")
    a = ap.parse_args()
    op = gzip.open if a.trace.endswith(".gz") else open
    with op(a.trace, "rt") as f:
        trace = json.load(f)
    sys.setrecursionlimit(100000)
    py = evaluate(*build(trace), a.top)
    out = subprocess.run([a.tracetui, "rank", a.trace, "--compat", "--json", "--top", str(a.top)],
                         capture_output=True, text=True, check=True)
    rs = json.loads(out.stdout)["captures"][0]
    print(f"== {a.trace}")
    for k in ("launches", "kernels", "linked", "queue_depth_max", "events", "falling_phases", "candidates"):
        print(f"   {k:16} torch {py[k]:>8}  tracetui {rs[k]:>8}  {'ok' if py[k] == rs[k] else 'DIFF'}")
    same = 0
    base = None
    for k, (p, r) in enumerate(zip(py["optimizable"], rs["optimizable"])):
        # tracetui gives start_ns from the capture's zero; only the offset has to be constant.
        base = r["start_ns"] - p["ts_ns"] if base is None else base
        fields = ("name", "dur_ns", "self_ns", "idle_ns", "queue_depth", "source")
        eq = all(p[f] == r[f] for f in fields) and r["start_ns"] - p["ts_ns"] == base
        ds = abs((p["score"] or 0) - (r["score"] or 0)) if p["score"] is not None and r["score"] is not None else 0
        same += eq
        if not eq:
            print(f"   #{k+1} DIFF torch {p}\n        tracetui {r}")
        else:
            print(f"   #{k+1} ok  {p['name'][:50]:50} idle {p['idle_ns']} qd {p['queue_depth']} "
                  f"score torch {p['score']} tracetui {r['score']} (|d| {ds:.2e})")
    print(f"   top-{a.top}: {same} of {max(len(py['optimizable']), len(rs['optimizable']))} identical")


if __name__ == "__main__":
    main()
