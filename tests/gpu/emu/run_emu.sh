#!/usr/bin/env bash
# Runs the kernels of kernels/*.cu on the CPU thread emulator (cuda_emu.h): a logic check
# for machines without a GPU. Needs g++ (C++20) and the CUDA headers, no GPU and no nvcc.
#   tests/gpu/emu/run_emu.sh [OUT_DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
out="${1:-$root/build-emu}"
cuda_inc="${CUDA_HOME:-/usr/local/cuda}/include"
mkdir -p "$out"
for k in canon_gemm topk maxsim pair_dot pair_maxsim kmeans_argmin sts_pairs compo_scores logreg_pointwise logreg_argmax screen_int8; do
  # keep the kernels, drop the launcher (its <<<>>> needs nvcc)
  sed '/^extern "C" mieb_status/,$d' "$root/kernels/$k.cu" > "$out/${k}_kernel.inc"
  grep -q '__global__' "$out/${k}_kernel.inc" || { echo "run_emu: no kernel left in kernels/$k.cu" >&2; exit 1; }
done
g++ -std=c++20 -O2 -pthread -Wall -Wno-unused-function -Wno-unknown-pragmas -I"$out" -I"$root/tests/gpu/emu" -I"$root/host" -I"$root/cuda" -I"$root/kernels" \
    -I"$cuda_inc" "$root/tests/gpu/emu/test_kernels_emu.cpp" -o "$out/test_kernels_emu"
"$out/test_kernels_emu"
