#!/usr/bin/env python3
"""Runs tracetui's JSON loader over Perfetto's JSON importer diff tests and compares.

Perfetto keeps its JSON importer's tests in
`test/trace_processor/diff_tests/parser/json/tests.py` (google/perfetto): each test is a
trace (inline JSON), a SQL query over trace_processor's tables and the expected table. This
script loads that file with stub classes (nothing of Perfetto runs), writes every trace to a
temporary file, loads it with `tracetui summary --json` and `tracetui search --json --regex ''`
and compares what both sides can express:

- slices (expected rows with `name` and `ts`): name, absolute start (ns) and duration; Perfetto's
  `dur = -1` (never closed) matches an unfinished slice drawn to the end of the capture;
- process / thread names and pids / tids of those rows, when the query selects them;
- counter series names (`pct.name` / `counter_name` columns);
- a query expecting no slice rows: tracetui must have no slice of the queried names either.

Each test gets `agree`, `by-design` (a documented difference, reason from BY_DESIGN below) or
`disagree`. Not run by CI.

Usage: perfetto_json_compare.py PERFETTO_TESTS_PY [TRACETUI_BINARY]
  e.g. git -C perfetto show HEAD:test/trace_processor/diff_tests/parser/json/tests.py > t.py
"""

import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import types

# Differences we keep on purpose (see docs/json-loader.md, "Perfetto's diff tests").
BY_DESIGN = {
    "test_json_all_slice_types": "E 'EndEvent' names no open B: tracetui skips it (counted "
    "unmatched_end) and draws B 'BeginEvent' to the end of the capture, where Perfetto leaves "
    "it open (dur -1) — same start, end at the capture's last event; instants are instants in "
    "tracetui, not 0-length slices",
    "test_json_flow": "the query reads thread_or_process_slice rows with their flows; as in "
    "test_json_all_slice_types tracetui keeps the X 'CompleteEvent' (Perfetto's expected table "
    "lists only BeginEvent because of its flow join)",
    "test_json_extreme_vals": "an X without dur is kept as a 0-length slice (Perfetto drops it); "
    "the B closed by an E of another name is drawn to the capture's end",
    "test_json_async": "async b/e slices are kept on the process's async track (tracetui has "
    "no thread_or_process_slice view; the query excludes async tracks, ours shows them)",
    "test_json_sort_index_hints": "Perfetto creates every process's main thread (tid = pid) "
    "from its metadata; tracetui lists a thread only with events or thread metadata",
    "test_json_thread_state": "Perfetto's thread-state extension (ph T without id) has no "
    "tracetui table: skipped and counted (skipped_phase_T)",
    "test_json_thread_state_sched": "as test_json_thread_state",
    "test_overlapping_complete_event_recovered": "slice count agrees (2: tracetui keeps the "
    "overlapping X on an extra lane, Perfetto spills it to a new track); Perfetto's spill / drop "
    "stats have no tracetui counterpart",
    "test_json_trace_metadata": "top-level keys are kept as the capture's metadata args, which "
    "no CLI command prints",
    "test_overlapping_complete_event_import_log": "Perfetto logs an import error for a partly "
    "overlapping X; tracetui keeps it on an extra lane, without a log entry",
}


class _Blob:
    def __init__(self, contents="", *a, **kw):
        self.contents = contents


class DiffTestBlueprint:
    def __init__(self, trace=None, query=None, out=None, **kw):
        self.trace, self.query, self.out = trace, query, out


class TestSuite:
    def __init__(self, *a, **kw):
        pass


