"""Times each `tracetui mcp` tool on one capture once it is loaded (the figures in docs/mcp.md).

usage: time_tools.py TRACETUI ROOT CAPTURE [CAPTURE_B]

Plain JSON-RPC over a pipe (no SDK needed): the first call loads the capture; then every tool is
called three times and the best answer time is printed, in ms.
"""

import json
import subprocess
import sys
import time

TRACETUI, ROOT, CAP = sys.argv[1:4]
CAP_B = sys.argv[4] if len(sys.argv) > 4 else CAP
p = subprocess.Popen([TRACETUI, "mcp", ROOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
n = 0


def call(method, params=None):
    global n
    n += 1
    msg = {"jsonrpc": "2.0", "id": n, "method": method, "params": params or {}}
    p.stdin.write((json.dumps(msg) + "\n").encode())
    p.stdin.flush()
    reply = json.loads(p.stdout.readline())
    if "error" in reply or reply["result"].get("isError"):
        print("error:", json.dumps(reply)[:300])
    return reply


call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "time_tools", "version": "1"}})
t = time.monotonic()
call("tools/call", {"name": "summary", "arguments": {"path": CAP}})
print(f"first call (load): {(time.monotonic() - t) * 1000:.0f} ms")
found = call("tools/call", {"name": "search", "arguments": {"path": CAP, "query": ""}})
hit = json.loads(found["result"]["content"][0]["text"])["result"]["captures"][0]["results"]
ev = hit[0]["first"][0]["id"] if hit and hit[0]["first"] else 0
cases = [
    ("list_captures", {}),
    ("summary", {"path": CAP}),
    ("stats", {"path": CAP}),
    ("search", {"path": CAP, "query": "gemm"}),
    ("event", {"path": CAP, "id": ev}),
    ("window", {"path": CAP, "from": "0", "to": "5ms"}),
    ("window", {"path": CAP}),
    ("steps", {"path": CAP}),
    ("critical", {"path": CAP}),
    ("roofline", {"path": CAP}),
    ("gpu", {"path": CAP}),
    ("memory", {"path": CAP}),
    ("diff", {"a": CAP, "b": CAP_B}),
    ("advise", {"path": CAP}),
    ("ranks", {"path": CAP}),
]
for name, args in cases:
    best = float("inf")
    for _ in range(3):
        t = time.monotonic()
        r = call("tools/call", {"name": name, "arguments": args})
        best = min(best, time.monotonic() - t)
    size = len(r["result"]["content"][0]["text"]) if "result" in r else 0
    what = name + (" " + ",".join(f"{k}={v}" for k, v in args.items() if k not in ("path", "a", "b")) if name in ("event", "window") else "")
    print(f"{what:24} {best * 1000:7.1f} ms  {size:6} chars")
p.stdin.close()
p.wait(timeout=30)
