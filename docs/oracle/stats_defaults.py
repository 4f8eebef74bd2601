#!/usr/bin/env python3
"""Issue 22 §1 oracle: the default `tracetui stats` table against torch's key_averages().

torch's table has no row for the profiler's own span (`PyTorch Profiler (0)`); tracetui's
default table must not have one either, and its CPU kinds (cpu_op + user annotations) must
hold torch's names with torch's counts and CPU totals. Run from the repository root:

    python3 docs/oracle/stats_defaults.py [--tracetui target/debug/tracetui]
"""
import argparse
import json
import subprocess

STEM = "tests/fixtures/cli/worker0.1795311589169457977"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tracetui", default="target/debug/tracetui")
    a = ap.parse_args()
    torch = {r["name"]: r for r in json.load(open(f"{STEM}.key_averages.json"))}
    out = subprocess.run([a.tracetui, "stats", f"{STEM}.pt.trace.json.gz", "--json"],
                         capture_output=True, text=True, check=True,
                         env={"TRACETUI_CACHE": "off", "PATH": "/usr/bin:/bin"})
    cap = json.loads(out.stdout)["captures"][0]
    rows = cap["stats"]
    cpu = {r["name"]: r for r in rows if r["kind"] in ("cpu_op", "annotation")}
    print(f"== {STEM}.pt.trace.json.gz (default stats, no --cat)")
    print(f"   left out: {cap.get('left_out')}")
    prof = [r["name"] for r in rows if "PyTorch Profiler" in r["name"]]
    print(f"   profiler rows in tracetui: {prof or 'none'}; in torch: "
          f"{[n for n in torch if 'PyTorch Profiler' in n] or 'none'}")
    same = sum(1 for n, t in torch.items()
               if n in cpu and cpu[n]["count"] == t["count"]
               and abs(cpu[n]["total_ns"] / 1e3 - t["cpu_total_us"]) <= 1.0)
    print(f"   torch names with equal count and CPU total (±1 µs): {same} of {len(torch)}")
    missing = [n for n in torch if n not in cpu]
    print(f"   torch names missing from tracetui's CPU kinds: {missing or 'none'}")
    for k in cap["kinds"]:
        print(f"   kind {k['kind']:<12} {k['names']:>4} names  self {k['self_ns'] / 1e6:9.3f} ms "
              f"over {k['threads']} threads, {k['streams']} streams")
    print(f"   capture span {cap['span_ns'] / 1e6:.3f} ms")


if __name__ == "__main__":
    main()
