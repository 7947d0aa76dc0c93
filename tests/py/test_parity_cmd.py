"""`mieb-eval parity` on hand-made result folders, against a Python statement of its rule:
per family, exact after Python's round(x, 6) (retrieval, zero-shot, compositionality, STS) or
|a - b| <= 1e-4 (probe, clustering); NaN equals NaN; anything on one side only is a mismatch."""

from __future__ import annotations

import json
import math
import random
import re
import subprocess
from pathlib import Path

import pytest

from helpers.mieb_tools import build_dir

# a registry task of each family
FAMILY_TASK = {
    "retrieval": "CIRRIT2IRetrieval",
    "probe": "Birdsnap",
    "zero-shot": "CIFAR10ZeroShot",
    "clustering": "CIFAR10Clustering",
    "compositionality": "Winoground",
    "sts": "STS12VisualSTS",
}
TOL = {"probe": 1e-4, "clustering": 1e-4}


def parity(ref: Path, cand: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(build_dir() / "mieb-eval"), "parity", "--reference", str(ref), "--candidate",
                           str(cand), *extra], capture_output=True, text=True, timeout=120)


def write_result(root: Path, task: str, entries: dict[str, list[dict]], model="org/model", rev="r1") -> None:
    d = root / "results" / model.replace("/", "__") / rev
    d.mkdir(parents=True, exist_ok=True)
    (d / "model_meta.json").write_text(json.dumps({"name": model, "revision": rev, "similarity_fn_name": "cosine"}))
    doc = {"dataset_revision": "x", "task_name": task, "mteb_version": "2.26.24", "scores": entries,
           "evaluation_time": random.random(), "kg_co2_emissions": None}
    # json.dump writes NaN literally, as mteb's files do
    (d / f"{task}.json").write_text(json.dumps(doc, indent=2))


def entry(subset="default", **scores) -> dict:
    return {**scores, "hf_subset": subset, "languages": ["eng-Latn"]}


def base_scores(family: str) -> dict:
    if family == "retrieval":
        return {"ndcg_at_10": 0.51234, "map_at_10": 0.4, "mrr_at_10": 0.612345, "nauc_ndcg_at_10_max": -0.123456,
                "main_score": 0.51234}
    if family == "probe":
        return {"accuracy": 0.75, "f1": 0.7, "ap": float("nan"), "main_score": 0.75,
                "scores_per_experiment": [{"accuracy": 0.7, "ap": None}, {"accuracy": 0.8, "ap": None}]}
    if family == "clustering":
        return {"v_measure": 0.4, "nmi": 0.4, "ari": 0.2, "cluster_accuracy": 0.5, "main_score": 0.4}
    if family == "compositionality":
        return {"image_acc": 0.25, "text_acc": 0.5, "accuracy": 0.125, "main_score": 0.5}
    if family == "sts":
        return {"pearson": 0.81, "spearman": 0.8, "cosine_pearson": 0.81, "cosine_spearman": 0.8,
                "main_score": 0.8}
    return {"accuracy": 0.3, "f1": 0.25, "ap": float("nan"), "main_score": 0.3}


@pytest.fixture()
def pair(tmp_path):
    ref, cand = tmp_path / "ref", tmp_path / "cand"
    return ref, cand


def write_both(ref, cand, family, mutate=None, task=None):
    task = task or FAMILY_TASK[family]
    a = base_scores(family)
    b = json.loads(json.dumps(a))
    b = {k: (float("nan") if isinstance(v, float) and math.isnan(v) else v) for k, v in b.items()}
    if mutate:
        mutate(b)
    write_result(ref, task, {"test": [entry(**a)]})
    write_result(cand, task, {"test": [entry(**b)]})


@pytest.mark.parametrize("family", sorted(FAMILY_TASK))
def test_equal_folders_pass(pair, family):
    ref, cand = pair
    write_both(ref, cand, family)
    res = parity(ref, cand)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "1 task(s) within tolerance, 0 above tolerance, 0 missing" in res.stdout
    assert re.search(rf"{FAMILY_TASK[family]}\s+{re.escape(family)}\s", res.stdout)


def test_one_float_ulp_is_equal_after_rounding(pair):
    ref, cand = pair
    write_both(ref, cand, "retrieval", lambda b: b.update(ndcg_at_10=math.nextafter(0.51234, 1.0)))
    res = parity(ref, cand)
    assert res.returncode == 0, res.stdout


