#!/usr/bin/env bash
# Seed sweeps: the randomized tests again on other data, against the same references.
#   scripts/seed-sweep.sh [SHIFT ...]        (default: 1000 2000 3000)
# For each SHIFT, the randomized metric, solver and end-to-end tests run with every seed they
# draw their data from moved by SHIFT (tests/py/helpers/seedshift.py), and the end-to-end test
# against mteb itself runs on in-memory tasks drawn from other seeds (MIEB_PARITY_SALT).
# Left out: tests whose seeds are the reference's own (test_np_pcg64, test_fewshot_sample
# compare with numpy's generators at the same seed). Needs a build (MIEB_BUILD_DIR, default
# build), .venv and .venv-mteb (scripts/test.sh makes them). Exit 1 when a sweep failed;
# each one's log is in $SWEEP_LOGS (default a temp dir).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here" || exit 1
shifts=("$@")
[ "${#shifts[@]}" -gt 0 ] || shifts=(1000 2000 3000)
export MIEB_BUILD_DIR="${MIEB_BUILD_DIR:-$here/build}"
logs="${SWEEP_LOGS:-$(mktemp -d "${TMPDIR:-/tmp}/mieb-sweep.XXXXXX")}"
mkdir -p "$logs"
mods=(test_retrieval_metrics test_clustering_metrics test_correlation test_clf_metrics test_compositionality
      test_sts test_logreg test_clustering_kmeans test_zeroshot_e2e test_probe_e2e test_multilabel_e2e
      test_clustering_e2e test_retrieval_e2e test_screen_e2e test_mteb_heap)
paths=()
for m in "${mods[@]}"; do paths+=("tests/py/$m.py"); done
fail=0
for s in "${shifts[@]}"; do
  SEED_SHIFT=$s PYTHONPATH="$here/tests/py" .venv/bin/python -m pytest -q -p helpers.seedshift -p no:cacheprovider \
      "${paths[@]}" >"$logs/shift-$s.log" 2>&1
  rc=$?
  MIEB_PARITY_SALT="sweep$s" .venv/bin/python -m pytest -q -s -p no:cacheprovider tests/py/test_mteb_parity.py \
      >"$logs/mteb-salt-$s.log" 2>&1
  rc2=$?
  printf 'shift %-6s seeded tests: %-40s mteb (salt sweep%s): %s\n' "$s" \
      "$(tail -1 "$logs/shift-$s.log")" "$s" "$(tail -1 "$logs/mteb-salt-$s.log")"
  grep -E '^(retrieval|probe|zero-shot|clustering|compositionality|sts) ' "$logs/mteb-salt-$s.log" | sed 's/^/    /'
  [ $rc -eq 0 ] && [ $rc2 -eq 0 ] || fail=1
done
echo "logs: $logs"
exit $fail
