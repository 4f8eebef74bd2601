#!/usr/bin/env bash
# Record fresh GPU captures and the profilers' own answers on a GPU machine (not run by CI).
#
# usage: docs/oracle/record_h200.sh TOOLS OUTDIR
#   TOOLS: a copy of ../shared/tools (gen_torch_capture.py, gen_jax_capture.py)
# Writes OUTDIR/<name>.tar.gz per capture set, OUTDIR/log.txt and OUTDIR/_memory_viz.py (torch's
# own memory_viz, for docs/oracle/memory_viz_gpu.py on a machine without torch). Each recording
# runs alone (the GPU unshared, so idle and overlap figures are the program's own) under a
# timeout; one that fails does not stop the others.
set -u
tools=$1 out=$2
work=$(mktemp -d)
mkdir -p "$out"
log="$out/log.txt"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  python3 -c 'import torch, jax; print("torch", torch.__version__, "cuda", torch.version.cuda, "jax", jax.__version__, jax.devices())'
} >>"$log" 2>&1
export PYTHONUNBUFFERED=1
run() {  # NAME TIMEOUT CMD...
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  echo "== $name: $*" >>"$log"
  timeout "$limit" "$@" >>"$log" 2>&1
  echo "== $name: exit $? after $((SECONDS - t0)) s" >>"$log"
  (cd "$work" && tar czf "$out/$name.tar.gz" "$name")
}
run torch-cnn 120 python3 "$tools/gen_torch_capture.py" "$work/torch-cnn" cnn 10 --gzip
run torch-graph 150 python3 docs/oracle/gen_torch_graph_capture.py "$work/torch-graph" 8
run jax-attn 120 python3 "$tools/gen_jax_capture.py" "$work/jax-attn" 20 --autotune
run jax-bf16 150 python3 docs/oracle/gen_jax_bf16_capture.py "$work/jax-bf16" 20
if [ "${RECORD_COMPILE:-0}" = 1 ]; then run torch-compile 300 python3 docs/oracle/gen_torch_graph_capture.py "$work/torch-compile" 8 --compile; fi
python3 -c 'import torch.cuda._memory_viz as m; print(m.__file__)' 2>>"$log" | xargs -r -I{} cp {} "$out/_memory_viz.py"
ls -la "$out" >>"$log"
