"""configs/tasks.json held to the installed mteb itself, task by task.

docs/PROTOCOLS.md was read from the mteb 2.20.0 source; the parity target is the pinned release (tools/requirements-mteb-lock.txt), and where
the two differ the installed release wins (PROTOCOLS.md, preamble). helpers/mteb_registry_dump.py runs in
.venv-mteb and reports what the installed mteb says of each of the 132 tasks: type, main score,
splits, subsets, languages, dataset path and revision, the class attributes that decide the
scoring (shots, experiments, k values, skip_first_result, STS score range, columns), the
evaluator model's parameters, the aggregates' sub-tasks, and the sizes its descriptive
statistics state. Every one must equal the registry's, so the next mteb bump shows each drift
here instead of in a user's results. Nothing is downloaded.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from helpers.mieb_tools import run_mteb_script

SRC = Path(os.environ.get("MIEB_SOURCE_DIR", Path(__file__).resolve().parents[2]))
MTEB_PY = Path(os.environ.get("MIEB_MTEB_VENV", SRC / ".venv-mteb")) / "bin" / "python"
REGISTRY = json.loads((SRC / "configs" / "tasks.json").read_text())
BENCHMARKS = json.loads((SRC / "configs" / "benchmarks.json").read_text())
RETRIEVAL_TYPES = {"Any2AnyRetrieval", "Any2AnyMultilingualRetrieval", "DocumentUnderstanding", "VisionCentricQA"}

# The methods a task class may override without changing how it is scored: they shape the
# data, which mieb-export takes from mteb's own loaders. Any other override (a task's own
# _evaluate_subset, say) would need its own scoring here.
DATA_METHODS = {"load_data", "dataset_transform", "get_candidate_labels"}

# The evaluators mieb-eval implements (PROTOCOLS.md §2 and §3, docs/PARITY.md): a change in
# any of these parameters would make mteb fit something else than host/emulation/logreg_*.c or
# multilabel_knn.c computes.
LOGREG = {"C": 1.0, "fit_intercept": True, "max_iter": 100, "solver": "lbfgs", "tol": 0.0001, "class_weight": None,
          "dual": False, "intercept_scaling": 1, "warm_start": False}
KNN = {"n_neighbors": 5, "weights": "uniform", "metric": "minkowski", "p": 2, "metric_params": None,
       "algorithm": "auto"}


@pytest.fixture(scope="module")
def mteb_view(tmp_path_factory):
    home = tmp_path_factory.mktemp("mteb_registry")
    res = run_mteb_script(MTEB_PY, SRC / "tests/py/helpers/mteb_registry_dump.py", str(SRC / "configs/tasks.json"),
                          cache=home / "mteb-cache", timeout=600)
    view = json.loads(res.stdout)
    return view["mteb_version"], {t["name"]: t for t in view["tasks"]}


def test_pinned_release_is_the_one_installed(mteb_view):
    version, _ = mteb_view
    lock = (SRC / "tools" / "requirements-mteb-lock.txt").read_text().split()
    assert f"mteb=={version}" in lock
    assert BENCHMARKS["mteb_version"] == version


def test_every_task_exists_in_mteb(mteb_view):
    _, tasks = mteb_view
    assert [t["name"] for t in REGISTRY] == list(tasks)
    missing = {n: t["error"] for n, t in tasks.items() if "error" in t}
    assert not missing, missing


def _differences(reg: dict, m: dict) -> list[str]:
    out = []

    def same(what, ours, theirs):
        if ours != theirs:
            out.append(f"{reg['name']}: {what}: registry {ours!r}, mteb {theirs!r}")

    for key in ("type", "main_score", "eval_splits", "category", "modalities"):
        same(key, reg[key], m[key])
    params, cols = reg.get("params") or {}, reg.get("columns") or {}
    noted = [n.split(": ", 1)[1] for n in reg.get("notes", []) if n.startswith("overrides methods: ")]
    callables = sorted(x.strip() for n in noted for x in n.split(",") if x.strip() != "evaluator")
    same("overridden methods", callables, m["overrides"])
    same("overrides outside data loading", [], sorted(set(m["overrides"]) - DATA_METHODS))
    if "aggregate_of" in m:
        # An aggregate names its sub-task's dataset and kept subsets; mteb's own metadata for
        # it is a placeholder (revision "1", subset "default": docs/PARITY.md).
        sub = m["aggregate_of"]
        same("aggregated tasks", [BENCHMARKS["aggregate_tasks"].get(reg["name"])], [s["name"] for s in sub])
        same("kept subsets", reg["hf_subsets"], sub[0]["hf_subsets"])
        same("hf_path", reg["hf_path"], sub[0]["hf_path"])
        same("hf_revision", reg["hf_revision"], sub[0]["hf_revision"])
        return out
    for key in ("hf_subsets", "eval_langs", "hf_path", "hf_revision"):
        same(key, reg[key], m[key])
    for key in ("samples_per_label", "n_experiments", "train_split", "k_values", "skip_first_result",
                "ignore_identical_ids", "min_score", "max_score"):
        if key in params or key in m:
            same(f"params.{key}", params.get(key), m.get(key))
    for key in ("input_column_name", "label_column_name"):
        if key in cols:
            same(f"columns.{key}", cols[key], m.get(key))
    if reg["type"] == "ImageClassification":
        knn = "KNeighbors" in params.get("evaluator_model", "")
        same("abstask", "AbsTaskMultilabelClassification" if knn else "AbsTaskClassification", m["abstask"][0])
        ev = m.get("evaluator_model") or {}
        want_cls, want = ("KNeighborsClassifier", KNN) if knn else ("LogisticRegression", LOGREG)
        same("evaluator class", want_cls, ev.get("class"))
        got = ev.get("params", {})
        same("evaluator params", want, {k: got.get(k) for k in want})
        if not knn:  # L2: 'l2', or sklearn >= 1.8's deprecated penalty with l1_ratio 0
            l2 = got.get("penalty") == "l2" or (got.get("penalty") == "deprecated" and got.get("l1_ratio") in (0, None))
            same("evaluator penalty", "l2", "l2" if l2 else f"{got.get('penalty')}/{got.get('l1_ratio')}")
    stats = m.get("stats") or {}
    if reg["type"] in RETRIEVAL_TYPES:
        for key in ("n_queries", "n_corpus"):
            if key in stats:
                same(key, reg[key], stats[key])
    elif reg["type"] in ("ImageClassification", "ZeroShotClassification", "ImageClustering"):
        for key, theirs in (("n_test", "num_samples"), ("n_train", "train_samples"), ("n_classes", "unique_labels")):
            if theirs in stats and (key != "n_train" or reg["type"] == "ImageClassification"):
                same(key, reg[key], stats[theirs])
    return out


def test_registry_equals_installed_mteb(mteb_view):
    _, tasks = mteb_view
    diffs = [d for reg in REGISTRY for d in _differences(reg, tasks[reg["name"]])]
    assert not diffs, "\n".join(diffs)


def test_the_comparison_sees_a_drift(mteb_view):
    """The check itself can fail: altered copies of registry entries are reported."""
    _, tasks = mteb_view
    by_name = {t["name"]: t for t in REGISTRY}
    cases = [("Birdsnap", lambda t: t["params"].__setitem__("samples_per_label", 8), "params.samples_per_label"),
             ("RP2kI2IRetrieval", lambda t: t["params"].__setitem__("skip_first_result", False),
              "params.skip_first_result"),
             ("CIRRIT2IRetrieval", lambda t: t.__setitem__("hf_revision", "0" * 40), "hf_revision"),
             ("VOC2007", lambda t: t["params"].__setitem__("evaluator_model", "LogisticRegression()"), "abstask"),
             ("VisualSTS17Multilingual", lambda t: t["hf_subsets"].pop(), "kept subsets"),
             ("STS12VisualSTS", lambda t: t["params"].__setitem__("max_score", 1), "params.max_score"),
             ("SugarCrepe", lambda t: t.__setitem__("notes", []), "overridden methods")]
    for name, alter, what in cases:
        reg = json.loads(json.dumps(by_name[name]))
        alter(reg)
        found = _differences(reg, tasks[name])
        assert any(f": {what}:" in d for d in found), (name, found)
    # and a scoring method that a future mteb overrides in a task class
    theirs = dict(tasks["SugarCrepe"], overrides=tasks["SugarCrepe"]["overrides"] + ["_evaluate_subset"])
    found = _differences(by_name["SugarCrepe"], theirs)
    assert any(": overrides outside data loading:" in d for d in found), found