def load_tests(path):
    """The JsonParser suite's blueprints by test name."""
    stub = types.ModuleType("python.generators.diff_tests.testing")
    for n in ["Csv", "Json", "Path", "DataPath", "TextProto", "Systrace", "Metric", "BinaryProto"]:
        setattr(stub, n, type(n, (_Blob,), {}))
    stub.DiffTestBlueprint = DiffTestBlueprint
    stub.TestSuite = TestSuite
    for name in ["python", "python.generators", "python.generators.diff_tests"]:
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["python.generators.diff_tests.testing"] = stub
    ns = {}
    with open(path) as f:
        exec(compile(f.read(), path, "exec"), ns)
    suite = ns["JsonParser"]()
    return {
        n: getattr(suite, n)()
        for n in sorted(dir(suite), key=lambda n: getattr(type(suite), n).__code__.co_firstlineno
                        if n.startswith("test_") else 0)
        if n.startswith("test_")
    }


def rows(csv_text):
    """(header, rows as lists) of an expected table."""
    lines = [l.strip() for l in csv_text.strip().splitlines() if l.strip()]
    r = csv.reader(io.StringIO("\n".join(lines)))
    header = next(r, [])
    return header, [row for row in r]


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def tracetui(exe, trace):
    """(summary, search) JSON of one trace text."""
    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, "trace.json")
        with open(f, "w") as fh:
            fh.write(trace)
        _, out, err = run([exe, "summary", "--json", f])
        try:
            summ = json.loads(out)["captures"][0]
        except (json.JSONDecodeError, KeyError, IndexError):
            return {"error": f"summary failed: {err.strip()[:200]}"}, {"results": []}
        _, out2, _ = run([exe, "search", "--json", "--regex", f, ""])
        try:
            srch = json.loads(out2)["captures"][0]
        except (json.JSONDecodeError, KeyError, IndexError):
            srch = {"results": []}
    return summ, srch


def id_numbers(stable):
    """(pid, tid) of a stable track id `pid 100/thread:tid 102`."""
    pid = tid = None
    head, _, tail = stable.partition("/")
    if head.startswith("pid "):
        pid = head[4:]
    if ":tid " in tail:
        tid = tail.split(":tid ", 1)[1]
    return pid, tid


