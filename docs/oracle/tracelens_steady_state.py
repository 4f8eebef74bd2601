#!/usr/bin/env python3
"""TraceLens's steady-state window on the hand-made iteration runs of
src/analysis/serving/steady.rs's unit tests: runs TraceLens's own
`identify_steady_state_regions` and `find_steady_state_window(mode="mixed")`
(TraceLens/TraceUtils/split_inference/steady_state_window.py, MIT, commit 171dd747) and prints
the regions and the window [start, end) the Rust tests expect.

    python3 docs/oracle/tracelens_steady_state.py [TRACELENS_DIR]
"""
import contextlib
import io
import sys
import types

TL = sys.argv[1] if len(sys.argv) > 1 else "/work/tracelens"
sys.path.insert(0, TL)
# Import the one module without TraceLens's package __init__ (pandas, …).
for name in ["TraceLens", "TraceLens.TraceUtils", "TraceLens.TraceUtils.split_inference"]:
    m = types.ModuleType(name)
    m.__path__ = [TL + "/" + name.replace(".", "/")]
    sys.modules[name] = m
from TraceLens.TraceUtils.split_inference import steady_state_window as ssw  # noqa: E402

ssw.iteration_details = lambda roots: roots  # the runs below are already iteration details


def det(i, r, ctx):
    return {"idx": i, "num_requests": r, "context_requests": 1 if ctx else 0,
            "generation_requests": r - (1 if ctx else 0)}


cases = {
    "ramp": [(r, True) for r in range(1, 9)] + [(10, k % 5 == 0) for k in range(40)]
    + [(r, False) for r in range(8, 0, -1)],
    "ref": [(8, k >= 32 and k % 2 == 0) for k in range(64)],
    "two_regions": [(r, False) for r in range(1, 5)] + [(20, k % 4 == 0) for k in range(30)]
    + [(5, False)] * 8 + [(20, k % 3 == 0) for k in range(50)] + [(3, False)] * 4,
    "fallback10": [(k % 7 + 1, k % 2 == 0) for k in range(10)],
}
for k, v in cases.items():
    d = [det(i, r, c) for i, (r, c) in enumerate(v)]
    with contextlib.redirect_stdout(io.StringIO()):
        regs, _ = ssw.identify_steady_state_regions(d, 32)
        w = ssw.find_steady_state_window(d, 32, regs, mode="mixed")
    print(f"{k:12} n={len(v):3} regions={regs} window=[{w[0]['idx']}, {w[-1]['idx'] + 1})")
