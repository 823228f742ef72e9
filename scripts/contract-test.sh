#!/usr/bin/env bash
# Contract tests: schemathesis against a live navd, every check but positive_data_acceptance and
# use_after_free. The latter reads `DELETE /v1/graphs/{name}?version=N` (one version removed) as
# the graph deleted, and a later read of the graph's other versions as a use after free; a
# per-operation setting does not reach its stateful phase. Deleted sessions staying deleted (401)
# is held by navd's own tests.
#
# Starts the built navd (NAVD_BINARY, else .build/debug/navd) on a free loopback port with the
# memory store, the news example graph and an admin token, runs every phase (examples,
# coverage, fuzzing, stateful: createSession's links give the id and token to every session
# route), and fails on any failure. Bounded: MAX_EXAMPLES per operation (default 40) and
# MAX_TIME seconds in all (default 180: fuzzing and stateful testing repeat until it is spent).
set -euo pipefail
cd "$(dirname "$0")/.."

BINARY=${NAVD_BINARY:-.build/debug/navd}
MAX_EXAMPLES=${MAX_EXAMPLES:-40}
MAX_TIME=${MAX_TIME:-180}
SEED=${SEED:-}
[ -x "$BINARY" ] || { echo "contract-test: $BINARY is not built (run swift build)" >&2; exit 1; }
# The virtual environment `make test-deps` installed schemathesis into (Debian's Python refuses pip).
PYTHON=${CONTRACT_TEST_PYTHON:-.build/venv/bin/python}
"$PYTHON" -c 'import schemathesis' 2>/dev/null || { echo "contract-test: schemathesis is not installed in $PYTHON (make test-deps)" >&2; exit 1; }

export NAVD_ADMIN_TOKEN="contract-admin-$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
# shellcheck source=scripts/lib/navd.sh
source scripts/lib/navd.sh
start_navd contract-test --store memory --graph Examples/news.json --admin-token "$NAVD_ADMIN_TOKEN"

STATUS=0
# Long polls and streams are capped to the JSON page and a 1 s wait (scripts/contract_hooks.py).
export PYTHONPATH="scripts${PYTHONPATH:+:$PYTHONPATH}" SCHEMATHESIS_HOOKS=contract_hooks
"$PYTHON" -m schemathesis.cli --config-file scripts/schemathesis.toml run openapi.yaml \
    --url "http://127.0.0.1:$PORT" \
    --checks all --exclude-checks positive_data_acceptance,use_after_free \
    --max-examples "$MAX_EXAMPLES" --max-time "$MAX_TIME" \
    --workers 1 --generation-database none --no-color \
    ${SEED:+--seed "$SEED"} "$@" || STATUS=$?

# The daemon must have survived everything it was sent.
navd_survived contract-test
if [ "$STATUS" -ne 0 ]; then
    echo "contract-test: schemathesis reported failures (exit $STATUS)" >&2
    tail -20 "$LOG" >&2
fi
exit "$STATUS"
