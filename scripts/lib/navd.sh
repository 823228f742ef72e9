# Sourced by the scripts that test a navd of their own (browser-test, contract-test,
# metrics-check): BINARY is the navd to run.
#
#   start_navd NAME SERVE_ARGS…   starts `navd serve SERVE_ARGS…` on a free loopback port, its
#                                 log in $WORK/navd.log ($WORK made unless set), stops it and
#                                 removes $WORK on exit, and waits until /healthz answers; sets
#                                 PORT, WORK, LOG, NAVD_PID. A navd that exits or does not answer
#                                 within 10 s ends the script with its log.
#   navd_survived NAME            exits 1 with the log's tail if navd died meanwhile.

start_navd() {
    local name=$1
    shift
    PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
    WORK=${WORK:-$(mktemp -d)}
    LOG="$WORK/navd.log"
    "$BINARY" serve --listen "127.0.0.1:$PORT" "$@" --log-level warning --drain 0 >"$LOG" 2>&1 &
    NAVD_PID=$!
    trap stop_navd EXIT
    for _ in $(seq 100); do
        python3 -c "import urllib.request, sys; urllib.request.urlopen(sys.argv[1], timeout=1)" \
            "http://127.0.0.1:$PORT/healthz" 2>/dev/null && return 0
        kill -0 "$NAVD_PID" 2>/dev/null || { echo "$name: navd exited:" >&2; cat "$LOG" >&2; exit 1; }
        sleep 0.1
    done
    echo "$name: navd did not answer /healthz within 10 s; its log:" >&2
    tail -20 "$LOG" >&2
    exit 1
}

stop_navd() {
    kill "$NAVD_PID" 2>/dev/null || true
    wait "$NAVD_PID" 2>/dev/null || true
    rm -rf "$WORK"
}

navd_survived() {
    kill -0 "$NAVD_PID" 2>/dev/null && return 0
    echo "$1: navd died during the run:" >&2
    tail -50 "$LOG" >&2
    exit 1
}
