#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang, ASan + UBSan + libFuzzer) and runs
# each for a bounded time on seeds from `mieb-eval synth` (tiny scale), the configs and
# tests/fuzz/seeds/. Fails on any crash, leak, UBSan report, timeout or out-of-memory;
# the input that did it is left in $FUZZ_WORK/artifacts/ (commit it under
# tests/fuzz/regressions/<target>/ with the fix: the fuzz.<target> ctest entry replays it).
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [target ...]      (default 20 s, every target)
# Env: FUZZ_BUILD (default build-fuzz), FUZZ_WORK (default a temp dir, kept on failure),
#      FUZZ_JOBS (parallel fuzzers, default 2), FUZZ_SEED (libFuzzer -seed, default 1),
#      FUZZ_CI=1: also stop each target after a fixed number of inputs (about 20 s each on
#      a 2-core CI machine), so that with the fixed seed a CI run is repeatable.
# Inputs found to crash inside HDF5 itself or to hang it get a guard in front of the HDF5 call
# (declared in host/hdf5/h5_guard.h: h5_guard_headers.c, h5_guard_attrs.c, h5_guard_heaps.c,
# h5_guard_storage.c)
# and become regressions; one waiting for its guard goes to tests/fuzz/pending/ (not replayed;
# docs/BAD_INPUT.md lists it).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
secs="${1:-20}"
shift || true
targets=("$@")
if [ "${#targets[@]}" -eq 0 ]; then
  targets=(taskdata emb model_meta registry results cli)
fi
build="${FUZZ_BUILD:-$here/build-fuzz}"
work="${FUZZ_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/mieb-fuzz.XXXXXX")}"
jobs="${FUZZ_JOBS:-2}"
command -v clang >/dev/null || { echo "fuzz.sh: clang not found (scripts/install-deps.sh installs it)" >&2; exit 1; }

CC=clang cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMIEB_FUZZ=ON -DMIEB_CUDA=OFF \
  -DCMAKE_C_FLAGS="-fno-sanitize-recover=undefined" >/dev/null
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" --target mieb-eval $(printf 'fuzz_%s ' "${targets[@]}") >/dev/null

# ---- seed corpora ----
mkdir -p "$work/artifacts"
synth() { "$build/mieb-eval" synth --scale 0.001 --dim 4 \
  --tasks CIRRIT2IRetrieval,Country211,VOC2007,CIFAR10ZeroShot,CIFAR10Clustering,AROCocoOrder,STS12VisualSTS "$@" 2>/dev/null; }
synth --out "$work/s-f32" >/dev/null
synth --out "$work/s-f16" --dtype f16 --compress >/dev/null
synth --out "$work/s-bf16" --dtype bf16 --model-sim MaxSim >/dev/null
synth --out "$work/s-shard" --shards 2 >/dev/null
"$build/mieb-eval" run --task-data "$work/s-f32/task-data" --embeddings "$work/s-f32/embeddings" \
  -t CIRRIT2IRetrieval STS12VisualSTS Country211 --output-folder "$work/s-f32/out" >/dev/null 2>&1 || true