def test_one_unit_in_the_sixth_decimal(pair):
    ref, cand = pair
    # exact family: 1e-6 is a difference after rounding
    write_both(ref, cand, "retrieval", lambda b: b.update(mrr_at_10=0.612346))
    res = parity(ref, cand)
    assert res.returncode == 1
    assert "CIRRIT2IRetrieval test/default/mrr_at_10: reference 0.612345, candidate 0.612346" in res.stdout
    # probe: within 1e-4
    ref2, cand2 = ref.parent / "r2", ref.parent / "c2"
    write_both(ref2, cand2, "probe", lambda b: b.update(accuracy=0.750001))
    assert parity(ref2, cand2).returncode == 0


def test_over_tolerance_is_listed(pair):
    ref, cand = pair
    write_both(ref, cand, "clustering", lambda b: b.update(ari=0.2002))
    res = parity(ref, cand)
    assert res.returncode == 1
    assert re.search(r"CIFAR10Clustering test/default/ari: reference 0.2, candidate 0.2002\s+\|diff\| = 0.0002",
                     res.stdout), res.stdout
    assert "ABOVE TOLERANCE" in res.stdout and "0 task(s) within tolerance, 1 above tolerance" in res.stdout


def test_nested_list_keys(pair):
    ref, cand = pair
    write_both(ref, cand, "probe", lambda b: b["scores_per_experiment"][1].update(accuracy=0.9))
    res = parity(ref, cand)
    assert res.returncode == 1
    assert "Birdsnap test/default/scores_per_experiment[1]/accuracy: reference 0.8, candidate 0.9" in res.stdout


def test_missing_key_subset_task(pair):
    ref, cand = pair
    write_both(ref, cand, "sts", lambda b: b.pop("pearson"))
    res = parity(ref, cand)
    assert res.returncode == 1
    assert "STS12VisualSTS test/default/pearson: reference 0.81, candidate (missing)" in res.stdout
    # a task only in the reference; a subset only in the candidate
    write_result(ref, "Winoground", {"test": [entry(**base_scores("compositionality"))]})
    write_result(cand, "CIFAR10ZeroShot", {"test": [entry(**base_scores("zero-shot")),
                                                     entry("fr", **base_scores("zero-shot"))]})
    write_result(ref, "CIFAR10ZeroShot", {"test": [entry(**base_scores("zero-shot"))]})
    res = parity(ref, cand)
    assert res.returncode == 1
    assert re.search(r"Winoground\s.*MISSING in candidate", res.stdout), res.stdout
    assert "CIFAR10ZeroShot test/fr: reference (missing), candidate {object}" in res.stdout
    # -t narrows the comparison; a -t task on neither side is missing
    assert parity(ref, cand, "-t", "STS12VisualSTS").returncode == 1
    write_both(ref, cand, "sts")
    assert parity(ref, cand, "-t", "STS12VisualSTS").returncode == 0
    res = parity(ref, cand, "-t", "STS12VisualSTS", "NoSuchTask")
    assert res.returncode == 1 and "NoSuchTask: MISSING on both sides" in res.stdout


def test_nan_on_both_sides_is_equal(pair):
    ref, cand = pair
    write_both(ref, cand, "zero-shot")  # ap is NaN on both sides
    assert parity(ref, cand).returncode == 0
    write_both(ref, cand, "zero-shot", lambda b: b.update(ap=0.5))
    res = parity(ref, cand)
    assert res.returncode == 1 and "test/default/ap: reference NaN/null, candidate 0.5" in res.stdout


def test_unknown_task_family_from_keys(pair):
    ref, cand = pair
    write_both(ref, cand, "sts", lambda b: b.update(spearman=0.80001), task="MyOwnSTS")
    res = parity(ref, cand)
    assert res.returncode == 1 and re.search(r"MyOwnSTS\s+sts\s", res.stdout), res.stdout
    write_both(ref, cand, "probe", lambda b: b.update(f1=0.70001), task="MyProbe")
    res = parity(ref, cand, "-t", "MyProbe")
    assert res.returncode == 0 and re.search(r"MyProbe\s+probe\s", res.stdout), res.stdout


