#!/usr/bin/env python3
"""Oracle: tracetui's graph-capture merge against TraceLens's inference report.

For every inference trace of TraceLens's tests/traces/inference/ that has both a replay trace
and a capture_traces/ folder, runs

    tracetui stats --launchers --json TRACE        (capture_traces/ beside it is merged)

and compares, per op name, the direct kernel time and the count of launcher instances with
TraceLens's ops_summary.csv (`total_direct_kernel_time_sum` in µs, `Count`): equal within 1 %
(a row whose time is under 0.05 % of the trace's device time only needs to exist on both
sides). Also prints the share of device time launched by a cpu_op (target >= 95 %).

Usage: tracelens_inference.py [--tracetui BIN] [--tracelens DIR] [--csvs DIR]
  --tracelens  the TraceLens checkout (default /work/tracelens)
  --csvs       a folder with TraceLens's own re-run output per trace (<csvs>/<trace dir>/ops_summary.csv,
               from TraceLens_generate_perf_report_pytorch_inference); default: the committed
               perf_csvs/ of each trace
Exit status 0 when every trace passes.
"""
import argparse
import csv
import json
import re
import os
import subprocess
import sys

TRACES = [
    ("vllm_decode_full", "graph_execution.json.gz"),
    ("vllm_prefilldecode_piecewise", "graph_execution.json.gz"),
    ("sglang_decode", "sglang_Qwen3-8B_decode.json.gz"),
    ("xdit_flux.1_aiter_sage", "profile_trace_rank_0.json.gz"),
]


def tracelens_rows(path):
    rows = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            name = r["name"]
            t, n = rows.get(name, (0.0, 0))
            rows[name] = (t + float(r["total_direct_kernel_time_sum"]), n + int(r["Count"]))
    return rows


def tracetui_report(binary, trace):
    out = subprocess.run(
        [binary, "stats", "--launchers", "--json", trace],
        check=True,
        capture_output=True,
        text=True,
    )
    rep = json.loads(out.stdout)["captures"][0]
    rows = {}
    for r in rep["launchers"]:
        t, n = rows.get(r["name"], (0.0, 0))
        rows[r["name"]] = (t + r["direct_ns"] / 1000.0, n + r["count"])
    return rep, rows, out.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tracetui", default="target/debug/tracetui")
    ap.add_argument("--tracelens", default="/work/tracelens")
    ap.add_argument("--csvs", default=None)
    a = ap.parse_args()
    base = os.path.join(a.tracelens, "tests", "traces", "inference")
    ok_all = True
    for d, f in TRACES:
        trace = os.path.join(base, d, f)
        if not os.path.exists(trace):
            print(f"== {d}: {trace} missing, skipped")
            continue
        csvp = (
            os.path.join(a.csvs, d, "ops_summary.csv")
            if a.csvs
            else os.path.join(base, d, "perf_csvs", "ops_summary.csv")
        )
        tl = tracelens_rows(csvp)
        rep, tt, err = tracetui_report(a.tracetui, trace)
        # TraceLens's call-stack builder strips a trailing `_<digits>` from frame names
        # (re.sub(r"_\d+$", ...) in Reporting/generate_perf_report_pytorch.py and
        # Trace2Tree/trace_to_tree.py), so SGLang's `sglang_profiler::…_100` op is reported
        # without its counter. tracetui keeps the trace's name; compare under TraceLens's name.
        renamed = []
        for name in list(tt):
            short = re.sub(r"_\d+$", "", name)
            if name not in tl and short != name and short in tl and short not in tt:
                tt[short] = tt.pop(name)
                renamed.append((name, short))
        dev_us = rep["device_ns"] / 1000.0
        print(f"== {d}  ({os.path.relpath(csvp, a.tracelens) if csvp.startswith(a.tracelens) else csvp})")
        for n, b in renamed:
            print(f"   name: tracetui {n!r} compared as TraceLens's {b!r} (TraceLens strips _N)")
        for n in rep.get("graph_notes", []):
            print(f"   graph: {n[:160]}")
        for line in err.splitlines():
            if "graph_capture" in line or "warning" in line.lower():
                print(f"   stderr: {line[:200]}")
        print(f"   {'op':<48} {'TraceLens us':>13} {'tracetui us':>12} {'diff %':>7} {'count TL/tt':>12}")
        bad = 0
        for name in sorted(set(tl) | set(tt), key=lambda n: -max(tl.get(n, (0, 0))[0], tt.get(n, (0, 0))[0])):
            t1, c1 = tl.get(name, (0.0, 0))
            t2, c2 = tt.get(name, (0.0, 0))
            diff = 100.0 * (t2 - t1) / t1 if t1 else (0.0 if t2 == 0 else float("inf"))
            small = max(t1, t2) < 0.0005 * dev_us
            good = (name in tl and name in tt and (small or (abs(diff) <= 1.0 and c1 == c2)))
            if not good:
                bad += 1
            print(
                f"   {name[:48]:<48} {t1:>13.3f} {t2:>12.3f} {diff:>7.2f} {f'{c1}/{c2}':>12}"
                f"{'' if good else '  <-- differs'}"
            )
        share = 100.0 * rep["op_ns"] / rep["device_ns"] if rep["device_ns"] else 0.0
        print(
            f"   device time {dev_us / 1000:.3f} ms, launched by a cpu_op {rep['op_ns'] / 1e6:.3f} ms"
            f" = {share:.1f} % (target >= 95 %)"
        )
        ok = bad == 0 and share >= 95.0
        ok_all &= ok
        print(f"   {'PASS' if ok else 'FAIL'} {d}: {len(tl)} TraceLens ops, {bad} differ, attribution {share:.1f} %")
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
