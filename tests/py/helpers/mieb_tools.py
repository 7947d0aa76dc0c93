"""Shared helpers for the Python parity tests: locate the built helper programs and load
reference code. A missing reference or build is an error, never a skip: CI installs them."""
import glob
import os
import subprocess
import sys
import types
from pathlib import Path


def build_dir() -> Path:
    d = os.environ.get("MIEB_BUILD_DIR")
    if not d:
        raise RuntimeError("MIEB_BUILD_DIR is not set (ctest sets it to the build directory)")
    return Path(d)


def tool(name: str) -> Path:
    p = build_dir() / "tests" / name
    if not p.exists():
        raise RuntimeError(f"{p} is missing: build the '{name}' target first")
    return p


def run_tool(name: str, stdin: str, *args: str) -> str:
    res = subprocess.run([str(tool(name)), *args], input=stdin, capture_output=True,
                         text=True, timeout=600)
    if res.returncode != 0:
        raise RuntimeError(f"{name} failed ({res.returncode}): {res.stderr[-2000:]}")
    return res.stdout


def load_mteb_retrieval_metrics():
    """mteb's own _evaluators/retrieval_metrics.py from the venv's mteb (installed without
    its model dependencies, so `import mteb` fails): loaded by path, with a stub for the
    one name it imports from mteb.types."""
    paths = sorted(glob.glob(os.path.join(sys.prefix, "lib", "python3*", "site-packages",
                                          "mteb", "_evaluators", "retrieval_metrics.py")))
    if not paths:
        raise RuntimeError("mteb is not installed in this Python (scripts/setup-pyenv.sh)")
    from typing import Any, NamedTuple

    class RetrievalEvaluationResult(NamedTuple):
        all_scores: Any
        ndcg: Any
        map: Any
        recall: Any
        precision: Any
        naucs: Any
        mrr: Any
        naucs_mrr: Any
        hit_rate: Any

    saved = {k: sys.modules.get(k) for k in ("mteb", "mteb.types")}
    stub_types = types.ModuleType("mteb.types")
    stub_types.RetrievalEvaluationResult = RetrievalEvaluationResult
    sys.modules.setdefault("mteb", types.ModuleType("mteb"))
    sys.modules["mteb.types"] = stub_types
    try:
        import importlib.util

        spec = importlib.util.spec_from_file_location("mteb_retrieval_metrics_ref", paths[0])
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    return mod


def mteb_fewshot_draw(labels, spl, n_exp):
    """mteb 2.26 AbsTaskClassification._undersample_data as _evaluate_subset calls it: one index
    list, shuffled in place by a fresh RandomState(42) per experiment (so the permutations
    compose), then the first `spl` rows of each label in that order."""
    from collections import defaultdict

    import numpy as np

    idxs, out = list(range(len(labels))), []
    for _ in range(n_exp):
        np.random.RandomState(42).shuffle(idxs)
        counter, sel = defaultdict(int), []
        for i in idxs:
            if counter[labels[i]] < spl:
                sel.append(i)
                counter[labels[i]] += 1
        out.append(sel)
    return out


def run_mteb_script(mteb_py: Path, script: Path, *args: str, cache: Path, timeout: int) -> subprocess.CompletedProcess:
    """Runs one of the test drivers in .venv-mteb (the pinned mteb with its whole stack), offline,
    with mteb's cache under `cache`; a failing driver is an AssertionError with its stderr."""
    if not mteb_py.exists():
        raise RuntimeError(f"{mteb_py} is missing: run scripts/setup-mteb-env.sh (scripts/test.sh does)")
    env = dict(os.environ, HF_DATASETS_DISABLE_PROGRESS_BARS="1", HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               TRANSFORMERS_OFFLINE="1", MTEB_CACHE=str(cache), TQDM_DISABLE="1")
    res = subprocess.run([str(mteb_py), str(script), *args], capture_output=True, text=True, env=env, timeout=timeout)
    if res.returncode != 0:
        raise AssertionError(f"{script.name} failed ({res.returncode}):\n{res.stderr[-8000:]}")
    return res
