#!/usr/bin/env bash
# Runs tests/gpu/test_cuda_backend.c on machines without a GPU: the CUDA backend's host
# code (cuda/*.c) linked against mock_cuda.c (a CPU stand-in for the CUDA runtime,
# cuBLAS, the kernel launchers and the Thrust shim), under AddressSanitizer.
# Needs a build of the project made with the CUDA backend (for libmieb_host.a).
#   tests/gpu/mock/run_mock.sh [BUILD_DIR] [OUT_DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
build="${1:-$root/build-cuda}"
out="${2:-$build/mock}"
cuda_inc="${CUDA_HOME:-/usr/local/cuda}/include"
[ -f "$build/libmieb_host.a" ] || { echo "run_mock: no $build/libmieb_host.a (build with -DMIEB_CUDA=ON first)" >&2; exit 1; }
mkdir -p "$out"
flags=(-std=gnu17 -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -Wall -Wno-unused-parameter
       -DMIEB_HAVE_CUDA=1 -I"$root/host" -I"$root/cuda" -I"$root/kernels" -I"$root/tests/gpu" -I"$cuda_inc")
objs=()
for src in "$root"/cuda/*.c "$root/tests/gpu/mock/mock_cuda.c" "$root/tests/gpu/test_cuda_backend.c" \
           "$root/tests/gpu/gpu_test_util.c"; do
  o="$out/$(basename "${src%.c}").o"
  gcc "${flags[@]}" -c "$src" -o "$o"
  objs+=("$o")
done
blas_lib="$(ls /usr/lib/*/openblas-pthread/libopenblas.so 2>/dev/null | head -1 || true)"
gcc -fsanitize=address,undefined "${objs[@]}" "$build/libmieb_host.a" \
    ${blas_lib:+"$blas_lib"} -lopenblas $(pkg-config --libs libcjson) -lhdf5_serial -lpthread -lm \
    -o "$out/test_cuda_backend_mock" 2>/dev/null ||
gcc -fsanitize=address,undefined "${objs[@]}" "$build/libmieb_host.a" \
    -lopenblas $(pkg-config --libs libcjson) -lhdf5 -lpthread -lm -o "$out/test_cuda_backend_mock"
ASAN_OPTIONS=detect_leaks=1 "$out/test_cuda_backend_mock" "$@"