def test_tolerance_override(pair):
    ref, cand = pair
    write_both(ref, cand, "probe", lambda b: b.update(accuracy=0.7505))
    assert parity(ref, cand).returncode == 1
    assert parity(ref, cand, "--tolerance", "probe=1e-3").returncode == 0
    ref, cand = ref.parent / "r2", ref.parent / "c2"
    write_both(ref, cand, "retrieval", lambda b: b.update(map_at_10=0.40001))
    assert parity(ref, cand).returncode == 1
    assert parity(ref, cand, "--tolerance", "retrieval=1e-4").returncode == 0
    assert parity(ref, cand, "--tolerance", "retrieval=1e-4", "--tolerance", "retrieval=exact").returncode == 1


@pytest.mark.parametrize("args", [[], ["--reference", "x"], ["--reference", "x", "--candidate"],
                                  ["--reference", "x", "--candidate", "y", "--bogus"],
                                  ["--reference", "x", "--candidate", "y", "--tolerance", "nofamily=1"],
                                  ["--reference", "x", "--candidate", "y", "--tolerance", "probe=-1"],
                                  ["--reference", "x", "--candidate", "y", "-t"]])
def test_usage_errors_exit_2(args):
    res = subprocess.run([str(build_dir() / "mieb-eval"), "parity", *args], capture_output=True, text=True)
    assert res.returncode == 2, res.stderr


def test_missing_folder_and_model_pairing(tmp_path):
    write_result(tmp_path / "a", "Winoground", {"test": [entry(**base_scores("compositionality"))]})
    res = parity(tmp_path / "a", tmp_path / "nope")
    assert res.returncode == 1 and "nope" in res.stderr
    # two models on each side: paired by (name, revision); one without a partner is missing
    for side in ("a", "b"):
        write_result(tmp_path / side, "Winoground", {"test": [entry(**base_scores("compositionality"))]},
                     model="org/other", rev="r2")
    write_result(tmp_path / "b", "Winoground", {"test": [entry(**base_scores("compositionality"))]})
    assert parity(tmp_path / "a", tmp_path / "b").returncode == 0
    write_result(tmp_path / "b", "Winoground", {"test": [entry(**base_scores("compositionality"))]},
                 model="org/third", rev="r3")
    res = parity(tmp_path / "a", tmp_path / "b")
    assert res.returncode == 1 and "org/third @ r3: MISSING in reference" in res.stdout


def _expected_ok(family: str, a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if family in TOL:
        return abs(a - b) <= TOL[family]
    return round(a, 6) == round(b, 6)


def test_randomized_against_python_rule(tmp_path):
    """Random values and perturbations (ulps, rounding-boundary straddles, 1e-6, 1e-4 +- eps, NaN)
    per family: parity's verdict and listed keys equal the Python rule's."""
    rng = random.Random(20240607)
    for case in range(40):
        family = rng.choice(sorted(FAMILY_TASK))
        keys = [f"k{i}" for i in range(12)]
        a = {k: round(rng.random(), rng.choice([5, 6, 6, 9])) for k in keys}
        b = dict(a)
        for k in rng.sample(keys, 4):
            kind = rng.randrange(7)
            x = a[k]
            if kind == 0:
                b[k] = math.nextafter(x, 2.0)
            elif kind == 1:
                b[k] = x + 1e-6
            elif kind == 2:
                b[k] = x + rng.choice([0.99e-4, 1.01e-4])
            elif kind == 3:
                a[k] = b[k] = float("nan")
            elif kind == 4:
                b[k] = float("nan")
            elif kind == 5:  # straddle a 6-decimal rounding boundary
                base = round(x, 6) + 5e-7
                a[k], b[k] = math.nextafter(base, 0.0), math.nextafter(base, 1.0)
            else:
                b[k] = x + rng.uniform(-3e-4, 3e-4)
        ref, cand = tmp_path / f"r{case}", tmp_path / f"c{case}"
        task = FAMILY_TASK[family]
        write_result(ref, task, {"test": [entry(**a, main_score=a["k0"])]})
        write_result(cand, task, {"test": [entry(**b, main_score=b["k0"])]})
        want_bad = {k for k in keys if not _expected_ok(family, a[k], b[k])}
        if "k0" in want_bad:
            want_bad.add("main_score")
        res = parity(ref, cand)
        got_bad = set(re.findall(rf"^\s+{task} test/default/(\w+): reference", res.stdout, re.M))
        assert got_bad == want_bad, (family, a, b, res.stdout)
        assert res.returncode == (1 if want_bad else 0)
