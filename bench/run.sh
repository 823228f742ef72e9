#!/usr/bin/env bash
# bench/run.sh: HTTP benchmarks of navd against a C libmicrohttpd ceiling
# (`make bench`, which builds `.build/release/navd` first). See BENCHMARKS.md.
#
# Servers, one at a time, each on a free loopback port, restarted every round:
#   ceiling       bench/ceiling.c: MHD with navd's flags, a fixed 304-byte JSON body
#   navd-memory   navd serve --graph Examples/news.json --store memory
#   navd-sqlite   navd serve --graph Examples/news.json --store sqlite:$TMP/navd-N.db
# Both servers run THREADS pool threads (navd --threads, the ceiling's second argument).
# Scenarios (wrk -t1, Lua scripts in bench/), at each connection count:
#   ceiling: get, get-paced, get-paced-lockstep;  navd: get, navigate, transitions (fresh
#   sessions for every mutating run, so that each starts at /top), navigate-paced,
#   navigate-paced-lockstep. A paced run offers an open load below saturation: each
#   connection waits between requests, an exponentially distributed time (independent
#   clients, Poisson-like arrivals) or, in the -lockstep runs, a fixed one (which keeps the
#   connections firing together, so its latency is that of a burst of max-connections
#   requests; see BENCHMARKS.md).
# Prints the median over rounds of requests/s and p50/p99/p99.9 latency, and
# navd's requests/s as a ratio of the ceiling's at the same connection count.
# Fails (exit 1, after the table and the memory run) when any run had a
# non-2xx answer; the wrk scripts count them (bench/common.lua).
#
# Environment:
#   DURATION=10s      length of each measured wrk run
#   ROUNDS=3          rounds; the table shows medians
#   CONNECTIONS="32 256"
#   THREADS=$(nproc)  MHD pool threads of both servers: by default navd's own default, one
#                     per core. THREADS=1 gives each server one thread, which suits a machine
#                     where wrk keeps one of two cores busy (BENCHMARKS.md has both).
#   WARMUP=2s         unrecorded GET run after each server start
#   PACED_RATE=10000  navigations/s offered by the paced run (navigate-paced): the
#                     largest connection count, each connection pausing between
#                     requests (PACE_MS in common.lua), to read latency below saturation
#   SESSIONS=1000     least sessions a run rotates over (at least 16 per connection)
#   NAVD=.build/release/navd   GRAPH=Examples/news.json
#   NAVD_FLAGS=""     extra `navd serve` flags (e.g. "--log-level warning")
#   BENCH_HTTP=1      0 skips the HTTP benchmarks
#   BENCH_MEMORY=0    1 also runs bench/memory.sh (memory per session, 1k vs 1M sessions)
#   BENCH_OUT=.build/bench   where the raw results and the summary are written
#   KEEP_TMP=0        1 keeps the temporary directory (logs, wrk output)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH=$ROOT/bench
cd "$ROOT"

DURATION=${DURATION:-10s}
ROUNDS=${ROUNDS:-3}
CONNECTIONS=${CONNECTIONS:-32 256}
THREADS=${THREADS:-$(nproc)}
WARMUP=${WARMUP:-2s}
SESSIONS=${SESSIONS:-1000}
PACED_RATE=${PACED_RATE:-10000}
NAVD=${NAVD:-$ROOT/.build/release/navd}
GRAPH=${GRAPH:-$ROOT/Examples/news.json}
NAVD_FLAGS=${NAVD_FLAGS:-}
BENCH_HTTP=${BENCH_HTTP:-1}
BENCH_MEMORY=${BENCH_MEMORY:-0}
BENCH_OUT=${BENCH_OUT:-$ROOT/.build/bench}
KEEP_TMP=${KEEP_TMP:-0}
export DURATION ROUNDS NAVD GRAPH NAVD_FLAGS BENCH_OUT KEEP_TMP

# shellcheck source=bench/lib.sh
source "$BENCH/lib.sh"
bench_init bench

