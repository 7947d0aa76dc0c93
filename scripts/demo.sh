#!/usr/bin/env bash
# The main job on bundled data: installs what is missing, builds, generates a small
# deterministic synthetic MIEB(lite) suite (every task of a family this build scores),
# scores the whole benchmark for two synthetic "models" (cosine and dot similarity), prints
# the leaderboard summary and writes the HTML report, and says where results are.
#   scripts/demo.sh [OUT_DIR]        (default: out/demo)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$here/out/demo}"
bench="MIEB(lite)"
MIEB_SKIP_PY=1 "$here/scripts/install-deps.sh"
build="$("$here/scripts/build.sh" "$here/build")"
bin="$build/mieb-eval"
rm -rf "$out"
# the benchmark's tasks whose family this build scores (synth skips the others)
tasks="$("$bin" list-tasks -b "$bench" | awk '$3 == "supported" {print $1}' | paste -sd, -)"
"$bin" synth --out "$out/suite" --seed 7 --scale 0.02 --dim 64 --tasks "$tasks"
# a second "model" to compare with: the same embeddings scored with the dot product
# instead of cosine similarity, under its own name (same task data, so deltas mean something)
"$bin" synth --out "$out/suite-dot" --seed 7 --scale 0.02 --dim 64 --model-sim dot --tasks "$tasks" 2>/dev/null
cat > "$out/suite-dot/embeddings/model_meta.json" <<'JSON'
{"name": "mieb-synth/synthetic-encoder-dot", "revision": "0000000000000000000000000000000000000000", "similarity_fn_name": "dot"}
JSON
results=()
for emb in "$out/suite/embeddings" "$out/suite-dot/embeddings"; do
  set +e
  r="$("$bin" run --task-data "$out/suite/task-data" --embeddings "$emb" -b "$bench" --output-folder "$out")"
  rc=$?
  set -e
  if [ "$rc" -ne 0 ]; then
    echo "demo: mieb-eval run exited with status $rc" >&2
    exit "$rc"
  fi
  results+=("$r")
done
echo
# (results/ is named, not $out: a JSON file at the top of a folder makes summary and report
# take that folder for a revision folder, and summary.json is written there)
"$bin" summary "$out/results" -b "$bench" --csv "$out/summary.csv" --json "$out/summary.json"
report="$("$bin" report "$out/results" -b "$bench" --html "$out/report.html")"
echo
printf 'results: %s\n' "${results[@]}"
echo "summary: $out/summary.csv, $out/summary.json"
echo "report:  $report (one self-contained page: open it in a browser)"
