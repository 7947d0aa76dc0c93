# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034 # bare_tag, tscale set by the caller; keep, fail read by it
# tests/gpu/bare_chroot.sh - sourced (bash) by tests/gpu/test_bundle.sh and scripts/test-wheel.sh:
# a private copy of a bare Debian system (minbase + python3 + xz-utils: no compiler, no cmake,
# no HDF5, cJSON, OpenBLAS or gfortran) to run something in as a machine without the build's
# dependencies would.
#
# The bare system is made once with debootstrap into a cached base, $MIEB_BARE_CHROOT (default
# /var/tmp/mieb-bare-chroot.bookworm), which no run ever changes: each run copies it
# (cp -a --reflink=auto) into its own mktemp -d folder and works only there. The base is made
# in a private temporary folder and renamed into place under an exclusive flock on
# $MIEB_BARE_CHROOT.lock (runs copying it hold a shared one), checked for bareness by every run
# and made again when it is not bare. Folders of runs that were killed are removed by the next
# run (once their processes are gone). Needs root (chroot, unshare, mount).
#
# The caller sets, before sourcing: bare_tag (its name, the prefix of its messages) and
# tscale (MIEB_TEST_TIME_SCALE), and has a variable fail (0 until a check fails).
#   scaled N                     N seconds times tscale (at least 1)
#   bare_sweep PREFIX            removes killed runs' folders $TMPDIR/PREFIX.*
#   bare_workdir PREFIX          makes the run's folder: sets work (a new $TMPDIR/PREFIX.XXXXXX)
#                                and chr ($work/root), and holds a flock on $work/.lock
#   bare_copy                    the base (made when missing or not bare) copied to $chr, checked
#                                for bareness, and /proc mountable in a private mount namespace;
#                                returns 0, 1 (a failure: sets fail=1 where the copy is not bare)
#                                or 77 (no chroot can be made here); sets keep=1 when
#                                debootstrap failed (its log is in $work)
#   check NAME COMMAND...        "ok" or "FAIL" NAME after the command; a failure sets fail=1
#   bare_cleanup                 the caller's EXIT trap: the run's folder removed when every
#                                check passed (and keep is unset), else its logs ($chr/work)
#                                kept in $work/logs and the system removed
base="${MIEB_BARE_CHROOT:-/var/tmp/mieb-bare-chroot.bookworm}"
tmp_root="${TMPDIR:-/tmp}"
check() { # name command...: the check passes when the command succeeds
  local name=$1; shift
  if "$@"; then echo "  ok    $name"; else echo "  FAIL  $name"; fail=1; fi
}
bare_cleanup() {
  trap - EXIT INT TERM
  exec {work_lock}>&- 2>/dev/null
  if [ "$fail" = 0 ] && [ "${keep:-0}" = 0 ]; then
    rm -rf --one-file-system "$work"
  else # keep the logs, not the system
    [ -d "$chr/work" ] && mv "$chr/work" "$work/logs"
    rm -rf --one-file-system "$chr"
  fi
}
scaled() { awk -v n="$1" -v s="$tscale" 'BEGIN { v = n * s; printf "%d\n", (v < 1 ? 1 : v) }'; } # N seconds, scaled

# ---- the folders of earlier runs that were killed: removed once nothing of theirs runs ----
# (each run holds a flock on its folder's .lock for as long as it or a child lives; the mounts
# it made were in its own mount namespace, so nothing is mounted there any more)
# (a folder younger than 2 minutes is left alone: its run may not have taken its lock yet)
bare_sweep() {
  local d
  for d in "$tmp_root/$1".*/; do
    d="${d%/}"
    [ -d "$d" ] && [ -n "$(find "$d" -maxdepth 0 -mmin +2 2>/dev/null)" ] || continue
    if [ -e "$d/.lock" ]; then
      flock -n "$d/.lock" rm -rf --one-file-system "$d" 2>/dev/null || true
    elif [ -n "$(find "$d" -maxdepth 0 -mmin +60 2>/dev/null)" ]; then
      rm -rf --one-file-system "$d" 2>/dev/null || true # killed before it took its lock
    fi
  done
}

bare_workdir() {
  work="$(mktemp -d "$tmp_root/$1.XXXXXX")" || { echo "$bare_tag: cannot make a temporary folder"; return 1; }
  exec {work_lock}>"$work/.lock" && flock "$work_lock"
  chr="$work/root"
}

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
    { echo "$bare_tag: skipped: no debootstrap"; return 77; }
  rm -rf --one-file-system "$base".part.* 2>/dev/null # left by a killed maker (the lock is ours now)
  local part; part="$(mktemp -d "$base.part.XXXXXX")" || return 77
  local log="$work/debootstrap.log"
  echo "$bare_tag: making the bare base $base (debootstrap, 2-3 min)"
  # its own mount namespace: the /proc debootstrap mounts goes away with it, killed or not
  if ! unshare -m --propagation private debootstrap --variant=minbase --include=python3,xz-utils bookworm "$part" \
         http://deb.debian.org/debian >"$log" 2>&1; then
    tail -5 "$log"; keep=1
    echo "$bare_tag: skipped: debootstrap failed (log: $log)"
    rm -rf --one-file-system "$part"
    return 77
  fi
  local p; p="$(bare_problems "$part")"
  [ -z "$p" ] || { echo "$bare_tag: debootstrap made a system that is not bare: $p"; rm -rf --one-file-system "$part"; return 1; }
  date -u +%Y-%m-%dT%H:%M:%SZ >"$part/.mieb-bare"
  if [ -e "$base" ]; then # not bare, or from an older script: replaced (copies hold the shared lock)
    echo "$bare_tag: replacing $base (not bare: $(bare_problems "$base"))"
    mv -T "$base" "$base.old.$$" && rm -rf --one-file-system "$base.old.$$"
  fi
  mv -T "$part" "$base"
}

bare_copy() {
  local rc lock_wait base_lock present
  mkdir -p "$(dirname "$base")"
  exec {base_lock}>>"$base.lock"
  lock_wait=$(scaled 1800)
  flock -s -w "$lock_wait" "$base_lock" || { echo "$bare_tag: FAIL: no shared lock on $base.lock within $lock_wait s"; return 1; }
  if ! base_ok; then
    flock -x -w "$lock_wait" "$base_lock" ||
      { echo "$bare_tag: FAIL: no exclusive lock on $base.lock within $lock_wait s (another run making the base?)"; return 1; }
    if ! base_ok; then
      make_base; rc=$?
      [ $rc = 0 ] || return $rc
    fi
    flock -s "$base_lock"
  fi
  # the run's own system: a copy of the base (reflinks where the file system has them)
  cp -a --reflink=auto "$base" "$chr" || { echo "$bare_tag: FAIL: cannot copy $base to $chr"; return 1; }
  exec {base_lock}>&-
  # the chroot must lack what the device lacks, or the test shows nothing
  present="$(bare_problems "$chr")"
  [ -z "$present" ] || { echo "$bare_tag: $chr (a copy of $base) is not bare: $present"; fail=1; return 1; }
  unshare -m --propagation private mount -t proc proc "$chr/proc" ||
    { echo "$bare_tag: skipped: cannot mount /proc in a private mount namespace (not root?)"; return 77; }
}
