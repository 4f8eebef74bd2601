#!/usr/bin/env python3
"""Oracle for `tracetui diff`: HTA's TraceDiff.compare_traces against `tracetui diff --json`.

Usage: hta_trace_diff.py CONTROL_DIR TEST_DIR [TRACETUI]

HTA's scope (compare_traces defaults): the first rank and the first iteration of each trace;
CPU events whose start lies in the ProfilerStep window, GPU events by their launch's iteration
(GPU events without a launch have iteration -1 and are left out); inclusive durations in µs;
rows by full name, then by short name (`use_short_name=True` vs `--group-by short`). tracetui is run with `--steps N` on the first iteration, and rows are compared
per name: counts and total durations (A = control, B = test) — with `--hta`, which leaves out
device events without a launch like HTA; without it tracetui keeps those that start in the step. HTA's `ProfilerStep#N` rows are
folded into tracetui's `ProfilerStep*`. Not run by CI.
"""
import json
import subprocess
import sys
from collections import defaultdict

import hta.configs.config as _cfg  # noqa: F401  (HTA logging setup)
from hta.trace_diff import LabeledTrace, TraceDiff


def main() -> int:
    control, test = sys.argv[1], sys.argv[2]
    exe = sys.argv[3] if len(sys.argv) > 3 else "target/debug/tracetui"
    lc = LabeledTrace(label="control", trace_dir=control)
    lt = LabeledTrace(label="test", trace_dir=test)
    failed = 0
    for short in (False, True):
        failed |= compare(lc, lt, control, test, exe, short)
    return failed


def compare(lc, lt, control, test, exe, short) -> int:
    it_c, it_t = lc.iterations()[0], lt.iterations()[0]
    df = TraceDiff.compare_traces(lc, lt, use_short_name=short)
    hta = defaultdict(lambda: [0, 0, 0.0, 0.0])
    for name, r in df.iterrows():
        key = "ProfilerStep*" if str(name).startswith("ProfilerStep#") else str(name)
        h = hta[key]
        h[0] += int(r["control_counts"])
        h[1] += int(r["test_counts"])
        h[2] += float(r["control_total_duration"])
        h[3] += float(r["test_total_duration"])
    if it_c != it_t:
        print(f"first iterations differ (control {it_c}, test {it_t}); tracetui needs one --steps")
        return 2
    out = subprocess.run(
        [exe, "diff", control, test, "--steps", str(it_c), "--hta", "--json",
         "--group-by", "short" if short else "name"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    tt = {
        r["name"]: [r["count_a"], r["count_b"], r["total_a_ns"] / 1e3, r["total_b_ns"] / 1e3]
        for r in json.loads(out)["rows"]
    }
    names = sorted(set(hta) | set(tt))
    exact = 0
    mismatches = []
    for n in names:
        h, t = hta.get(n), tt.get(n)
        if h is None or t is None:
            mismatches.append((n, h, t))
            continue
        same = h[0] == t[0] and h[1] == t[1] and abs(h[2] - t[2]) < 0.5 and abs(h[3] - t[3]) < 0.5
        if same:
            exact += 1
        else:
            mismatches.append((n, h, t))
    print(f"{'short names' if short else 'names'}, iteration {it_c}; names: HTA {len(hta)}, tracetui {len(tt)}, union {len(names)}")
    print(f"same counts and durations (±0.5 µs): {exact} of {len(names)}")
    tot = lambda d, k: sum(v[k] for v in d.values())  # noqa: E731
    print(
        "totals  HTA: counts %d / %d, dur %.0f / %.0f µs   tracetui: counts %d / %d, dur %.0f / %.0f µs"
        % (tot(hta, 0), tot(hta, 1), tot(hta, 2), tot(hta, 3),
           tot(tt, 0), tot(tt, 1), tot(tt, 2), tot(tt, 3))
    )
    for n, h, t in mismatches[:40]:
        print(f"  differs: {n[:80]!r}: HTA {h} tracetui {t}")
    if len(mismatches) > 40:
        print(f"  … {len(mismatches) - 40} more")
    return 0 if not mismatches else 1


if __name__ == "__main__":
    sys.exit(main())
