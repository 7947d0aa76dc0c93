#!/usr/bin/env bash
# tests/gpu/test_bundle.sh BUNDLE EXPECTED_RC - runs tests/gpu/run.sh from a bundle
# (tests/gpu/bundle.sh) in a bare Debian chroot, as the device machine would: no compiler,
# no cmake, no HDF5, cJSON or OpenBLAS, no numpy, nothing to install them from.
#
#   tests/gpu/test_bundle.sh .gpu-carry/mieb-gpu-bundle.tar.xz 0    (a --mock bundle: every
#                            step runs on the mock runtime and must pass)
#   tests/gpu/test_bundle.sh .gpu-carry/mieb-gpu-bundle.tar.xz 77   (a real bundle: no GPU
#                            here, so it must get as far as finding none; cuBLAS from this
#                            machine's CUDA toolkit, bound into the chroot)
# Then two refusals, which must happen before anything runs: a source file changed after
# the bundle was made (stale), and a bundled library removed (unresolved).
#
# Needs root (chroot, unshare, mount). The bare system (minbase + python3 + xz-utils) is a
# private copy of a cached base, made once with debootstrap (tests/gpu/bare_chroot.sh, shared
# with scripts/test-wheel.sh); /proc (and CUDA) are mounted inside a private mount namespace
# (unshare -m) that vanishes with the run's processes, even after a SIGKILL.
# MIEB_TEST_TIME_SCALE (default 1) multiplies this script's waits and, 4 times over, run.sh's step
# timeouts (sized for an H200; here the mock runs ASan builds on a CPU stand-in).
# Exit status: 0 every check passed, 1 one failed, 77 no chroot could be made here.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bundle="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
expect="$2"
tscale="${MIEB_TEST_TIME_SCALE:-1}"
bare_tag=test_bundle
# shellcheck source=tests/gpu/bare_chroot.sh
. "$root/tests/gpu/bare_chroot.sh" # scaled, check, bare_sweep, bare_workdir, bare_copy, bare_cleanup
# run.sh's step limits are sized for an H200; here the mock bundle runs ASan-instrumented
# programs on a CPU stand-in for the GPU, on a CPU that other runs may share: 4x as long
chroot_scale="$(awk -v s="$tscale" 'BEGIN { print 4 * s }')"
fail=0
has() { grep -q -- "$1" "$2"; }
lacks() { ! grep -q -- "$1" "$2"; }
exits() { [ "$1" = "$2" ]; }
logs_have_summary() { # (the listing is read whole: grep -q stopping early would SIGPIPE tar under pipefail)
  local list
  list="$(tar -tzf "$chr/work/out/gpu-logs.tar.gz" 2>/dev/null)" && grep -q 'summary.tsv' <<<"$list"
}

bare_sweep mieb-bundle-test
bare_workdir mieb-bundle-test || exit 1
trap bare_cleanup EXIT
trap 'exit 1' INT TERM

bare_copy || exit $?
cuda_home="$(readlink -f "${CUDA_HOME:-/usr/local/cuda}")"
bind_cuda=0
if [ "$expect" = 77 ] && [ -d "$cuda_home" ]; then
  # as on the device: a CUDA toolkit under /usr/local, without ldconfig knowing it
  mkdir -p "$chr/usr/local/cuda" && bind_cuda=1
fi

# the tree as the device tool sends it: tracked and untracked-not-ignored files, and the carry
send() { # bundle-file
  rm -rf "$chr/work" && mkdir -p "$chr/work/tree/.gpu-carry"
  (cd "$root" && git ls-files -co --exclude-standard -z | tar -c --null -T - -f -) | tar -x -C "$chr/work/tree"
  cp "$1" "$chr/work/tree/.gpu-carry/mieb-gpu-bundle.tar.xz"
}
run_in() { # log-file [VAR=VALUE ...]
  # in a mount namespace of its own: /proc (and the CUDA toolkit) are mounted for this one
  # process tree and vanish with it, however it ends
  local log=$1; shift
  unshare -m --propagation private /bin/sh -c '
      chr=$1 cuda=$2; shift 2
      mount -t proc proc "$chr/proc" || exit 125
      if [ -n "$cuda" ]; then mount --bind "$cuda" "$chr/usr/local/cuda" && mount -o remount,bind,ro "$chr/usr/local/cuda" || exit 125; fi
      exec chroot "$chr" "$@"' sh "$chr" "$([ $bind_cuda = 1 ] && echo "$cuda_home")" \
      /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root MIEB_GPU_OUT=/work/out \
      MIEB_GPU_E2E_SCALE="${MIEB_GPU_E2E_SCALE:-0.03}" MIEB_TEST_TIME_SCALE="$chroot_scale" \
      MIEB_GPU_DEADLINE="$(scaled 3000)" MIEB_GPU_HARD_DEADLINE="$(scaled 3600)" \
      "$@" /bin/bash /work/tree/tests/gpu/run.sh /work/build >"$log" 2>&1
}
summary_has() { grep -qP -- "$1" "$chr/work/out/gpu-logs/summary.tsv" 2>/dev/null; }

