"""Max RSS of one big capture opened three ways: `tracetui mcp` (load + summary + stats + window +
event calls), `tracetui summary`, and the interactive explorer (in a pseudo-terminal, quit with
`q` once loaded). The figures in docs/mcp.md, "Memory".

usage: mcp_rss.py TRACETUI CAPTURE [EXPLORER_SECONDS [WHICH,…]]   (WHICH: mcp, summary, explorer)

Each run is `/usr/bin/time -v`'d; the capture cache is off (TRACETUI_CACHE=off) so every run
parses the file.
"""

import json
import os
import pty
import re
import select
import subprocess
import sys
import time

TRACETUI, CAP = sys.argv[1:3]
WAIT = float(sys.argv[3]) if len(sys.argv) > 3 else 120
WHICH = sys.argv[4].split(",") if len(sys.argv) > 4 else ["mcp", "summary", "explorer"]
ENV = {**os.environ, "TRACETUI_CACHE": "off"}


def rss(stderr):
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr)
    w = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", stderr)
    return (int(m.group(1)) if m else -1), (w.group(1) if w else "?")


def mcp():
    calls = [
        {"name": "summary", "arguments": {"path": CAP}},
        {"name": "stats", "arguments": {"path": CAP, "limit": 5}},
        {"name": "window", "arguments": {"path": CAP, "from": "0", "to": "1ms", "limit": 5}},
        {"name": "event", "arguments": {"path": CAP, "id": 0}},
        {"name": "steps", "arguments": {"path": CAP}},
    ]
    msgs = [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "rss", "version": "1"}}}]
    msgs += [{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": c} for i, c in enumerate(calls)]
    p = subprocess.Popen(["/usr/bin/time", "-v", TRACETUI, "mcp", os.path.dirname(CAP)], env=ENV,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    t = time.monotonic()
    times = []
    for m in msgs:
        t0 = time.monotonic()
        p.stdin.write((json.dumps(m) + "\n").encode())
        p.stdin.flush()
        reply = json.loads(p.stdout.readline())
        ok = "error" not in reply and not reply.get("result", {}).get("isError")
        times.append((m.get("params", {}).get("name", m["method"]), round((time.monotonic() - t0) * 1000), ok))
    p.stdin.close()
    err = p.stderr.read()
    p.wait(timeout=600)
    print("mcp calls (name, ms, ok):", times)
    return rss(err.decode())


def summary():
    r = subprocess.run(["/usr/bin/time", "-v", TRACETUI, "summary", CAP], env=ENV, capture_output=True)
    return rss(r.stderr.decode())


def explorer():
    """The explorer in a pty, `q` after WAIT seconds; max RSS through /usr/bin/time -v."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execvpe("/usr/bin/time", ["/usr/bin/time", "-o", "/tmp/explorer_rss.txt", "-v", TRACETUI, CAP],
                   {**ENV, "TERM": "xterm-256color", "COLUMNS": "160", "LINES": "50"})
    end = time.monotonic() + WAIT
    while time.monotonic() < end:
        r, _, _ = select.select([fd], [], [], 0.5)
        if r:
            try:
                os.read(fd, 65536)
            except OSError:
                break
    os.write(fd, b"q")
    while True:
        r, _, _ = select.select([fd], [], [], 1)
        if r:
            try:
                if not os.read(fd, 65536):
                    break
            except OSError:
                break
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            break
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    return rss(open("/tmp/explorer_rss.txt").read())


print(f"{CAP}: {os.path.getsize(CAP) / 1e6:.0f} MB")
for name, f in [("mcp", mcp), ("summary", summary), ("explorer", explorer)]:
    if name not in WHICH:
        continue
    kb, wall = f()
    print(f"{name:9} max RSS {kb / 1024:8.0f} MiB  wall {wall}")
