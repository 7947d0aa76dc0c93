#!/usr/bin/env bash
# tests/gpu/source_hash.sh [ROOT] - one sha256 over every source file the GPU binaries are
# built from (host/, cuda/, kernels/, tests/gpu/ and the CMake files), by path and content.
#
# bundle.sh records it in the bundle it builds; run.sh recomputes it over the tree it was
# sent with, so binaries built from other sources are refused instead of being tested as
# if they were this tree's. Only content and relative paths count (no timestamps, no git),
# so the hash is the same on any copy of the tree, with or without .git.
set -euo pipefail
root="$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")/../..}" && pwd)"
cd "$root"
find host cuda kernels tests/gpu CMakeLists.txt -type f \
     \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' -o -name '*.inc' \
        -o -name 'CMakeLists.txt' -o -name '*.cmake' \) -print0 |
  LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1
