"""Compare `tracetui stats --json` with torch's own key_averages() of a GPU capture (not run by CI).

usage: torch_gpu_key_averages.py TRACETUI CAPTURE.pt.trace.json[.gz] [--cat-set] [--nest-cat python_function]

By default tracetui runs with no flags at all (`tracetui stats FILE --json`): on a PyTorch
capture its default table is torch's key_averages(), the event set read from the file
(src/analysis/torch_events.rs). `--cat-set` passes torch's categories explicitly instead.

FILE.key_averages.json beside the capture is written by tools/gen_torch_capture.py from
the same profile: per torch row (name, device type) count, self_cpu_us, cpu_total_us,
self_device_us and the memory columns. tracetui runs with torch's event set
(`--cat cpu_op,user_annotation,cuda_runtime,cuda_driver,kernel,gpu_memcpy,gpu_memset,
gpu_user_annotation`). torch keeps CPU and device rows of one name apart by device type: a row with
zero CPU time is a device row (kernels, copies, device annotations) and is compared with
tracetui's device-kind row of the name; the others with its host-kind row.

Compared per row: count (equal), self and total CPU time, self device time (within 1 µs or
0.1 %), memory columns (equal; host rows only — device rows have none in either tool). For a
`gpu_annotation` row torch's Self CUDA (the annotation's span) is compared with tracetui's
`device_total_ns`: tracetui gives an annotation no self device time (docs/stats.md).
torch's device total is not in the file (gen_torch_capture.py writes self_device_us only).

One documented difference (docs/stats.md): kernels whose launch call carries no `External id`
(a `cudaGraphLaunch` made outside any op, e.g. `graph.replay()` under `record_function` only)
are no op's in torch; tracetui gives their time to the event around the launch. A host row
that differs by exactly the time of such kernels launched inside its events is reported as
DOCUMENTED, not as a difference.
Prints one line per differing row and a summary; exit 1 on any difference.
"""
import json, subprocess, sys

tracetui, path = sys.argv[1], sys.argv[2]
nest = sys.argv[sys.argv.index("--nest-cat") + 1] if "--nest-cat" in sys.argv else None
stem = path.replace(".gz", "").replace(".pt.trace.json", "")
def _load_ref(stem):
    import gzip, os
    for p, op in ((stem + ".key_averages.json", open), (stem + ".key_averages.json.gz", gzip.open)):
        if os.path.exists(p):
            with op(p, "rt") as f:
                return json.load(f)
    raise SystemExit(f"no {stem}.key_averages.json[.gz] beside the capture")


ref = _load_ref(stem)
cmd = [tracetui, "stats", path, "--json"]
if "--cat-set" in sys.argv:
    cmd += ["--cat", "cpu_op,user_annotation,cuda_runtime,cuda_driver,kernel,gpu_memcpy,"
            "gpu_memset,gpu_user_annotation"]
if nest:
    cmd += ["--nest-cat", nest]
import os
out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True,
                                env={**os.environ, "TRACETUI_CACHE": "off"}).stdout)
cap = out["captures"][0] if isinstance(out, dict) and "captures" in out else out[0]
DEVICE_KINDS = {"kernel", "memcpy", "memset", "gpu_annotation"}


def unlinked_device_us(path):
    """µs of device activities launched by a call without `External id`, per name of the
    innermost cpu_op / user_annotation around the call (ProfilerStep#N as ProfilerStep*)."""
    import collections, gzip, re
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        ev = json.load(f)
    ev = ev["traceEvents"] if isinstance(ev, dict) else ev
    calls = {e["args"]["correlation"]: e for e in ev
             if e.get("cat") in ("cuda_runtime", "cuda_driver")
             and "correlation" in e.get("args", {}) and "External id" not in e["args"]}
    hosts = collections.defaultdict(list)
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation"):
            hosts[(e["pid"], e["tid"])].append(e)
    out = collections.Counter()
    for e in ev:
        call = calls.get(e.get("args", {}).get("correlation"))
        if call is None or e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        around = [h for h in hosts[(call["pid"], call["tid"])]
                  if h["ts"] <= call["ts"] and call["ts"] + call["dur"] <= h["ts"] + h["dur"]]
        if around:
            inner = max(around, key=lambda h: (h["ts"], -h["dur"]))
            out[re.sub(r"^ProfilerStep#\d+$", "ProfilerStep*", inner["name"])] += e["dur"]
    return out


