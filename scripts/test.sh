#!/usr/bin/env bash
# The test command (README, .ci/run): installs what is missing, checks that the CUDA build
# compiles when nvcc is available (and checks the CUDA backend's logic without a GPU),
# builds the Python package's wheel and tests it installed in a bare chroot (and its mteb side
# installed in a fresh venv beside .venv-mteb),
# then builds the CPU build and runs every test (C unit tests and the Python parity tests
# against pytrec_eval, mteb, numpy, h5py). ctest's summary is the last line.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$here/scripts/install-deps.sh"
"$here/scripts/setup-mteb-env.sh"  # .venv-mteb: mteb + torch (CPU) for tests/py/test_mteb_parity.py
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "test.sh: compiling the CUDA build (compile and link only; no GPU here)"
  "$here/scripts/build.sh" "$here/build-cuda" -DMIEB_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
  echo "test.sh: CUDA build OK"
  # Without a GPU, the CUDA backend's logic is still checked: the kernels on a CPU thread
  # emulator, and the backend's host code (and mieb-eval --device cuda) on a mock runtime.
  "$here/tests/gpu/emu/run_emu.sh" "$here/build-emu"
  "$here/tests/gpu/mock/run_mock.sh" "$here/build-cuda"
  # The bundle that tests/gpu/run.sh runs from on a GPU machine without build dependencies
  # (tests/gpu/README.md), run in a bare Debian chroot: the mock bundle through every step,
  # the real one as far as finding no GPU. 77: no chroot could be made on this machine.
  echo "test.sh: GPU bundles in a bare chroot (tests/gpu/test_bundle.sh)"
  for kind in mock cuda; do
    flag=(); expect=77
    [ $kind = mock ] && { flag=(--mock); expect=0; }
    "$here/tests/gpu/bundle.sh" "${flag[@]}" --out "$here/build-cuda/bundle-$kind.tar.xz" "$here/build-cuda" >/dev/null
    rc=0; "$here/tests/gpu/test_bundle.sh" "$here/build-cuda/bundle-$kind.tar.xz" $expect || rc=$?
    case $rc in
      0) ;;
      77) echo "test.sh: bundle check skipped: no bare chroot on this machine" ;;
      *) echo "test.sh: the $kind bundle FAILED in the bare chroot" >&2; exit 1 ;;
    esac
  done
fi
# Sanitizers and fuzzing (clang): one ASan+UBSan build serves both. The whole ctest suite
# runs against it (scripts/sanitize.sh), then each libFuzzer target runs for a fixed number
# of inputs with a fixed seed (scripts/fuzz.sh). MIEB_SKIP_SANITIZE=1 skips both.
if [ "${MIEB_SKIP_SANITIZE:-0}" != "1" ]; then
  echo "test.sh: sanitized build (ASan + UBSan + LSan) and its ctest run"
  mkdir -p "$here/build-san"
  # The exporter's fault suite is Python driving mteb (its program steps are scored by the other
  # end-to-end tests under the sanitizers): it runs once, in the CPU build's run below.
  if ! "$here/scripts/sanitize.sh" "$here/build-san" -DMIEB_FUZZ=ON -E 'py\.test_encode_faults' \
      >"$here/build-san/sanitize.log" 2>&1; then
    tail -150 "$here/build-san/sanitize.log" >&2
    echo "test.sh: sanitized ctest run FAILED (whole log: build-san/sanitize.log)" >&2
    exit 1
  fi
  grep -E 'tests passed|Total Test time' "$here/build-san/sanitize.log"
  # Every target, the HDF5-file ones (taskdata, emb) included: the crashes they found inside
  # HDF5 1.10 itself are guarded against (host/hdf5/h5_guard_headers.c, h5_guard_attrs.c;
  # docs/BAD_INPUT.md).
  fuzz_targets=(model_meta registry results cli taskdata emb)
  echo "test.sh: fuzzing ${fuzz_targets[*]} (tests/fuzz, about 20 s per target)"
  FUZZ_CI=1 FUZZ_BUILD="$here/build-san" "$here/scripts/fuzz.sh" 20 "${fuzz_targets[@]}"
fi
# The Python package as users install it: the CPU wheel (scripts/build-wheel.sh, a full CPU build
# of the library and program, a minute or two), installed in a fresh venv in a bare Debian
# chroot and its tests run there (scripts/test-wheel.sh). 77: no chroot could be made here.
echo "test.sh: the wheel, installed and tested in a bare chroot (scripts/test-wheel.sh)"
mkdir -p "$here/build-wheel"
if ! wheel="$("$here/scripts/build-wheel.sh" "$here/build-wheel/dist" 2>"$here/build-wheel/build.log" | tail -1)"; then
  tail -40 "$here/build-wheel/build.log" >&2
  echo "test.sh: the wheel build FAILED (whole log: build-wheel/build.log)" >&2
  exit 1
fi
echo "test.sh: built $(basename "$wheel") ($(du -h "$wheel" | cut -f1))"
rc=0; "$here/scripts/test-wheel.sh" "$wheel" || rc=$?
case $rc in
  0) ;;
  77) echo "test.sh: wheel check skipped: no bare chroot (or no wheelhouse) on this machine" ;;
  *) echo "test.sh: the wheel FAILED in the bare chroot" >&2; exit 1 ;;
esac
build="$("$here/scripts/build.sh" "$here/build" -DMIEB_CUDA=OFF)"
# The benchmarks' C programs (bench/CMakeLists.txt) are outside the default build: built here so
# that none of them stops compiling unnoticed.
cmake --build "$build" --target bench_all -j "$(nproc 2>/dev/null || echo 2)" >/dev/null
echo "test.sh: bench targets OK"
# The wheel's mteb side, installed (the chroot has no torch): mieb_eval.mteb inside mteb.evaluate
# and mieb_eval.evaluate, from the wheel in a fresh venv beside .venv-mteb's packages, against
# mteb's default search and tools/mieb-eval-model on this build (scripts/test-wheel-mteb.sh).
echo "test.sh: the wheel's mteb backend and evaluate, installed (scripts/test-wheel-mteb.sh)"
"$here/scripts/test-wheel-mteb.sh" "$wheel" "$build" || { echo "test.sh: the installed wheel FAILED with mteb" >&2; exit 1; }
cd "$build"
ctest --output-on-failure -j 2 "$@"
