"""Port of ejkernel's nested-event accounting (erfanzar/ejkernel, ejkernel/ops/execution/profiler.py:
Profiler.get_events_from_plane + profile_time_by_function_id's aggregation) over jax.profiler.ProfileData,
compared with `tracetui nested --json`.

usage: ejkernel_nested.py [--platform gpu] [--prefix jit_] [--regex RE] [--min-dur-ns 1000]
                          [--max-events 10000] [--literal] [--tracetui BIN] XPLANE.pb...
(pip install jax: ProfileData.from_file reads an .xplane.pb)

Each file is one capture (one profile_time_by_function_id round). Rules, as ejkernel's code:
- plane: the first plane whose name contains --platform, case-insensitively;
- events: lines in order, events in order, dropping those shorter than --min-dur-ns, stopping
  after --max-events kept events; start_ps = int(start_ns * 1000), dur_ps = int(duration_ns * 1000)
  with ProfileData's start_ns = offset_ps // 1000 + line.timestamp_ns (whole ns);
- unified name N(P-S): N = hlo_module stat else the event name, P = program_id (run_id), S =
  scope_range_id; a stat of 0 or "" reads as None (ejkernel's _get_stat_value);
- value: with --regex the merged length of the contained events (any line) whose unified name
  matches, skipping same-named ones; else the event's own duration; the LAST event (start order)
  of a unified name gives the capture's value;
- per id (^jit_autotune_fn_([0-9]+).*): one sample per capture and matching name; more than two
  samples: the min and the max are dropped; mean and numpy's population std.
--literal keeps ejkernel's stat decoding bug on ProfileData (stats are (name, value) tuples, so
they are keyed by position and no stat is ever found: every name reads `<event name>(None-None)`).
"""
import argparse
import json
import re
import subprocess
import sys

import numpy as np
from jax.profiler import ProfileData

ID_RE = re.compile(r"^jit_autotune_fn_([0-9]+).*")


def stat_value(v):
    # _get_stat_value: numeric zero and empty text are None.
    if isinstance(v, (bytes, str)):
        return v if v else None
    if v is None or v == 0:
        return None
    return v


def unified(e, literal):
    if literal:
        return f"{e.name}(None-None)"
    st = {}
    for k, v in e.stats:
        st[k] = stat_value(v)
    name = st.get("hlo_module", e.name)
    if name is None:
        name = e.name
    prog = st.get("program_id", st.get("run_id"))
    scope = st.get("scope_range_id", "None")
    return f"{name}({prog}-{scope})"


def plane_events(path, a):
    p = ProfileData.from_file(path)
    planes = list(p.planes)
    hits = [pl for pl in planes if a.platform.lower() in pl.name.lower()]
    if not hits:
        raise SystemExit(f"{path}: no plane for '{a.platform}': {[pl.name for pl in planes]}")
    plane = hits[0]
    min_ps = int(a.min_dur_ns * 1000)
    evs = []
    for line in plane.lines:
        for e in line.events:
            if a.max_events and len(evs) >= a.max_events:
                break
            s = int(e.start_ns * 1000)
            d = int(e.duration_ns * 1000)
            if d < min_ps:
                continue
            evs.append((s, s + d, unified(e, a.literal)))
        if a.max_events and len(evs) >= a.max_events:
            break
    return plane.name, evs


def timed(evs, a):
    pat = re.compile(a.regex) if a.regex else None
    evs = sorted(evs, key=lambda x: x[0])
    starts = np.fromiter((e[0] for e in evs), dtype=np.int64, count=len(evs))
    out = {}
    for s, e, name in evs:
        if a.prefix and not name.startswith(a.prefix):
            continue
        if pat is None:
            v = e - s
        else:
            idx = int(np.searchsorted(starts, s, side="left"))
            iv = []
            for cs, ce, cn in evs[idx:]:
                if cs > e:
                    break
                if cn == name:
                    continue
                if cs >= s and ce <= e and pat.search(cn):
                    iv.append((cs, ce))
            iv.sort()
            v = 0
            if iv:
                a0, b0 = iv[0]
                for x, y in iv[1:]:
                    if x > b0:
                        v += b0 - a0
                        a0, b0 = x, y
                    else:
                        b0 = max(b0, y)
                v += b0 - a0
        out[name] = v
    return out


def by_id(per_capture):
    f = {}
    for t in per_capture:
        for k, v in t.items():
            m = ID_RE.match(k)
            if m:
                f.setdefault(int(m.group(1)), []).append(v)
    agg = {}
    for k, d in f.items():
        n = len(d)
        if n > 2:
            d = sorted(d)[1:-1]
        agg[k] = (n, float(np.mean(d)), float(np.std(d)))
    return agg


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--platform", default="gpu")
    ap.add_argument("--prefix", default="jit_")
    ap.add_argument("--regex")
    ap.add_argument("--min-dur-ns", type=float, default=1000.0)
    ap.add_argument("--max-events", type=int, default=10000)
    ap.add_argument("--literal", action="store_true")
    ap.add_argument("--tracetui", help="tracetui binary: compare with `nested --json`")
    a = ap.parse_args()
    per = []
    for f in a.files:
        plane, evs = plane_events(f, a)
        t = timed(evs, a)
        per.append(t)
        print(f"== {f}\n   plane {plane}: {len(evs)} events kept, {len(t)} names")
        for k, v in sorted(t.items()):
            print(f"   {k:<60} {v / 1000:12.3f} ns")
    agg = by_id(per)
    print("== ejkernel per function id (samples, mean ns, std ns)")
    for k in sorted(agg):
        n, m, s = agg[k]
        print(f"   {k:>4} {n:>4} {m / 1000:12.3f} {s / 1000:12.3f}")
    if not a.tracetui:
        return 0
    bad = 0
    for f, t in zip(a.files, per):
        cmd = [a.tracetui, "nested", f, "--json", "--platform", a.platform,
               "--prefix", a.prefix, "--min-dur", f"{a.min_dur_ns:g}ns",
               "--max-events", str(a.max_events)]
        if a.regex:
            cmd += ["--regex", a.regex]
        j = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
        caps = [c for c in j["captures"] if not c.get("error")]
        mine = {r["name"]: r["last_ns"] for c in caps for r in c["nested"]}
        theirs = {k: v / 1000 for k, v in t.items()}
        same = mine.keys() == theirs.keys() and all(abs(mine[k] - theirs[k]) < 1e-6 for k in mine)
        bad += not same
        print(f"== tracetui {f}: {len(mine)} names, values {'EQUAL' if same else 'DIFFER'}")
        for k in sorted(set(mine) | set(theirs)):
            if mine.get(k) != theirs.get(k):
                print(f"   {k}: tracetui {mine.get(k)} ejkernel {theirs.get(k)}")
        fj = {int(x["id"]): (x["samples"], x["mean_ns"], x["std_ns"]) for x in j["functions"]
              if x["id"].isdigit()}
        ej = {k: (n, m / 1000, s / 1000) for k, (n, m, s) in by_id([t]).items()}
        ok = fj.keys() == ej.keys() and all(
            fj[k][0] == ej[k][0] and abs(fj[k][1] - ej[k][1]) < 1e-6 and abs(fj[k][2] - ej[k][2]) < 1e-6
            for k in fj)
        bad += not ok
        print(f"   functions {'EQUAL' if ok else 'DIFFER'}: tracetui {fj} ejkernel {ej}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
