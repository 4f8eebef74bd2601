#!/usr/bin/env python3
"""Compare `tracetui critical --hta --json` with HTA's CriticalPathAnalysis, step by step.

Not needed by CI. Needs HolisticTraceAnalysis (HTA 0.5 needs pandas < 3):

    python3 -m venv /tmp/hta-venv && /tmp/hta-venv/bin/pip install holistictraceanalysis 'pandas<3'
    /tmp/hta-venv/bin/python docs/oracle/hta_critical_path.py [--tracetui target/debug/tracetui] FILE...

For each Kineto trace file and each step (ProfilerStep#N) it runs HTA's
`critical_path_analysis(rank, annotation="ProfilerStep#N", instance_id=0)` (the CPU annotation
comes first), sums HTA's critical path breakdown by `bound_by`, and prints it beside tracetui's
`path_ns` and `hta_bound` (µs), with whether the path lengths agree within 1 % or 2 µs (HTA
rounds times to whole µs). Exit 1 when a length disagrees. Results: docs/critical-path.md.
"""

import argparse
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import warnings


def close(a, b):
    return abs(a - b) <= max(2.0, 0.01 * max(abs(a), abs(b)))


def hta_steps(trace_file, steps):
    from hta.trace_analysis import TraceAnalysis

    d = tempfile.mkdtemp(prefix="hta_cp_")
    out = {}
    try:
        os.symlink(os.path.abspath(trace_file), os.path.join(d, os.path.basename(trace_file)))
        ta = TraceAnalysis(trace_dir=d, include_last_profiler_step=True)
        rank = sorted(ta.t.traces.keys())[0]
        for n in steps:
            g, ok = ta.critical_path_analysis(
                rank=rank, annotation=f"ProfilerStep#{n}", instance_id=0
            )
            if not ok:
                out[n] = None
                continue
            edf = g.get_critical_path_breakdown()
            by = edf.groupby("bound_by").duration.sum().to_dict()
            out[n] = (float(edf.duration.sum()), {k: float(v) for k, v in by.items() if k})
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return out


def tracetui_steps(exe, trace_file):
    cmd = [exe, "critical", trace_file, "--hta", "--json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["captures"][0]["steps"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tracetui", default="target/debug/tracetui")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    logging.disable(logging.WARNING)
    warnings.filterwarnings("ignore")
    bad = 0
    for f in a.files:
        ours = tracetui_steps(a.tracetui, f)
        theirs = hta_steps(f, [s["step"] for s in ours])
        print(f"== {f}")
        print(f"  {'step':>4} {'step µs':>10} {'HTA path':>10} {'tracetui':>10}  ok   HTA bound_by (µs) | tracetui hta_bound (µs)")
        for s in ours:
            h = theirs.get(s["step"])
            mine = s["path_ns"] / 1000
            if h is None:
                print(f"  {s['step']:>4} {s['step_ns']/1000:>10.1f} {'failed':>10} {mine:>10.1f}")
                bad += 1
                continue
            ok = close(h[0], mine)
            bad += not ok
            hb = ", ".join(f"{k} {v:.1f}" for k, v in sorted(h[1].items()))
            tb = ", ".join(f"{k} {v/1000:.1f}" for k, v in sorted(s["hta_bound"].items()) if v and k)
            print(f"  {s['step']:>4} {s['step_ns']/1000:>10.1f} {h[0]:>10.1f} {mine:>10.1f}  {'yes' if ok else 'NO ':3}  {hb} | {tb}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
