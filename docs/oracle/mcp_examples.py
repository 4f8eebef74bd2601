"""Runs the three worked examples of docs/mcp.md against `tracetui mcp` on the shared H200
captures and prints each call and its answer, trimmed (plain JSON-RPC over a pipe, no SDK).

usage: mcp_examples.py TRACETUI ROOT   (ROOT: the shared traces/h200 dir)
"""

import json
import subprocess
import sys

TRACETUI, ROOT = sys.argv[1:3]
p = subprocess.Popen([TRACETUI, "mcp", ROOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
n = 0


def call(name, args):
    global n
    n += 1
    msg = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": name, "arguments": args}}
    p.stdin.write((json.dumps(msg) + "\n").encode())
    p.stdin.flush()
    reply = json.loads(p.stdout.readline())
    print(f"\n>>> {name} {json.dumps(args)}")
    if "error" in reply:
        print("error:", reply["error"])
        return None
    return json.loads(reply["result"]["content"][0]["text"])


def show(v, keys=None, rows=3):
    """Prints v with each list cut to `rows` entries and, for dicts in lists, only `keys`."""
    def cut(x):
        if isinstance(x, list):
            out = [cut(i) for i in x[:rows]]
            return out + ([f"… {len(x) - rows} more"] if len(x) > rows else [])
        if isinstance(x, dict):
            return {k: cut(w) for k, w in x.items() if keys is None or k in keys or isinstance(w, (list, dict))}
        return x
    print(json.dumps(cut(v), indent=1)[:2500])


init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "ex", "version": "1"}}}
p.stdin.write((json.dumps(init) + "\n").encode())
p.stdin.flush()
p.stdout.readline()

T = "torch-gpu-transformer/worker0.1795774111709892780.pt.trace.json.gz"
T2 = "torch-gpu-transformer/worker0.1795774113299484585.pt.trace.json.gz"
print("=== 1. Why is this step slow?")
show(call("list_captures", {}), ["path", "format", "bytes"])
show(call("advise", {"path": T, "limit": 3}), ["kind", "title", "saving_ns", "step", "try", "what", "finding"], 3)
show(call("steps", {"path": T, "limit": 5}), ["step", "name", "dur_ns", "compute_ns", "idle_ns", "host_wait_ns", "kernel_wait_ns"], 5)
show(call("critical", {"path": T, "limit": 3}), ["step", "bound", "dur_ns", "kind", "name", "segments"], 3)
print("\n=== 2. What changed between two captures?")
show(call("diff", {"a": T, "b": T2, "limit": 5}), ["name", "total_a_ns", "total_b_ns", "delta_ns", "delta_pct", "status"], 5)
print("\n=== 3. Which kernel to optimize first?")
show(call("stats", {"path": T, "cat": "kernel", "sort": "total", "limit": 3}), ["name", "count", "total_ns", "avg_ns"], 3)
found = call("search", {"path": T, "query": "gemm", "limit": 1})
show(found, ["name", "count", "total_ns", "id", "start_ns", "dur_ns"], 3)
k = found["result"]["captures"][0]["results"][0]["first"][0]["id"]
show(call("event", {"path": T, "id": k}), ["id", "name", "track", "start_ns", "dur_ns", "self_ns", "relation", "launching_call", "launching_op"], 3)
ev = call("event", {"path": T, "id": k})["result"]["event"]
s = ev["start_ns"]
show(call("window", {"path": T, "from": str(s - 20000), "to": str(s + ev["dur_ns"]), "track": "stream", "limit": 5}),
     ["id", "name", "start_ns", "dur_ns", "total", "tracks_matched"], 5)
p.stdin.close()
p.wait(timeout=30)
