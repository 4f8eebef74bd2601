"""A real MCP client (the Python `mcp` SDK) against `tracetui mcp` (tests/mcp_client.rs runs it).

usage: client.py TRACETUI FIXTURES_DIR

Starts `tracetui mcp FIXTURES_DIR` over stdio, initializes, lists the tools, calls each one and
compares its result with `tracetui CMD --json` on the same capture; then sends unknown tools, wrong
argument types, paths outside the root and (on a raw pipe) malformed JSON-RPC, and checks that
each gets an error and the server neither crashes nor hangs. Prints one line per check and
`ok: N checks`; exits non-zero on the first failure.
"""

import asyncio
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

TRACETUI, FIXTURES = sys.argv[1], os.path.realpath(sys.argv[2])
TORCH = os.path.join(FIXTURES, "torch_gpu", "worker0.1795774111709892780.pt.trace.json.gz")
DIFF_A = os.path.join(FIXTURES, "diff", "hand_a.json")
DIFF_B = os.path.join(FIXTURES, "diff", "hand_b.json")
RANKS = os.path.join(FIXTURES, "diff")
ALL = {"limit": 1_000_000, "max_chars": 100_000_000}

# (tool, arguments, the CLI command line after `tracetui`)
CASES = [
    ("summary", {"path": TORCH}, ["summary", TORCH]),
    ("stats", {"path": TORCH, "sort": "total"}, ["stats", TORCH, "--sort", "total"]),
    ("stats", {"path": TORCH, "cat": ["kernel"], "group-by": "name"},
     ["stats", TORCH, "--cat", "kernel"]),
    ("search", {"path": TORCH, "query": "aten::mm"}, ["search", TORCH, "aten::mm"]),
    ("search", {"query": "-mm", "path": TORCH}, ["search", TORCH, "--", "-mm"]),
    ("window", {"path": TORCH, "from": "7ms", "to": "7.05ms"},
     ["window", TORCH, "--from", "7ms", "--to", "7.05ms"]),
    ("window", {"path": TORCH, "track": "stream", "min-dur": 1000, "max-depth": 0},
     ["window", TORCH, "--track", "stream", "--min-dur", "1000", "--max-depth", "0"]),
    ("steps", {"path": TORCH}, ["steps", TORCH]),
    ("critical", {"path": TORCH}, ["critical", TORCH]),
    ("roofline", {"path": TORCH}, ["roofline", TORCH]),
    ("gpu", {"path": TORCH}, ["gpu", TORCH]),
    ("memory", {"path": TORCH}, ["memory", TORCH]),
    ("diff", {"a": DIFF_A, "b": DIFF_B}, ["diff", DIFF_A, DIFF_B]),
    ("advise", {"path": TORCH}, ["advise", TORCH]),
    ("ranks", {"path": RANKS}, ["ranks", RANKS]),
]

checks = 0


def check(cond, what):
    global checks
    if not cond:
        print(f"FAIL: {what}", flush=True)
        sys.exit(1)
    checks += 1
    print(f"ok: {what}", flush=True)


def cli_json(argv):
    out = subprocess.run([TRACETUI, argv[0], "--json", "--quiet", *argv[1:]], capture_output=True, timeout=120)
    return json.loads(out.stdout)


def text_of(result):
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def expect_error(session, name, args, what):
    """An argument problem: a JSON-RPC error (raised) or an isError result, never a crash."""
    try:
        r = await session.call_tool(name, args)
        check(getattr(r, "is_error", getattr(r, "isError", False)), f"{what}: isError result")
    except Exception as e:  # the SDK raises the JSON-RPC error
        check("outside" in str(e) or "unknown" in str(e) or "must be" in str(e)
              or "invalid" in str(e), f"{what}: error {str(e)[:100]!r}")


