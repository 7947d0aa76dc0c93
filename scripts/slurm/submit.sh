#!/usr/bin/env bash
# submit.sh - submit a mieb-eval job array and its merge job to Slurm (README "Cluster users").
#
#   scripts/slurm/submit.sh --task-data DIR --embeddings DIR --output-folder DIR
#       [--num-shards N] [--corpus-parts K] [--partials-dir DIR] [--device cuda|cpu|...]
#       [--bin PATH] [--logs DIR] [--max-parallel M] [--cpus-per-task C]
#       [--sbatch ARG]... [--merge-sbatch ARG]...
#       (-t TASK... | -b BENCHMARK)... [-- RUN-OPTIONS...]
#
# Submits mieb-array.sbatch as an array of N*K elements (element e: task shard e / K, corpus
# part e % K) and, when K > 1, mieb-merge.sbatch with --dependency=afterok:<array> (it runs
# once every element has succeeded; --kill-on-invalid-dep=yes cancels it if one fails).
# Prints `array_job=ID` and `merge_job=ID` (or `merge_job=none`) on stdout.
#   --num-shards N      task shards (default 1)        --corpus-parts K  corpus parts (default 1)
#   --partials-dir DIR  default OUTPUT/partials         --device D        default cuda
#   --bin PATH          mieb-eval to run (default: $MIEB_BIN, else mieb-eval on PATH, else
#                       this checkout's build/mieb-eval); it must be reachable from the nodes
#   --logs DIR          Slurm logs, one per element, appended across requeues (default OUTPUT/slurm-logs)
#   --max-parallel M    at most M elements run at once (the array's %M throttle)
#   --cpus-per-task C   CPUs per element; each element then runs `mieb-eval run --threads C`
#   --sbatch ARG        an sbatch option for the jobs (repeatable): --sbatch --time=04:00:00
#                       --sbatch --account=X. Options that choose GPUs or a partition
#                       (--partition/-p, --gres, --gpus*, --constraint/-C) go to the array only:
#                       merging is CPU work on small files and should not hold a GPU node
#   --merge-sbatch ARG  an sbatch option for the merge job only (--merge-sbatch --partition=cpu)
#   -- RUN-OPTIONS      more `mieb-eval run` options for the array (--mem-limit 32G, ...)
# CPU clusters: --device cpu --sbatch --gres=none. Paths must be visible from every node
# (a shared file system); every element writes into the same output folder.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

die() { echo "submit.sh: $*" >&2; exit 2; }
abspath() { realpath -m -- "$1"; }

# No argument may hold a control character (mieb-eval refuses them too): a path ending in a
# newline would create a folder of that name and split the lines of every log that shows it.
# The refusal shows the word escaped (printf %q), never raw.
for a in "$@" "${MIEB_BIN:-}"; do
  if [[ "$a" == *[[:cntrl:]]* ]]; then die "an argument holds a control character: $(printf '%q' "$a")"; fi
done

