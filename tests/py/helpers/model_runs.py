"""tools/mieb-eval-model run from a test: its environment (.venv-mteb, offline, plain progress)
and the result files of a run with their times set aside, to compare two runs."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

SRC = Path(os.environ.get("MIEB_SOURCE_DIR", Path(__file__).resolve().parents[3]))
MTEB_PY = Path(os.environ.get("MIEB_MTEB_VENV", SRC / ".venv-mteb")) / "bin" / "python"
TOOL = SRC / "tools" / "mieb-eval-model"
VOLATILE = re.compile(r'\n  "(evaluation_time|date|evaluation_phases|kg_co2_emissions)": (\[.*?\n  \]|[^\n]*?)(?=,?\n)',
                      re.S)
# Variables of the test process that would change what a run does.
_DROPPED = ("MIEB_REGISTRY", "MIEB_EVAL_MODEL_KILL_AFTER_CALLS", "MIEB_TEST_ENCODER_FAULT", "MIEB_TEST_ENCODER_MARK",
            "MIEB_TEST_ENCODER_SLOW", "LD_PRELOAD")


def model_env(**extra: str) -> dict[str, str]:
    """The environment of a run: .venv-mteb's Python, tests/py on the path, nothing downloaded."""
    if not MTEB_PY.exists():
        raise RuntimeError(f"{MTEB_PY} is missing: run scripts/setup-mteb-env.sh (scripts/test.sh does)")
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED}
    env.update(MIEB_EXPORT_PYTHON=str(MTEB_PY), PYTHONPATH=str(SRC / "tests/py"),
               HF_DATASETS_DISABLE_PROGRESS_BARS="1", HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               TRANSFORMERS_OFFLINE="1", TQDM_DISABLE="1", TOKENIZERS_PARALLELISM="false",
               MIEB_EVAL_MODEL_PROGRESS_INTERVAL="0")  # a plain progress line at every batch
    env.update(extra)
    return env


def run_model(cmd: list[str], **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, env=model_env(**env), timeout=900)


def result_files(out: Path) -> dict[str, str]:
    """Result files of a run, as text without the volatile members."""
    files = {}
    for p in sorted((out / "results").rglob("*.json")):
        if ".mieb-eval" in p.parts:  # the run manifests: one per run, with times and pids
            continue
        files[str(p.relative_to(out))] = VOLATILE.sub("", p.read_text())
    return files
