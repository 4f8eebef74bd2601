#!/usr/bin/env python3
"""Compare `tracetui roofline --json` with AMD TraceLens's perf report on a PyTorch capture.

TraceLens is not on PyPI: fetch github.com/AMD-AGI/TraceLens, `pip install --no-deps -e .` in a
venv with pandas, tqdm, openpyxl, tabulate, orjson, PyYAML, matplotlib. Usage:

    python3 docs/oracle/tracelens_roofline.py TRACE.pt.trace.json.gz \
        --tracelens-python /tmp/roof-venv/bin/python [--tracetui target/debug/tracetui]

Both tools get the same roofs: the peaks tracetui reports for the device are written as
TraceLens's GPU-arch JSON (matrix/vector fp32 = the FP32 peak, 16-bit matrix = the tensor-core
peak, memory bandwidth). TraceLens's `unified_perf_summary` rows are summed per (op name, input
dims) (it splits them further by strides and thread), and its synthetic ops
(`op->kernel (Synthetic Op)`) are matched to tracetui's row of the same family, FLOPs and count.
Prints one line per op and a summary; differences that the formulas explain are labelled.
"""

import argparse
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict


def norm_dims(s):
    """TraceLens writes Python tuples, tracetui the trace's JSON: compare without either."""
    s = s.replace(" ", "").replace("(", "[").replace(")", "]")
    return re.sub(r",\]", "]", s)


