"""Compare `tracetui stacks --torch` with torch's own export_stacks (not run by CI).

usage: flame_torch_stacks.py TRACETUI CAPTURE.pt.trace.json[.gz] [--device]

With a FILE.stacks.txt (FILE.stacks_device.txt with --device) beside the capture — written by
/work/shared/tools/gen_torch_capture.py from the same profile — torch's lines are summed per stack
and compared with tracetui's, which must be equal line for line.

Without it (torch not installed), the script falls back to an independent Python reading of the
same rules straight from the JSON (profiler_util.py: _populate_cpu_children, _remove_dup_nodes,
_set_backward_stacktraces, _filter_stack_entry, export_stacks) — a cross-check of tracetui's
implementation, not of torch itself; it says which one it compared against.
"""
import collections, gzip, json, os, subprocess, sys

tracetui, capture = sys.argv[1], sys.argv[2]
device = "--device" in sys.argv
stem = capture.replace(".gz", "").replace(".pt.trace.json", "")
ref_path = stem + (".stacks_device.txt" if device else ".stacks.txt")


def summed(text):
    m = collections.Counter()
    for line in text.splitlines():
        if line.strip():
            s, v = line.rsplit(" ", 1)
            m[s] += int(v)
    return m


FILTERED = [("autograd/__init__", "_make_grads"), ("autograd/__init__", "backward"),
            ("torch/tensor", "backward"), ("_internal/common_utils", "prof_callable"),
            ("_internal/common_utils", "prof_func_call"), ("_internal/common_utils", "prof_meth_call")]
OPS = {"cpu_op", "user_annotation", "cuda_runtime", "cuda_driver", "Operator", "Runtime"}


def rewrite(n):
    return "ProfilerStep*" if n.startswith("ProfilerStep#") else n


def reading(path):
    """Independent reading of export_stacks(self_cpu_time_total) from the JSON (ns integers)."""
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    evs = json.loads(raw)["traceEvents"]
    ns = lambda x: round(float(x) * 1000)
    by_thread = collections.defaultdict(list)
    for e in evs:
        if e.get("ph") != "X" or (e.get("cat") not in OPS and e.get("cat") != "python_function"):
            continue
        s = ns(e["ts"]); d = ns(e.get("dur", 0))
        by_thread[(e["pid"], e["tid"])].append(
            dict(name=e["name"], py=e.get("cat") == "python_function", s=s, e=s + d, dur=d,
                 args=e.get("args", {}), parent=None, kids=[], tid=(e["pid"], e["tid"])))
    out = []
    allevs = []
    for t, lst in by_thread.items():
        lst.sort(key=lambda v: (v["s"], -v["e"]))
        st = []
        for v in lst:
            while st and (v["s"] >= st[-1]["e"] or v["e"] > st[-1]["e"]):
                st.pop()
            if st:
                v["parent"] = st[-1]; st[-1]["kids"].append(v)
            st.append(v)
        # torch's C++ build_tree, for stacks: parent = innermost event still open at the start;
        # the outermost open event that ended before the start closes with everything above it.
        chain = []
        for v in lst:
            cut = next((i for i, o in enumerate(chain) if o["e"] < v["s"]), None)
            if cut is not None:
                del chain[cut:]
            v["sparent"] = chain[-1] if chain else None
            if v["e"] > v["s"]:
                chain.append(v)
        while True:  # _remove_dup_nodes
            dele = []
            for v in lst:
                p = v["parent"]
                if v.get("del") or p is None:
                    continue
                if rewrite(p["name"]) == rewrite(v["name"]) and len(p["kids"]) == 1:
                    p["kids"] = v["kids"]
                    for k in v["kids"]:
                        k["parent"] = p
                    v["del"] = True; dele.append(v)
            if not dele:
                break
        allevs += [v for v in lst if not v.get("del")]

    def stack(v):
        fr = []
        p = v["sparent"]
        while p is not None:
            if p["py"] and all(not (a in p["name"] and b in p["name"]) for a, b in FILTERED):
                fr.append(p["name"])
            p = p["sparent"]
        return fr

    def is_bwd(v):
        return v["name"].startswith("torch::autograd::") or (
            v["args"].get("Fwd thread id", 0) > 0
            and not v["name"].startswith("autograd::engine::evaluate_function"))

    def bw_parent(v):
        while v is not None:
            if is_bwd(v):
                return v
            v = v["parent"]
        return None

    fwd = {}
    for v in allevs:  # per thread, start order
        if bw_parent(v) is None:
            fwd.setdefault((v["args"].get("Sequence number", -1), v["tid"]), stack(v))
    for v in allevs:  # python events too: torch's verbose event list holds them
        p = bw_parent(v)
        fwd_tid = p["args"].get("Fwd thread id", 0) if p is not None else 0
        fr = stack(v) if p is None else (
            fwd.get((p["args"].get("Sequence number", -1), v["tid"]), []) if fwd_tid > 0 else [])
        val = (v["dur"] - sum(k["dur"] for k in v["kids"])) // 1000
        if fr and val > 0:
            out.append(";".join(f.translate(str.maketrans(" ;\t\n", "____")) for f in reversed(fr))
                       + " " + str(val))
    return "\n".join(out)


args = [tracetui, "stacks", capture, "--torch"] + (["--metric", "device"] if device else [])
ours = summed(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
if os.path.exists(ref_path):
    ref, against = summed(open(ref_path).read()), "torch's " + os.path.basename(ref_path)
elif device:
    sys.exit("no " + ref_path + " (needs a GPU run of gen_torch_capture.py)")
else:
    ref, against = summed(reading(capture)), "the independent Python reading (torch not available)"
keys = sorted(set(ours) | set(ref))
diff = [(k, ours.get(k, 0), ref.get(k, 0)) for k in keys if ours.get(k, 0) != ref.get(k, 0)]
print(f"{os.path.basename(capture)}: {len(keys)} stacks, compared with {against}")
print(f"  tracetui total {sum(ours.values())} us, reference total {sum(ref.values())} us")
print(f"  equal stacks: {len(keys) - len(diff)} / {len(keys)}")
for k, a, b in diff[:10]:
    print(f"  differs: {k[-100:]}  tracetui={a} reference={b}")
sys.exit(1 if diff else 0)
