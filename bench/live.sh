#!/usr/bin/env bash
# bench/live.sh: live sessions at scale (BENCHMARKS.md, "Live sessions"; `make bench-live`).
#
# Every watcher is a real server-sent-event client: bench/watchers.c (compiled on the fly), one
# epoll loop holding COUNT connections, each `GET /v1/sessions/{id}/events` with
# `Accept: text/event-stream` and the session's token, reading its opening view and then
# whatever comes (heartbeats, views); with --pace it also sends navigations and timestamps, per
# session and version, each answer and the arrival of the matching `view` on the watcher.
# All navds use the memory store, THREADS pool threads and --max-connections above the count.
#
# Parts (PARTS, all by default), each in ROUNDS rounds:
#   memory   VmRSS and RssAnon (/proc/PID/status) of a navd holding max(WATCHERS) sessions, before
#            and with each count of idle watchers in WATCHERS (connected on top of each other),
#            divided by the count; then the watchers are held HOLD seconds at --heartbeat
#            HEARTBEAT and every one must have stayed open and received its pings. With
#            BASE_NAVD set, that binary is measured the same way in every round, in turn with
#            $NAVD (alternating which goes first).
#   fanout   a navd per round; in turn (alternating which goes first): wrk navigate.lua at
#            FANOUT_CONNECTIONS connections over FANOUT_SESSIONS fresh sessions, without
#            watchers, and the same with one watcher on each session (every navigation fans out
#            to one watcher; each must receive every view); then the paced run: PACED_RATE
#            navigations/s for DURATION over FANOUT_SESSIONS fresh watched sessions, delivery
#            latency p50/p99 (from the navigate's answer to its view on the watcher).
#   modes    for each MODES polling mode (NAVD_HTTP_POLLING: poll, epoll, threads; `base:MODE` runs
#            BASE_NAVD in that mode) and each count in WATCHERS, a fresh navd: GET throughput (wrk
#            get.lua, GET_CONNECTIONS connections, over 1,000 other sessions) alone, then again
#            while COUNT watchers are connected and PACED_RATE navigations/s fan out to them (spread
#            over all COUNT sessions), with that run's delivery latency and navd's RSS. Modes
#            interleave within each round. `threads` runs only up to THREADS_MODE_LIMIT (1000)
#            watchers: in libmicrohttpd 0.9.75 every suspended connection's thread waits on the
#            daemon's one inter-thread channel, so each resume wakes all of them, and 10,000 such
#            threads held a load average in the thousands over the whole shared machine.
#   stall    the experiment of docs/design.md, "Building on libmicrohttpd": bench/ceiling.c (libmicrohttpd alone, navd's
#            flags) with a handler that sleeps STALL_DELAY_US, under wrk at 256 connections for
#            DURATION, STALL_RUNS runs per polling mode (poll, epoll) alternating; a connection
#            that hangs shows as wrk timeouts (--timeout 3s; the answers take ~0.15 s here).
#
# Environment: ROUNDS=3 DURATION=10s WATCHERS="1000 10000" HEARTBEAT=5 HOLD=16 THREADS=$(nproc)
#   FANOUT_SESSIONS=1000 FANOUT_CONNECTIONS=32 PACED_RATE=1000 GET_CONNECTIONS=32
#   MODES="poll epoll threads" THREADS_MODE_LIMIT=1000 STALL_RUNS=5 STALL_DELAY_US="0 1000" BASE_NAVD (unset)
#   NAVD GRAPH NAVD_FLAGS BENCH_OUT KEEP_TMP as for bench/run.sh.
# Writes live-*.tsv and live-summary.md to BENCH_OUT; exits 1 when a watcher failed or missed a
# view, a ping or a navigation answer was not 2xx.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH=$ROOT/bench
cd "$ROOT"

