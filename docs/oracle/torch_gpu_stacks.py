"""Compare `tracetui stacks --torch` with torch's own export_stacks, both metrics (not run by CI).

usage: torch_gpu_stacks.py TRACETUI CAPTURE.pt.trace.json[.gz] [...]

Beside each capture tools/gen_torch_capture.py writes FILE.stacks.txt
(export_stacks(metric="self_cpu_time_total")) and, on a GPU, FILE.stacks_device.txt
(metric="self_cuda_time_total"), one line per event instance. Both sides are summed per stack; a
torch line is matched when tracetui has the same stack with a value within 1 µs. Prints, per
capture and metric, the share of torch's weight on matched lines, both totals, and the largest
differences. Exit 1 when a share is below 95 %.
"""
import collections, subprocess, sys, os


def summed(text):
    m = collections.Counter()
    for line in text.splitlines():
        if line.strip():
            s, v = line.rsplit(" ", 1)
            m[s] += int(v)
    return m


tracetui, paths = sys.argv[1], sys.argv[2:]
low = False
for path in paths:
    stem = path.replace(".gz", "").replace(".pt.trace.json", "")
    for metric, suffix in (("self", ".stacks.txt"), ("device", ".stacks_device.txt")):
        if not os.path.exists(stem + suffix):
            print(f"{os.path.basename(path)} {metric}: no {suffix} beside the capture")
            continue
        ref = summed(open(stem + suffix).read())
        got = summed(subprocess.run([tracetui, "stacks", path, "--torch", "--metric", metric],
                                    check=True, capture_output=True, text=True).stdout)
        total = sum(ref.values())
        matched = sum(v for s, v in ref.items() if abs(got.get(s, 0) - v) <= 1)
        share = 100.0 * matched / total if total else 100.0
        low |= share < 95.0
        print(f"{os.path.basename(path)} --metric {metric}: {share:.2f} % of torch's weight on "
              f"identical lines ({matched}/{total} µs, {len(ref)} torch stacks); "
              f"tracetui total {sum(got.values())} µs, {len(got)} stacks")
        diffs = sorted(((abs(got.get(s, 0) - v), s, v, got.get(s, 0)) for s, v in ref.items()
                        if abs(got.get(s, 0) - v) > 1), reverse=True)[:3]
        extra = sorted(((v, s) for s, v in got.items() if s not in ref), reverse=True)[:2]
        for d, s, v, g in diffs:
            print(f"    torch {v} tracetui {g}: …{s[-110:]}")
        for v, s in extra:
            print(f"    only tracetui {v}: …{s[-110:]}")
sys.exit(1 if low else 0)
