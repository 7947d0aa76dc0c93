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
# Needs root (chroot, mount). The chroot is made once with debootstrap (minbase + python3 +
# xz-utils, about 100 MB) at $MIEB_BARE_CHROOT (default /tmp/mieb-bare-chroot) and reused.
# Exit status: 0 every check passed, 1 one failed, 77 no chroot could be made here.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bundle="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
expect="$2"
chr="${MIEB_BARE_CHROOT:-/tmp/mieb-bare-chroot}"
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

if [ ! -x "$chr/usr/bin/python3" ]; then
  command -v debootstrap >/dev/null 2>&1 || apt-get install -y -q debootstrap >/dev/null 2>&1 ||
    { echo "test_bundle: skipped: no debootstrap"; exit 77; }
  rm -rf "$chr.part"
  if ! debootstrap --variant=minbase --include=python3,xz-utils bookworm "$chr.part" \
         http://deb.debian.org/debian >/tmp/mieb-debootstrap.log 2>&1; then
    tail -5 /tmp/mieb-debootstrap.log
    echo "test_bundle: skipped: debootstrap failed (log: /tmp/mieb-debootstrap.log)"
    exit 77
  fi
  mv "$chr.part" "$chr"
fi
# the chroot must lack what the device lacks, or the test shows nothing
present=""
for f in "$chr"/usr/lib/x86_64-linux-gnu/*{hdf5,cjson,openblas,gfortran}*; do
  [ -e "$f" ] && present+="$(basename "$f") "
done
for t in cc gcc cmake nvcc; do [ -e "$chr/usr/bin/$t" ] && present+="$t "; done
[ -z "$present" ] || { echo "test_bundle: $chr is not bare: $present"; exit 1; }

cleanup() {
  mountpoint -q "$chr/proc" && umount "$chr/proc"
  mountpoint -q "$chr/usr/local/cuda" && umount "$chr/usr/local/cuda"
}
trap cleanup EXIT
mountpoint -q "$chr/proc" || mount -t proc proc "$chr/proc" ||
  { echo "test_bundle: skipped: cannot mount /proc in the chroot (not root?)"; exit 77; }
cuda_home="$(readlink -f "${CUDA_HOME:-/usr/local/cuda}")"
if [ "$expect" = 77 ] && [ -d "$cuda_home" ]; then
  # as on the device: a CUDA toolkit under /usr/local, without ldconfig knowing it
  mkdir -p "$chr/usr/local/cuda" && mount --bind -o ro "$cuda_home" "$chr/usr/local/cuda"
fi

# the tree as the device tool sends it: tracked and untracked-not-ignored files, and the carry
send() { # bundle-file
  rm -rf "$chr/work" && mkdir -p "$chr/work/tree/.gpu-carry"
  (cd "$root" && git ls-files -co --exclude-standard -z | tar -c --null -T - -f -) | tar -x -C "$chr/work/tree"
  cp "$1" "$chr/work/tree/.gpu-carry/mieb-gpu-bundle.tar.xz"
}
run_in() { # log-file [VAR=VALUE ...]
  local log=$1; shift
  chroot "$chr" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root MIEB_GPU_OUT=/work/out \
      MIEB_GPU_E2E_SCALE="${MIEB_GPU_E2E_SCALE:-0.03}" "$@" /bin/bash /work/tree/tests/gpu/run.sh /work/build \
      >"$log" 2>&1
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
  for _ in $(seq 600); do # the first step's log appears in MIEB_GPU_OUT while it runs
    [ -s "$chr/work/out/gpu-logs/test_cuda_backend.log" ] && break
    sleep 0.5
  done
  check "a step's log is in MIEB_GPU_OUT while it runs" test -s "$chr/work/out/gpu-logs/test_cuda_backend.log"
  check "summary.tsv is written before the end" summary_has '^build\tPASS'
  # run.sh's own shell (chroot and env exec into it; its subshells are younger)
  kill -TERM "$(pgrep -o -f '^/bin/bash /work/tree/tests/gpu/run.sh')" 2>/dev/null
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
tmp="$(mktemp -d)"
xz -dc "$bundle" | tar -x -C "$tmp" && rm -f "$tmp"/lib/libcjson.so.*
tar -C "$tmp" -cf - . | xz -T0 -1 >"$tmp.tar.xz"
send "$tmp.tar.xz"
rm -rf "$tmp" "$tmp.tar.xz"
run_in "$chr/work/unresolved.log"; rc=$?
check "exit 1 (got $rc)" exits "$rc" 1
check "unresolved library named" has 'unresolved libraries:.*libcjson' "$chr/work/unresolved.log"
check "nothing ran after the refusal" lacks '=== test_cuda_backend ===' "$chr/work/unresolved.log"

[ $fail = 0 ] && echo "test_bundle: all checks passed" || echo "test_bundle: FAILED (logs in $chr/work)"
exit $fail
