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
# Needs root (chroot, unshare, mount). The bare system is made once with debootstrap
# (minbase + python3 + xz-utils, about 100 MB) into a cached base, $MIEB_BARE_CHROOT (default
# /var/tmp/mieb-bare-chroot.bookworm), which no run ever changes: each run copies it
# (cp -a --reflink=auto) into its own mktemp -d folder and works only there, and mounts /proc
# (and CUDA) inside a private mount namespace (unshare -m) that vanishes with the run's
# processes, even after a SIGKILL. The base is made in a private temporary folder and renamed
# into place under an exclusive flock on $MIEB_BARE_CHROOT.lock (runs copying it hold a shared
# one), checked for bareness by every run and made again when it is not bare. Folders of runs
# that were killed are removed by the next run (once their processes are gone).
# MIEB_TEST_TIME_SCALE (default 1) multiplies this script's waits and, 4 times over, run.sh's step
# timeouts (sized for an H200; here the mock runs ASan builds on a CPU stand-in).
# Exit status: 0 every check passed, 1 one failed, 77 no chroot could be made here.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bundle="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
expect="$2"
base="${MIEB_BARE_CHROOT:-/var/tmp/mieb-bare-chroot.bookworm}"
tscale="${MIEB_TEST_TIME_SCALE:-1}"
scaled() { awk -v n="$1" -v s="$tscale" 'BEGIN { v = n * s; printf "%d\n", (v < 1 ? 1 : v) }'; } # N seconds, scaled
# run.sh's step limits are sized for an H200; here the mock bundle runs ASan-instrumented
# programs on a CPU stand-in for the GPU, on a CPU that other runs may share: 4x as long
chroot_scale="$(awk -v s="$tscale" 'BEGIN { print 4 * s }')"
tmp_root="${TMPDIR:-/tmp}"
fail=0
check() { # name command...: the check passes when the command succeeds
  local name=$1; shift
  if "$@"; then echo "  ok    $name"; else echo "  FAIL  $name"; fail=1; fi
}
has() { grep -q -- "$1" "$2"; }
lacks() { ! grep -q -- "$1" "$2"; }
exits() { [ "$1" = "$2" ]; }
logs_have_summary() { # (the listing is read whole: grep -q stopping early would SIGPIPE tar under pipefail)
  local list
  list="$(tar -tzf "$chr/work/out/gpu-logs.tar.gz" 2>/dev/null)" && grep -q 'summary.tsv' <<<"$list"
}

# ---- the folders of earlier runs that were killed: removed once nothing of theirs runs ----
# (each run holds a flock on its folder's .lock for as long as it or a child lives; the mounts
# it made were in its own mount namespace, so nothing is mounted there any more)
# (a folder younger than 2 minutes is left alone: its run may not have taken its lock yet)
for d in "$tmp_root"/mieb-bundle-test.*/; do
  d="${d%/}"
  [ -d "$d" ] && [ -n "$(find "$d" -maxdepth 0 -mmin +2 2>/dev/null)" ] || continue
  if [ -e "$d/.lock" ]; then
    flock -n "$d/.lock" rm -rf --one-file-system "$d" 2>/dev/null || true
  elif [ -n "$(find "$d" -maxdepth 0 -mmin +60 2>/dev/null)" ]; then
    rm -rf --one-file-system "$d" 2>/dev/null || true # killed before it took its lock
  fi
