#!/usr/bin/env bash
# Builds the libFuzzer targets (Fuzz/) and runs each for a set time, one process on one core.
#
#   scripts/fuzz.sh [SECONDS] [TARGET…]      default: $FUZZ_SECONDS (60) seconds, every target
#   FUZZ_BUILD_ONLY=1 scripts/fuzz.sh        build, run nothing
#   FUZZ_ARGS='-runs=100000' scripts/fuzz.sh 0 path    extra libFuzzer flags (SECONDS 0: no time limit)
#
# New inputs the fuzzer finds go to .build-fuzz/corpus/TARGET (the committed seeds in Fuzz/Corpus
# are only read); a crash is saved as .build-fuzz/artifacts/TARGET/crash-… and the script exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."

SWIFT=${SWIFT:-swift}
SECONDS_PER_TARGET=${1:-${FUZZ_SECONDS:-60}}
shift || true
TARGETS=("$@")
[[ ${#TARGETS[@]} -gt 0 ]] || TARGETS=(path json graph navigator request)
SCRATCH=.build-fuzz

# Release code with libFuzzer's coverage and AddressSanitizer; -enable-testing lets the targets
# reach the daemon's internal types (`@testable import navd`) as its tests do.
build() {
    "$SWIFT" build --package-path Fuzz --scratch-path "$SCRATCH" -c release -Xswiftc -enable-testing \
        --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address --product "fuzz-$1"
}

for target in "${TARGETS[@]}"; do
    echo "== building fuzz-$target"
    build "$target"
done
[[ -z ${FUZZ_BUILD_ONLY:-} ]] || exit 0

BIN=$SCRATCH/release
for target in "${TARGETS[@]}"; do
    dict=()
    case $target in
        path) dict=(-dict=Fuzz/Dictionaries/path.dict) ;;
        json | graph) dict=(-dict=Fuzz/Dictionaries/json.dict) ;;
    esac
    limit=()
    [[ $SECONDS_PER_TARGET == 0 ]] || limit=(-max_total_time="$SECONDS_PER_TARGET")
    mkdir -p "$SCRATCH/corpus/$target" "$SCRATCH/artifacts/$target"
    echo "== fuzz-$target${limit:+ for ${SECONDS_PER_TARGET}s}"
    # SWIFT_BACKTRACE=enable=no: libFuzzer, not Swift's backtracer, reports a trap (docs/design.md, "Building on libmicrohttpd").
    # malloc_context_size=0: AddressSanitizer records no stack per allocation (a tenth of the time
    # of an allocating target); rerun a crash with ASAN_OPTIONS= for the allocation stacks.
    ASAN_OPTIONS=${ASAN_OPTIONS:-malloc_context_size=0} SWIFT_BACKTRACE=enable=no "$BIN/fuzz-$target" "${limit[@]}" "${dict[@]}" \
        -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$SCRATCH/artifacts/$target/" ${FUZZ_ARGS:-} \
        "$SCRATCH/corpus/$target" "Fuzz/Corpus/$target"
done
