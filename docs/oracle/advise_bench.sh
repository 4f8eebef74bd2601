#!/usr/bin/env bash
# `tracetui advise` wall time (issue 56 §"Done means": < 1 s per shared capture, < 5 s on a 1 GB
# Kineto trace). Release build, capture cache off, one run per file; the 1 GB trace is H200
# PyTorch capture replicated in time by benches/replicate_trace.py into /tmp (not committed).
#
# usage: docs/oracle/advise_bench.sh [TRACES_DIR] [BIG_JSON]
set -euo pipefail
cd "$(dirname "$0")/../.."
traces=${1:-/work/shared/traces}
big=${2:-/tmp/advise_h200_1g.pt.trace.json}
bin=target/release/tracetui
[ -x "$bin" ] || cargo build --release --bin tracetui
export TRACETUI_CACHE=off
t() { # prints "seconds  file"
    local s e
    s=$(date +%s.%N)
    "$bin" advise "$1" -q >/dev/null 2>&1 || true
    e=$(date +%s.%N)
    printf '%6.2f s  %s\n' "$(echo "$e - $s" | bc)" "$1"
}
find "$traces" -type f \( -name '*.pt.trace.json*' -o -name '*.xplane.pb' -o -name '*.json.gz' \
    -o -name '*.trace.json' \) ! -path '*/bad/*' | sort | while read -r f; do t "$f"; done
if [ ! -f "$big" ]; then
    src=$(find "$traces/h200" -name '*.pt.trace.json.gz' | sort | head -1)
    python3 benches/replicate_trace.py "$src" "$big" 1024
fi
t "$big"