done
work="$(mktemp -d "$tmp_root/mieb-bundle-test.XXXXXX")" || { echo "test_bundle: cannot make a temporary folder"; exit 1; }
exec {work_lock}>"$work/.lock" && flock "$work_lock"
chr="$work/root"
cleanup() {
  trap - EXIT INT TERM
  exec {work_lock}>&- 2>/dev/null
  if [ "$fail" = 0 ] && [ "${keep:-0}" = 0 ]; then
    rm -rf --one-file-system "$work"
  else # keep the logs, not the system
    [ -d "$chr/work" ] && mv "$chr/work" "$work/logs"
    rm -rf --one-file-system "$chr"
  fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# ---- the cached base: checked, made when missing or not bare ----
bare_problems() { # dir: what the device lacks and dir has (empty when bare)
  local f t present=""
  for f in "$1"/usr/lib/x86_64-linux-gnu/*{hdf5,cjson,openblas,gfortran}*; do
    [ -e "$f" ] && present+="$(basename "$f") "
  done
  for t in cc gcc cmake nvcc; do [ -e "$1/usr/bin/$t" ] && present+="$t "; done
  echo "$present"
}
base_ok() { [ -f "$base/.mieb-bare" ] && [ -x "$base/usr/bin/python3" ] && [ -z "$(bare_problems "$base")" ]; }
make_base() { # under the exclusive lock: debootstrap into a private folder, then rename into place
  command -v debootstrap >/dev/null 2>&1 ||
    apt-get -o DPkg::Lock::Timeout="$(scaled 600)" install -y -q debootstrap >/dev/null 2>&1 ||
    { echo "test_bundle: skipped: no debootstrap"; return 77; }
  rm -rf --one-file-system "$base".part.* 2>/dev/null # left by a killed maker (the lock is ours now)
  local part; part="$(mktemp -d "$base.part.XXXXXX")" || return 77
  local log="$work/debootstrap.log"
  echo "test_bundle: making the bare base $base (debootstrap, 2-3 min)"
  # its own mount namespace: the /proc debootstrap mounts goes away with it, killed or not
  if ! unshare -m --propagation private debootstrap --variant=minbase --include=python3,xz-utils bookworm "$part" \
         http://deb.debian.org/debian >"$log" 2>&1; then
    tail -5 "$log"; keep=1
    echo "test_bundle: skipped: debootstrap failed (log: $log)"
    rm -rf --one-file-system "$part"
    return 77
  fi
  local p; p="$(bare_problems "$part")"
  [ -z "$p" ] || { echo "test_bundle: debootstrap made a system that is not bare: $p"; rm -rf --one-file-system "$part"; return 1; }
  date -u +%Y-%m-%dT%H:%M:%SZ >"$part/.mieb-bare"
  if [ -e "$base" ]; then # not bare, or from an older script: replaced (copies hold the shared lock)
    echo "test_bundle: replacing $base (not bare: $(bare_problems "$base"))"
    mv -T "$base" "$base.old.$$" && rm -rf --one-file-system "$base.old.$$"
  fi
  mv -T "$part" "$base"
}
mkdir -p "$(dirname "$base")"
exec {base_lock}>>"$base.lock"
lock_wait=$(scaled 1800)
flock -s -w "$lock_wait" "$base_lock" || { echo "test_bundle: FAIL: no shared lock on $base.lock within $lock_wait s"; exit 1; }
if ! base_ok; then
  flock -x -w "$lock_wait" "$base_lock" ||
    { echo "test_bundle: FAIL: no exclusive lock on $base.lock within $lock_wait s (another run making the base?)"; exit 1; }
  if ! base_ok; then
    make_base; rc=$?
    [ $rc = 0 ] || exit $rc
  fi
  flock -s "$base_lock"
fi
# the run's own system: a copy of the base (reflinks where the file system has them)
cp -a --reflink=auto "$base" "$chr" || { echo "test_bundle: FAIL: cannot copy $base to $chr"; exit 1; }
exec {base_lock}>&-
# the chroot must lack what the device lacks, or the test shows nothing
present="$(bare_problems "$chr")"
[ -z "$present" ] || { echo "test_bundle: $chr (a copy of $base) is not bare: $present"; fail=1; exit 1; }
unshare -m --propagation private mount -t proc proc "$chr/proc" ||
  { echo "test_bundle: skipped: cannot mount /proc in a private mount namespace (not root?)"; exit 77; }
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
