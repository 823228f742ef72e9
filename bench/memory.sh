#!/usr/bin/env bash
# bench/memory.sh: memory and scale of navd's memory store (run by bench/run.sh
# when BENCH_MEMORY=1, or on its own after `swift build -c release --product navd`).
#
# 1. Resident memory (VmRSS, /proc/PID/status) of a fresh navd --store memory
#    --max-sessions 2000000, empty and then holding N idle sessions of 5 screens
#    each for every N in MEMORY_COUNTS; bytes per session = (RSS(N) - RSS(0)) / N.
# 2. GET latency and throughput of that navd at the largest N and of a second navd
#    holding 1,000 sessions, round by round in turn, so that both see the same moments
#    of a shared machine. Each round runs, for each navd:
#    - `get-c1`: wrk -t1 -c1, one request at a time: the latency of a request with no
#      queue in front of it (what "latency stays flat" asks about);
#    - `get`: wrk -t1 -c32, saturated: throughput (its latency is mostly the queue).
#    The big navd is read over a shuffled sample of SAMPLE_PERCENT (10) % of its
#    sessions, at least 1,000, spread over the creation order: with 100,000 of them
#    (about 150 MB of sessions) every request finds its session cold in the caches.
#    The small navd's 1,000 sessions are listed as many times over as it takes to make
#    a list as long, so that wrk's side of both runs is the same.
#
# Environment: DURATION=10s ROUNDS=3 MEMORY_COUNTS="100000 1000000" SAMPLE_PERCENT=10
#   START_PATH (a 5-screen path on Examples/news.json) CREATE_PROCS=3
#   NAVD GRAPH NAVD_FLAGS BENCH_OUT KEEP_TMP as for bench/run.sh.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH=$ROOT/bench
cd "$ROOT"

DURATION=${DURATION:-10s}
ROUNDS=${ROUNDS:-3}
MEMORY_COUNTS=${MEMORY_COUNTS:-100000 1000000}
# top → list_news → show_news, a modal login, and help pushed in the modal: 5 screens.
START_PATH=${START_PATH:-'/top/list_news(category=1)/show_news(id=2)!login/help'}
CREATE_PROCS=${CREATE_PROCS:-3}
SAMPLE_PERCENT=${SAMPLE_PERCENT:-10}
NAVD=${NAVD:-$ROOT/.build/release/navd}
GRAPH=${GRAPH:-$ROOT/Examples/news.json}
NAVD_FLAGS=${NAVD_FLAGS:-}
BENCH_OUT=${BENCH_OUT:-$ROOT/.build/bench}
KEEP_TMP=${KEEP_TMP:-0}

# shellcheck source=bench/lib.sh
source "$BENCH/lib.sh"
bench_init memory

private_navd

ensure_wrk
mkdir -p "$BENCH_OUT"
RESULTS=$BENCH_OUT/memory-results.tsv
printf 'kind\tsessions\tround\trss_kib\thwm_kib\trps\tp50_us\tp99_us\tp999_us\tnon2xx\tloadavg\tmean_us\n' >"$RESULTS"
FAILED=0
log "machine: $(machine_info)"
log "memory: start path $START_PATH, counts $MEMORY_COUNTS, DURATION=$DURATION ROUNDS=$ROUNDS"

# start_navd NAME: a navd with the memory store on a free port; sets URL and SERVER_PID.
start_navd() {
    local port
    port=$(free_port)
    URL=http://127.0.0.1:$port
    # shellcheck disable=SC2086
    start_server "$TMP/$1.log" "$URL/healthz" "$NAVD" serve --graph "$GRAPH" --store memory \
        --max-sessions 2000000 --listen "127.0.0.1:$port" $NAVD_FLAGS
}

# create COUNT KEEP FILE: COUNT more sessions at START_PATH, KEEP of them written to FILE.
create() {
    python3 "$BENCH/sessions.py" --url "$URL" --count "$1" --keep "$2" --out "$3" \
        --start "$START_PATH" --procs "$CREATE_PROCS"
}

