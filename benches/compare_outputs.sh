#!/usr/bin/env bash
# Byte-for-byte comparison of two tracetui binaries' outputs (loader changes must not change
# one number).
#
#   benches/compare_outputs.sh BINARY_A BINARY_B FILE...
#
# Runs 14 commands (summary, stats, gpu, rank, stacks by self and device time, steps, critical,
# memory, three searches — all names, an `arg:` filter, a `cat:` filter —, roofline, nested) on
# every FILE with both binaries, the capture cache off (TRACETUI_CACHE=off: every run parses),
# and prints each command whose output or exit status differs, then the counts. Files of 8 MB
# and more take the chunk-parallel path (the scanner); build them with benches/replicate_trace.py
# from real captures (traces/h200, traces/hta, traces/kineto-resnet50, traces/torch-cpu-cnn).
set -uo pipefail
A=$1
B=$2
shift 2
CMDS=("summary --json {}" "stats --json {}" "gpu --json {}" "rank --json {}" "stacks {}"
    "stacks --metric device {}" "steps --json {}" "critical --json {}" "memory --json {}"
    "search --json --regex {} ." "search --json {} arg:stream=7" "search --json {} cat:kernel"
    "roofline --json {}" "nested --json {}")
n=0
bad=0
for f in "$@"; do
    for c in "${CMDS[@]}"; do
        c=${c//\{\}/$f}
        # The binary's own path appears in usage errors: mask it.
        oa=$(TRACETUI_CACHE=off $A $c 2>&1 | sed "s|$A|BIN|g"; echo "rc=${PIPESTATUS[0]}")
        ob=$(TRACETUI_CACHE=off $B $c 2>&1 | sed "s|$B|BIN|g"; echo "rc=${PIPESTATUS[0]}")
        n=$((n + 1))
        if [[ "$oa" != "$ob" ]]; then
            bad=$((bad + 1))
            echo "DIFF: $c"
        fi
    done
done
echo "$n comparisons, $bad differ"
[[ $bad -eq 0 ]]
