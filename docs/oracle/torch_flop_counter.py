#!/usr/bin/env python3
"""Compare `tracetui roofline --json` FLOPs per call with torch's own FLOP counter
(`torch/utils/flop_counter.py`) on the shapes of a capture.

torch's formulas are run from their source without importing torch (a CUDA wheel does not import
without its CUDA libraries): the functions are taken from flop_counter.py with `ast`, their
`@register_flop_formula` decorators dropped, and called on the recorded `Input Dims`. Usage:

    python3 docs/oracle/torch_flop_counter.py TRACE.pt.trace.json.gz \
        --flop-counter .../site-packages/torch/utils/flop_counter.py [--tracetui target/debug/tracetui]

Expected differences (docs/roofline.md): torch leaves out the bias of addmm / baddbmm /
convolution (TraceLens and tracetui add M·N), the causal halving, and counts an attention
backward as 5 products for every kernel (TraceLens: 4 for the efficient and cuDNN kernels, 5 for
flash; tracetui follows TraceLens).
"""

import argparse
import ast
import json
import math
import subprocess
import sys

FUNCS = ["mm_flop", "addmm_flop", "bmm_flop", "baddbmm_flop", "conv_flop_count",
         "sdpa_flop_count", "sdpa_backward_flop_count"]


def load(path):
    tree = ast.parse(open(path).read())
    keep = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in FUNCS:
            node.decorator_list = []
            keep.append(node)
    mod = ast.Module(body=keep, type_ignores=[])
    ns = {"prod": math.prod}
    exec(compile(mod, path, "exec"), ns)
    missing = [f for f in FUNCS if f not in ns]
    if missing:
        raise SystemExit(f"not in {path}: {missing}")
    return ns


def conv_out(x, w, stride, pad, dil, transposed, opad, groups):
    nd = len(x) - 2
    g = lambda v, i, d: (v[0] if len(v) == 1 else v[i]) if v else d
    out = [x[0], w[1] * groups if transposed else w[0]]
    for i in range(nd):
        n, k = x[2 + i], w[2 + i]
        s, p, d = g(stride, i, 1), g(pad, i, 0), g(dil, i, 1)
        out.append((n - 1) * s - 2 * p + d * (k - 1) + g(opad, i, 0) + 1 if transposed
                   else (n + 2 * p - d * (k - 1) - 1) // s + 1)
    return out


def ints(s):
    s = s.strip()
    return [int(v) for v in s.strip("[]").split(",") if v.strip()] if s else []


def torch_flops(t, name, dims, concrete):
    if name == "aten::mm":
        return t["mm_flop"](dims[0], dims[1]), ""
    if name == "aten::addmm":
        return t["addmm_flop"](dims[0], dims[1], dims[2]), "torch leaves out the bias (M·N)"
    if name == "aten::bmm":
        return t["bmm_flop"](dims[0], dims[1]), ""
    if name == "aten::baddbmm":
        return t["baddbmm_flop"](dims[0], dims[1], dims[2]), "torch leaves out the bias"
    if name == "aten::convolution":
        tr = concrete[6].strip().lower() == "true"
        out = conv_out(dims[0], dims[1], ints(concrete[3]), ints(concrete[4]), ints(concrete[5]), tr,
                       ints(concrete[7]), int(concrete[8] or 1))
        return t["conv_flop_count"](dims[0], dims[1], out, tr), "torch leaves out the bias" if dims[2] else ""
    fwd = {"aten::_scaled_dot_product_efficient_attention", "aten::_scaled_dot_product_flash_attention",
           "aten::_scaled_dot_product_cudnn_attention"}
    if name in fwd:
        return t["sdpa_flop_count"](dims[0], dims[1], dims[2]), "torch ignores is_causal"
    bwd = {"aten::_scaled_dot_product_efficient_attention_backward": "4",
           "aten::_scaled_dot_product_cudnn_attention_backward": "4",
           "aten::_scaled_dot_product_flash_attention_backward": "5"}
    if name in bwd:
        return (t["sdpa_backward_flop_count"](dims[0], dims[1], dims[2], dims[3]),
                f"torch: 5 products (recompute); TraceLens/tracetui {bwd[name]} for this kernel")
    return None, ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--flop-counter", required=True)
    ap.add_argument("--tracetui", default="target/debug/tracetui")
    a = ap.parse_args()
    t = load(a.flop_counter)
    out = json.loads(subprocess.check_output([a.tracetui, "roofline", a.trace, "--json"]))
    n = same = explained = 0
    print(f"{'op':52} {'input dims':44} {'tracetui':>12} {'torch':>12}  note")
    for r in out["captures"][0]["rows"]:
        if r["family"] not in ("gemm", "conv", "attention"):
            continue
        dims = json.loads(r["input_dims"])
        concrete = json.loads(r["concrete_inputs"] or "[]")
        f, why = torch_flops(t, r["name"], dims, concrete)
        if f is None:
            print(f"{r['name'][:52]:52} {r['input_dims'][:44]:44} {r['flops']:>12.0f} {'-':>12}  not in torch's counter")
            continue
        n += 1
        eq = abs(f - r["flops"]) < 0.5
        same += eq
        explained += (not eq) and bool(why)
        print(f"{r['name'][:52]:52} {r['input_dims'][:44]:44} {r['flops']:>12.0f} {f:>12.0f}  "
              f"{'equal' if eq else ('differs: ' + why if why else 'DIFFERS, unexplained')}")
    print(f"\n{n} rows in torch's counter: {same} equal, {explained} differ as documented, "
          f"{n - same - explained} unexplained")
    return 0 if n - same - explained == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
