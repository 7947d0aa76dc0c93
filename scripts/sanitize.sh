#!/usr/bin/env bash
# Builds mieb-eval a second time with clang, AddressSanitizer + UndefinedBehaviorSanitizer
# (-fno-sanitize-recover=undefined: any UB report fails) + LeakSanitizer, CPU backend only,
# and runs the whole ctest suite against it (the Python tests spawn the sanitized binaries
# through MIEB_BUILD_DIR, which ctest sets to this build).
#   scripts/sanitize.sh [BUILD_DIR] [extra cmake args (-D...)] [ctest args...]   (default build-asan)
# Leaks inside libhdf5 on its own error paths are suppressed (tests/fuzz/lsan.supp says why).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build-asan}"
shift || true
cmake_args=()
while [ $# -gt 0 ] && [[ "$1" == -D* ]]; do cmake_args+=("$1"); shift; done
command -v clang >/dev/null || { echo "sanitize.sh: clang not found (scripts/install-deps.sh installs it)" >&2; exit 1; }
# sanitized binaries run two to four times slower: the tests' waits (tests/py/conftest.py) stretch
export MIEB_TEST_TIME_SCALE="${MIEB_TEST_TIME_SCALE:-3}"
CC=clang "$here/scripts/build.sh" "$build" -DMIEB_SANITIZE=ON -DMIEB_CUDA=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS="-fno-sanitize-recover=undefined" "${cmake_args[@]}" >/dev/null
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$here/tests/fuzz/lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
cd "$build"
ctest --output-on-failure -j 2 "$@"
