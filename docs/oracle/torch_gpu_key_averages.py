"""Compare `tracetui stats --json` with torch's own key_averages() of a GPU capture (not run by CI).

usage: torch_gpu_key_averages.py TRACETUI CAPTURE.pt.trace.json[.gz] [--nest-cat python_function]

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
Prints one line per differing row and a summary; exit 1 on any difference.
"""
import json, subprocess, sys

tracetui, path = sys.argv[1], sys.argv[2]
nest = sys.argv[sys.argv.index("--nest-cat") + 1] if "--nest-cat" in sys.argv else None
stem = path.replace(".gz", "").replace(".pt.trace.json", "")
ref = json.load(open(stem + ".key_averages.json"))
cmd = [tracetui, "stats", path, "--json", "--cat",
       "cpu_op,user_annotation,cuda_runtime,cuda_driver,kernel,gpu_memcpy,gpu_memset,gpu_user_annotation"]
if nest:
    cmd += ["--nest-cat", nest]
out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
cap = out["captures"][0] if isinstance(out, dict) and "captures" in out else out[0]
DEVICE_KINDS = {"kernel", "memcpy", "memset", "gpu_annotation"}
ours = {}
for r in cap["stats"]:
    ours[(r["name"], r["kind"] in DEVICE_KINDS)] = r


def close(a_us, b_us):
    return abs(a_us - b_us) <= max(1.0, abs(b_us) * 1e-3)


checked = {"count": 0, "self_cpu": 0, "cpu_total": 0, "self_device": 0, "memory": 0}
bad = 0
worst = {"self_cpu": 0.0, "cpu_total": 0.0, "self_device": 0.0}
for r in ref:
    dev = r["cpu_total_us"] == 0 and r["self_cpu_us"] == 0
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
    mine = o["device_total_ns"] if o["kind"] == "gpu_annotation" else o["self_device_ns"]
    checked["self_device"] += 1
    worst["self_device"] = max(worst["self_device"], abs(mine / 1000 - r["self_device_us"]))
    if not close(mine / 1000, r["self_device_us"]):
        diffs.append(f"self_device {mine / 1000:.3f} vs torch {r['self_device_us']:.3f} µs")
    if diffs:
        bad += 1
        print(f"DIFFER   {o['kind']:>14} {r['name'][:70]}: " + "; ".join(diffs))
print(f"{path}: {len(ref) - bad}/{len(ref)} torch rows equal "
      f"(checked {checked}); worst |Δ| µs: "
      + ", ".join(f"{k} {v:.3f}" for k, v in worst.items()))
sys.exit(1 if bad else 0)
