#!/usr/bin/env bash
# tests/gpu/bundle.sh - builds the GPU binaries here and packs them, with every shared
# library they need that a bare CUDA image lacks, into one file that run.sh uses on the GPU
# machine instead of building there.
#
# Why: the device machine lent to sessions (an H200 running this workplace's 'cuda' image)
# has nvcc, cmake and cuBLAS but no HDF5, cJSON or OpenBLAS development packages, and it
# reaches no package registry, so run.sh could not build there. This machine has all of
# them (scripts/install-deps.sh) and nvcc 13, so the build happens here (minutes on two
# cores), and the device's time goes to the tests and benchmarks.
#
#   tests/gpu/bundle.sh [--mock] [--faiss] [--out FILE] [BUILD_DIR]
#     BUILD_DIR  the CUDA build to make or reuse (default: build-gpu-bundle)
#     --out FILE write the bundle there instead (scripts/test.sh does, to leave .gpu-carry alone)
#     --mock     bundle the mock-runtime binaries of tests/gpu/mock/run_mock.sh instead
#                (a CPU stand-in for CUDA): how the bundle itself is tested without a GPU
#     --faiss    also download the faiss-cpu wheel for the device's Python (3.12), so that
#                run.sh can run bench_retrieval.py against faiss-cpu there
#
# Writes .gpu-carry/ (git-ignored) in the repository root:
#   mieb-gpu-bundle.tar.xz   bin/ (mieb-eval, test_cuda_backend, bench_cuda_topk), lib/ (their
#                            shared libraries), wrappers laid out as a build directory
#                            (mieb-eval, gpu-tests/*), BUNDLE (source hash, date, compiler)
#   whl/*.whl                with --faiss
# Then, through the device tool:  carry [".gpu-carry"],
#   command "MIEB_GPU_OUT=$OUT tests/gpu/run.sh"
# run.sh unpacks the bundle, refuses it when the tree's source hash (source_hash.sh) differs
# from the one it was built from, and finds cuBLAS on the device (it is not bundled: the
# image has it, and it is over 500 MB).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
mock=0 faiss=0 build="" out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --mock) mock=1 ;;
    --faiss) faiss=1 ;;
    --out) out="${2:?--out needs a file}"; shift ;;
    -h|--help) sed -n '2,28p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bundle.sh: unknown option $1" >&2; exit 2 ;;
    *) build="$1" ;;
  esac
  shift
done
build="${build:-$root/build-gpu-bundle}"
arch="${MIEB_CUDA_ARCH:-90}"
carry="$root/.gpu-carry"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT

if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
command -v nvcc >/dev/null 2>&1 || { echo "bundle.sh: nvcc not found" >&2; exit 1; }

echo "bundle.sh: building in $build (CUDA arch $arch)"
cmake -S "$root" -B "$build" -DMIEB_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$arch" \
      -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$(nproc)" --target mieb-eval >/dev/null
mkdir -p "$stage/bin" "$stage/lib" "$stage/gpu-tests"
if [ $mock = 1 ]; then
  MIEB_MOCK_BUILD_ONLY=1 "$root/tests/gpu/mock/run_mock.sh" "$build" "$build/mock" >/dev/null
  cp "$build/mock/mieb-eval-mock" "$stage/bin/mieb-eval"
  cp "$build/mock/test_cuda_backend_mock" "$stage/bin/test_cuda_backend"
else
  cmake -S "$root/tests/gpu" -B "$build/gpu-tests" -DMIEB_BUILD_DIR="$build" \
        -DCMAKE_CUDA_ARCHITECTURES="$arch" >/dev/null
  cmake --build "$build/gpu-tests" -j "$(nproc)" >/dev/null
  cp "$build/mieb-eval" "$build/gpu-tests/test_cuda_backend" "$build/gpu-tests/bench_cuda_topk" "$stage/bin/"
fi

# Every library the binaries load, except the C library's own (the device's glibc is at
# least as new as Debian 12's: its image is Ubuntu 24.04's Python 3.12) and the CUDA
# driver and cuBLAS, which the device provides for its own driver.
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libmvec|libpthread|libdl\.so|librt\.so|libresolv|libutil|libcuda\.so|libcublas|libcublasLt|libcudart)'
deps="$(ldd "$stage"/bin/*)"
missing="$(grep 'not found' <<<"$deps" || true)"
[ -z "$missing" ] || { echo "bundle.sh: unresolved here: $missing" >&2; exit 1; }
awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' <<<"$deps" | sort -u | while read -r soname path; do
  [[ "$soname" =~ $skip ]] && continue
  cp -L "$path" "$stage/lib/$soname"
done
# Wrappers where run.sh looks for the programs of a build (BUILD/mieb-eval, BUILD/gpu-tests/*).
# They put lib/ on the library path of that one process only: exported for the whole of
# run.sh, Debian 12's libstdc++ would shadow the device's newer one under its Python.
wrap() { # wrapper-path program up
  cat >"$1" <<WRAP
#!/bin/sh
# mieb-gpu-bundle wrapper (tests/gpu/bundle.sh): bin/$2 with the bundle's lib/ first
b="\$(cd "\$(dirname "\$0")/$3" && pwd)"
LD_LIBRARY_PATH="\$b/lib\${MIEB_CUBLAS_DIR:+:\$MIEB_CUBLAS_DIR}\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "\$b/bin/$2" "\$@"
WRAP
  chmod +x "$1"
}
wrap "$stage/mieb-eval" mieb-eval .
for p in "$stage"/bin/*; do
  n="$(basename "$p")"
  [ "$n" = mieb-eval ] || wrap "$stage/gpu-tests/$n" "$n" ..
done
strip --strip-unneeded "$stage"/lib/*.so* 2>/dev/null || true

{
  echo "source_hash $("$root/tests/gpu/source_hash.sh" "$root")"
  echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n)"
  echo "kind $([ $mock = 1 ] && echo mock || echo cuda)"
  echo "cuda_arch $arch"
  echo "nvcc $(nvcc --version | tail -1)"
  echo "git $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo none)$(git -C "$root" diff --quiet HEAD 2>/dev/null || echo '+changes')"
  echo "needs $(awk '$1 ~ /^libcublas/ { print $1 }' <<<"$deps" | sort -u | tr '\n' ' ')"
} >"$stage/BUNDLE"

out="${out:-$carry/mieb-gpu-bundle.tar.xz}"
mkdir -p "$(dirname "$out")"
tar -C "$stage" -cf - . | xz -T0 -6 >"$out.part"
mv "$out.part" "$out"

if [ $faiss = 1 ]; then
  rm -rf "$carry/whl"
  # the device's python3 is 3.12 with numpy and packaging already there (device KINDS.md)
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
      --platform manylinux2014_x86_64 -d "$carry/whl" faiss-cpu
fi
sed 's/^/  /' "$stage/BUNDLE"
du -sh "$out" | sed 's/^/  /'
if [ "$out" = "$carry/mieb-gpu-bundle.tar.xz" ]; then
  [ -d "$carry/whl" ] && du -sh "$carry/whl" | sed 's/^/  /'
  total=$(du -sb "$carry" | cut -f1)
  [ "$total" -lt $(( 60 * 1024 * 1024 )) ] || echo "bundle.sh: warning: .gpu-carry is $total bytes; the device tool carries at most 64 MiB with the tree"
  echo "bundle.sh: device call: carry [\".gpu-carry\"], command \"MIEB_GPU_OUT=\$OUT tests/gpu/run.sh\""
fi
