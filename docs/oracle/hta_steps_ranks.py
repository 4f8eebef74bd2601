#!/usr/bin/env python3
"""Compare `tracetui steps/ranks --json` with Holistic Trace Analysis (HTA) on multi-rank sets.

Not needed by CI. Needs `pip install HolisticTraceAnalysis psutil` and a built `tracetui`.

    python3 docs/oracle/hta_steps_ranks.py [--tracetui target/debug/tracetui] [--traces DIR]

Sets (built in a temporary dir from the HTA test traces in DIR, default /work/shared/traces/hta):
  trace_diff   control.json.gz (rank 3) + test.json.gz (rank 1) as one run (world size 8);
  nccl3        nccl_data.json.gz (rank 0, world 2) + rank 1 = the same capture with every NCCL
               kernel of step k starting 40·k µs later (end kept) + rank 2 = the same capture with
               its whole clock 3 ms later; world size 3;
  single       every other HTA trace, one run each (steps and overlap only).
For each set: HTA's get_profiler_steps() against the union of our step numbers, HTA's
get_comm_comp_overlap() per rank against our comm_comp_overlap (within 0.1 percentage point; HTA
is run with include_last_profiler_step=True, i.e. every kernel, which is what we measure), and
HTA's get_potential_stragglers() (2 candidates) against our stragglers. Exit 1 on a mismatch.
"""

import argparse
import glob
import gzip
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile


def load(p):
    with gzip.open(p, "rt") if p.endswith(".gz") else open(p) as f:
        return json.load(f)


def save(doc, p):
    with gzip.open(p, "wt") as f:
        json.dump(doc, f)


def build_sets(traces, root):
    sets = {}
    d = os.path.join(root, "trace_diff")
    os.makedirs(d)
    for name in ("control", "test"):
        doc = load(os.path.join(traces, "trace_diff", name, f"{name}.json.gz"))
        doc["distributedInfo"]["world_size"] = 8
        save(doc, os.path.join(d, f"{name}.pt.trace.json.gz"))
    sets["trace_diff"] = d

    d = os.path.join(root, "nccl3")
    os.makedirs(d)
    base = load(os.path.join(traces, "nccl_parser_config", "nccl_data.json.gz"))
    steps = sorted(
        (e["ts"], e["ts"] + e["dur"], int(e["name"].split("#")[1]))
        for e in base["traceEvents"]
        if e.get("name", "").startswith("ProfilerStep#")
    )

    def step_of(ts):
        for s, e, n in steps:
            if s <= ts < e:
                return n
        return 0

    for rank in range(3):
        doc = json.loads(json.dumps(base))
        doc["distributedInfo"]["rank"] = rank
        doc["distributedInfo"]["world_size"] = 3
        for e in doc["traceEvents"]:
            if "ts" not in e:
                continue
            if rank == 1 and e.get("cat") == "kernel" and e["name"].startswith("nccl"):
                delay = 40.0 * (step_of(e["ts"]) % 4)
                delay = min(delay, e["dur"] * 0.5)
                e["ts"] += delay
                e["dur"] -= delay
            if rank == 2:
                e["ts"] += 3000.0
        save(doc, os.path.join(d, f"rank{rank}.pt.trace.json.gz"))
    sets["nccl3"] = d

    for p in sorted(glob.glob(os.path.join(traces, "**", "*.json.gz"), recursive=True)):
        if "trace_diff" in p or "nccl_parser_config" in p:
            continue
        name = os.path.basename(os.path.dirname(p))
        d = os.path.join(root, "single_" + name)
        os.makedirs(d, exist_ok=True)
        shutil.copy(p, os.path.join(d, os.path.basename(p).replace(".json.gz", ".pt.trace.json.gz")
                                    if ".pt.trace." not in p else os.path.basename(p)))
        sets["single_" + name] = d
    return sets


def tracetui(exe, cmd, d):
    out = subprocess.run([exe, cmd, d, "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    return json.loads(out.stdout)


def hta(d):
    from hta.trace_analysis import TraceAnalysis

    ta = TraceAnalysis(trace_dir=d, include_last_profiler_step=True)
    steps = ta.get_profiler_steps()
    ov = ta.get_comm_comp_overlap(visualize=False)
    overlap = {int(r): float(p) for r, p in zip(ov["rank"], ov["comp_comm_overlap_pctg"])}
    try:
        stragglers = ta.get_potential_stragglers()
    except Exception as e:  # HTA raises when it finds no ncclKernel (HTA#360) or one rank
        stragglers = f"HTA failed: {type(e).__name__}: {e}"
    return [int(s) for s in steps], overlap, stragglers


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tracetui", default="target/debug/tracetui")
    ap.add_argument("--traces", default="/work/shared/traces/hta")
    a = ap.parse_args()
    logging.disable(logging.WARNING)
    root = tempfile.mkdtemp(prefix="hta_steps_")
    bad = 0
    try:
        for name, d in build_sets(a.traces, root).items():
            print(f"== {name}")
            try:
                h_steps, h_overlap, h_strag = hta(d)
            except Exception as e:
                print(f"   HTA failed: {type(e).__name__}: {e}")
                continue
            st = tracetui(a.tracetui, "steps", d)
            rk = tracetui(a.tracetui, "ranks", d)
            ours_steps = sorted({s["step"] for c in st["captures"]
                                 if c.get("source") == "profiler_step" for s in c["steps"]})
            ok = ours_steps == h_steps
            bad += not ok
            print(f"   steps      HTA {h_steps}  tracetui {ours_steps}  {'ok' if ok else 'MISMATCH'}")
            ranks = {r["rank"]: r for run in rk["runs"] for r in run["ranks"]}
            for r, pct in sorted(h_overlap.items()):
                ours = ranks.get(r, {}).get("comm_comp_overlap")
                if ours is None:
                    same = pct != pct or pct == 0.0  # NaN: no communication
                    print(f"   overlap    rank {r}: HTA {pct}  tracetui none  {'ok' if same else 'MISMATCH'}")
                    bad += not same
                    continue
                ok = abs(ours * 100 - pct) <= 0.1
                bad += not ok
                print(f"   overlap    rank {r}: HTA {pct:.2f}%  tracetui {ours * 100:.2f}%  {'ok' if ok else 'MISMATCH'}")
            ours_strag = [s for run in rk["runs"] for s in run["stragglers"]]
            if isinstance(h_strag, str):
                print(f"   stragglers {h_strag}; tracetui {ours_strag}")
            else:
                ok = sorted(h_strag) == sorted(ours_strag)
                bad += not ok
                print(f"   stragglers HTA {h_strag}  tracetui {ours_strag}  {'ok' if ok else 'MISMATCH'}")
                scores = {r["rank"]: r["straggler_score"] for run in rk["runs"] for r in run["ranks"]}
                last = {r["rank"]: r["arrived_last"] for run in rk["runs"] for r in run["ranks"]}
                off = {r["rank"]: r["clock_offset_ns"] for run in rk["runs"] for r in run["ranks"]}
                print(f"   tracetui   scores {scores}  arrived last {last}  clock offsets ns {off}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print("all agree" if bad == 0 else f"{bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
