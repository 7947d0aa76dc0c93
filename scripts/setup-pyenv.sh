#!/usr/bin/env bash
# Creates the project's Python virtual environment (.venv, git-ignored) with the
# independent references the tests and benchmarks compare against:
#   pytrec_eval-terrier (trec_eval 9.0.8, what mteb uses), mteb (installed without its
#   heavy model dependencies: only its metric functions are loaded), numpy 2.x, scipy,
#   scikit-learn, h5py, faiss-cpu.
# Idempotent: a stamp file records the requirements that were installed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${MIEB_VENV:-$here/.venv}"
req="$here/scripts/requirements-test.txt"
stamp="$venv/.mieb-req.sha"
want="$(sha256sum "$req" | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$venv/bin/python" ]; then
  exit 0
fi
py="$(command -v -p python3 || command -v python3)"
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q -r "$req"
# mteb's own metric module is the reference; its model stack (torch, datasets, ...) is not needed.
"$venv/bin/python" -m pip install -q --no-deps "$(grep -E '^#mteb' "$req" | sed 's/^#//')"
echo "$want" > "$stamp"
