#!/usr/bin/env bash
# The main job on bundled data: installs what is missing, builds, generates a small
# deterministic synthetic suite, scores it, and prints where the results are.
#   scripts/demo.sh [OUT_DIR]        (default: out/demo)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$here/out/demo}"
MIEB_SKIP_PY=1 "$here/scripts/install-deps.sh"
build="$("$here/scripts/build.sh" "$here/build")"
bin="$build/mieb-eval"
tasks=(CIRRIT2IRetrieval CUB200I2IRetrieval BLINKIT2IMultiChoice VidoreArxivQARetrieval WITT2IRetrieval)
rm -rf "$out"
"$bin" synth --out "$out/suite" --seed 7 --scale 0.05 --tasks "$(IFS=,; echo "${tasks[*]}")"
results="$("$bin" run --task-data "$out/suite/task-data" --embeddings "$out/suite/embeddings" \
             -t "${tasks[@]}" --output-folder "$out")"
echo
echo "main scores:"
for t in "${tasks[@]}"; do
  python3 - "$results/$t.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for split, subs in r["scores"].items():
    vals = [s["main_score"] for s in subs]
    print(f"  {r['task_name']:<28} {split:<6} {len(vals):>2} subset(s)  mean main_score {sum(vals)/len(vals):.6f}")
PY
done
echo
echo "results: $results"