seed() { mkdir -p "$work/corpus/$1"; }
for t in "${targets[@]}"; do
  seed "$t"
  [ -d "$here/tests/fuzz/seeds/$t" ] && cp "$here/tests/fuzz/seeds/$t"/* "$work/corpus/$t/"
  [ -d "$here/tests/fuzz/regressions/$t" ] && cp "$here/tests/fuzz/regressions/$t"/* "$work/corpus/$t/" 2>/dev/null || true
done
cp "$work/s-f32/task-data/"*.h5 "$work/corpus/taskdata/" 2>/dev/null || true
# emb: one selector byte (the ROLES row of fuzz_emb.c; bit 0x80: two shards) + the file(s)
emb_seed() { # sel suite task role
  local sel=$1 s=$2 task=$3 role=$4 d="$work/$2/embeddings/$3/test/default"
  [ -d "$work/corpus/emb" ] || return 0
  if [ -f "$d/$role.h5" ]; then
    { printf "\\x$(printf %02x "$sel")"; cat "$d/$role.h5"; } >"$work/corpus/emb/$s-$task-$role"
  elif [ -f "$d/$role-00000-of-00002.h5" ]; then
    local n; n=$(stat -c %s "$d/$role-00000-of-00002.h5")
    { printf "\\x$(printf %02x $((sel | 128)))"
      printf "\\x$(printf %02x $((n & 255)))\\x$(printf %02x $(((n >> 8) & 255)))\\x$(printf %02x $(((n >> 16) & 255)))\\x00"
      cat "$d/$role-00000-of-00002.h5" "$d/$role-00001-of-00002.h5"; } >"$work/corpus/emb/$s-$task-$role"
  fi
}
for s in s-f32 s-f16 s-bf16 s-shard; do
  emb_seed 0 $s CIRRIT2IRetrieval queries; emb_seed 1 $s CIRRIT2IRetrieval corpus
  emb_seed 2 $s Country211 train; emb_seed 3 $s CIFAR10ZeroShot candidate_labels
  emb_seed 4 $s STS12VisualSTS sentence1; emb_seed 5 $s AROCocoOrder texts
done
[ -d "$work/corpus/model_meta" ] && cp "$work/s-bf16/embeddings/model_meta.json" "$work/corpus/model_meta/synth.json"
if [ -d "$work/corpus/registry" ]; then
  cp "$here/configs/tasks.json" "$work/corpus/registry/tasks.json"
  { cat "$here/configs/tasks.json"; printf '\n#benchmarks#\n'; cat "$here/configs/benchmarks.json"; } \
    >"$work/corpus/registry/tasks+benchmarks.json"
fi
if [ -d "$work/corpus/results" ]; then
  find "$work/s-f32/out" -name '*.json' -exec cp {} "$work/corpus/results/" \; 2>/dev/null || true
fi

# ---- run ----
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
export ASAN_OPTIONS="suppressions=$here/tests/fuzz/asan.supp:$ASAN_OPTIONS"
export LSAN_OPTIONS="suppressions=$here/tests/fuzz/lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
declare -A ci_runs=([taskdata]=2500 [emb]=1000 [model_meta]=5000 [registry]=3000 [results]=3000 [cli]=2000)
run_one() {
  local t=$1 runs=()
  if [ "${FUZZ_CI:-0}" = 1 ]; then runs=(-runs="${ci_runs[$t]:-1000}"); fi
  mkdir -p "$work/new/$t"
  # -malloc_limit_mb: HDF5 itself tries allocations sized by corrupt headers (they fail
  # and it reports an error); a single allocation above 4 GiB is still a finding.
  "$build/tests/fuzz/fuzz_$t" "$work/new/$t" "$work/corpus/$t" -max_total_time="$secs" "${runs[@]}" \
    -seed="${FUZZ_SEED:-1}" -timeout=20 \
    -rss_limit_mb=4096 -malloc_limit_mb=4096 -close_fd_mask=1 -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/$t-" >"$work/$t.log" 2>&1
}
start=$(date +%s)
fail=0
pids=()
names=()
for t in "${targets[@]}"; do
  run_one "$t" & pids+=($!); names+=("$t")
  if [ "${#pids[@]}" -ge "$jobs" ]; then
    if ! wait "${pids[0]}"; then fail=1; echo "fuzz.sh: fuzz_${names[0]} FAILED:" >&2; grep -A30 -m1 'ERROR\|==ERROR\|runtime error\|deadly signal\|out-of-memory\|timeout' "$work/${names[0]}.log" >&2 || tail -30 "$work/${names[0]}.log" >&2; fi
    pids=("${pids[@]:1}"); names=("${names[@]:1}")
  fi
done
for i in "${!pids[@]}"; do
  if ! wait "${pids[$i]}"; then fail=1; echo "fuzz.sh: fuzz_${names[$i]} FAILED:" >&2; grep -A30 -m1 'ERROR\|runtime error\|deadly signal\|out-of-memory\|timeout' "$work/${names[$i]}.log" >&2 || tail -30 "$work/${names[$i]}.log" >&2; fi
done
for t in "${targets[@]}"; do
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t.log" | tail -1)
  echo "fuzz.sh: fuzz_$t: ${execs:-?} inputs (limit ${secs}s)"
done
echo "fuzz.sh: $(( $(date +%s) - start ))s of fuzzing"
if [ "$fail" -ne 0 ]; then
  echo "fuzz.sh: FAILED; inputs in $work/artifacts/, logs in $work/" >&2
  exit 1
fi
[ -n "${FUZZ_WORK:-}" ] || rm -rf "$work"
