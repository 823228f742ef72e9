#!/usr/bin/env bash
# NavClient's generated sources (clients/swift/Sources/NavClient/Generated) from openapi.yaml, with the
# swift-openapi-generator pinned in clients/swift/Generator/Package.swift and the options in
# clients/swift/openapi-generator-config.yaml.
#
#   scripts/client-codegen.sh           write them (after changing openapi.yaml; commit the result)
#   scripts/client-codegen.sh --check   fail, showing the difference, unless the committed files are
#                                       exactly what the generator writes now (`make test` runs this)
#
# SWIFT overrides the swift command. The generator is built once into clients/swift/.build-generator.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
mode=${1:-write}
case "$mode" in write|--check) ;; *) echo "usage: $0 [--check]" >&2; exit 64 ;; esac

generated=clients/swift/Sources/NavClient/Generated
scratch=clients/swift/.build-generator
"$SWIFT" build --package-path clients/swift/Generator --scratch-path "$scratch" --product swift-openapi-generator >&2
generator="$("$SWIFT" build --package-path clients/swift/Generator --scratch-path "$scratch" --show-bin-path)/swift-openapi-generator"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# The generator prints its configuration and one warning per `if`/`then` rule of ProblemRules
# (openapi.yaml), which it cannot express in Swift; keep them for a failure.
if ! "$generator" generate --config clients/swift/openapi-generator-config.yaml --output-directory "$out" openapi.yaml >"$out.log" 2>&1; then
    cat "$out.log" >&2
    rm -f "$out.log"
    exit 1
fi
rm -f "$out.log"

if [ "$mode" = write ]; then
    mkdir -p "$generated"
    rm -f "$generated"/*.swift
    cp "$out"/*.swift "$generated"/
    echo "wrote $(ls "$generated" | wc -l) files to $generated" >&2
    exit 0
fi
if ! diff -r -q "$out" "$generated" >/dev/null; then
    echo "NavClient's generated sources differ from what swift-openapi-generator writes from openapi.yaml now:" >&2
    diff -r -u "$generated" "$out" | head -60 >&2 || true
    echo "run scripts/client-codegen.sh and commit $generated" >&2
    exit 1
fi
echo "NavClient's generated sources are what openapi.yaml generates" >&2
