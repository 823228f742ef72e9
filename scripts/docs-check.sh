#!/usr/bin/env bash
# First, every reference leads somewhere (scripts/docs_refs.py, no daemon): relative links of the
# Markdown files to files and headings, citations of a document's heading in code and docs, and no
# citation of a section number or tracker issue that readers cannot follow. Then the docs'
# examples, run: for each of README.md, docs/guide.md, docs/paths.md, docs/client-guide.md and
# clients/js/README.md (whose Node example needs node) and clients/python/README.md (whose pytest
# runs in the Python client's .build/venv-client, made here when missing),
# starts the debug navd (NAVD_BINARY, else .build/debug/navd) on a free port (memory store, the
# two example graphs `make run` serves, an admin token) and runs scripts/docs_check.py over the
# file: every block and table marked `<!-- check -->` runs and must print what the file says it
# prints. Needs jq and curl (installed with apt-get when missing). About 15 s.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 scripts/docs_refs.py

BINARY=${NAVD_BINARY:-.build/debug/navd}
[ -x "$BINARY" ] || { echo "docs-check: $BINARY is not built (run swift build)" >&2; exit 1; }
if ! command -v jq >/dev/null 2>&1 || ! command -v curl >/dev/null 2>&1; then
    echo "installing jq curl"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq jq curl >/dev/null
fi

# The walkthrough's admin steps read $ADMIN, as a reader's shell would.
export ADMIN=docs-check-admin-token
# The examples call `navd` as a reader who built it would: put this build first on PATH; and
# `pytest` as one who installed the Python client would.
CLIENT_VENV=.build/venv-client
if ! [ -x "$CLIENT_VENV/bin/pytest" ]; then
    python3 -m venv "$CLIENT_VENV"
    "$CLIENT_VENV/bin/pip" install -q './clients/python[pytest]'
fi
export PATH="$(cd "$(dirname "$BINARY")" && pwd):$(pwd)/$CLIENT_VENV/bin:$PATH"
WORK=$(mktemp -d)
NAVD_PID=
cleanup() {
    [ -z "$NAVD_PID" ] || { kill "$NAVD_PID" 2>/dev/null || true; wait "$NAVD_PID" 2>/dev/null || true; }
    rm -rf "$WORK"
}
trap cleanup EXIT

# One daemon per file, so that one file's graph upload or sessions cannot change another's answers.
STATUS=0
for FILE in README.md docs/guide.md docs/paths.md docs/client-guide.md clients/js/README.md clients/python/README.md; do
    PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
    "$BINARY" serve --listen "127.0.0.1:$PORT" --store memory --graph Examples/news.json --graph Examples/stopwatch.json \
        --admin-token "$ADMIN" --log-level warning --drain 0 >"$WORK/navd.log" 2>&1 &
    NAVD_PID=$!
    for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
    python3 scripts/docs_check.py "http://127.0.0.1:$PORT" "$FILE" || { STATUS=1; echo "docs-check: navd's log:" >&2; tail -20 "$WORK/navd.log" >&2; }
    kill "$NAVD_PID"; wait "$NAVD_PID" 2>/dev/null || true; NAVD_PID=
done
exit "$STATUS"
