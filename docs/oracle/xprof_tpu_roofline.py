#!/usr/bin/env python3
"""Compare `tracetui roofline --json` on a TPU XPlane with XProf's op_profile and roofline_model.

On TPU, XLA records each HLO op's FLOPs and bytes as `flops` / `bytes_accessed` stats on the
plane; XProf's op profile sums them per (program, op) and its roofline model divides them by
the op's time against the chip's peaks. tracetui must give the same per op: occurrences, time,
FLOPs and bytes (op_profile's `rawFlops`, `rawBytesAccessedArray[0]`), the bound and the share
of peak (`roofline_model`'s `bound_by` and `roofline_efficiency`, within 1 %). Async start /
done ops (`copy-start`, `copy-done`, …) are XProf rows but tracetui's transfers: compared per
base name (count, time, bytes), never as a rate.

Needs the `xprof` wheel (`pip install xprof`), or the tools' JSON saved beside the capture
(`--op-profile FILE --roofline-model FILE`, as `traces/tpu-inference/xprof_*.json`). Usage:

    python3 docs/oracle/xprof_tpu_roofline.py CAPTURE.xplane.pb [--tracetui target/debug/tracetui]
        [--op-profile xprof_op_profile.json --roofline-model xprof_roofline_model.json]

Prints one line per XProf op and a summary; exits 1 on a mismatch.
"""

import argparse
import json
import re
import subprocess
import sys
from collections import defaultdict

GIB = float(1 << 30)


def xprof_tool(capture, tool, saved):
    if saved:
        with open(saved) as f:
            return json.load(f)
    from xprof.convert import raw_to_tool_data as r

    data = r.xspace_to_tool_data([capture], tool, {})
    data = data[0] if isinstance(data, tuple) else data
    if isinstance(data, bytes):
        data = data.decode()
    return json.loads(data)


def op_profile_leaves(d):
    """(program id, op or duplicate group, category, flops, bytes, occurrences, time µs)."""
    out = []

    def walk(n, prog):
        x, m, kids = n.get("xla"), n.get("metrics", {}), n.get("children", [])
        name = n.get("name", "")
        dup = name.endswith(" and its duplicate(s)")
        if x is not None and (dup or not kids) and name != "IDLE":
            out.append(dict(program=prog, name=name.replace(" and its duplicate(s)", ""), dup=dup,
                            category=x.get("category"), flops=float(m.get("rawFlops", 0)),
                            bytes=float((m.get("rawBytesAccessedArray") or [0])[0]),
                            count=int(m.get("occurrences", 0)),
                            us=float(m.get("rawTime", 0)) / 1e6))
            return
        mm = re.search(r"\((\d+)\)$", name)
        for c in kids:
            walk(c, mm.group(1) if x is None and mm else prog)

    walk(d["byProgram"], "")
    return out


def roofline_rows(d):
    t = d[0] if isinstance(d, list) else d
    ids = [c["id"] for c in t["cols"]]
    rows = []
    for r in t["rows"]:
        v = dict(zip(ids, [c.get("v") for c in r["c"]]))
        if v["step"] != "Total" or v["category"] == "Program" or not v["include_infeed_outfeed"]:
            continue
        secs = v["total_time"] * 1e-6
        v["flops"] = v["measured_flop_rate"] * 1e9 * secs
        v["bytes"] = v["measured_memory_bw"] * GIB * secs
        rows.append(v)
    return rows, t.get("p", {})


def is_async(name):
    base = re.sub(r"[\d.]+$", "", name)
    return base.endswith(("-start", "-done", "-update")) or base in ("send", "recv")


def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))


