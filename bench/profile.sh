#!/usr/bin/env bash
# bench/profile.sh: where navd's instructions go on the navigate path under load.
#
# Runs the release navd (--store memory, Examples/news.json) under
# `valgrind --tool=callgrind` with instrumentation off, creates SESSIONS sessions,
# turns it on, drives POST …/navigate with bench/navigate.lua
# (wrk -t1 -c$CONNECTIONS for $DURATION), turns it off, and prints the
# functions with the most instructions of their own (exclusive) and the most
# including their callees (inclusive), Swift names demangled.
# (`perf stat -e instructions` is not supported on this VM, hence callgrind.)
#
# Environment: DURATION=20s CONNECTIONS=8 SESSIONS=1000 SCRIPT=navigate.lua STORE=memory
#   (STORE=sqlite profiles the SQLite store on a file in the temporary folder;
#   SQLITE_SUFFIX is appended to its path: under callgrind navd makes ~150 changes a second,
#   so the background fold of the change log, every 8,192 changes, only runs within the
#   profile with e.g. SQLITE_SUFFIX='?compact=2048' DURATION=45s)
#   START_PATH (the sessions' start path; default the graph's root)
#   CACHE_SIM=1 (also simulate the caches: `callgrind_annotate --show=DLmr,DLmw`
#   on the output then says which functions miss the last-level cache, e.g. with
#   SESSIONS=100000 against the default 1,000; sessions are then read shuffled)
#   WATCHERS=1 (a server-sent-event watcher on every session, bench/watchers.c, connected
#   before the measured run: each navigation's delivery is counted with it)
#   TOP=25 NAVD GRAPH NAVD_FLAGS BENCH_OUT KEEP_TMP as for bench/run.sh.
# Output: $BENCH_OUT/callgrind.out (open with callgrind_annotate or kcachegrind)
# and $BENCH_OUT/profile-{self,inclusive}.txt (and profile-misses.txt with CACHE_SIM=1).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH=$ROOT/bench
cd "$ROOT"

DURATION=${DURATION:-20s}
CONNECTIONS=${CONNECTIONS:-8}
SESSIONS=${SESSIONS:-1000}
SCRIPT=${SCRIPT:-navigate.lua}
STORE=${STORE:-memory}
TOP=${TOP:-25}
START_PATH=${START_PATH:-}
CACHE_SIM=${CACHE_SIM:-0}
WATCHERS=${WATCHERS:-0}
NAVD=${NAVD:-$ROOT/.build/release/navd}
GRAPH=${GRAPH:-$ROOT/Examples/news.json}
NAVD_FLAGS=${NAVD_FLAGS:-}
BENCH_OUT=${BENCH_OUT:-$ROOT/.build/bench}
KEEP_TMP=${KEEP_TMP:-0}

# shellcheck source=bench/lib.sh
source "$BENCH/lib.sh"
bench_init profile

ensure_wrk
command -v valgrind >/dev/null || {
    log "installing valgrind"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null
}
[[ -x $NAVD ]] || die "$NAVD is missing: run 'swift build -c release --product navd'"
# Valgrind 3.19 cannot read the DWARF 5 that Swift 6 emits: drop the debug
# info from a copy and keep the symbol table (function names are enough here).
objcopy --strip-debug "$NAVD" "$TMP/navd"
mkdir -p "$BENCH_OUT"

store=$STORE
[[ $STORE == sqlite ]] && store="sqlite:$TMP/navd.db${SQLITE_SUFFIX:-}"
port=$(free_port)
URL=http://127.0.0.1:$port
OUT=$TMP/callgrind.out
# shellcheck disable=SC2086
cache_sim=no
[[ $CACHE_SIM == 1 ]] && cache_sim=yes
start_server "$TMP/navd.log" "$URL/healthz" valgrind --tool=callgrind --instr-atstart=no --cache-sim=$cache_sim $([[ $CACHE_SIM == 1 ]] && echo --LL=33554432,16,64) \
    --callgrind-out-file="$OUT" "$TMP/navd" serve --graph "$GRAPH" --store "$store" \
    --listen "127.0.0.1:$port" $NAVD_FLAGS
python3 "$BENCH/sessions.py" --url "$URL" --count "$SESSIONS" --out "$TMP/sessions.txt" \
    ${START_PATH:+--start "$START_PATH"}
[[ $CACHE_SIM == 1 ]] && shuf "$TMP/sessions.txt" -o "$TMP/sessions.txt"
run_wrk "$TMP/warmup.txt" "$CONNECTIONS" 3s "$BENCH/get.lua" "$URL" "$TMP/sessions.txt" >/dev/null

if [[ $WATCHERS == 1 ]]; then
    # A server-sent-event watcher on every session (bench/watchers.c): each change fans out.
    "${CC:-cc}" -O2 -o "$TMP/watchers" "$BENCH/watchers.c"
    "$TMP/watchers" "$port" "$TMP/sessions.txt" "$SESSIONS" >"$TMP/watchers.out" 2>"$TMP/watchers.err" &
    BENCH_PIDS+=("$!")
    for _ in $(seq 1 600); do
        grep -q '^READY' "$TMP/watchers.out" && break
        sleep 0.1
    done
    grep -q '^READY' "$TMP/watchers.out" || die "the watchers did not connect"
fi

callgrind_control -i on "$SERVER_PID" >/dev/null
line=$(run_wrk "$TMP/wrk.txt" "$CONNECTIONS" "$DURATION" "$BENCH/$SCRIPT" "$URL" "$TMP/sessions.txt")
callgrind_control -i off "$SERVER_PID" >/dev/null
log "under callgrind: $line"
callgrind_control -d "$SERVER_PID" >/dev/null
stop_server "$SERVER_PID"
# The explicit dump holds the collected part; the exit dump holds nothing more.
OUT=$(ls -S "$OUT"* | head -n1)
cp "$OUT" "$BENCH_OUT/callgrind.out"

requests=$(field requests "$line")
for mode in self inclusive; do
    flag=no; [[ $mode == inclusive ]] && flag=yes
    callgrind_annotate --show=Ir --inclusive=$flag --threshold=100 "$OUT" 2>/dev/null \
        | python3 "$BENCH/callgrind_top.py" --requests "${requests:-0}" --top "$TOP" --mode "$mode" \
        | swift demangle --simplified >"$BENCH_OUT/profile-$mode.txt"
    cat "$BENCH_OUT/profile-$mode.txt"
    echo
done
if [[ $CACHE_SIM == 1 ]]; then
    # Reads that missed the simulated 32 MiB last-level cache, by the function that made them.
    callgrind_annotate --show=DLmr --sort=DLmr --threshold=100 "$OUT" 2>/dev/null \
        | python3 "$BENCH/callgrind_top.py" --requests "${requests:-0}" --top "$TOP" --mode self \
            --what "last-level cache read misses" \
        | swift demangle --simplified >"$BENCH_OUT/profile-misses.txt"
    cat "$BENCH_OUT/profile-misses.txt"
fi
