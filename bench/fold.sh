#!/usr/bin/env bash
# bench/fold.sh: reads, creates and deletes on the SQLite store while its compactor folds
# (BENCHMARKS.md, "SQLite during a fold").
#
# Starts navd (release, Examples/news.json) on a fresh SQLite file, creates SESSIONS sessions
# and navigates them with bench/navigate.lua (wrk -t1 -cCONNECTIONS) for DURATION: the change
# log starts a generation every 8,192 changes, and the compactor folds each into the tables.
# Meanwhile bench/reads.py reads two sessions of its own, one request at a time: one session's
# events (always from the tables and the log) and another session (from the tables whenever the
# cache, CACHE_SIZE, no longer holds it), and creates a session and deletes it. Prints their
# latencies and wrk's line; one that waits for a whole fold shows as a latency of up to the
# fold's length (a create or a delete waits for one chunk of it at most).
#
# Environment: DURATION=10 (seconds) CONNECTIONS=32 SESSIONS=4000 CACHE_SIZE=256M
#   NAVD GRAPH NAVD_FLAGS BENCH_OUT KEEP_TMP as for bench/run.sh.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH=$ROOT/bench
cd "$ROOT"

DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-32}
SESSIONS=${SESSIONS:-4000}
CACHE_SIZE=${CACHE_SIZE:-256M}
NAVD=${NAVD:-$ROOT/.build/release/navd}
GRAPH=${GRAPH:-$ROOT/Examples/news.json}
NAVD_FLAGS=${NAVD_FLAGS:-}
BENCH_OUT=${BENCH_OUT:-$ROOT/.build/bench}
KEEP_TMP=${KEEP_TMP:-0}

# shellcheck source=bench/lib.sh
source "$BENCH/lib.sh"
bench_init fold

ensure_wrk
private_navd
mkdir -p "$BENCH_OUT"

port=$(free_port)
url=http://127.0.0.1:$port
# shellcheck disable=SC2086
start_server "$TMP/navd.log" "$url/healthz" "$NAVD" serve --graph "$GRAPH" --store "sqlite:$TMP/navd.db" \
    --listen "127.0.0.1:$port" --cache-size "$CACHE_SIZE" --log-level warning $NAVD_FLAGS
python3 "$BENCH/sessions.py" --url "$url" --count "$SESSIONS" --out "$TMP/sessions.txt" 2>/dev/null
# wrk runs a second longer on each side of the reads.
run_wrk "$TMP/wrk.txt" "$CONNECTIONS" "$((DURATION + 2))s" "$BENCH/navigate.lua" "$url" "$TMP/sessions.txt" >"$TMP/wrk-line.txt" &
wrk_pid=$!
BENCH_PIDS+=("$wrk_pid")
python3 "$BENCH/reads.py" --url "$url" --seconds "$DURATION" --delay 1 | tee "$BENCH_OUT/fold-reads.txt"
wait "$wrk_pid"
line=$(cat "$TMP/wrk-line.txt")
echo "navigate: rps=$(field rps "$line") p99_ms=$(awk "BEGIN {print $(field p99_us "$line") / 1000}") non2xx=$(field non2xx "$line")" \
    | tee -a "$BENCH_OUT/fold-reads.txt"