PARTS=${PARTS:-memory fanout modes stall}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
WATCHERS=${WATCHERS:-1000 10000}
HEARTBEAT=${HEARTBEAT:-5}
HOLD=${HOLD:-16}
THREADS=${THREADS:-$(nproc)}
FANOUT_SESSIONS=${FANOUT_SESSIONS:-1000}
FANOUT_CONNECTIONS=${FANOUT_CONNECTIONS:-32}
PACED_RATE=${PACED_RATE:-1000}
GET_CONNECTIONS=${GET_CONNECTIONS:-32}
MODES=${MODES:-poll epoll threads}
THREADS_MODE_LIMIT=${THREADS_MODE_LIMIT:-1000}
STALL_RUNS=${STALL_RUNS:-5}
STALL_DELAY_US=${STALL_DELAY_US:-0 1000}
NAVD=${NAVD:-$ROOT/.build/release/navd}
BASE_NAVD=${BASE_NAVD:-}
GRAPH=${GRAPH:-$ROOT/Examples/news.json}
NAVD_FLAGS=${NAVD_FLAGS:-}
BENCH_OUT=${BENCH_OUT:-$ROOT/.build/bench}
KEEP_TMP=${KEEP_TMP:-0}

# shellcheck source=bench/lib.sh
source "$BENCH/lib.sh"
bench_init live

private_navd
if [[ -n $BASE_NAVD ]]; then
    [[ -x $BASE_NAVD ]] || die "BASE_NAVD $BASE_NAVD is not an executable"
    cp "$BASE_NAVD" "$TMP/navd-base"
    BASE_NAVD=$TMP/navd-base
fi
ensure_wrk
command -v python3 >/dev/null || die "python3 is required"
CC=${CC:-cc}
command -v "$CC" >/dev/null 2>&1 || CC=clang
"$CC" -O2 -o "$TMP/watchers" "$BENCH/watchers.c"
# shellcheck disable=SC2046
"$CC" -O2 -o "$TMP/ceiling" "$BENCH/ceiling.c" $(pkg-config --cflags --libs libmicrohttpd) -lpthread
mkdir -p "$BENCH_OUT"
# wrk and the watchers each hold up to max(WATCHERS) sockets.
ulimit -n "$(ulimit -Hn)"

max_watchers=$(tr ' ' '\n' <<<"$WATCHERS" | sort -n | tail -n1)
MAX_CONNECTIONS=$((max_watchers + 1000))
STATUS=0
log "machine: $(machine_info)"
log "navd: sha256 $(sha256sum "$NAVD" | cut -c1-16)${BASE_NAVD:+, base sha256 $(sha256sum "$BASE_NAVD" | cut -c1-16)}"
log "PARTS=\"$PARTS\" ROUNDS=$ROUNDS DURATION=$DURATION WATCHERS=\"$WATCHERS\" THREADS=$THREADS MODES=\"$MODES\""

fail() {
    log "FAILED: $*"
    STATUS=1
}

# start_navd NAME BINARY MODE: a navd with the memory store on a free port; sets URL, SERVER_PID.
start_navd() {
    local name=$1 binary=$2 mode=$3 port
    port=$(free_port)
    URL=http://127.0.0.1:$port
    PORT=$port
    # shellcheck disable=SC2086
    NAVD_HTTP_POLLING=$mode start_server "$TMP/$name.log" "$URL/healthz" "$binary" serve --graph "$GRAPH" --store memory \
        --listen "127.0.0.1:$port" --threads "$THREADS" --max-sessions $((max_watchers * 2 + 10000)) \
        --max-connections "$MAX_CONNECTIONS" --heartbeat "$HEARTBEAT" --log-level warning $NAVD_FLAGS
}

# sessions COUNT FILE: COUNT fresh sessions at /top on the navd at URL.
sessions() {
    python3 "$BENCH/sessions.py" --url "$URL" --count "$1" --procs 2 --out "$2" 2>/dev/null
}

