#!/usr/bin/env bash
# Installs everything mieb-eval needs to build, run and test on a Debian machine,
# from Debian's packages and PyPI only. Idempotent: a second run is quick.
#   scripts/install-deps.sh          build + test dependencies
# Run as root (or with sudo available).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

pkgs=(build-essential cmake pkg-config
      libhdf5-dev hdf5-tools libcjson-dev libopenblas0-pthread libopenblas-pthread-dev
      python3 python3-venv python3-numpy python3-h5py python3-scipy
      clang libclang-rt-14-dev llvm   # clang + its sanitizer/libFuzzer runtimes: scripts/sanitize.sh, fuzz.sh
      libsimde-dev)  # portable intrinsics: test_screen_i8_kernels runs the VNNI kernels on any CPU
# headless Chromium: tests/py/test_report.py renders the HTML report and checks its console
# (tests only: the demo and the images, which set MIEB_SKIP_PY=1, do without it)
if [ "${MIEB_SKIP_PY:-0}" != "1" ]; then pkgs+=(chromium); fi
# a one-node Slurm cluster for tests/py/test_slurm.py (scripts/slurm/); not in the images (MIEB_SKIP_PY=1)
[ "${MIEB_SKIP_PY:-0}" = "1" ] || pkgs+=(slurm-wlm munge)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-deps: apt-get install ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  # another install on this machine (a second checkout's tests) holds apt's lock for a while: wait
  apt_wait=(-o DPkg::Lock::Timeout=1800)
  $SUDO apt-get "${apt_wait[@]}" update -qq
  $SUDO apt-get "${apt_wait[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Python test references (pytrec_eval-terrier wraps trec_eval 9.0.8, which mteb uses;
# mteb itself is installed without its heavy dependencies, only its metric module is loaded).
if [ "${MIEB_SKIP_PY:-0}" != "1" ]; then
  "$here/scripts/setup-pyenv.sh"
fi
