#!/usr/bin/env bash
# Creates .venv-mteb (git-ignored): mteb 2.26.24 with its whole model stack (torch, torchvision,
# datasets, sentence-transformers, ...) from PyPI, for mieb-export, the replay model and the end-to-end
# parity test (tests/py/test_mteb_parity.py). .venv (scripts/setup-pyenv.sh) keeps mteb without
# its dependencies; this one runs mteb.evaluate itself.
#
# Installs tools/requirements-mteb-lock.txt with --no-deps: every package pinned, less triton,
# cuda-bindings and cuda-pathfinder, which torch on the CPU never loads (about 1 GB saved).
# PyPI's Linux torch still needs its nvidia-* libraries to import (measured: without them
# `import torch` fails on libcufile.so.0), so those stay. About 5 GB on disk.
# Idempotent: a stamp records the lock that was installed; a rerun with the same lock is instant.
#   MIEB_MTEB_VENV=DIR  another location
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${MIEB_MTEB_VENV:-$here/.venv-mteb}"
lock="$here/tools/requirements-mteb-lock.txt"
stamp="$venv/.mieb-lock.sha"
want="$(cat "$lock" "${BASH_SOURCE[0]}" | sha256sum | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$venv/bin/python" ]; then
  exit 0
fi
py="$(command -v -p python3 || command -v python3)"
echo "setup-mteb-env: installing mteb and its stack into $venv (a few minutes on first run)" >&2
rm -f "$stamp"
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q --no-deps -r "$lock"
# The lock must be complete: import what the exporter and the test use, and do one torch op.
"$venv/bin/python" - <<'PY'
import h5py, numpy, PIL, datasets, sentence_transformers, torch, torchvision, mteb
assert float(torch.ones(3) @ torch.ones(3)) == 3.0
# torchvision's compiled operators load against this torch (an ABI mismatch fails here)
boxes = torch.tensor([[0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.0]])
assert torchvision.ops.nms(boxes, torch.tensor([0.9, 0.8]), 0.5).tolist() == [0]
# mteb asks every model with an image modality for its "image" extra: a CLIP model must load
mteb.get_model_meta("openai/clip-vit-base-patch32")._check_requirements()
print(f"setup-mteb-env: mteb {mteb.__version__}, torch {torch.__version__}, numpy {numpy.__version__}")
PY
echo "$want" > "$stamp"