async def main():
    params = StdioServerParameters(command=TRACETUI, args=["mcp", FIXTURES])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await asyncio.wait_for(session.initialize(), 30)
            check(init.server_info.name == "tracetui", f"initialize: {init.protocol_version}")
            tools = (await session.list_tools()).tools
            names = [t.name for t in tools]
            want = ["list_captures", "summary", "stats", "search", "event", "window", "steps", "critical",
                    "roofline", "gpu", "memory", "diff", "advise", "ranks"]
            check(all(n in names for n in want), f"tools/list: {', '.join(names)}")
            check(all("limit" in t.input_schema["properties"] for t in tools), "every tool pages")

            r = await session.call_tool("list_captures", {"limit": 1000})
            listed = json.loads(text_of(r))
            paths = [c["path"] for c in listed["result"]["captures"]]
            check(TORCH in paths and listed["page"]["total"] == len(paths),
                  f"list_captures: {len(paths)} captures")

            for tool, args, argv in CASES:
                t0 = time.monotonic()
                r = await session.call_tool(tool, {**args, **ALL})
                ms = (time.monotonic() - t0) * 1000
                check(not getattr(r, "is_error", False), f"{tool}: no error")
                got = json.loads(text_of(r))
                check(got["result"] == cli_json(argv),
                      f"{tool} {json.dumps({k: v for k, v in args.items() if k not in ('path', 'a', 'b')})}"
                      f" equals `tracetui {argv[0]} --json` ({ms:.0f} ms)")

            # event: by the ids search prints (a CPU op, its launch, the kernel), as the CLI.
            found = json.loads(text_of(await session.call_tool("search", {"path": TORCH, "query": "cudaLaunchKernel", **ALL})))
            launch = found["result"]["captures"][0]["results"][0]["first"][0]["id"]
            for ev in [launch]:
                got = json.loads(text_of(await session.call_tool("event", {"path": TORCH, "id": ev, **ALL})))
                check(got["result"] == cli_json(["event", TORCH, str(ev)]),
                      f"event {ev} ({got['result']['event']['name']}) equals `tracetui event --json`")
            e = got["result"]["event"]
            kernel = next(p["id"] for p in e["partners"] if p["relation"] == "launches")
            k = json.loads(text_of(await session.call_tool("event", {"path": TORCH, "id": str(kernel)})))["result"]["event"]
            check(k["launching_call"]["id"] == launch and k["launching_op"] is not None
                  and k == cli_json(["event", TORCH, str(kernel)])["event"],
                  f"event {kernel}: kernel launched by {launch} inside op {k['launching_op']['name']!r}")
            await expect_error(session, "event", {"path": TORCH, "id": 10**9}, "event id out of range")

            # A first call on a capture not loaded yet reports its load as progress.
            seen = []

            async def on_progress(progress, total, message):
                seen.append((progress, total, message))

            r = await session.call_tool("summary", {"path": os.path.join(FIXTURES, "chrome", "simple_trace.json")},
                                        progress_callback=on_progress)
            check(not getattr(r, "is_error", False) and seen and "loading" in (seen[0][2] or ""),
                  f"progress while loading: {len(seen)} notification(s), first {seen[:1]}")

            # Pages: limit / offset / total, and the size limit cuts rows, not values.
            r = json.loads(text_of(await session.call_tool(
                "stats", {"path": TORCH, "limit": 5, "offset": 3})))
            full = cli_json(["stats", TORCH])["captures"][0]["stats"]
            check(r["result"]["captures"][0]["stats"] == full[3:8] and r["page"]["total"] == len(full),
                  f"stats limit 5 offset 3 of {len(full)} rows")
            t = text_of(await session.call_tool("stats", {"path": TORCH, "limit": 1000, "max_chars": 3000}))
            r = json.loads(t)
            check(len(t) <= 3000 and r["page"]["cut_for_size"] and r["page"]["next_offset"],
                  f"max_chars 3000: {len(t)} characters, {len(r['result']['captures'][0]['stats'])} rows")

            # Errors: no crash, no hang.
            await expect_error(session, "no_such_tool", {}, "unknown tool")
            await expect_error(session, "stats", {"path": 42}, "path of the wrong type")
            await expect_error(session, "stats", {"path": TORCH, "limit": "ten"}, "limit of the wrong type")
            await expect_error(session, "stats", {"path": TORCH, "sort": "bogus"}, "bad option value")
            await expect_error(session, "stats", {"path": TORCH, "unified": "yes"}, "flag of the wrong type")
            await expect_error(session, "stats", {"path": TORCH, "nope": 1}, "unknown argument")
            await expect_error(session, "stats", {"path": "/etc/passwd"}, "path outside the root")
            await expect_error(session, "summary", {"path": FIXTURES + "/../../Cargo.toml"}, "../ out of the root")
            await expect_error(session, "diff", {"a": DIFF_A, "b": "/etc/hostname"}, "diff side outside")
            await session.send_ping()
            check(True, "ping after the errors: server alive")


