#!/usr/bin/env python3
"""Compare `tracetui roofline --json` on an XPlane GPU capture with XProf's own op profile.

XProf computes a GPU op's FLOPs and bytes from the HLO protos of `/host:metadata` with XLA's
GpuHloCostAnalysis; tracetui's HLO cost model (src/formats/xplane/hlo_cost.rs) should give the
same figures. Needs the `xprof` wheel in a venv (`python3 -m venv /tmp/xpl-venv &&
/tmp/xpl-venv/bin/pip install xprof`). Usage:

    python3 docs/oracle/xprof_roofline.py CAPTURE.xplane.pb \
        --xprof-python /tmp/xpl-venv/bin/python [--tracetui target/debug/tracetui]

XProf's op_profile (`xspace_to_tool_data([path], 'op_profile', {})`, `byProgram`) gives per
HLO op and program the totals over its occurrences: `rawFlops`, `rawBytesAccessedArray[0]`
(HBM) and `rawTime` (ps). tracetui gives per (op, module) the per-call figures and the count.
Prints one line per op (totals, both sides) and a summary; exits 1 on a mismatch.
"""

import argparse
import json
import subprocess
import sys

XPROF_SNIPPET = r"""
import json, sys
from xprof.convert import raw_to_tool_data as r
data = r.xspace_to_tool_data([sys.argv[1]], 'op_profile', {})
data = data[0] if isinstance(data, tuple) else data
if isinstance(data, bytes):
    data = data.decode()
d = json.loads(data)
out = []
def walk(n, prog):
    x, m = n.get('xla'), n.get('metrics', {})
    kids = n.get('children', [])
    if x is not None and not kids and n.get('name') != 'IDLE':
        out.append(dict(program=prog, name=n.get('name'), category=x.get('category'),
                        flops=float(m.get('rawFlops', 0)),
                        bytes=float((m.get('rawBytesAccessedArray') or [0])[0]),
                        count=int(m.get('occurrences', 0)), time_ps=float(m.get('rawTime', 0))))
    for c in kids:
        walk(c, n.get('name') if x is None and n.get('name', '').endswith(')') else prog)
walk(d['byProgram'], '')
print(json.dumps(out))
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("capture")
    ap.add_argument("--xprof-python", default="/tmp/xpl-venv/bin/python")
    ap.add_argument("--tracetui", default="target/debug/tracetui")
    a = ap.parse_args()

    tt = json.loads(
        subprocess.run(
            [a.tracetui, "roofline", a.capture, "--json"], check=True, capture_output=True, text=True
        ).stdout
    )["captures"][0]
    xp = json.loads(
        subprocess.run(
            [a.xprof_python, "-c", XPROF_SNIPPET, a.capture], check=True, capture_output=True, text=True
        ).stdout
    )
    ours = {}
    for r in tt["rows"]:
        ours[(r["input_dims"], r["name"])] = r
    print(f"note: {tt.get('note')}")
    print(f"{'program':<26} {'op':<18} {'n':>3} {'xprof FLOP':>14} {'tracetui FLOP':>14} "
          f"{'xprof bytes':>12} {'tracetui bytes':>14} {'xprof µs':>9} {'tracetui µs':>11}  verdict")
    bad = 0
    seen = set()
    for x in sorted(xp, key=lambda x: (x["program"], x["name"])):
        key = (x["program"], x["name"])
        seen.add(key)
        r = ours.get(key)
        if r is None:
            print(f"{x['program']:<26} {x['name']:<18} {x['count']:>3} {x['flops']:>14.0f} {'-':>14} "
                  f"{x['bytes']:>12.0f} {'-':>14} {x['time_ps'] / 1e6:>9.3f} {'-':>11}  MISSING")
            bad += 1
            continue
        n = r["count"]
        f, b = r["flops"] * n, (r["bytes"] or 0) * n
        us = r["device_ns"] / 1e3
        ok = (n == x["count"] and abs(f - x["flops"]) <= 1e-9 * max(1, x["flops"])
              and abs(b - x["bytes"]) <= 1e-9 * max(1, x["bytes"])
              and abs(us - x["time_ps"] / 1e6) < 1e-3)
        bad += not ok
        print(f"{x['program']:<26} {x['name']:<18} {n:>3} {x['flops']:>14.0f} {f:>14.0f} "
              f"{x['bytes']:>12.0f} {b:>14.0f} {x['time_ps'] / 1e6:>9.3f} {us:>11.3f}  "
              f"{'equal' if ok else 'DIFFERS'}")
    extra = [k for k in ours if k not in seen]
    for k in extra:
        print(f"{k[0]:<26} {k[1]:<18} tracetui row without an XProf op")
    un = tt["unmodelled_top"]
    print(f"summary: {len(xp)} XProf ops, {len(xp) - bad} equal (count, FLOPs, bytes, time), "
          f"{bad} differ or missing, {len(extra)} tracetui rows XProf lacks; tracetui not modelled: "
          f"{tt['unmodelled_pct']:.1f}% of {tt['total_device_ns'] / 1e3:.3f} µs "
          f"({', '.join(u['name'] + ' x' + str(u['count']) for u in un)})")
    sys.exit(1 if bad or extra else 0)


if __name__ == "__main__":
    main()
