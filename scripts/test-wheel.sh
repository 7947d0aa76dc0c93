#!/usr/bin/env bash
# scripts/test-wheel.sh WHEEL - installs a wheel of the package (scripts/build-wheel.sh) into a
# fresh virtual environment in a bare Debian chroot (tests/gpu/bare_chroot.sh: no compiler, no
# HDF5, cJSON, OpenBLAS or gfortran, no pip, no network) and runs it there, as a user's machine
# would: `import mieb_eval` and its version, the `mieb-eval` console script, every library of
# the package resolved within the chroot, and the package's tests (python/tests, copied) against
# the installed package alone (no PYTHONPATH, no MIEB_EVAL_LIBRARY).
#
# What the chroot installs from is a wheelhouse made here first: pip, numpy, h5py and pytest
# for the chroot's Python, downloaded from PyPI by this machine's pip into $MIEB_WHEELHOUSE
# (default wheelhouse/chroot-pyX.Y, git-ignored) and kept: without a network a second run uses
# the one it has.
# Exit status: 0 every check passed, 1 one failed, 77 no chroot (or no wheelhouse) could be made.
# MIEB_TEST_TIME_SCALE (default 1) is passed on to the tests.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ $# = 1 ] && [ -f "$1" ] || { echo "usage: scripts/test-wheel.sh WHEEL (a file)" >&2; exit 2; }
wheel="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
version="$(basename "$wheel" | cut -d- -f2)" # name-version-tags.whl
tscale="${MIEB_TEST_TIME_SCALE:-1}"
bare_tag=test-wheel
# shellcheck source=tests/gpu/bare_chroot.sh
. "$here/tests/gpu/bare_chroot.sh" # scaled, check, bare_sweep, bare_workdir, bare_copy, bare_cleanup
fail=0

bare_sweep mieb-wheel-test
bare_workdir mieb-wheel-test || exit 1
trap bare_cleanup EXIT
trap 'exit 1' INT TERM
bare_copy || exit $?

in_chroot() { # log-file command...: run in the chroot, /proc mounted for this process tree only
  local log=$1; shift
  unshare -m --propagation private /bin/sh -c 'chr=$1; shift; mount -t proc proc "$chr/proc" || exit 125
      exec chroot "$chr" "$@"' sh "$chr" \
      /usr/bin/env -i PATH=/work/venv/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
      MIEB_TEST_TIME_SCALE="$tscale" "$@" >"$log" 2>&1
}

# ---- the wheelhouse, for the chroot's Python and glibc ----
pyver="$(chroot "$chr" /usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')" ||
  { echo "test-wheel: FAIL: the chroot's python3 does not run"; exit 1; }
glibc="$(chroot "$chr" /usr/bin/ldd --version | sed -n '1s/.* \([0-9]*\)\.\([0-9]*\)$/\2/p')"
house="${MIEB_WHEELHOUSE:-$here/wheelhouse/chroot-py$pyver}"
mkdir -p "$house"
plats=(--platform manylinux2014_x86_64)
for ((m = 17; m <= ${glibc:-17}; m++)); do plats+=(--platform "manylinux_2_${m}_x86_64"); done
host_py=""
for p in "$here/.venv-wheel/bin/python" "$here/.venv/bin/python" python3; do
  "$p" -m pip --version >/dev/null 2>&1 && { host_py=$p; break; }
done
echo "test-wheel: wheelhouse for Python $pyver, glibc 2.$glibc: $house"
if [ -z "$host_py" ] ||
   ! "$host_py" -m pip download -q -d "$house" --only-binary=:all: --python-version "$pyver" \
       --implementation cp "${plats[@]}" pip numpy h5py pytest; then
  have=1
  for n in pip numpy h5py pytest; do compgen -G "$house/$n-*.whl" >/dev/null || have=0; done
  [ $have = 1 ] || { echo "test-wheel: skipped: no wheelhouse (pip download failed, $house incomplete)"; exit 77; }
  echo "test-wheel: pip download failed; using the wheels already in $house"
fi

# ---- into the chroot: the wheel, the wheelhouse, a copy of the package's tests ----
mkdir -p "$chr/work/wheelhouse" "$chr/work/tests"
cp "$wheel" "$chr/work/"
cp "$house"/*.whl "$chr/work/wheelhouse/"
cp -r "$here/python/tests/." "$chr/work/tests/"
find "$chr/work/tests" -name __pycache__ -prune -exec rm -rf {} +
pipwhl="$(cd "$chr/work/wheelhouse" && ls pip-*.whl | sort -V | tail -1)"
w="/work/$(basename "$wheel")"

echo "=== install: a fresh venv (no pip in the chroot: pip runs from its wheel) ==="
in_chroot "$chr/work/install.log" /bin/sh -c "python3 -m venv --without-pip /work/venv &&
  /work/venv/bin/python /work/wheelhouse/$pipwhl/pip install -q --no-index --find-links /work/wheelhouse \
    pip '$w' numpy h5py pytest"
rc=$?
tail -5 "$chr/work/install.log"
check "pip install the wheel, numpy, h5py, pytest from the wheelhouse (exit $rc)" test $rc = 0
[ $rc = 0 ] || exit 1

echo "=== the installed package ==="
in_chroot "$chr/work/import.log" /bin/sh -c 'cd / && python -c "import mieb_eval, mieb_eval._lib as l
print(mieb_eval.__version__); print(l.library_path()); print(l.program_path())"'
cat "$chr/work/import.log"
check "import mieb_eval: __version__ $version" test "$(sed -n 1p "$chr/work/import.log")" = "$version"
check "the library is the installed one" grep -q '^/work/venv/lib/python.*/site-packages/mieb_eval/_native/lib/libmieb.so' "$chr/work/import.log"
in_chroot "$chr/work/version.log" mieb-eval --version
cat "$chr/work/version.log"
check "mieb-eval --version (the console script) names $version" grep -q -F "$version" "$chr/work/version.log"
in_chroot "$chr/work/ldd.log" /bin/sh -c 'cd /work/venv/lib/python3*/site-packages &&
  for f in mieb_eval/_native/bin/* mieb_eval/_native/lib/* mieb_eval.libs/*; do echo "== $f"; ldd "$f"; done'
check "every library of the package resolved in the chroot" test "$(grep -c 'not found' "$chr/work/ldd.log")" = 0
grep 'not found' "$chr/work/ldd.log" | head -5

echo "=== python/tests against the installed package ==="
t0=$(date +%s)
# test_mteb_backend.py runs mteb.evaluate in .venv-mteb (torch), which the bare chroot has not:
# ctest's py.package_mteb runs it on the build's library
in_chroot "$chr/work/pytest.log" /bin/sh -c 'cd /work/tests && python -m pytest -q -p no:cacheprovider --ignore=test_mteb_backend.py .'
rc=$?
tail -15 "$chr/work/pytest.log"
check "pytest python/tests (exit $rc, $(( $(date +%s) - t0 )) s)" test $rc = 0

[ $fail = 0 ] && echo "test-wheel: all checks passed" || echo "test-wheel: FAILED (logs in $work/logs)"
exit $fail
