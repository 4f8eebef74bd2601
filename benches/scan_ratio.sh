#!/usr/bin/env bash
# Cold load of a ~1 GB Kineto JSON trace against a plain scan of the same bytes (issue 41).
#
#   benches/scan_ratio.sh [FILE] [PAIRS] [BINARY...]
#
# FILE     the trace (default target/bench-data/h200_x1g.pt.trace.json); built when missing by
#          replicating $SCAN_SOURCE (any real Kineto .json/.json.gz; default the repo's H200 torch
#          capture tests/fixtures/torch_gpu/worker0.1795774111709892780.pt.trace.json.gz, 1.75 M
#          arg-heavy events per GB; the issue's shape, 4.5 M events per GB, comes from the V100
#          ns-resolution capture of the team's traces/hta collection) in time to $SCAN_MB
#          (default 1024) MB with benches/replicate_trace.py (the rule of src/synth/replicate.rs).
# PAIRS    paired runs (default 5).
# BINARY   tracetui binaries to compare (default: target/release/tracetui, built if missing).
#
# Each pair runs `grep -c ph FILE` then `TRACETUI_CACHE=off BINARY summary FILE --json` (file in
# page cache: one warm-up read first), each under /usr/bin/time; with several binaries, every
# round runs one pair per binary, so they are compared under the same conditions. Printed per binary: the median
# of the per-pair ratios (load wall / grep wall), the median wall and CPU (user+sys) seconds, the
# peak anonymous memory (RssAnon of /proc/PID/status sampled every 20 ms in one extra, untimed
# run, so the sampling does not slow the timed ones; the mapped file's pages are file-backed and
# not counted) with its ratio to the file size, and the max RSS of `time -v`
# (which does count the mapped file). The load average is printed with each binary: wall-clock
# ratios only mean something on a quiet machine (2 cores, nothing else running).
set -euo pipefail
cd "$(dirname "$0")/.."
FILE=${1:-target/bench-data/h200_x1g.pt.trace.json}
PAIRS=${2:-5}
shift $(($# > 2 ? 2 : $#)) || true
BINS=("$@")
SRC=${SCAN_SOURCE:-tests/fixtures/torch_gpu/worker0.1795774111709892780.pt.trace.json.gz}
if [[ ! -s $FILE ]]; then
    mkdir -p "$(dirname "$FILE")"
    python3 benches/replicate_trace.py "$SRC" "$FILE.tmp" "${SCAN_MB:-1024}"
    mv "$FILE.tmp" "$FILE"
fi
if [[ ${#BINS[@]} -eq 0 ]]; then
    [[ -x target/release/tracetui ]] || cargo build --release --bin tracetui
    BINS=(target/release/tracetui)
fi
SIZE=$(stat -c %s "$FILE")
cat "$FILE" >/dev/null # page cache
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# wall user sys maxrss_kb of one command.
measure() {
    # stdout to a file, not /dev/null: GNU grep stops at the first match when it sees /dev/null.
    /usr/bin/time -f '%e %U %S %M' -o "$TMP/time" "$@" >"$TMP/out" 2>/dev/null || true
    cat "$TMP/time"
}

# Peak RssAnon (kB) of one untimed run, sampled every 20 ms from /proc with shell builtins only.
peak_anon() {
    "$@" >/dev/null 2>&1 &
    local pid=$! peak=0 k v fd state=R
    exec {fd}<> <(:)
    while [[ $state != Z && -r /proc/$pid/status ]]; do
        while read -r k v _; do
            if [[ $k == State: ]]; then state=$v; fi
            if [[ $k == RssAnon: ]] && ((v > peak)); then peak=$v; fi
        done <"/proc/$pid/status" 2>/dev/null
        read -rt 0.02 -u "$fd" _ || true
    done
    wait "$pid" || true
    exec {fd}>&-
    echo "$peak"
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

printf 'file %s: %.1f MB, %s lines with "ph"\n' "$FILE" "$(echo "$SIZE/1000000" | bc -l)" "$(grep -c ph "$FILE")"
# Rounds outer, binaries inner: each round runs grep then the load once per binary, so binaries
# compared in one call share the machine's drift (its speed moves by tens of percent in minutes).
for i in "${!BINS[@]}"; do
    for f in ratios walls cpus greps rss; do : >"$TMP/$f.$i"; done
done
for _ in $(seq "$PAIRS"); do
    for i in "${!BINS[@]}"; do
        read -r gw _ <<<"$(measure grep -c ph "$FILE")"
        read -r lw lu ls lr <<<"$(TRACETUI_CACHE=off measure "${BINS[$i]}" summary "$FILE" --json)"
        echo "$gw" >>"$TMP/greps.$i"
        echo "$lw" >>"$TMP/walls.$i"
        echo "$lu + $ls" | bc -l >>"$TMP/cpus.$i"
        echo "$lw / $gw" | bc -l >>"$TMP/ratios.$i"
        echo "$lr" >>"$TMP/rss.$i"
    done
done
for i in "${!BINS[@]}"; do
    BIN=${BINS[$i]}
    anon=$(TRACETUI_CACHE=off peak_anon "$BIN" summary "$FILE" --json)
    printf '%s: ratio %.2f (median of %d pairs; all: %s) | load wall %.2f s, CPU %.2f s | grep wall %.2f s | peak RssAnon %.0f MB = %.3f x file, max RSS %.0f MB | load avg %s\n' \
        "$BIN" "$(median <"$TMP/ratios.$i")" "$PAIRS" "$(sort -g "$TMP/ratios.$i" | xargs printf '%.2f ')" \
        "$(median <"$TMP/walls.$i")" "$(median <"$TMP/cpus.$i")" "$(median <"$TMP/greps.$i")" \
        "$(echo "$anon/1024" | bc -l)" "$(echo "$anon*1024/$SIZE" | bc -l)" \
        "$(echo "$(sort -g "$TMP/rss.$i" | tail -1)/1024" | bc -l)" "$(cut -d' ' -f1-3 /proc/loadavg)"
done
