"""Oracle for `tracetui memory SNAPSHOT.pickle --stacks`: the folded lines of live bytes per call
stack, as `python -m torch.cuda._memory_viz memory SNAPSHOT.pickle` computes them (the lines it
hands to flamegraph.pl), compared with what tracetui prints — on the text output (the lines after
the report) and in `--json` (`folded`).

usage:
  python3 docs/oracle/memory_viz_stacks.py DIR [--tracetui BIN] [--seeds N] [--memory-viz PATH]

DIR receives the pickles: the three of `memory_snapshot.py make` (3 devices with a ring buffer cut
to its last entries and an OOM, expandable segments, a protocol-2 segments-only list) plus N random
snapshots (default 20; seeds 1..N: 1–3 devices, 0–150 trace entries each, ring buffers cut at
random, expandable segments on odd seeds, protocols 2, 4 and 5) built with the structure torch
documents (`torch.cuda.memory._snapshot`). memory_viz's `memory` is called as its command line
does, with `format_flamegraph` returning the lines instead of fetching flamegraph.pl (no network).
Exit status 1 when any file differs.
"""
import json, os, pickle, random, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import memory_snapshot as ms  # noqa: E402


def random_snapshot(path, seed):
    rng = random.Random(seed)
    segs, traces = [], []
    for dev in range(rng.randint(1, 3)):
        n = rng.randint(0, 150)
        keep = rng.choice([None, max(1, n // 2), n])
        s, e = ms.device(dev, rng, n, expandable=seed % 2 == 1, keep=keep, oom=rng.random() < 0.3)
        segs += s
        traces.append(e)
    proto = [2, 4, 5][seed % 3]
    with open(path, "wb") as f:
        pickle.dump({"segments": segs, "device_traces": traces}, f, protocol=proto)


def printed_folded(binary, path):
    """The folded lines of `tracetui memory PATH --stacks`: the lines after the report."""
    out = subprocess.run([binary, "memory", path, "--stacks"], check=True, capture_output=True,
                         text=True).stdout
    return [l for l in out.splitlines() if l and not l.startswith((" ", "=="))]


def main():
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    d = sys.argv[1]
    args = sys.argv[2:]
    binary = args[args.index("--tracetui") + 1] if "--tracetui" in args else "target/release/tracetui"
    seeds = int(args[args.index("--seeds") + 1]) if "--seeds" in args else 20
    mv = ms.load_memory_viz(args[args.index("--memory-viz") + 1] if "--memory-viz" in args else None)
    ms.make(d)
    for seed in range(1, seeds + 1):
        random_snapshot(os.path.join(d, f"random_{seed:02}.pickle"), seed)
    ok, total_lines = True, 0
    for name in sorted(os.listdir(d)):
        if not name.endswith(".pickle"):
            continue
        path = os.path.join(d, name)
        with open(path, "rb") as f:
            data = pickle.load(f)
        if isinstance(data, list):
            data = {"segments": data, "traces": []}
        theirs = mv.memory(data, format_flamegraph=lambda s: s).splitlines()
        text = printed_folded(binary, path)
        js = json.loads(subprocess.run([binary, "memory", path, "--json", "--stacks"], check=True,
                                       capture_output=True, text=True).stdout)["captures"][0]["folded"]
        live = sum(int(l.rsplit(" ", 1)[1]) for l in theirs if ";<gaps>" not in l and ";inactive;" not in l)
        same = text == theirs and js == theirs
        total_lines += len(theirs)
        print(f"{name}: {len(theirs)} folded lines, {live} live bytes: text {'SAME' if text == theirs else 'DIFFER'}, "
              f"json {'SAME' if js == theirs else 'DIFFER'}")
        if not same:
            ok = False
            for a, b in zip(theirs, text):
                if a != b:
                    print(f"  memory_viz: {a}\n  tracetui:   {b}")
                    break
    print(f"{'ALL SAME' if ok else 'DIFFERENCES'}: {total_lines} lines over "
          f"{len([n for n in os.listdir(d) if n.endswith('.pickle')])} snapshots")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
