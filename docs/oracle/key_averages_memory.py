"""Oracle for the memory columns of `tracetui stats`: torch's own key_averages() figures.

usage: python3 docs/oracle/key_averages_memory.py FILE.pt.trace.json[.gz] [--tracetui BIN]

FILE.key_averages.json must sit beside the capture, written by ../shared/tools/gen_torch_capture.py
(profile_memory=True): per name self_cpu_mem, cpu_mem, self_device_mem, device_mem (bytes). Runs
`tracetui stats FILE --json --cat cpu_op,user_annotation,cuda_runtime,cuda_driver` and prints, per
name, whether the four columns are equal; exit 1 on any difference.
"""
import json, subprocess, sys

path = sys.argv[1]
binary = sys.argv[sys.argv.index("--tracetui") + 1] if "--tracetui" in sys.argv else "target/release/tracetui"
stem = path.replace(".gz", "").replace(".pt.trace.json", "")
ref = {r["name"]: r for r in json.load(open(stem + ".key_averages.json"))}
out = json.loads(subprocess.run([binary, "stats", path, "--json", "--cat",
                                 "cpu_op,user_annotation,cuda_runtime,cuda_driver"],
                                check=True, capture_output=True, text=True).stdout)
ours = {r["name"]: r for r in out["captures"][0]["stats"]}
cols = ["self_cpu_mem", "cpu_mem", "self_device_mem", "device_mem"]
bad = 0
for name, r in sorted(ref.items()):
    if "cpu_mem" not in r:
        sys.exit("the key_averages file has no memory columns: record it with the current gen_torch_capture.py")
    o = ours.get(name, {})
    same = all(o.get(c, 0) == r[c] for c in cols)
    bad += not same
    print(f"{'SAME  ' if same else 'DIFFER'} {name}: torch {[r[c] for c in cols]} tracetui {[o.get(c) for c in cols]}")
print(f"{len(ref) - bad}/{len(ref)} names equal")
sys.exit(1 if bad else 0)
