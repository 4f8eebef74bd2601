"""Compare the lines tracetui shows for an XPlane with XProf's own trace viewer conversion.

usage: xprof_lines_compare.py FILE.xplane.pb [--tracetui BIN] [--xprof-lines J] [--xprof-names J]

Per line ("process / line"): event count from `tracetui summary --json` (tracks) against XProf's
count (`vm.xprof_lines.json`, or `tools/xprof_lines.py FILE`). Per derived line
(Steps, XLA Modules, XLA Ops, Framework Name Scope / Ops, Command Buffers, Launch Stats, Source
code, and TF's TensorFlow Ops / Name Scope): per event name, count and total from
`tracetui stats --plane P --line L --json` against `vm.xprof_line_names.json` (or
`xprof_lines.py FILE --names`). Totals: XProf's are ps rounded from its µs floats, tracetui's are
integer ns; a name matches when counts are equal and totals differ by at most 1 ns.
Prints one row per line and per mismatching name, then a verdict for the derived lines.
Raw lines XProf's trace viewer filters (MemoryAllocation / MemoryDeallocation instants, renamed
step roots) are listed as raw differences, not failures: tracetui keeps every raw event.
On a TPU plane `XLA Modules`, `XLA Ops` and `Steps` are lines of the file (raw); XProf writes
their zero-duration events as instants ("ph":"i", not counted here) and the `_a` events of
`Async XLA Ops` as async b/e pairs. `Host Offload Ops row N` lines are derived; their sum over
rows is compared too (`Host Offload Ops (all rows)`)."""
import json, os, re, subprocess, sys

DERIVED = ("Steps", "XLA Modules", "XLA Ops", "Framework Name Scope", "Framework Ops",
           "Command Buffers", "Launch Stats", "Source code", "TensorFlow Ops",
           "TensorFlow Name Scope")


def arg(flag, default=None):
    return sys.argv[sys.argv.index(flag) + 1] if flag in sys.argv else default


TPU_RAW = ("Steps", "XLA Modules", "XLA Ops")


def is_derived(line, proc=""):
    base = line.split(" - from #")[0]
    if proc.startswith("/device:TPU") and base in TPU_RAW:
        return False
    return base in DERIVED or base.startswith("Host Offload Ops")


def all_rows(d):
    """Adds 'P / Host Offload Ops (all rows)' to a per-line dict of counts or of name maps."""
    out = dict(d)
    for k, v in d.items():
        proc, line = k.split(" / ", 1)
        if not line.startswith("Host Offload Ops row "):
            continue
        key = f"{proc} / Host Offload Ops (all rows)"
        if isinstance(v, dict):
            acc = out.setdefault(key, {})
            for n, (c, t) in v.items():
                a = acc.get(n, (0, 0))
                acc[n] = (a[0] + c, a[1] + t)
        else:
            out[key] = out.get(key, 0) + v
    return out


def xprof(path, names):
    side = path.replace(".xplane.pb", ".xprof_line_names.json" if names else ".xprof_lines.json")
    given = arg("--xprof-names" if names else "--xprof-lines")
    if given:
        side = given
    if os.path.exists(side):
        return json.load(open(side))
    tool = os.environ.get("XPROF_LINES", "xprof_lines.py")  # the team's tools/xprof_lines.py; set XPROF_LINES to its path
    out = subprocess.run([sys.executable, tool, path] + (["--names"] if names else []),
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def tracetui(binary, *args):
    out = subprocess.run([binary, *args], capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def main():
    path = sys.argv[1]
    binary = arg("--tracetui", os.environ.get("TRACETUI", "tracetui"))
    summary = tracetui(binary, "summary", path, "--json")
    cap = summary["captures"][0] if "captures" in summary else summary[0]
    ours = {}
    for t in cap.get("tracks") or []:
        k = f"{t['process']} / {t['name']}"
        ours[k] = ours.get(k, 0) + t["events"]
    ours = all_rows(ours)
    theirs = all_rows(xprof(path, False))
    names = all_rows(xprof(path, True))
    print(f"# {path}")
    print(f"{'line':64} {'xprof':>7} {'tracetui':>8}  verdict")
    bad = 0
    for k in sorted(set(ours) | set(theirs)):
        proc = k.split(" / ")[0]
        if proc in ("/host:metadata", "Task Environment"):
            continue
        a, b = theirs.get(k), ours.get(k)
        line = k.split(" / ", 1)[1]
        derived = is_derived(line, proc)
        if a == b:
            verdict = "ok"
        elif derived:
            verdict = "DIFF"
            bad += 1
        else:
            verdict = "raw: tracetui keeps every event" if (b or 0) > (a or 0) else "raw diff"
        if a is None and b == 0:
            continue
        print(f"{k:64} {str(a):>7} {str(b):>8}  {verdict}")
    print()
    print("per name (derived lines): count and total, xprof vs tracetui")
    for k in sorted(names):
        proc, line = k.split(" / ", 1)
        if not is_derived(line, proc):
            continue
        pat = ("Host Offload Ops row \\d+" if line == "Host Offload Ops (all rows)"
               else re.escape(line))
        rows = tracetui(binary, "stats", path, "--plane", "^" + re.escape(proc) + "$",
                        "--line", "^" + pat + "$", "--json", "--sort", "count")
        cap_rows = rows["captures"][0]["stats"]
        got = {}
        for r in cap_rows:
            c, t = got.get(r["name"], (0, 0))
            got[r["name"]] = (c + r["count"], t + r["total_ns"])
        want = names[k]
        same = 0
        for n in sorted(set(want) | set(got)):
            wc, wps = want.get(n, (0, 0))
            gc, gns = got.get(n, (0, 0))
            if wc == gc and abs(wps / 1000 - gns) <= 1:
                same += 1
                continue
            bad += 1
            print(f"  {k} | {n[:50]!r}: xprof {wc} × {wps / 1e6:.3f} µs, "
                  f"tracetui {gc} × {gns / 1e3:.3f} µs")
        print(f"  {k}: {same}/{len(set(want) | set(got))} names equal")
    print()
    print("derived lines: all equal" if bad == 0 else f"derived lines: {bad} differences")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
