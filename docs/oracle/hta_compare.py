#!/usr/bin/env python3
"""Compare `tracetui gpu --json` with Holistic Trace Analysis (HTA) on the same traces.

Not needed by CI. Needs `pip install HolisticTraceAnalysis` and a built `tracetui`.

    python3 docs/oracle/hta_compare.py [--tracetui target/release/tracetui] [DIR ...]

DIR defaults to every folder under /work/shared/traces/hta. For each trace file (HTA loads a
folder, one file per rank) it runs HTA's temporal breakdown and idle-time breakdown (all
streams), then `tracetui gpu FILE --json --hta`, and prints per rank and per stream the
HTA figure, tracetui's figure (ns -> µs) and whether they agree within 1 % or 1 µs. Exit 1 when a
figure disagrees. Results and the known differences: docs/gpu.md.
"""

import argparse
import glob
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile


def close(a, b):
    return abs(a - b) <= max(1.0, 0.01 * max(abs(a), abs(b)))


def hta_figures(trace_file):
    from hta.trace_analysis import TraceAnalysis

    d = tempfile.mkdtemp(prefix="hta_")
    try:
        os.symlink(os.path.abspath(trace_file), os.path.join(d, os.path.basename(trace_file)))
        ta = TraceAnalysis(trace_dir=d)
        rank = sorted(ta.t.traces.keys())[0]
        temporal = ta.get_temporal_breakdown(visualize=False)
        idle = ta.get_idle_time_breakdown(ranks=[rank], visualize=False)
        idle = idle[0] if isinstance(idle, tuple) else idle
        return temporal, idle
    finally:
        shutil.rmtree(d, ignore_errors=True)


def tracetui_figures(exe, trace_file):
    cmd = [exe, "gpu", trace_file, "--json", "--hta"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["captures"][0]


def compare(exe, trace_file):
    bad = 0
    try:
        temporal, idle = hta_figures(trace_file)
    except Exception as e:  # HTA cannot analyse some inputs (CPU-only, CUPTI profiler range)
        print(f"== {trace_file}\n  HTA failed: {type(e).__name__}: {e}")
        return 0
    cap = tracetui_figures(exe, trace_file)
    print(f"== {trace_file}")
    # Temporal breakdown: HTA per rank over all GPU events; tracetui per device.
    dev = cap["devices"]
    if not dev:
        print("  tracetui: no GPU activity")
    for _, row in temporal.iterrows():
        ours = {
            "idle_time(us)": sum(d["idle_ns"] for d in dev) / 1e3 if len(dev) == 1 else None,
            "compute_time(us)": sum(d["compute_ns"] for d in dev) / 1e3,
            "non_compute_time(us)": sum(d["non_compute_ns"] for d in dev) / 1e3,
            "kernel_time(us)": sum(d["kernel_time_ns"] for d in dev) / 1e3 if len(dev) == 1 else None,
        }
        for k, v in ours.items():
            h = float(row[k])
            if v is None:
                print(f"  temporal {k:<22} HTA {h:>14.3f}  tracetui n/a ({len(dev)} devices)")
                continue
            ok = close(h, v)
            bad += not ok
            print(f"  temporal {k:<22} HTA {h:>14.3f}  tracetui {v:>14.3f}  {'ok' if ok else 'DIFF'}")
    # Idle breakdown per stream.
    streams = {}
    for s in cap["gpu"]:
        t = streams.setdefault(s["stream"], [0.0, 0.0, 0.0])
        t[0] += s["host_wait_ns"] / 1e3
        t[1] += s["kernel_wait_ns"] / 1e3
        t[2] += s["idle_other_ns"] / 1e3
    cats = {"host_wait": 0, "kernel_wait": 1, "other": 2}
    for _, row in idle.iterrows():
        cat = str(row["idle_category"])
        if cat not in cats:
            continue
        stream = int(row["stream"])
        h = float(row["idle_time"])
        v = streams.get(stream, [0.0, 0.0, 0.0])[cats[cat]]
        ok = close(h, v)
        bad += not ok
        print(f"  idle stream {stream:<5} {cat:<12} HTA {h:>14.3f}  tracetui {v:>14.3f}  {'ok' if ok else 'DIFF'}")
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tracetui", default="target/release/tracetui")
    ap.add_argument("dirs", nargs="*")
    a = ap.parse_args()
    logging.disable(logging.WARNING)
    dirs = a.dirs or sorted(glob.glob("/work/shared/traces/hta/*"))
    files = []
    for d in dirs:
        files += sorted(
            p for p in glob.glob(os.path.join(d, "**", "*.json*"), recursive=True) if os.path.isfile(p)
        )
    bad = 0
    for f in files:
        bad += compare(a.tracetui, f)
    print(f"{bad} figures differ")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