# watchers_start NAME FILE COUNT [ARGS…]: the watcher client in the background; waits for READY.
# Sets WATCHERS_PID; its output goes to $TMP/NAME.out.
watchers_start() {
    local name=$1 file=$2 count=$3
    shift 3
    "$TMP/watchers" "$PORT" "$file" "$count" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
    WATCHERS_PID=$!
    BENCH_PIDS+=("$WATCHERS_PID")
    for _ in $(seq 1 1200); do
        grep -q '^READY' "$TMP/$name.out" 2>/dev/null && break
        kill -0 "$WATCHERS_PID" 2>/dev/null || break
        sleep 0.1
    done
    grep -q '^READY' "$TMP/$name.out" && return 0
    tail -n 5 "$TMP/$name.err" >&2
    kill -TERM "$WATCHERS_PID" 2>/dev/null || true
    wait "$WATCHERS_PID" 2>/dev/null || true
    return 1
}

# watchers_result NAME: stops that client (if it still runs) and prints its RESULT line.
watchers_result() {
    local name=$1 pid=$2
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    grep -m1 '^RESULT ' "$TMP/$name.out" || echo "RESULT failed=1"
}

# check_watchers NAME LINE COUNT [MIN_PINGS]: every watcher opened, none closed, pings arrived.
check_watchers() {
    local name=$1 line=$2 count=$3 min_pings=${4:-0} pings
    pings=$(field pings_min "$line")
    [[ $(field open "$line") == "$count" ]] || fail "$name: $(field open "$line") of $count watchers open at the end (failed $(field failed "$line"), closed $(field closed "$line"))"
    ((${pings:--1} >= min_pings)) || fail "$name: a watcher received ${pings:-no} pings, fewer than $min_pings"
    [[ $(field unmatched "$line") == 0 ]] || fail "$name: $(field unmatched "$line") navigations whose view never reached the watcher"
    [[ $(field nav_non2xx "$line") == 0 ]] || fail "$name: $(field nav_non2xx "$line") navigations answered non-2xx"
}

anon_kib() { awk '/^RssAnon:/ {print $2}' "/proc/$1/status"; }
# cpu_ticks PID: the process's user + system CPU time so far, in clock ticks (/proc/PID/stat).
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }
seconds() { sed 's/s$//' <<<"$1"; }

