#!/usr/bin/env bash
# The Dockerfile's runtime stage must install every shared library the release binary links.
#
# Builds navd as the Dockerfile does (release, --static-swift-stdlib), maps each library the binary
# links directly (its ELF NEEDED entries, resolved to files by `ldd`) to its Debian package with
# `dpkg -S`, and checks the runtime stage's apt-get line names that package (or the package is
# part of debian:bookworm-slim itself). Libraries those pull in come with their packages' dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."

swift build -c release --static-swift-stdlib --product navd --scratch-path .build-static >/dev/null
binary=.build-static/release/navd

# Packages debian:bookworm-slim already has (essential, priority required).
base_packages="libc6 libgcc-s1 libstdc++6 zlib1g libzstd1 liblzma5 libbz2-1.0"

runtime_line=$(awk '/^FROM debian:bookworm-slim/{runtime=1} runtime && /apt-get install/{print; exit}' Dockerfile)
if [ -z "$runtime_line" ]; then
  echo "docker-libs: the runtime stage has no apt-get install line"; exit 1
fi

passed=0; failed=0
resolved=$(ldd "$binary")
while read -r library; do
  path=$(awk -v lib="$library" '$1 == lib && $2 == "=>" {print $3} $1 ~ ("/" lib "$") {print $1}' <<<"$resolved" | head -1)
  if [ -z "$path" ]; then
    echo "FAIL $library: ldd cannot resolve it"; failed=$((failed + 1)); continue
  fi
  package=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -1 | cut -d: -f1 || true)
  [ -n "$package" ] || package=$(dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1 || true)
  if [ -z "$package" ]; then
    echo "FAIL $library ($path): no Debian package provides it"; failed=$((failed + 1)); continue
  fi
  if grep -qw -- "$package" <<<"$runtime_line" || grep -qw -- "$package" <<<"$base_packages"; then
    echo "ok   $library → $package"; passed=$((passed + 1))
  else
    echo "FAIL $library → $package is not installed by the Dockerfile's runtime stage"; failed=$((failed + 1))
  fi
done < <(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')

# The Swift runtime must be linked statically: no libswift*.so may remain.
if ldd "$binary" | grep -q 'libswift\|libFoundation\|libdispatch'; then
  echo "FAIL the Swift runtime is linked dynamically"; failed=$((failed + 1))
fi

echo "docker-libs: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