def write_big(path, n):
    """A generated Kineto-style JSON capture of `n` nested CPU ops (big enough to load slowly)."""
    with open(path, "w") as f:
        f.write('{"traceEvents": [\n')
        for i in range(n):
            sep = "," if i + 1 < n else ""
            f.write(f'{{"ph": "X", "cat": "cpu_op", "name": "op{i % 97}", "pid": 1, "tid": {1 + i % 4}, '
                    f'"ts": {i * 10}, "dur": 8, "args": {{"External id": {i}, "Sequence number": {i}}}}}{sep}\n')
        f.write("]}\n")


async def roots_and_progress():
    """The client's MCP roots extend the server's; a first call on a big capture reports its load
    as progress notifications and gives the CLI's JSON; a second call does not load again."""
    big_dir = tempfile.mkdtemp(prefix="tracetui-mcp-")
    try:
        big = os.path.realpath(os.path.join(big_dir, "big.pt.trace.json"))
        write_big(big, 400_000)
        size = os.path.getsize(big)

        async def list_roots(context):
            return types.ListRootsResult(roots=[types.Root(uri=pathlib.Path(big_dir).as_uri(), name="generated")])

        params = StdioServerParameters(command=TRACETUI, args=["mcp", os.path.join(FIXTURES, "chrome")])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, list_roots_callback=list_roots) as session:
                await asyncio.wait_for(session.initialize(), 30)
                listed = json.loads(text_of(await session.call_tool("list_captures", {"limit": 1000})))
                paths = [c["path"] for c in listed["result"]["captures"]]
                check(big in paths, f"client roots: list_captures finds the capture under the client's root ({len(paths)} captures)")
                seen = []

                async def on_progress(progress, total, message):
                    seen.append((progress, total, message))

                r = await session.call_tool("summary", {"path": big, **ALL}, progress_callback=on_progress)
                got = json.loads(text_of(r))
                grows = all(a[0] <= b[0] for a, b in zip(seen, seen[1:]))
                check(not getattr(r, "isError", False) and len(seen) >= 2 and grows
                      and seen[-1][0] > 0 and all(t == size for _, t, _ in seen if t),
                      f"progress while loading {size >> 20} MB: {len(seen)} notifications, bytes "
                      f"{[p for p, _, _ in seen][:6]}…")
                check(got["result"] == cli_json(["summary", big]), "summary of the big capture equals the CLI's")
                seen.clear()
                await session.call_tool("stats", {"path": big, "limit": 3}, progress_callback=on_progress)
                check(not seen, "second call on the capture: kept loaded, no load, no progress")
                listed = json.loads(text_of(await session.call_tool("list_captures", {"limit": 1000})))
                kept = [c for c in listed["result"]["captures"] if c["path"] == big]
                check(kept and (kept[0]["loaded_heap_bytes"] or 0) > 0,
                      f"list_captures: kept loaded, {kept[0]['loaded_heap_bytes']} heap bytes")
                await expect_error(session, "summary", {"path": TORCH}, "outside both the server's and the client's roots")
    finally:
        shutil.rmtree(big_dir, ignore_errors=True)


def raw():
    """Malformed JSON-RPC on a raw pipe: one error per line, then a working ping."""
    p = subprocess.Popen([TRACETUI, "mcp", FIXTURES], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    lines = [
        b"{not json\n",
        b"[1, 2]\n",
        b'"hello"\n',
        b'{"jsonrpc": "1.0", "id": 1, "method": "ping"}\n',
        b'{"jsonrpc": "2.0", "id": 2}\n',
        b'{"jsonrpc": "2.0", "id": 3, "method": "no/such"}\n',
        b'{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": [1]}\n',
        b'{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "stats", "arguments": 7}}\n',
        b"\xff\xfe\n",
        b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n',
        b'{"jsonrpc": "2.0", "id": 6, "method": "ping"}\n',
    ]
    out, _ = p.communicate(b"".join(lines), timeout=30)
    replies = [json.loads(l) for l in out.splitlines()]
    errors = [r for r in replies if "error" in r]
    check(len(errors) == 9 and replies[-1] == {"jsonrpc": "2.0", "id": 6, "result": {}},
          f"malformed JSON-RPC: {len(errors)} errors "
          f"({', '.join(str(e['error']['code']) for e in errors)}), then ping answered")
    check(p.returncode == 0, "server exits 0 when stdin closes")


asyncio.run(asyncio.wait_for(main(), 300))
asyncio.run(asyncio.wait_for(roots_and_progress(), 300))
raw()
print(f"ok: {checks} checks")
