#!/usr/bin/env bash
# Builds that `make test` needs later, started early at the lowest CPU priority, so that they use
# the cores the tests leave idle (a daemon waiting on a socket, a browser loading a page) without
# slowing the tests themselves.
#
#   scripts/background.sh start NAME COMMAND [ARGS...]   run COMMAND under `nice -n 19`, its output in
#                                                        .build/background/NAME.log
#   scripts/background.sh wait NAME                      wait for it; fail with its log if it failed
#
# `wait` of a NAME never started fails, so a step cannot silently skip its build.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=.build/background
usage() { echo "usage: $0 start NAME COMMAND [ARGS...] | wait NAME" >&2; exit 64; }
[ $# -ge 2 ] || usage
action=$1 name=$2
shift 2
case "$action" in
start)
    [ $# -ge 1 ] || usage
    mkdir -p "$dir"
    # One of the same name still running (a `make test` stopped halfway) goes first, with every
    # process it started: it would hold its package's build folder.
    if [ -f "$dir/$name.pid" ] && kill -0 "$(cat "$dir/$name.pid")" 2>/dev/null; then
        kill -- -"$(cat "$dir/$name.pid")" 2>/dev/null || true
    fi
    rm -f "$dir/$name.rc" "$dir/$name.pid"
    # A process group of its own (setsid), so that it can be stopped whole; its exit status is
    # written when the command ends, and `wait` reads it.
    setsid bash -c 'status=0; nice -n 19 "${@:2}" >"$1.log" 2>&1 </dev/null || status=$?; echo "$status" >"$1.rc"' \
        bash "$dir/$name" "$@" >/dev/null 2>&1 &
    echo $! >"$dir/$name.pid"
    echo "background: $name started ($*)" >&2
    ;;
wait)
    [ -f "$dir/$name.pid" ] || { echo "background: $name was never started" >&2; exit 1; }
    while [ ! -f "$dir/$name.rc" ]; do
        # Gone without writing its status: killed.
        if ! kill -0 "$(cat "$dir/$name.pid")" 2>/dev/null && [ ! -f "$dir/$name.rc" ]; then
            echo "background: $name ended without a status (killed?); its log is $dir/$name.log" >&2
            exit 1
        fi
        sleep 1
    done
    status=$(cat "$dir/$name.rc")
    if [ "$status" != 0 ]; then
        tail -n 60 "$dir/$name.log" >&2
        echo "background: $name failed (exit $status); its whole log is $dir/$name.log" >&2
        exit 1
    fi
    echo "background: $name done" >&2
    ;;
*) usage ;;
esac