def compare(name, bp, exe):
    trace = bp.trace.contents if bp.trace is not None else ""
    header, expected = rows(bp.out.contents if bp.out is not None else "")
    q = " ".join(bp.query.split())
    summ, srch = tracetui(exe, trace)
    if summ.get("error"):
        ok = not expected
        return ("agree" if ok else "disagree"), f"load error: {summ['error'][:160]}", summ
    origin = summ.get("origin_epoch_ns") or 0
    span_end = (summ.get("span_ns") or [0, 0])[1] + origin
    tracks = summ.get("tracks") or []
    by_label = {f"{t['process']} / {t['name']}": t for t in tracks}
    # Our slices: (name, abs start ns, dur ns, track) from each name's first occurrences.
    ours = []
    for r in srch.get("results", []):
        for o in r.get("first", []):
            t = by_label.get(o["track"], {"kind": "?", "id": "", "process": "", "name": ""})
            ours.append((r["name"], round(o["start_ns"] + origin), round(o["dur_ns"]), t))
    if "thread_or_process_slice" in q:
        ours = [o for o in ours if o[3]["kind"] != "async"]
    problems = []
    checks = 0
    col = {h: i for i, h in enumerate(header)}
    if "ts" in col and "name" in col:
        checks += 1
        matched = set()
        for e in expected:
            n, ts = e[col["name"]], int(float(e[col["ts"]]))
            dur = int(float(e[col["dur"]])) if "dur" in col else None
            hit = None
            for k, (on, s, d, t) in enumerate(ours):
                if on != n or s != ts:
                    continue
                if dur is None or d == dur or (dur == -1 and s + d == span_end):
                    hit = k
                    break
            if hit is None:
                got = [(s, d) for on, s, d, _ in ours if on == n]
                problems.append(f"{n}@{ts}/{dur}: ours {got or 'none'}")
                continue
            matched.add(hit)
            t = ours[hit][3]
            pid, tid = id_numbers(t.get("id", ""))
            for c, want in (("tid", tid), ("pid", pid)):
                if c in col and e[col[c]] not in ("[NULL]", want):
                    problems.append(f"{n}: {c} {e[col[c]]} vs ours {want}")
            for c, have in (("thread_name", t["name"]), ("process_name", t["process"])):
                v = e[col[c]] if c in col else "[NULL]"
                if v != "[NULL]" and have != v and not have.endswith(f"({v})"):
                    problems.append(f"{n}: {c} {v!r} vs ours {have!r}")
        if " WHERE " not in q.upper():
            extra = sorted({o[0] for k, o in enumerate(ours) if k not in matched}
                           - {e[col["name"]] for e in expected})
            if extra:
                problems.append(f"ours also has {extra}")
    elif "ts" in col and len(header) == 1:
        checks += 1
        want = sorted(int(float(e[0])) for e in expected)
        have = sorted(o[1] for o in ours)
        if want != have:
            problems.append(f"slice starts {want} vs ours {have}")
    elif not expected and " slice" in q and " WHERE " not in q.upper():
        checks += 1
        if ours:
            problems.append(f"Perfetto: no slice; ours {sorted({o[0] for o in ours})}")
    elif "name" in col and "FROM slice" in q:
        checks += 1
        want = sorted({e[col["name"]] for e in expected})
        have = sorted({o[0] for o in ours})
        if want != have:
            problems.append(f"slice names {want} vs ours {have}")
    if "counter" in q and "name" in col:
        checks += 1
        k = max(i for i, h in enumerate(header) if h == "name")
        ours_c = {t["name"] for t in tracks if t["kind"] == "counter"}
        want = {e[k] for e in expected}
        if want != ours_c:
            problems.append(f"counters {sorted(want)} vs ours {sorted(ours_c)}")
    if "slice_count" in col:
        checks += 1
        for e in expected:
            if int(e[col["slice_count"]]) != summ.get("slices"):
                problems.append(f"slice_count {e[col['slice_count']]} vs ours {summ.get('slices')}")
    # Process / thread order (sort-index tests): relative order of what both sides list.
    order = []
    for t in tracks:
        pid, tid = id_numbers(t.get("id", ""))
        if pid is not None and ("process", pid) not in order:
            order.append(("process", pid))
        if tid is not None and ("thread", tid) not in order:
            order.append(("thread", tid))
    if header[:2] == ["type", "id"]:
        checks += 1
        for kind in ("process", "thread"):
            want = [e[1] for e in expected if e[0] == kind]
            have = [i for k, i in order if k == kind and i in want]
            want = [i for i in want if i in have]
            if want != have:
                problems.append(f"{kind} order {want} vs ours {have}")
    if header[:2] == ["pid", "tid"]:
        checks += 1
        for e in expected:
            if e[0] != "0" and ("thread", e[1]) not in order:
                problems.append(f"thread {e[0]}/{e[1]} missing")
    if "FROM process" in q and "name" in col and "pid" in col:
        checks += 1
        shown = {t["process"] for t in tracks} | set(summ.get("empty_processes") or [])
        for e in expected:
            n = e[col["name"]]
            if not any(x == n or x.endswith(f"({n})") for x in shown):
                problems.append(f"process {n!r} missing (ours {sorted(shown)})")
    if checks == 0:
        problems.append("nothing comparable through the CLI")
    if not problems:
        return "agree", "", summ
    reason = BY_DESIGN.get(name)
    if reason:
        return "by-design", reason + " — " + "; ".join(problems), summ
    return "disagree", "; ".join(problems), summ


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    exe = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        os.path.dirname(__file__), "..", "..", "target", "debug", "tracetui")
    tests = load_tests(sys.argv[1])
    tally = {}
    print("| test | result | detail |")
    print("|---|---|---|")
    for name, bp in tests.items():
        status, why, _ = compare(name, bp, exe)
        tally[status] = tally.get(status, 0) + 1
        print(f"| {name} | {status} | {why.replace('|', '/')} |")
    print()
    print(", ".join(f"{k}: {v}" for k, v in sorted(tally.items())))


if __name__ == "__main__":
    main()