# get_round KIND CONNECTIONS SESSIONS_HELD URL FILE ROUND: one GET run over the sessions in FILE.
get_round() {
    local kind=$1 conns=$2 held=$3 url=$4 file=$5 round=$6 line non2xx
    line=$(run_wrk "$TMP/$kind-$held-r$round.txt" "$conns" "$DURATION" "$BENCH/get.lua" "$url" "$file")
    non2xx=$(field non2xx "$line")
    if [[ -z $non2xx || $non2xx != 0 ]]; then
        FAILED=1
        log "  non-2xx answers: ${non2xx:-wrk failed}"
        grep -h '^NON2XX_SAMPLE' "$TMP/$kind-$held-r$round.txt" >&2 || true
    fi
    printf '%s\t%s\t%s\t\t\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$held" "$round" "$(field rps "$line")" \
        "$(field p50_us "$line")" "$(field p99_us "$line")" "$(field p999_us "$line")" "${non2xx:-NA}" \
        "$(cut -d' ' -f1 /proc/loadavg)" "$(field mean_us "$line")" >>"$RESULTS"
    log "  $kind with $held sessions, round $round: $(field rps "$line") req/s, mean $(field mean_us "$line") us, p50 $(field p50_us "$line") us, p99 $(field p99_us "$line") us"
}

# record_rss SESSIONS [KIND]: VmRSS and VmHWM of the navd once it has settled.
record_rss() {
    sleep 2
    local rss hwm kind=${2:-rss}
    rss=$(rss_kib "$SERVER_PID")
    hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$SERVER_PID/status")
    printf '%s\t%s\t\t%s\t%s\t\t\t\t\t\t%s\n' "$kind" "$1" "$rss" "$hwm" "$(cut -d' ' -f1 /proc/loadavg)" >>"$RESULTS"
    log "  $1 sessions: VmRSS $rss KiB (VmHWM $hwm KiB)"
}

# 1. Memory per session.
log "memory per idle 5-screen session"
start_navd navd-memory
BIG_URL=$URL
BIG_PID=$SERVER_PID
record_rss 0
held=0
: >"$TMP/sessions-sample.txt"
for target in $MEMORY_COUNTS; do
    more=$((target - held))
    keep=$((more * SAMPLE_PERCENT / 100)); ((keep < 1000)) && keep=1000
    create "$more" "$keep" "$TMP/sessions-batch.txt"
    cat "$TMP/sessions-batch.txt" >>"$TMP/sessions-sample.txt"
    held=$target
    record_rss "$held"
done

# 2. Latency and throughput with 1,000 sessions and with the largest count, in turn.
shuf "$TMP/sessions-sample.txt" -o "$TMP/sessions-sample.txt"
log "GET with 1,000 sessions and with $held (over $(wc -l <"$TMP/sessions-sample.txt") of them, shuffled), in turn"
start_navd navd-1k
SMALL_URL=$URL
SMALL_PID=$SERVER_PID
create 1000 1000 "$TMP/sessions-1k-once.txt"
# The same number of lines as the big sample (each session repeated), shuffled: wrk then
# holds as many request strings for either navd, so its own cache misses walking them are
# the same in both runs and only navd's differ.
lines=$(wc -l <"$TMP/sessions-sample.txt")
for _ in $(seq 1 $(((lines + 999) / 1000))); do cat "$TMP/sessions-1k-once.txt"; done | head -n "$lines" \
    | shuf -o "$TMP/sessions-1k.txt"
run_wrk "$TMP/warmup.txt" 32 2s "$BENCH/get.lua" "$SMALL_URL" "$TMP/sessions-1k.txt" >/dev/null
run_wrk "$TMP/warmup.txt" 32 2s "$BENCH/get.lua" "$BIG_URL" "$TMP/sessions-sample.txt" >/dev/null
for round in $(seq 1 "$ROUNDS"); do
    get_round get-c1 1 1000 "$SMALL_URL" "$TMP/sessions-1k.txt" "$round"
    get_round get-c1 1 "$held" "$BIG_URL" "$TMP/sessions-sample.txt" "$round"
    get_round get 32 1000 "$SMALL_URL" "$TMP/sessions-1k.txt" "$round"
    get_round get 32 "$held" "$BIG_URL" "$TMP/sessions-sample.txt" "$round"
done
stop_server "$SMALL_PID"
SERVER_PID=$BIG_PID
record_rss "$held" rss_after_get
stop_server "$BIG_PID"

python3 "$BENCH/summarise.py" memory "$RESULTS" | tee "$BENCH_OUT/memory-summary.md"
exit "$FAILED"