# --- memory -------------------------------------------------------------------------------------
part_memory() {
    local results=$BENCH_OUT/live-memory.tsv round binaries binary label before_rss before_anon held count more line
    printf 'binary\tround\twatchers\trss_kib\tanon_kib\trss0_kib\tanon0_kib\tpings_min\topen\n' >"$results"
    for round in $(seq 1 "$ROUNDS"); do
        binaries=("new:$NAVD")
        if [[ -n $BASE_NAVD ]]; then
            if ((round % 2)); then binaries=("base:$BASE_NAVD" "new:$NAVD"); else binaries+=("base:$BASE_NAVD"); fi
        fi
        for entry in "${binaries[@]}"; do
            label=${entry%%:*} binary=${entry#*:}
            log "memory round $round: $label"
            start_navd "memory-$label-r$round" "$binary" poll
            sessions "$max_watchers" "$TMP/sessions-memory.txt"
            sleep 2
            before_rss=$(rss_kib "$SERVER_PID") before_anon=$(anon_kib "$SERVER_PID")
            held=0
            local pids=() names=()
            for count in $WATCHERS; do
                more=$((count - held))
                watchers_start "memory-$label-r$round-$count" "$TMP/sessions-memory.txt" "$more" --first "$held" \
                    || die "the watchers did not connect (memory, $label, $count)"
                pids+=("$WATCHERS_PID") names+=("memory-$label-r$round-$count")
                held=$count
                sleep 3
                printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t\t\n' "$label" "$round" "$count" "$(rss_kib "$SERVER_PID")" "$(anon_kib "$SERVER_PID")" \
                    "$before_rss" "$before_anon" >>"$results"
                log "  $count watchers: VmRSS $(rss_kib "$SERVER_PID") KiB (before $before_rss), RssAnon $(anon_kib "$SERVER_PID") KiB (before $before_anon)"
            done
            sleep "$HOLD"
            local i open=0 pmin=""
            for i in "${!pids[@]}"; do
                line=$(watchers_result "${names[i]}" "${pids[i]}")
                check_watchers "${names[i]}" "$line" "$(field watchers "$line")" $((HOLD / HEARTBEAT - 1))
                open=$((open + $(field open "$line")))
                [[ -z $pmin || $(field pings_min "$line") -lt $pmin ]] && pmin=$(field pings_min "$line")
            done
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$round" "held" "" "" "" "" "$pmin" "$open" >>"$results"
            log "  held $HOLD s more: $open watchers open, fewest pings $pmin (heartbeat $HEARTBEAT s)"
            stop_server "$SERVER_PID"
        done
    done
}

# --- fan-out ------------------------------------------------------------------------------------
part_fanout() {
    local results=$BENCH_OUT/live-fanout.tsv round order kind line wline file
    printf 'round\tkind\trps\tp50_us\tp99_us\tnon2xx\terrors\tviews\tclosed\tlat_p50_us\tlat_p99_us\tlat_p999_us\tnav_rps\tmatched\tunmatched\tearly\tnavd_cpu_us\tclient_cpu_s\n' >"$results"
    for round in $(seq 1 "$ROUNDS"); do
        log "fan-out round $round"
        start_navd "fanout-r$round" "$NAVD" poll
        sessions 1000 "$TMP/sessions-warmup.txt"
        run_wrk "$TMP/warmup.txt" 32 2s "$BENCH/navigate.lua" "$URL" "$TMP/sessions-warmup.txt" >/dev/null
        if ((round % 2)); then order="without with"; else order="with without"; fi
        for kind in $order; do
            file=$TMP/sessions-fanout-$kind-r$round.txt
            sessions "$FANOUT_SESSIONS" "$file"
            wline=""
            if [[ $kind == with ]]; then
                watchers_start "fanout-r$round" "$file" "$FANOUT_SESSIONS" || die "the watchers did not connect (fan-out)"
            fi
            local ticks_before ticks_after cpu
            ticks_before=$(cpu_ticks "$SERVER_PID")
            line=$(run_wrk "$TMP/fanout-$kind-r$round.txt" "$FANOUT_CONNECTIONS" "$DURATION" "$BENCH/navigate.lua" "$URL" "$file")
            ticks_after=$(cpu_ticks "$SERVER_PID")
            # navd's CPU (user + system) per navigation: what a fan-out costs the server itself.
            local requests
            requests=$(field requests "$line")
            cpu=$(python3 -c "print(f'{($ticks_after - $ticks_before) / $(getconf CLK_TCK) * 1e6 / max(1, ${requests:-0}):.1f}')")
            if [[ $kind == with ]]; then
                sleep 1
                wline=$(watchers_result "fanout-r$round" "$WATCHERS_PID")
                check_watchers "fanout-r$round" "$wline" "$FANOUT_SESSIONS"
                # One view per answered navigation, plus each watcher's opening view.
                local expected=$(($(field requests "$line") + FANOUT_SESSIONS))
                (($(field views "$wline") >= expected - FANOUT_CONNECTIONS)) \
                    || fail "fan-out round $round: $(field views "$wline") views for $(field requests "$line") navigations"
            fi
            [[ $(field non2xx "$line") == 0 ]] || fail "fan-out round $round $kind: $(field non2xx "$line") non-2xx"
            local client_cpu=""
            [[ -n $wline ]] && client_cpu=$(python3 -c "print($(field cpu_user_s "$wline") + $(field cpu_sys_s "$wline"))")
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\t\t\t\t\t\t\t%s\t%s\n' "$round" "$kind" "$(field rps "$line")" "$(field p50_us "$line")" \
                "$(field p99_us "$line")" "$(field non2xx "$line")" "$(($(field errors_read "$line") + $(field errors_timeout "$line")))" \
                "$(field views "$wline")" "$(field closed "$wline")" "$cpu" "$client_cpu" >>"$results"
            log "  navigate c$FANOUT_CONNECTIONS $kind watchers: $(field rps "$line") req/s, p99 $(field p99_us "$line") us, navd CPU $cpu us per navigation${wline:+, views $(field views "$wline"), watcher client CPU $client_cpu s}"
        done
        file=$TMP/sessions-paced-r$round.txt
        sessions "$FANOUT_SESSIONS" "$file"
        watchers_start "paced-r$round" "$file" "$FANOUT_SESSIONS" --pace "$PACED_RATE" --seconds "$(seconds "$DURATION")" \
            || die "the watchers did not connect (paced)"
        wait "$WATCHERS_PID" 2>/dev/null || true
        wline=$(watchers_result "paced-r$round" "$WATCHERS_PID")
        check_watchers "paced-r$round" "$wline" "$FANOUT_SESSIONS"
        printf '%s\tpaced\t\t\t\t%s\t\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\t\n' "$round" "$(field nav_non2xx "$wline")" "$(field views "$wline")" \
            "$(field closed "$wline")" "$(field lat_p50_us "$wline")" "$(field lat_p99_us "$wline")" "$(field lat_p999_us "$wline")" \
            "$(field nav_rps "$wline")" "$(field matched "$wline")" "$(field unmatched "$wline")" "$(field early "$wline")" >>"$results"
        log "  paced $PACED_RATE/s: $(field nav_rps "$wline") navigations/s, delivery p50 $(field lat_p50_us "$wline") us, p99 $(field lat_p99_us "$wline") us, p99.9 $(field lat_p999_us "$wline") us (matched $(field matched "$wline"), unmatched $(field unmatched "$wline"))"
        stop_server "$SERVER_PID"
    done
}

# --- polling modes ------------------------------------------------------------------------------
part_modes() {
    local results=$BENCH_OUT/live-modes.tsv round count mode line wline get_file watch_file rss
    printf 'round\tmode\twatchers\tget_alone_rps\tget_rps\tget_p99_us\tget_errors\tlat_p50_us\tlat_p99_us\tlat_p999_us\tnav_rps\tunmatched\trss_kib\topen\tloadavg\n' >"$results"
    for round in $(seq 1 "$ROUNDS"); do
        for count in $WATCHERS; do
            for entry in $MODES; do
                local mode=${entry#base:} binary=$NAVD label=$entry
                if [[ $entry == base:* ]]; then
                    [[ -n $BASE_NAVD ]] || die "MODES has $entry but BASE_NAVD is not set"
                    binary=$BASE_NAVD label="$mode-base"
                fi
                if [[ $mode == threads ]] && ((count > THREADS_MODE_LIMIT)); then
                    log "modes round $round: $label skipped at $count watchers (THREADS_MODE_LIMIT=$THREADS_MODE_LIMIT)"
                    continue
                fi
                log "modes round $round: $label, $count watchers"
                start_navd "modes-$label-$count-r$round" "$binary" "$mode"
                get_file=$TMP/sessions-get.txt watch_file=$TMP/sessions-watch.txt
                sessions 1000 "$get_file"
                sessions "$count" "$watch_file"
                run_wrk "$TMP/warmup.txt" "$GET_CONNECTIONS" 2s "$BENCH/get.lua" "$URL" "$get_file" >/dev/null
                local alone
                alone=$(run_wrk "$TMP/modes-alone.txt" "$GET_CONNECTIONS" "$DURATION" "$BENCH/get.lua" "$URL" "$get_file")
                # The paced navigations last the GET run and a second on either side.
                if ! watchers_start "modes-$label-$count-r$round" "$watch_file" "$count" --pace "$PACED_RATE" \
                    --seconds $(($(seconds "$DURATION") + 2)); then
                    fail "modes $label $count r$round: the watchers did not all connect within 2 minutes"
                    printf '%s\t%s\t%s\t%s\t\t\t\t\t\t\t\t\t%s\t0\t%s\n' "$round" "$label" "$count" "$(field rps "$alone")" \
                        "$(rss_kib "$SERVER_PID" 2>/dev/null || true)" "$(cut -d' ' -f1 /proc/loadavg)" >>"$results"
                    stop_server "$SERVER_PID"
                    continue
                fi
                sleep 1
                line=$(run_wrk "$TMP/modes-get.txt" "$GET_CONNECTIONS" "$DURATION" "$BENCH/get.lua" "$URL" "$get_file")
                rss=$(rss_kib "$SERVER_PID" 2>/dev/null || true)
                wait "$WATCHERS_PID" 2>/dev/null || true
                wline=$(watchers_result "modes-$label-$count-r$round" "$WATCHERS_PID")
                check_watchers "modes $label $count r$round" "$wline" "$count"
                printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$label" "$count" "$(field rps "$alone")" \
                    "$(field rps "$line")" "$(field p99_us "$line")" "$(($(field errors_read "$line") + $(field errors_timeout "$line")))" \
                    "$(field lat_p50_us "$wline")" "$(field lat_p99_us "$wline")" "$(field lat_p999_us "$wline")" "$(field nav_rps "$wline")" \
                    "$(field unmatched "$wline")" "$rss" "$(field open "$wline")" "$(cut -d' ' -f1 /proc/loadavg)" >>"$results"
                log "  GET alone $(field rps "$alone") req/s; with $count watchers and $PACED_RATE navigations/s: $(field rps "$line") req/s; delivery p50 $(field lat_p50_us "$wline") us, p99 $(field lat_p99_us "$wline") us; VmRSS $rss KiB"
                stop_server "$SERVER_PID"
            done
        done
    done
}

# --- the epoll stall experiment -----------------------------------------------------------------
part_stall() {
    local results=$BENCH_OUT/live-stall.tsv run mode delay port line
    printf 'mode\tdelay_us\trun\trps\tp99_us\tmax_us\ttimeouts\terrors\n' >"$results"
    for delay in $STALL_DELAY_US; do
        for run in $(seq 1 "$STALL_RUNS"); do
            for mode in poll epoll; do
                port=$(free_port)
                start_server "$TMP/ceiling-$mode.log" "http://127.0.0.1:$port/" "$TMP/ceiling" "$port" "$THREADS" "$mode" "$delay"
                line=$(BENCH_DIR=$BENCH wrk -t1 -c256 -d"$DURATION" --timeout 3s -s "$BENCH/ceiling.lua" "http://127.0.0.1:$port" 2>&1 | grep -m1 '^RESULT ' || echo "RESULT failed=1")
                stop_server "$SERVER_PID"
                printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mode" "$delay" "$run" "$(field rps "$line")" "$(field p99_us "$line")" "$(field max_us "$line")" \
                    "$(field errors_timeout "$line")" "$(($(field errors_connect "$line") + $(field errors_read "$line") + $(field errors_write "$line")))" >>"$results"
                log "  stall $mode delay ${delay}us run $run: $(field rps "$line") req/s, max $(field max_us "$line") us, timeouts $(field errors_timeout "$line")"
            done
        done
    done
}

for part in $PARTS; do
    case $part in
    memory) part_memory ;;
    fanout) part_fanout ;;
    modes) part_modes ;;
    stall) part_stall ;;
    *) die "unknown part $part (memory, fanout, modes, stall)" ;;
    esac
done

python3 "$BENCH/summarise.py" live "$BENCH_OUT" "$PARTS" | tee "$BENCH_OUT/live-summary.md"
exit "$STATUS"