private_navd
log "navd: $("$NAVD" --version 2>&1 | head -n1), sha256 $(sha256sum "$NAVD" | cut -c1-16)"

# --- tools --------------------------------------------------------------------
ensure_wrk
command -v python3 >/dev/null || die "python3 is required"
CC=${CC:-cc}
command -v "$CC" >/dev/null 2>&1 || CC=clang
command -v "$CC" >/dev/null 2>&1 || die "no C compiler (cc or clang)"
pkg-config --exists libmicrohttpd || die "libmicrohttpd-dev is missing (make deps installs it)"
mkdir -p "$BENCH_OUT"

log "machine: $(machine_info)"
log "wrk: $(wrk -v 2>&1 | head -n1 | cut -d' ' -f1-2), libmicrohttpd $(pkg-config --modversion libmicrohttpd)"
log "DURATION=$DURATION ROUNDS=$ROUNDS CONNECTIONS=\"$CONNECTIONS\" THREADS=$THREADS NAVD_FLAGS=\"$NAVD_FLAGS\""

STATUS=0
if [[ $BENCH_HTTP == 1 ]]; then
    # --- the ceiling server ---------------------------------------------------
    # shellcheck disable=SC2046
    "$CC" -O2 -o "$TMP/ceiling" "$BENCH/ceiling.c" $(pkg-config --cflags --libs libmicrohttpd) -lpthread

    RESULTS=$BENCH_OUT/http-results.tsv
    printf 'server\tscenario\tconnections\tround\trps\tp50_us\tp99_us\tp999_us\tnon2xx\tsocket_errors\tloadavg\n' >"$RESULTS"
    FAILURES=()
    max_conns=$(tr ' ' '\n' <<<"$CONNECTIONS" | sort -n | tail -n1)

    # record SERVER SCENARIO CONNS ROUND RESULT_LINE
    record() {
        local server=$1 scenario=$2 conns=$3 round=$4 line=$5 non2xx errors c r w t
        non2xx=$(field non2xx "$line")
        c=$(field errors_connect "$line") r=$(field errors_read "$line")
        w=$(field errors_write "$line") t=$(field errors_timeout "$line")
        errors=$((${c:-0} + ${r:-0} + ${w:-0} + ${t:-0}))
        if [[ $(field failed "$line") == 1 || -z $non2xx ]]; then
            FAILURES+=("$server $scenario c$conns round $round: wrk failed")
            non2xx=NA
        elif ((non2xx > 0)); then
            FAILURES+=("$server $scenario c$conns round $round: $non2xx non-2xx answers")
        fi
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$server" "$scenario" "$conns" "$round" \
            "$(field rps "$line")" "$(field p50_us "$line")" "$(field p99_us "$line")" "$(field p999_us "$line")" \
            "$non2xx" "$errors" "$(cut -d' ' -f1 /proc/loadavg)" >>"$RESULTS"
        log "  $server $scenario c$conns: $(field rps "$line") req/s, p50 $(field p50_us "$line") us, p99 $(field p99_us "$line") us, non-2xx $non2xx, socket errors $errors"
    }

    # paced_fixed SCENARIO: PACE_FIXED for a paced scenario (1: fixed pauses, the -lockstep runs).
    paced_fixed() { [[ $1 == *-lockstep ]] && echo 1 || echo 0; }

    # sessions_for CONNS: how many sessions a run at CONNS connections rotates over.
    sessions_for() { local n=$((16 * $1)); ((n < SESSIONS)) && n=$SESSIONS; echo "$n"; }

    bench_ceiling() {
        local round=$1 port conns line
        port=$(free_port)
        start_server "$TMP/ceiling.log" "http://127.0.0.1:$port/" "$TMP/ceiling" "$port" "$THREADS"
        run_wrk "$TMP/warmup.txt" 32 "$WARMUP" "$BENCH/ceiling.lua" "http://127.0.0.1:$port" >/dev/null
        for conns in $CONNECTIONS; do
            line=$(run_wrk "$TMP/ceiling-get-c$conns-r$round.txt" "$conns" "$DURATION" "$BENCH/ceiling.lua" "http://127.0.0.1:$port")
            record ceiling get "$conns" "$round" "$line"
        done
        # The same open loads as navd's paced runs: the latency this machine and wrk give a
        # server that does no work.
        for scenario in get-paced get-paced-lockstep; do
            line=$(PACE_FIXED=$(paced_fixed "$scenario") PACE_MS=$((max_conns * 1000 / PACED_RATE)) \
                run_wrk "$TMP/ceiling-$scenario-r$round.txt" "$max_conns" "$DURATION" "$BENCH/ceiling.lua" "http://127.0.0.1:$port")
            record ceiling "$scenario" "$max_conns" "$round" "$line"
        done
        stop_server "$SERVER_PID"
    }

    bench_navd() {
        local server=$1 store=$2 round=$3 port url conns line scenario file
        port=$(free_port)
        url=http://127.0.0.1:$port
        # shellcheck disable=SC2086
        start_server "$TMP/$server-r$round.log" "$url/healthz" \
            "$NAVD" serve --graph "$GRAPH" --store "$store" --listen "127.0.0.1:$port" --threads "$THREADS" $NAVD_FLAGS
        python3 "$BENCH/sessions.py" --url "$url" --count "$(sessions_for "$max_conns")" --procs 2 \
            --out "$TMP/sessions-get.txt" 2>/dev/null
        run_wrk "$TMP/warmup.txt" 32 "$WARMUP" "$BENCH/get.lua" "$url" "$TMP/sessions-get.txt" >/dev/null
        for conns in $CONNECTIONS; do
            line=$(run_wrk "$TMP/$server-get-c$conns-r$round.txt" "$conns" "$DURATION" "$BENCH/get.lua" "$url" "$TMP/sessions-get.txt")
            record "$server" get "$conns" "$round" "$line"
        done
        for scenario in navigate transitions; do
            for conns in $CONNECTIONS; do
                file=$TMP/sessions-$scenario-c$conns.txt
                python3 "$BENCH/sessions.py" --url "$url" --count "$(sessions_for "$conns")" --procs 2 --out "$file" 2>/dev/null
                line=$(run_wrk "$TMP/$server-$scenario-c$conns-r$round.txt" "$conns" "$DURATION" "$BENCH/$scenario.lua" "$url" "$file")
                record "$server" "$scenario" "$conns" "$round" "$line"
            done
        done
        # Latency under open loads: max_conns connections offering PACED_RATE navigations/s.
        for scenario in navigate-paced navigate-paced-lockstep; do
            file=$TMP/sessions-$scenario.txt
            python3 "$BENCH/sessions.py" --url "$url" --count "$(sessions_for "$max_conns")" --procs 2 --out "$file" 2>/dev/null
            line=$(PACE_FIXED=$(paced_fixed "$scenario") PACE_MS=$((max_conns * 1000 / PACED_RATE)) \
                run_wrk "$TMP/$server-$scenario-r$round.txt" "$max_conns" "$DURATION" "$BENCH/navigate.lua" "$url" "$file")
            record "$server" "$scenario" "$max_conns" "$round" "$line"
        done
        stop_server "$SERVER_PID"
    }

    for round in $(seq 1 "$ROUNDS"); do
        log "round $round of $ROUNDS"
        bench_ceiling "$round"
        bench_navd navd-memory memory "$round"
        bench_navd navd-sqlite "sqlite:$TMP/navd-r$round.db" "$round"
    done

    python3 "$BENCH/summarise.py" http "$RESULTS" | tee "$BENCH_OUT/http-summary.md"

    if ((${#FAILURES[@]} > 0)); then
        log "FAILED runs (non-2xx answers are never expected):"
        printf '  %s\n' "${FAILURES[@]}" >&2
        for f in "$TMP"/*.txt; do grep -H '^NON2XX_SAMPLE' "$f" >&2 || true; done
        STATUS=1
    fi
fi

if [[ $BENCH_MEMORY == 1 ]]; then
    "$BENCH/memory.sh" || STATUS=1
fi
exit "$STATUS"