echo "=== run.sh from the bundle in a bare chroot (expect exit $expect) ==="
send "$bundle"
fake_san="$chr/usr/local/cuda/bin/compute-sanitizer" # where run.sh looks when PATH has none
if [ "$expect" = 0 ]; then
  # step 5 on the mock: a stand-in that runs the program (its last argument) and reports no error
  mkdir -p "$(dirname "$fake_san")"
  printf '%s\n' '#!/bin/sh' 'for a; do prog=$a; done' '"$prog"; rc=$?' \
      'echo "========= ERROR SUMMARY: 0 errors"' 'exit $rc' >"$fake_san"
  chmod +x "$fake_san"
fi
run_in "$chr/work/run.log"; rc=$?
[ "$expect" = 0 ] && rm -rf "$chr/usr/local/cuda/bin"
tail -15 "$chr/work/run.log"
check "run.sh exit $rc (expected $expect)" exits "$rc" "$expect"
check "build step came from the bundle" has '^  build  *PASS  *bundle' "$chr/work/run.log"
check "gpu-logs.tar.gz with summary.tsv in MIEB_GPU_OUT" logs_have_summary
if [ "$expect" = 0 ]; then
  check "CUDA vs CPU operations passed" has '^  CUDA vs CPU operations  *PASS' "$chr/work/run.log"
  check "end to end passed" has '^  end to end (synth, run)  *PASS' "$chr/work/run.log"
  check "memcheck step ran the operations test" has '^  memcheck  *PASS  *========= ERROR SUMMARY: 0 errors' "$chr/work/run.log"
fi

if [ "$expect" = 0 ]; then
  echo "=== the hard deadline: no step starts once it has passed, and the summary says so ==="
  send "$bundle"
  run_in "$chr/work/deadline.log" MIEB_GPU_HARD_DEADLINE=0; rc=$?
  check "exit 1 (got $rc)" exits "$rc" 1
  check "summary.tsv: the operations test not run" summary_has '^CUDA vs CPU operations\tFAIL\tnot run: .* hard deadline'
  check "nothing ran after the deadline" lacks '=== test_cuda_backend ===' "$chr/work/deadline.log"

  echo "=== stopped by a signal midway: the steps so far are on disk, then summarised ==="
  send "$bundle"
  run_in "$chr/work/signal.log" & pid=$!
  log_wait=$(scaled 300) t_wait=$(date +%s)
  until [ -s "$chr/work/out/gpu-logs/test_cuda_backend.log" ]; do # the first step's log, while it runs
    [ $(( $(date +%s) - t_wait )) -lt "$log_wait" ] && kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  [ -s "$chr/work/out/gpu-logs/test_cuda_backend.log" ] ||
    echo "  (no test_cuda_backend.log after $(( $(date +%s) - t_wait )) s; the wait's deadline is $log_wait s, MIEB_TEST_TIME_SCALE=$tscale)"
  check "a step's log is in MIEB_GPU_OUT while it runs" test -s "$chr/work/out/gpu-logs/test_cuda_backend.log"
  check "summary.tsv is written before the end" summary_has '^build\tPASS'
  # run.sh's own shell (chroot and env exec into it; its subshells are younger), the one whose
  # root is this run's chroot: another run's run.sh may be running on this machine too
  runsh="" all=" $(pgrep -d ' ' -f '^/bin/bash /work/tree/tests/gpu/run.sh') "
  for p in $all; do
    [ /proc/$p/root/ -ef "$chr/" ] || continue
    case "$all" in *" $(ps -o ppid= -p "$p" | tr -d ' ') "*) continue ;; esac # a subshell of run.sh
    runsh=$p
  done
  check "run.sh of this chroot found" test -n "$runsh"
  [ -n "$runsh" ] && kill -TERM "$runsh" 2>/dev/null
  wait "$pid"; rc=$?
  check "exit 1 (got $rc)" exits "$rc" 1
  check "summary.tsv: stopped by a signal" summary_has '^run\.sh\tFAIL\tstopped by a signal'
  check "gpu-logs.tar.gz written after the signal" logs_have_summary
  check "no step after the signal" lacks '=== end to end' "$chr/work/signal.log"
fi

echo "=== a source file changed after bundling: refused as stale ==="
send "$bundle"
echo '/* changed after bundling */' >>"$chr/work/tree/host/core/status.c"
run_in "$chr/work/stale.log"; rc=$?
check "exit 1 (got $rc)" exits "$rc" 1
check "stale bundle named" has 'stale bundle' "$chr/work/stale.log"
check "nothing ran after the refusal" lacks '=== test_cuda_backend ===' "$chr/work/stale.log"

echo "=== a bundled library missing: named before anything runs ==="
tmp="$work/unresolved-bundle" && mkdir "$tmp"
xz -dc "$bundle" | tar -x -C "$tmp" && rm -f "$tmp"/lib/libcjson.so.*
tar -C "$tmp" -cf - . | xz -T0 -1 >"$tmp.tar.xz"
send "$tmp.tar.xz"
rm -rf "$tmp" "$tmp.tar.xz"
run_in "$chr/work/unresolved.log"; rc=$?
check "exit 1 (got $rc)" exits "$rc" 1
check "unresolved library named" has 'unresolved libraries:.*libcjson' "$chr/work/unresolved.log"
check "nothing ran after the refusal" lacks '=== test_cuda_backend ===' "$chr/work/unresolved.log"

[ $fail = 0 ] && echo "test_bundle: all checks passed" || echo "test_bundle: FAILED (logs in $work/logs)"
exit $fail