def arch_json(peaks):
    fp32 = peaks.get("fp32") or 0
    m = {
        "matrix_fp32": fp32, "vector_fp32": fp32, "vector_fp16": fp32, "vector_bf16": fp32,
        "matrix_fp64": peaks.get("fp64"), "vector_fp64": peaks.get("fp64"),
        "matrix_bf16": peaks.get("bf16"), "matrix_fp16": peaks.get("fp16"),
        "matrix_fp8": peaks.get("fp8"), "matrix_int8": peaks.get("int8"),
    }
    return {"name": peaks["name"], "mem_bw_gbps": peaks["mem_tbps"] * 1000,
            "max_achievable_tflops": {k: v for k, v in m.items() if v}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--tracelens-python", default="/tmp/roof-venv/bin/python")
    ap.add_argument("--tracetui", default="target/debug/tracetui")
    a = ap.parse_args()

    ours = json.loads(subprocess.check_output([a.tracetui, "roofline", a.trace, "--json"]))
    cap = ours["captures"][0]
    tmp = tempfile.mkdtemp(prefix="roof-tl-")
    arch = None
    if cap.get("device") and cap["device"].get("peaks"):
        arch = os.path.join(tmp, "arch.json")
        with open(arch, "w") as f:
            json.dump(arch_json(cap["device"]["peaks"]), f)
    cmd = [a.tracelens_python, "-m", "TraceLens.Reporting.generate_perf_report_pytorch",
           "--profile_json_path", a.trace, "--output_csvs_dir", os.path.join(tmp, "csv")]
    if arch:
        cmd += ["--gpu_arch_json_path", arch]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    tl = defaultdict(lambda: {"count": 0, "time": 0.0, "gflops": None, "mb": None, "pct": [],
                              "cat": "", "model": False})
    with open(os.path.join(tmp, "csv", "unified_perf_summary.csv")) as f:
        for r in csv.DictReader(f):
            name = r["name"]
            key = (name, norm_dims(r["Input Dims"]))
            t = tl[key]
            n = int(r["operation_count"])
            t["count"] += n
            t["time"] += float(r["Kernel Time (µs)_sum"])
            t["cat"] = r["op category"]
            t["model"] = r["has_perf_model"] == "True"
            if r["GFLOPS"] not in ("", "nan"):
                t["gflops"] = float(r["GFLOPS"])
            if r["Data Moved (MB)"] not in ("", "nan"):
                t["mb"] = float(r["Data Moved (MB)"])
            if r.get("Pct Roofline_mean") not in (None, "", "nan"):
                t["pct"].append((float(r["Pct Roofline_mean"]), n))

    rows = {(r["name"], norm_dims(r["input_dims"])): r for r in cap["rows"]}
    # Our rows summed per (name, dims) too (we also split by concrete inputs and types).
    agg = {}
    for r in cap["rows"]:
        k = (r["name"], norm_dims(r["input_dims"]))
        if k in agg:
            agg[k]["count"] += r["count"]
            agg[k]["device_ns"] += r["device_ns"]
        else:
            agg[k] = dict(r)
    rows = agg
    print(f"device: {cap['device']['name'] if cap.get('device') else 'unknown'}  "
          f"tracetui rows {len(rows)}  TraceLens ops {len(tl)} "
          f"({sum(1 for t in tl.values() if t['model'])} with a perf model)")
    print(f"{'op':52} {'input dims':38} {'n tl/us':>9} {'GFLOP tl/us':>21} "
          f"{'MB tl/us':>19} {'kernel µs tl/us':>19} {'%roof tl/us':>13}  note")
    stats = defaultdict(int)
    used = set()
    for (name, dims), t in sorted(tl.items(), key=lambda kv: -kv[1]["time"]):
        r = rows.get((name, dims))
        syn = "(Synthetic Op)" in name
        if r is None and syn and t["gflops"] is not None:
            for k, x in rows.items():
                if k not in used and x["count"] == t["count"] and abs(x["flops"] - t["gflops"] * 1e9) < 1 \
                        and x["family"] == "attention":
                    r = x
                    break
        if r is None:
            stats["tl_only"] += 1
            if t["model"]:
                stats["tl_only_modelled"] += 1
            print(f"{name[:52]:52} {dims[:38]:38} {t['count']:>9} {'':>21} {'':>19} "
                  f"{t['time']:>9.3f}/{'-':>9} {'':>13}  TraceLens only ({t['cat']}"
                  f"{', no perf model' if not t['model'] else ''})")
            continue
        used.add((r["name"], norm_dims(r["input_dims"])))
        stats["matched"] += 1
        ours_us = r["device_ns"] / 1000.0
        notes = []
        if t["count"] != r["count"]:
            notes.append("count differs")
        if abs(t["time"] - ours_us) > 0.002 * max(1, r["count"]):
            notes.append("time differs")
        else:
            stats["time_equal"] += 1
        g = t["gflops"]
        if g is not None:
            stats["both_modelled"] += 1
            if abs(g * 1e9 - r["flops"]) <= 1e-6 * max(1.0, r["flops"]):
                stats["flops_equal"] += 1
            else:
                notes.append("FLOPs differ")
        mb = t["mb"]
        if mb is not None and r["bytes"] is not None:
            if abs(mb * 1048576 - r["bytes"]) <= 1e-6 * max(1.0, r["bytes"]):
                stats["bytes_equal"] += 1
            else:
                fam = r["family"]
                why = {"attention": "TraceLens bpe=2 for any dtype",
                       "reduce": "TraceLens: 1 output element (reads concrete dims as typed)"}
                notes.append("bytes differ" + (f": {why[fam]}" if fam in why else ""))
        pct_tl = (sum(p * n for p, n in t["pct"]) / sum(n for _, n in t["pct"])) if t["pct"] else None
        if g is None:
            notes.append("tracetui only models it")
        gs = f"{g:.6f}" if g is not None else "-"
        ms = f"{mb:.4f}" if mb is not None else "-"
        ob = f"{r['bytes'] / 1048576:.4f}" if r["bytes"] is not None else "-"
        pt = f"{pct_tl:.2f}" if pct_tl is not None else "-"
        po = f"{r['peak_pct']:.2f}" if r.get("peak_pct") is not None else "-"
        print(f"{name[:52]:52} {dims[:38]:38} {t['count']:>4}/{r['count']:<4} "
              f"{gs:>10}/{r['flops'] / 1e9:<10.6f} {ms:>9}/{ob:<9} {t['time']:>9.3f}/{ours_us:<9.3f} "
              f"{pt:>6}/{po:<6}  {'; '.join(notes)}")
    ours_only = [k for k in rows if k not in used]
    for k in ours_only:
        print(f"{k[0][:52]:52} {k[1][:38]:38} {'':>9} {'':>21} {'':>19} "
              f"{'-':>9}/{rows[k]['device_ns'] / 1000:<9.3f} {'':>13}  tracetui only")
    print()
    print(f"matched {stats['matched']} ops; kernel time equal (±2 ns per call) in {stats['time_equal']}; "
          f"both modelled {stats['both_modelled']}: FLOPs equal in {stats['flops_equal']}, "
          f"bytes equal in {stats['bytes_equal']}; TraceLens-only {stats['tl_only']} "
          f"({stats['tl_only_modelled']} with a perf model); tracetui-only {len(ours_only)}")
    tl_total = sum(t["time"] for t in tl.values())
    print(f"kernel time in TraceLens's table {tl_total:.3f} µs; tracetui total device "
          f"{cap['total_device_ns'] / 1000:.3f} µs, modelled {cap['modelled_device_ns'] / 1000:.3f} µs, "
          f"not modelled {cap['unmodelled_device_ns'] / 1000:.3f} µs ({cap['unmodelled_pct']:.1f} %)")


if __name__ == "__main__":
    sys.exit(main())
