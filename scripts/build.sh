#!/usr/bin/env bash
# Configures and builds mieb-eval.
#   scripts/build.sh [BUILD_DIR] [extra cmake args...]
# Defaults: build/ , CPU backend always, CUDA backend when nvcc is found (MIEB_CUDA=AUTO).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
shift || true
jobs="$(nproc 2>/dev/null || echo 2)"
# nvcc is often installed outside PATH
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build" -j "$jobs" >/dev/null
echo "$build"
