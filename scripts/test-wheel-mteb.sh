#!/usr/bin/env bash
# scripts/test-wheel-mteb.sh WHEEL [BUILD] - the wheel's mteb side, installed: mieb_eval.mteb
# (SearchIndex and search_wrapper inside mteb.evaluate) and mieb_eval.evaluate (mteb encodes,
# the installed engine scores), run from the installed package rather than the source tree.
#
# The bare chroot of scripts/test-wheel.sh has no torch or mteb (a gigabyte of wheels), so
# this runs on this machine: a fresh virtual environment, $BUILD/wheel-mteb-venv, made anew each
# run from .venv-mteb's Python, sees .venv-mteb's packages (mteb, torch: one site.addsitedir
# line in a .pth file, below its own site-packages so that what it installs comes first) and
# gets the wheel and pytest installed into it by pip. Then, with no PYTHONPATH and no
# MIEB_EVAL_LIBRARY or MIEB_EVAL_PROGRAM:
#   - mieb_eval must be imported from that venv's site-packages, its library and program too;
#   - python/tests/test_mteb_backend.py: mteb.evaluate's default search against SearchIndex
#     and search_wrapper, both sides in the venv (MIEB_MTEB_VENV);
#   - tests/py/test_score_model.py -k evaluate: the installed mieb_eval.evaluate writes the
#     files that tools/mieb-eval-model (source tree, BUILD's program) writes.
# BUILD (default build) is a CPU build with mieb-eval: the reference command's program.
# Exit status: 0 every check passed, 1 one failed, 2 usage.
# MIEB_TEST_TIME_SCALE (default 1) is passed on to the tests.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ $# -ge 1 ] && [ $# -le 2 ] && [ -f "$1" ] || { echo "usage: scripts/test-wheel-mteb.sh WHEEL [BUILD]" >&2; exit 2; }
wheel="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
build="$(cd "${2:-$here/build}" && pwd)" || exit 2
[ -x "$build/mieb-eval" ] || { echo "test-wheel-mteb: $build/mieb-eval is missing (a CPU build)" >&2; exit 2; }
mteb_py="$here/.venv-mteb/bin/python"
[ -x "$mteb_py" ] || { echo "test-wheel-mteb: $mteb_py is missing: run scripts/setup-mteb-env.sh" >&2; exit 2; }
fail=0
check() { # name command...
  local name=$1; shift
  if "$@"; then echo "  ok    $name"; else echo "  FAIL  $name"; fail=1; fi
}

venv="$build/wheel-mteb-venv"
logs="$build/wheel-mteb-logs"
rm -rf "$venv" "$logs"
mkdir -p "$logs"
purelib='import sysconfig; print(sysconfig.get_paths()["purelib"])'
"$mteb_py" -m venv --without-pip "$venv" || { echo "test-wheel-mteb: FAIL: venv" >&2; exit 1; }
site="$("$venv/bin/python" -c "$purelib")"
msite="$("$mteb_py" -c "$purelib")"
# "zz": .pth files are read in name order; the venv's own packages stay ahead of .venv-mteb's
printf 'import site; site.addsitedir(%s)\n' "'$msite'" >"$site/zz-mieb-venv-mteb.pth"

# A clean environment: nothing that points into the source tree or its build
run_clean() {
  env -u PYTHONPATH -u MIEB_EVAL_LIBRARY -u MIEB_EVAL_PROGRAM -u MIEB_REGISTRY -u MIEB_BUILD_DIR \
      PYTHONNOUSERSITE=1 "$@"
}

echo "=== install: the wheel and pytest into a fresh venv beside .venv-mteb's packages ==="
run_clean "$venv/bin/python" -m pip install -q --disable-pip-version-check "$wheel" pytest >"$logs/install.log" 2>&1
rc=$?
tail -5 "$logs/install.log"
check "pip install the wheel and pytest (exit $rc)" test $rc = 0
[ $rc = 0 ] || exit 1

where="$(cd / && run_clean "$venv/bin/python" -c 'import mieb_eval, mieb_eval._lib as l, mteb
print(mieb_eval.__file__); print(l.library_path()); print(l.program_path())' 2>"$logs/import.log")"
echo "$where"
check "mieb_eval, its library and its program come from the venv's site-packages" \
  test "$(grep -c "^$site/mieb_eval/" <<<"$where")" = 3

t0=$(date +%s)
(cd "$here" && run_clean MIEB_MTEB_VENV="$venv" MIEB_SOURCE_DIR="$here" \
   "$venv/bin/python" -m pytest -q -p no:cacheprovider --basetemp="$logs/tmp-backend" \
   python/tests/test_mteb_backend.py) >"$logs/backend.log" 2>&1
rc=$?
tail -3 "$logs/backend.log"
check "test_mteb_backend.py against the installed package (exit $rc, $(( $(date +%s) - t0 )) s)" test $rc = 0

t0=$(date +%s)
(cd "$here" && run_clean MIEB_MTEB_VENV="$venv" MIEB_SOURCE_DIR="$here" MIEB_BUILD_DIR="$build" \
   MIEB_EVAL_INSTALLED=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider --basetemp="$logs/tmp-evaluate" \
   tests/py/test_score_model.py -k evaluate) >"$logs/evaluate.log" 2>&1
rc=$?
tail -3 "$logs/evaluate.log"
check "mieb_eval.evaluate, installed, against tools/mieb-eval-model (exit $rc, $(( $(date +%s) - t0 )) s)" test $rc = 0

if [ $fail = 0 ]; then
  rm -rf "$venv" "$logs"
  echo "test-wheel-mteb: all checks passed"
else
  echo "test-wheel-mteb: FAILED (logs in $logs)"
fi
exit $fail
