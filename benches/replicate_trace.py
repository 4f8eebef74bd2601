#!/usr/bin/env python3
"""Replicates a real Kineto/Chrome JSON trace in time to a target size (for benches/scan_ratio.sh).

The same rule as `tracetui::synth::replicate` (src/synth/replicate.rs): every event's text is kept
as the profiler wrote it; copy k shifts the integer part of `ts` by k * (span + 1 us) and offsets
`correlation` / `External id` / `id` / `bind_id` by k * a power of ten above the largest id, so
launches still meet their kernels; `ph: "M"` events are written once; other top-level keys are
kept (their raw text).

usage: replicate_trace.py SOURCE(.json|.json.gz) OUT TARGET_MB
"""

import gzip
import json
import math
import re
import sys

WS = " \t\r\n"


def skip(text, i):
    while i < len(text) and text[i] in WS:
        i += 1
    return i


def spans_of_object(text, i, dec):
    """(key, start, end) of every member of the object whose `{` is at i; returns (members, end)."""
    assert text[i] == "{", "top level must be an object"
    i = skip(text, i + 1)
    out = []
    while text[i] != "}":
        key, i = dec.raw_decode(text, i)
        i = skip(text, i)
        assert text[i] == ":"
        i = skip(text, i + 1)
        _, end = dec.raw_decode(text, i)
        out.append((key, i, end))
        i = skip(text, end)
        if text[i] == ",":
            i = skip(text, i + 1)
    return out, i + 1


def main():
    src, out_path, target_mb = sys.argv[1], sys.argv[2], float(sys.argv[3])
    raw = open(src, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    text = raw.decode("utf-8")
    dec = json.JSONDecoder()
    members, _ = spans_of_object(text, skip(text, 0), dec)
    events = []
    top = []
    for key, s, e in members:
        if key != "traceEvents":
            top.append((key, text[s:e]))
            continue
        i = skip(text, s + 1)
        while text[i] != "]":
            obj, end = dec.raw_decode(text, i)
            events.append((obj, text[i:end]))
            i = skip(text, end)
            if text[i] == ",":
                i = skip(text, i + 1)
    lo, hi = math.inf, -math.inf
    meta = []
    for obj, _ in events:
        m = isinstance(obj, dict) and obj.get("ph") == "M"
        meta.append(m)
        if m or not isinstance(obj, dict):
            continue
        ts = obj.get("ts")
        if isinstance(ts, (int, float)):
            dur = obj.get("dur")
            dur = dur if isinstance(dur, (int, float)) else 0
            lo, hi = min(lo, ts), max(hi, ts + max(dur, 0))
    period = math.ceil(hi - lo) + 1 if hi >= lo else 1
    ts_re = re.compile(r'"ts"(\s*:\s*)(-?\d+)')
    id_re = re.compile(r'"(correlation|External id|id|bind_id)"(\s*:\s*)(\d+)')
    max_id = max([int(m.group(3)) for _, t in events for m in id_re.finditer(t)] + [1])
    id_step = 10 ** (math.floor(math.log10(max(max_id, 1))) + 1)
    target = int(target_mb * 1_000_000)
    n = 0
    written = copies = 0
    with open(out_path, "w", encoding="utf-8", newline="") as w:

        def put(s):
            nonlocal n
            w.write(s)
            n += len(s.encode("utf-8")) if not s.isascii() else len(s)

        put("{\n")
        for key, v in top:
            put(f"  {json.dumps(key)}: {v},\n")
        put('  "traceEvents": [\n')
        while copies == 0 or n < target:
            dt, did = copies * period, copies * id_step
            ts_sub = lambda m: f'"ts"{m.group(1)}{int(m.group(2)) + dt}'
            id_sub = lambda m: f'"{m.group(1)}"{m.group(2)}{int(m.group(3)) + did}'
            parts = []
            for (_, t), m in zip(events, meta):
                if m and copies > 0:
                    continue
                if copies > 0:
                    t = id_re.sub(id_sub, ts_re.sub(ts_sub, t))
                parts.append(("  " if written == 0 else ",\n  ") + t)
                written += 1
            put("".join(parts))
            copies += 1
        put("\n  ]\n}\n")
    print(f"{out_path}: {copies} copies, {written} events, {n / 1e6:.1f} MB", file=sys.stderr)


if __name__ == "__main__":
    main()
