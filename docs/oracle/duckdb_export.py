#!/usr/bin/env python3
"""Check `tracetui export` with DuckDB, an independent Parquet reader and SQL engine.

Not needed by CI. Needs `pip install duckdb` and a built `tracetui`.

    python3 docs/oracle/duckdb_export.py [--tracetui target/debug/tracetui] [PATH ...]

PATH defaults to the fixture dirs under tests/fixtures. For each PATH it runs
`tracetui export PATH --parquet TMP --partition-by run,rank` and `tracetui stats PATH --json`, then
in DuckDB (read_parquet with hive_partitioning) groups the slices of each capture by name
(ProfilerStep#N as ProfilerStep*) and compares count, total and self time with every stats row
(exact for JSON captures, within one ns per event for XPlane's ps times). Then it runs every
named query of assets/queries/ on DuckDB and on `tracetui sql` and compares the results row by
row. Exit 1 on any difference.
"""

import argparse
import csv
import glob
import io
import json
import os
import subprocess
import sys
import tempfile

import duckdb


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {p.stderr}")
    return p.stdout


def stats_check(con, stats, ds):
    bad = 0
    rows = 0
    for cap in stats["captures"]:
        if cap.get("error"):
            continue
        name = os.path.basename(cap["path"])
        got = {
            r[0]: r[1:]
            for r in con.execute(
                f"""
                SELECT CASE WHEN name LIKE 'ProfilerStep#%' THEN 'ProfilerStep*' ELSE name END AS n,
                       COUNT(*), SUM(dur_ns), SUM(self_time_ns)
                FROM read_parquet('{ds}/**/*.parquet', hive_partitioning = true, hive_types_autocast = false)
                WHERE phase = 'slice' AND capture = ?
                GROUP BY n
                """,
                [name],
            ).fetchall()
        }
        # stats keeps kinds apart (a host ProfilerStep#N and its GPU-stream mirror are two
        # rows); the dataset's rows are grouped by name only: sum the stats rows per name.
        per_name = {}
        for r in cap["stats"]:
            if r.get("min_ns") is None:
                continue  # aggregated XPlane events and instants are not slices of the dataset
            e = per_name.setdefault(r["name"], [0, 0, 0])
            e[0] += r["count"]; e[1] += r["total_ns"]; e[2] += r["self_ns"]
        for rname, (count, total_ns, self_ns) in per_name.items():
            rows += 1
            n, total, selft = got.get(rname, (0, 0, 0))
            tol = n + 1
            if n != count or abs(total - total_ns) > tol or abs(selft - self_ns) > tol:
                bad += 1
                print(f"  DIFF {name} {rname!r}: duckdb n={n} total={total} self={selft}"
                      f" stats n={count} total={total_ns} self={self_ns}")
    return rows, bad


def query_check(con, tracetui, ds):
    bad = 0
    for q in sorted(glob.glob("assets/queries/*.sql")):
        text = open(q).read()
        duck = con.execute(text.replace("FROM events", f"FROM read_parquet('{ds}/**/*.parquet', hive_partitioning = true, hive_types_autocast = false)")).fetchall()
        out = run([tracetui, "sql", ds, q, "--csv"])
        ours = list(csv.reader(io.StringIO(out)))[1:]
        norm = lambda rows: [[("" if v is None else (f"{float(v):.3f}" if isinstance(v, float) or (isinstance(v, str) and v.replace('.', '', 1).lstrip('-').isdigit() and '.' in v) else str(v))) for v in r] for r in rows]
        same = norm(duck) == norm(ours)
        print(f"  {os.path.basename(q)}: {len(duck)} rows on DuckDB, {len(ours)} on tracetui sql: {'same' if same else 'DIFFERENT'}")
        if not same:
            bad += 1
            for a, b in list(zip(norm(duck), norm(ours)))[:5]:
                if a != b:
                    print(f"    duckdb {a}\n    ours   {b}")
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tracetui", default="target/debug/tracetui")
    ap.add_argument("paths", nargs="*")
    a = ap.parse_args()
    paths = a.paths or sorted(glob.glob("tests/fixtures/*/"))
    print(f"duckdb {duckdb.__version__}")
    bad = 0
    for path in paths:
        with tempfile.TemporaryDirectory() as tmp:
            ds = os.path.join(tmp, "ds")
            run([a.tracetui, "export", path, "--parquet", ds, "--partition-by", "run,rank"])
            stats = json.loads(run([a.tracetui, "stats", path, "--json"]))
            con = duckdb.connect()
            rows, b = stats_check(con, stats, ds)
            n = con.execute(f"SELECT COUNT(*) FROM read_parquet('{ds}/**/*.parquet', hive_partitioning = true, hive_types_autocast = false)").fetchone()[0]
            print(f"{path}: {len(stats['captures'])} captures, {n} rows, {rows} stats rows compared, {b} differ")
            bad += b
            bad += query_check(con, a.tracetui, ds)
    print("OK" if bad == 0 else f"{bad} differences")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
