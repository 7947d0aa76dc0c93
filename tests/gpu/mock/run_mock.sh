#!/usr/bin/env bash
# Exercises the CUDA backend's host code on machines without a GPU: cuda/*.c linked
# against mock_cuda.c (a CPU stand-in for the CUDA runtime, cuBLAS, the kernel
# launchers and the Thrust shim), under AddressSanitizer and UBSan:
#   1. tests/gpu/test_cuda_backend.c, every operation against the CPU backend;
#   2. bench_cuda_topk relinked with the mock: the int8 screen's lists against the exact way's;
#   3. mieb-eval itself relinked with the mock: `run --device cuda` vs `--device cpu`
#      on a synthetic suite (cosine and MaxSim; k-means through kmeans_assign; cosine again
#      with the int8 screen on every retrieval block), results compared.
# Needs a build of the project made with the CUDA backend (libmieb_host.a, main.c.o).
#   tests/gpu/mock/run_mock.sh [BUILD_DIR] [OUT_DIR] [test_cuda_backend args...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
build="$(cd "${1:-$root/build-cuda}" && pwd)"
out="${2:-$build/mock}"
shift $(( $# < 2 ? $# : 2 ))
cuda_inc="${CUDA_HOME:-/usr/local/cuda}/include"
main_o="$build/CMakeFiles/mieb-eval.dir/host/cli/main.c.o"
[ -f "$build/libmieb_host.a" ] && [ -f "$main_o" ] ||
  { echo "run_mock: build $build first (cmake -DMIEB_CUDA=ON, target mieb-eval)" >&2; exit 1; }
mkdir -p "$out"
san=(-fsanitize=address,undefined -fno-omit-frame-pointer)
flags=(-std=gnu17 -O1 -g "${san[@]}" -Wall -Wno-unused-parameter -DMIEB_HAVE_CUDA=1
       -I"$root/host" -I"$root/cuda" -I"$root/kernels" -I"$root/tests/gpu" -I"$cuda_inc")
backend=()
for src in "$root"/cuda/*.c "$root"/kernels/*.c "$root/tests/gpu/mock/mock_cuda.c"; do
  o="$out/$(basename "${src%.c}").o"
  gcc "${flags[@]}" -c "$src" -o "$o"
  backend+=("$o")
done
for src in test_cuda_backend gpu_test_util gpu_pairwise_cases gpu_logreg_cases gpu_screen_cases; do
  gcc "${flags[@]}" -c "$root/tests/gpu/$src.c" -o "$out/$src.o"
done
hdf5_libs="$(pkg-config --libs hdf5 2>/dev/null || echo -lhdf5_serial)"
libs=("$build/libmieb_host.a" -lopenblas $(pkg-config --libs libcjson) $hdf5_libs -lpthread -lm)
# the host library wants the backend, the backend wants the host library's status.c
gcc "${san[@]}" "$out/test_cuda_backend.o" "$out/gpu_test_util.o" "$out/gpu_pairwise_cases.o" "$out/gpu_logreg_cases.o" \
    "$out/gpu_screen_cases.o" -Wl,--start-group "${backend[@]}" "${libs[@]}" \
    -Wl,--end-group -o "$out/test_cuda_backend_mock"
gcc "${san[@]}" "$main_o" -Wl,--start-group "${backend[@]}" "${libs[@]}" -Wl,--end-group -o "$out/mieb-eval-mock"
gcc "${flags[@]}" -c "$root/tests/gpu/bench_cuda_topk.c" -o "$out/bench_cuda_topk.o"
gcc "${san[@]}" "$out/bench_cuda_topk.o" "$out/gpu_test_util.o" -Wl,--start-group "${backend[@]}" "${libs[@]}" \
    -Wl,--end-group -o "$out/bench_cuda_topk_mock"
# MIEB_MOCK_BUILD_ONLY=1: link and stop (tests/gpu/bundle.sh --mock packs test_cuda_backend_mock and mieb-eval-mock)
[ "${MIEB_MOCK_BUILD_ONLY:-0}" = 1 ] && exit 0

echo "=== test_cuda_backend on the mock device ==="
ASAN_OPTIONS=detect_leaks=1 "$out/test_cuda_backend_mock" "$@"

e2e="$out/e2e"
rm -rf "$e2e"
rc=0
echo "=== bench_cuda_topk (mock): the int8 screen's lists equal the exact way's (timings mean nothing here) ==="
ASAN_OPTIONS=detect_leaks=1 "$out/bench_cuda_topk_mock" --queries 50 --docs 24000 --dim 100 --k 10 --block 8000 \
    --int8-docs 24000 2>&1 | grep '^RESULT' | tee "$out/bench.log" || rc=1
grep -q 'int8_identical=1' "$out/bench.log" || { echo "  bench_cuda_topk: int8 lists not identical FAIL"; rc=1; }

echo "=== mieb-eval run --device cuda (mock) vs --device cpu ==="
for sim in cosine MaxSim; do
  tasks=(CIRRIT2IRetrieval CUB200I2IRetrieval BLINKIT2IMultiChoice VidoreArxivQARetrieval CIFAR100Clustering
         Winoground AROCocoOrder STS12VisualSTS VisualSTS-b-Eng
         CIFAR10 DTD PatchCamelyon CIFAR10ZeroShot PatchCamelyonZeroShot RenderedSST2)
  [ $sim = MaxSim ] && tasks=(CUB200I2IRetrieval VidoreTabfquadRetrieval)
  "$build/mieb-eval" synth --out "$e2e/$sim" --seed 11 --scale 0.03 --model-sim $sim \
      --tasks "$(IFS=,; echo "${tasks[*]}")" 2>/dev/null
  for dev in cuda cpu; do
    ASAN_OPTIONS=detect_leaks=1 "$out/mieb-eval-mock" run --task-data "$e2e/$sim/task-data" \
        --embeddings "$e2e/$sim/embeddings" -t "${tasks[@]}" --output-folder "$e2e/$sim/out-$dev" \
        --device $dev >/dev/null 2>"$e2e/$sim-$dev.log" || { cat "$e2e/$sim-$dev.log"; rc=1; }
  done
  echo "  $sim:"
  python3 "$root/tests/gpu/compare_results.py" "$e2e/$sim/out-cpu" "$e2e/$sim/out-cuda" || rc=1
  [ $sim = cosine ] || continue
  # the run manifest names both sides' kernels: the CPU's and the backend's describe slot
  python3 - "$e2e/$sim/out-cuda" <<'PY' || rc=1
import glob, json, sys
man = json.load(open(sorted(glob.glob(sys.argv[1] + "/results/*/*/.mieb-eval/run-*.json"))[-1]))
assert man["device"] == "cuda" and "openblas_core" in man["cpu_kernels"], man
assert {"device_name", "similarity_gemm", "screen"} <= set(man["cuda_kernels"]), man["cuda_kernels"]
print("  manifest: cpu_kernels and cuda_kernels", man["cuda_kernels"])
PY
  # the int8 screen on every retrieval block (docs/SCREEN_INT8.md): the same result files
  MIEB_CUDA_SCREEN=int8 ASAN_OPTIONS=detect_leaks=1 "$out/mieb-eval-mock" run --task-data "$e2e/$sim/task-data" \
      --embeddings "$e2e/$sim/embeddings" -t "${tasks[@]}" --output-folder "$e2e/$sim/out-int8" --device cuda -v \
      >/dev/null 2>"$e2e/$sim-int8.log" || { cat "$e2e/$sim-int8.log"; rc=1; }
  n=$(grep -c 'screened (int8)' "$e2e/$sim-int8.log" || true)
  echo "  $sim, MIEB_CUDA_SCREEN=int8 ($n screened blocks):"
  [ "$n" -gt 0 ] || { echo "  no block went through the int8 screen FAIL"; rc=1; }
  python3 "$root/tests/gpu/compare_results.py" "$e2e/$sim/out-cpu" "$e2e/$sim/out-int8" || rc=1
done

echo "=== the linear probe's path: --device cuda fits in lockstep on the device; --probe-device cpu does not ==="
for pd in auto cpu; do
  ASAN_OPTIONS=detect_leaks=1 "$out/mieb-eval-mock" run --task-data "$e2e/cosine/task-data" \
      --embeddings "$e2e/cosine/embeddings" -t CIFAR10 PatchCamelyon --output-folder "$e2e/probe-$pd" \
      --device cuda --probe-device $pd -v --progress off >/dev/null 2>"$e2e/probe-$pd.log" || { cat "$e2e/probe-$pd.log"; rc=1; }
  n=$(grep -c 'fitted in lockstep on the cuda backend' "$e2e/probe-$pd.log" || true)
  want=$([ $pd = auto ] && echo 2 || echo 0)
  if [ "$n" = "$want" ]; then echo "  --probe-device $pd: $n batched fit(s) ok"; else
    echo "  --probe-device $pd: $n batched fit(s), expected $want FAIL"; rc=1; fi
done
python3 "$root/tests/gpu/compare_results.py" "$e2e/probe-cpu" "$e2e/probe-auto" || rc=1
# a --mem-limit that holds the optimisers of one experiment at a time: five batches of one
ASAN_OPTIONS=detect_leaks=1 "$out/mieb-eval-mock" run --task-data "$e2e/cosine/task-data" \
    --embeddings "$e2e/cosine/embeddings" -t CIFAR10 PatchCamelyon --output-folder "$e2e/probe-small" --device cuda \
    --mem-limit 64K -v --progress off >/dev/null 2>"$e2e/probe-small.log" || { cat "$e2e/probe-small.log"; rc=1; }
if grep -q 'fitted in lockstep on the cuda backend, at most 1 at a time' "$e2e/probe-small.log"; then
  echo "  --mem-limit 64K: one experiment at a time ok"
else
  grep 'probe:' "$e2e/probe-small.log"; echo "  --mem-limit 64K: expected one experiment at a time FAIL"; rc=1
fi
python3 "$root/tests/gpu/compare_results.py" "$e2e/probe-cpu" "$e2e/probe-small" || rc=1

echo "=== GPUs this build cannot run on: refused at start-up (--device cuda), the CPU instead (auto) ==="
gpu_case() { # label want-rc want-text env... : `run --device DEV` on the mock device with env
  local label=$1 want_rc=$2 want=$3 dev=$4; shift 4
  local log="$e2e/cc-$label.log" got=0
  rm -rf "$e2e/cc-$label"
  env "$@" ASAN_OPTIONS=detect_leaks=1 "$out/mieb-eval-mock" run --task-data "$e2e/cosine/task-data" \
      --embeddings "$e2e/cosine/embeddings" -t CIRRIT2IRetrieval --output-folder "$e2e/cc-$label" \
      --device "$dev" --progress off >/dev/null 2>"$log" || got=$?
  if [ "$got" = "$want_rc" ] && grep -q -- "$want" "$log"; then echo "  $label: exit $got ok"; else
    echo "  $label: exit $got (wanted $want_rc and \"$want\") FAIL"; cat "$log"; rc=1; fi
  local n=0 # result files: one when scored, none when refused (and then no folder either)
  [ -d "$e2e/cc-$label" ] && n=$(find "$e2e/cc-$label" -name CIRRIT2IRetrieval.json | wc -l)
  [ "$n" = "$([ "$want_rc" = 0 ] && echo 1 || echo 0)" ] || { echo "  $label: $n result file(s) FAIL"; rc=1; }
}
gpu_case no-image-cuda 3 "compute capability 7.5, and this mieb-eval holds no kernels.*ARCHITECTURES=75" cuda \
    MOCK_CUDA_CC=7.5 MOCK_CUDA_NO_KERNEL_IMAGE=1
gpu_case no-image-auto 0 "no usable CUDA device.*scoring on the CPU" auto MOCK_CUDA_CC=7.5 MOCK_CUDA_NO_KERNEL_IMAGE=1
gpu_case cc-6.1-cuda 3 "compute capability 6.1; 7.0 or newer is needed" cuda MOCK_CUDA_CC=6.1
gpu_case cc-8.6-cuda 0 "" cuda MOCK_CUDA_CC=8.6

echo "=== search floors on --device cuda: tests/py/test_retrieval_e2e.py (every query's top 1000 against mteb's) ==="
# after a block fills a query's running top-k, later blocks and chunks go through
# topk_block_floor (kernels/topk.cu with the floor as the starting threshold)
py="$root/.venv/bin/python"
[ -x "$py" ] || py="$(command -v python3)"
if "$py" -c 'import numpy, h5py, pytest' 2>/dev/null; then
  MIEB_TEST_BIN="$out/mieb-eval-mock" MIEB_TEST_DEVICE=cuda ASAN_OPTIONS=detect_leaks=1 \
    "$py" -m pytest -q -p no:cacheprovider "$root/tests/py/test_retrieval_e2e.py" \
      -k "search_floors or chunk_boundary or zero_padding" 2>&1 | tail -3
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
  # and with the int8 screen on every block (tests/gpu/run.sh runs the same on a GPU)
  MIEB_CUDA_SCREEN=int8 MIEB_TEST_BIN="$out/mieb-eval-mock" MIEB_TEST_DEVICE=cuda ASAN_OPTIONS=detect_leaks=1 \
    "$py" -m pytest -q -p no:cacheprovider "$root/tests/py/test_retrieval_e2e.py" -k "search_floors and dot" 2>&1 | tail -3
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
else
  echo "  SKIP: no python with numpy, h5py and pytest (scripts/install-deps.sh makes .venv)"
fi
exit $rc