task_data="" emb="" out="" partials="" logs="" device="cuda" bin="${MIEB_BIN:-}"
n_shards=1 n_parts=1 max_parallel="" cpus=""
sel=() run_extra=() sb=() sb_merge=()
while [ $# -gt 0 ]; do
  case "$1" in
    --task-data) task_data="${2:?--task-data needs a value}"; shift 2 ;;
    --embeddings) emb="${2:?--embeddings needs a value}"; shift 2 ;;
    --output-folder) out="${2:?--output-folder needs a value}"; shift 2 ;;
    --num-shards) n_shards="${2:?--num-shards needs a value}"; shift 2 ;;
    --corpus-parts) n_parts="${2:?--corpus-parts needs a value}"; shift 2 ;;
    --partials-dir) partials="${2:?--partials-dir needs a value}"; shift 2 ;;
    --device) device="${2:?--device needs a value}"; shift 2 ;;
    --bin) bin="${2:?--bin needs a value}"; shift 2 ;;
    --logs) logs="${2:?--logs needs a value}"; shift 2 ;;
    --max-parallel) max_parallel="${2:?--max-parallel needs a value}"; shift 2 ;;
    --cpus-per-task) cpus="${2:?--cpus-per-task needs a value}"; shift 2 ;;
    --sbatch) sb+=("${2:?--sbatch needs a value}"); shift 2 ;;
    --merge-sbatch) sb_merge+=("${2:?--merge-sbatch needs a value}"); shift 2 ;;
    -b|--benchmark) sel+=("$1" "${2:?$1 needs a value}"); shift 2 ;;
    -t|--tasks)
      sel+=("$1"); shift
      if [ $# -eq 0 ] || [ "${1#-}" != "$1" ]; then die "-t needs at least one task name"; fi
      while [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; do sel+=("$1"); shift; done ;;
    --) shift; run_extra=("$@"); break ;;
    -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
if [ -z "$task_data" ] || [ -z "$emb" ] || [ -z "$out" ]; then
  die "--task-data, --embeddings and --output-folder are required"
fi
[ "${#sel[@]}" -gt 0 ] || die "name the tasks with -t TASK... or -b BENCHMARK"
[[ "$n_shards" =~ ^[1-9][0-9]*$ ]] || die "--num-shards must be a whole number >= 1"
[[ "$n_parts" =~ ^[1-9][0-9]*$ ]] || die "--corpus-parts must be a whole number >= 1"
[ -z "$max_parallel" ] || [[ "$max_parallel" =~ ^[1-9][0-9]*$ ]] || die "--max-parallel must be a whole number >= 1"
[ -z "$cpus" ] || [[ "$cpus" =~ ^[1-9][0-9]*$ ]] || die "--cpus-per-task must be a whole number >= 1"
command -v sbatch >/dev/null || die "sbatch not found (run this on a Slurm login node)"
if [ -z "$bin" ]; then
  bin="$(command -v mieb-eval || true)"
  [ -n "$bin" ] || bin="$here/../../build/mieb-eval"
fi
[ -x "$bin" ] || die "mieb-eval not found or not executable: $bin (use --bin PATH)"

out="$(abspath "$out")"
logs="$(abspath "${logs:-$out/slurm-logs}")"
mkdir -p "$out" "$logs"  # Slurm does not create the log folder
# what the batch scripts read (sbatch --export=ALL hands them over)
MIEB_BIN="$(abspath "$bin")"
MIEB_TASK_DATA="$(abspath "$task_data")"
MIEB_EMBEDDINGS="$(abspath "$emb")"
MIEB_PARTIALS_DIR="$(abspath "${partials:-$out/partials}")"
export MIEB_BIN MIEB_TASK_DATA MIEB_EMBEDDINGS MIEB_PARTIALS_DIR MIEB_OUTPUT="$out" MIEB_DEVICE="$device"
export MIEB_NUM_SHARDS="$n_shards" MIEB_CORPUS_PARTS="$n_parts"

n=$((n_shards * n_parts))
# the array gets every --sbatch option; the merge job not those that pick GPUs or a partition
sb_array=("${sb[@]}") sb_common=()
for a in "${sb[@]}"; do
  case "$a" in
    --partition=*|-p*|--gres=*|--gpus=*|--gpus-per-*|--gpu-bind=*|--constraint=*|-C*|--cpus-per-gpu=*|--mem-per-gpu=*) ;;
    *) sb_common+=("$a") ;;
  esac
done
[ -n "$cpus" ] && sb_array+=("--cpus-per-task=$cpus")
array_spec="0-$((n - 1))${max_parallel:+%$max_parallel}"
array_args=("${sel[@]}")
[ "${#run_extra[@]}" -gt 0 ] && array_args+=(-- "${run_extra[@]}")
# --parsable prints "jobid" or "jobid;cluster"
array_id="$(sbatch --parsable --export=ALL --array="$array_spec" --output="$logs/%x-%A_%a.out" \
            "${sb_array[@]}" "$here/mieb-array.sbatch" "${array_args[@]}")"
array_id="${array_id%%;*}"
echo "submit.sh: array job $array_id: $n element(s) ($n_shards task shard(s) x $n_parts corpus part(s))${max_parallel:+, at most $max_parallel at once}, logs in $logs" >&2
echo "array_job=$array_id"
if [ "$n_parts" -gt 1 ]; then
  merge_id="$(sbatch --parsable --export=ALL --dependency="afterok:$array_id" --kill-on-invalid-dep=yes \
              --output="$logs/%x-%j.out" "${sb_common[@]}" "${sb_merge[@]}" "$here/mieb-merge.sbatch" "${sel[@]}")"
  merge_id="${merge_id%%;*}"
  echo "submit.sh: merge job $merge_id runs after every element of $array_id has succeeded" >&2
  echo "merge_job=$merge_id"
else
  echo "merge_job=none"
fi