unlinked = unlinked_device_us(path)
ours = {}
for r in cap["stats"]:
    ours[(r["name"], r["kind"] in DEVICE_KINDS)] = r


def close(a_us, b_us):
    return abs(a_us - b_us) <= max(1.0, abs(b_us) * 1e-3)


checked = {"count": 0, "self_cpu": 0, "cpu_total": 0, "self_device": 0, "memory": 0}
bad = documented = 0
worst = {"self_cpu": 0.0, "cpu_total": 0.0, "self_device": 0.0}
for r in ref:
    dev = r["cpu_total_us"] == 0 and r["self_cpu_us"] == 0 and "self_device_us" in r
    o = ours.get((r["name"], dev))
    if o is None:
        bad += 1
        print(f"MISSING  {'device' if dev else 'host'} row {r['name'][:90]}")
        continue
    diffs = []
    checked["count"] += 1
    if o["count"] != r["count"]:
        diffs.append(f"count {o['count']} vs torch {r['count']}")
    if not dev:
        for key, mine, theirs in (("self_cpu", o["self_ns"], r["self_cpu_us"]),
                                  ("cpu_total", o["total_ns"], r["cpu_total_us"])):
            checked[key] += 1
            worst[key] = max(worst[key], abs(mine / 1000 - theirs))
            if not close(mine / 1000, theirs):
                diffs.append(f"{key} {mine / 1000:.3f} vs torch {theirs:.3f} µs")
        mem = ["self_cpu_mem", "cpu_mem", "self_device_mem", "device_mem"]
        if "cpu_mem" in r and any(k in o for k in mem):
            checked["memory"] += 1
            if any(o.get(k, 0) != r[k] for k in mem):
                diffs.append(f"memory {[o.get(k) for k in mem]} vs torch {[r[k] for k in mem]}")
    else:
        mem = ["self_cpu_mem", "cpu_mem", "self_device_mem", "device_mem"]
        if any(o.get(k) for k in mem):
            diffs.append(f"device row with memory figures {[o.get(k) for k in mem]}")
    if "self_device_us" not in r:
        # CPU-only answers (torch-cpu-cnn): count, self and total CPU only.
        if diffs:
            bad += 1
            print(f"DIFFER   {o['kind']:>14} {r['name'][:70]}: " + "; ".join(diffs))
        continue
    mine = o["device_total_ns"] if o["kind"] == "gpu_annotation" else o["self_device_ns"]
    checked["self_device"] += 1
    worst["self_device"] = max(worst["self_device"], abs(mine / 1000 - r["self_device_us"]))
    extra = 0.0 if dev else unlinked.get(r["name"], 0.0)
    if extra and not diffs and close(mine / 1000, r["self_device_us"] + extra):
        documented += 1
        print(f"DOCUMENTED {o['kind']:>12} {r['name'][:70]}: self_device {mine / 1000:.3f} vs "
              f"torch {r['self_device_us']:.3f} µs = torch + {extra:.3f} µs launched without "
              f"External id inside it")
        continue
    if not close(mine / 1000, r["self_device_us"]):
        diffs.append(f"self_device {mine / 1000:.3f} vs torch {r['self_device_us']:.3f} µs")
    if diffs:
        bad += 1
        print(f"DIFFER   {o['kind']:>14} {r['name'][:70]}: " + "; ".join(diffs))
print(f"{path}: {len(ref) - bad - documented}/{len(ref)} torch rows equal, "
      f"{documented} documented differences "
      f"(checked {checked}); worst |Δ| µs: "
      + ", ".join(f"{k} {v:.3f}" for k, v in worst.items()))
sys.exit(1 if bad else 0)