def close_us(a, b):
    """Times in µs: tracetui's JSON gives whole ns."""
    return abs(a - b) <= 1e-3 or close(a, b, 1e-6)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("capture")
    ap.add_argument("--tracetui", default="target/debug/tracetui")
    ap.add_argument("--op-profile")
    ap.add_argument("--roofline-model")
    a = ap.parse_args()

    tt = json.loads(subprocess.run([a.tracetui, "roofline", a.capture, "--json"], check=True,
                                   capture_output=True, text=True).stdout)["captures"][0]
    prof = op_profile_leaves(xprof_tool(a.capture, "op_profile", a.op_profile))
    roof, peaks = roofline_rows(xprof_tool(a.capture, "roofline_model", a.roofline_model))

    dev = tt.get("device") or {}
    p = dev.get("peaks") or {}
    print(f"device: XProf {peaks.get('device_type')!r}: peak {float(peaks.get('peak_flop_rate', 0)) / 1e3:g} "
          f"TFLOP/s, HBM {float(peaks.get('peak_hbm_bw', 0)) * GIB / 1e12:.4f} TB/s; tracetui "
          f"{dev.get('name')!r} → {p.get('name')}: bf16 {p.get('bf16')} TFLOP/s, HBM {p.get('mem_tbps')} TB/s")

    ours = {}
    for r in tt["rows"]:
        m = re.search(r"\((\d+)\)$", r["input_dims"])
        ours[(m.group(1) if m else "", r["name"])] = r
    bad = 0
    print(f"{'program':<21} {'op':<24} {'n':>4} {'XProf µs':>14} {'tracetui µs':>14} {'GFLOP/s':>9} "
          f"{'GiB/s':>8} {'bound':>6} {'XProf eff%':>10} {'tracetui %':>10}  verdict")
    for x in roof:
        if is_async(x["operation"]):
            continue
        key = (x["hlo_module_id"], x["operation"])
        r = ours.get(key)
        if r is None:
            print(f"{key[0]:<21} {key[1]:<24} MISSING in tracetui")
            bad += 1
            continue
        us = r["device_ns"] / 1e3
        f, b = r["flops"] * r["count"], (r["bytes"] or 0) * r["count"]
        bound = {"compute": "Compute", "memory": "HBM"}.get(r["bound"], r["bound"])
        eff, pct = 100 * x["roofline_efficiency"], r["peak_pct"] or 0
        ok = (r["count"] == x["occurrences"] and close_us(us, x["total_time"])
              and close(f, x["flops"], 1e-6) and close(b, x["bytes"], 1e-6)
              and bound == x["bound_by"] and abs(pct - eff) <= 0.01 * eff)
        bad += not ok
        print(f"{key[0]:<21} {key[1]:<24} {r['count']:>4} {x['total_time']:>14.3f} {us:>14.3f} "
              f"{x['measured_flop_rate']:>9.3f} {x['measured_memory_bw']:>8.2f} {bound:>6} "
              f"{eff:>10.4f} {pct:>10.4f}  {'equal' if ok else 'DIFFERS'}")

    print("op_profile raw figures (Σ over occurrences; a duplicate group is summed over its members):")
    for x in prof:
        if is_async(x["name"]):
            continue
        if x["dup"]:
            base = re.sub(r"\.\d+$", "", x["name"])
            single = {y["name"] for y in prof if y["program"] == x["program"] and not y["dup"]}
            mem = [r for (pg, n), r in ours.items()
                   if pg == x["program"] and re.sub(r"\.\d+$", "", n) == base and n not in single]
        else:
            mem = [ours[k]] if (k := (x["program"], x["name"])) in ours else []
        n = sum(r["count"] for r in mem)
        f = sum(r["flops"] * r["count"] for r in mem)
        b = sum((r["bytes"] or 0) * r["count"] for r in mem)
        ok = bool(mem) and n == x["count"] and close(f, x["flops"]) and close(b, x["bytes"], 1e-6)
        bad += not ok
        what = f"{x['name']}{' +dup' if x['dup'] else ''}"
        print(f"  {x['program']:<21} {what:<28} {x['count']:>5} FLOPs {x['flops']:>16.0f} {f:>16.0f} "
              f"bytes {x['bytes']:>16.0f} {b:>16.0f}  {'equal' if ok else 'DIFFERS'}")

    print("async start/done ops: XProf rows, tracetui transfers (per base name; no rate):")
    xs = defaultdict(lambda: [0, 0.0, 0.0])
    for x in roof:
        if is_async(x["operation"]):
            k = re.sub(r"\.\d+$", "", x["operation"])
            xs[k][0] += x["occurrences"]
            xs[k][1] += x["total_time"]
            xs[k][2] += x["bytes"]
    tr = {t["name"]: t for t in tt["transfers"] if t["link"] == "async"}
    for k, (n, us, b) in sorted(xs.items()):
        t = tr.get(k)
        ok = (t is not None and t["count"] == n and close_us(t["device_ns"] / 1e3, us)
              and close(t["bytes"] or 0, b, 1e-6) and t["gbytes_per_s"] is None)
        bad += not ok
        tn = t["count"] if t else "-"
        tus = t["device_ns"] / 1e3 if t else float("nan")
        tb = (t["bytes"] or 0) if t else float("nan")
        print(f"  {k:<12} n {n:>5.0f} {tn:>5}  µs {us:>16.3f} {tus:>16.3f}  bytes {b:>16.0f} {tb:>16.0f}  "
              f"{'equal' if ok else 'DIFFERS'}")
    extra = [k for k in ours if k not in {(x["hlo_module_id"], x["operation"]) for x in roof}]
    for k in extra:
        print(f"{k[0]:<21} {k[1]:<24} tracetui row without an XProf op")
    print(f"summary: {len([x for x in roof if not is_async(x['operation'])])} XProf compute rows, "
          f"{len(xs)} async kinds, {bad} differ or missing, {len(extra)} tracetui rows XProf lacks; "
          f"tracetui not modelled {tt['unmodelled_pct']:.2f}% of {tt['total_device_ns'] / 1e3:.3f} µs")
    sys.exit(1 if bad or extra else 0)


if __name__ == "__main__":
    main()
