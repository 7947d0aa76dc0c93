"""`mieb-eval summary` against an independent pandas computation of mteb's leaderboard numbers.

Result folders are written by hand with Python's json (NaN literals included): several
models, a task missing, a missing subset, extra subsets and splits (ignored), a NaN
main_score, aggregate tasks (only their "default" subset counts) and tied task scores
(Borda "average" ties). The reference follows mteb: validate_and_filter_scores +
TaskResult.get_score (np.mean over the defined splits x subsets, NaN for missing ones),
skipna=False type means, Mean(TaskType), Mean(Task), and _borda_rank_from_long.
"""
import csv
import json
import math
import os
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from helpers.mieb_tools import build_dir

SRC = Path(os.environ.get("MIEB_SOURCE_DIR", Path(__file__).resolve().parents[2]))
TASKS = {t["name"]: t for t in json.load(open(SRC / "configs" / "tasks.json"))}
BENCH = {b["name"]: b for b in json.load(open(SRC / "configs" / "benchmarks.json"))["benchmarks"]}
AGGREGATES = set(json.load(open(SRC / "configs" / "benchmarks.json"))["aggregate_tasks"])


def mieb(*args):
    return subprocess.run([str(build_dir() / "mieb-eval"), *args], capture_output=True, text=True, timeout=120)


def write_model(root: Path, name: str, rev: str, results: dict):
    """results: task -> {split: [(subset, main_score), ...]}; written as mteb TaskResult files."""
    d = root / "results" / name.replace("/", "__") / rev
    d.mkdir(parents=True)
    (d / "model_meta.json").write_text(json.dumps({"name": name, "revision": rev, "similarity_fn_name": "cosine"}))
    for task, splits in results.items():
        scores = {s: [{"ndcg_at_10": v, "main_score": v, "hf_subset": sub, "languages": ["eng-Latn"],
                       "mteb_version": "2.26.24"} for sub, v in rows] for s, rows in splits.items()}
        tr = {"dataset_revision": "r", "task_name": task, "mteb_version": "2.26.24", "scores": scores,
              "evaluation_time": 1.0, "kg_co2_emissions": None}
        with open(d / f"{task}.json", "w") as f:
            json.dump(tr, f, indent=2)  # writes NaN literally, as mteb does


def full_results(tasks, rng):
    out = {}
    for t in tasks:
        meta = TASKS[t]
        subs = ["default"] if t in AGGREGATES else meta["hf_subsets"]
        out[t] = {s: [(sub, float(rng.random())) for sub in subs] for s in meta["eval_splits"]}
    return out


def reference(models: dict, tasks: list) -> pd.DataFrame:
    """models: label -> results dict as given to write_model. One row per model, mteb's numbers."""
    rows = []  # the long frame after validate_and_filter_scores
    for m, res in models.items():
        for t in tasks:
            meta = TASKS[t]
            if t not in res:
                continue
            subs = {"default"} if t in AGGREGATES else set(meta["hf_subsets"])
            for split in meta["eval_splits"]:
                if split not in res[t]:
                    rows += [(m, t, split, sub, np.nan) for sub in meta["hf_subsets"]]
                    continue
                kept = [(sub, v) for sub, v in res[t][split] if sub in subs]
                rows += [(m, t, split, sub, v) for sub, v in kept]
                if t not in AGGREGATES:
                    rows += [(m, t, split, sub, np.nan) for sub in sorted(subs - {s for s, _ in kept})]
    long = pd.DataFrame(rows, columns=["model", "task", "split", "subset", "score"])
    # get_score: np.mean over all values, NaN if any NaN; a task without a file is missing
    task_score = long.groupby(["model", "task"])["score"].apply(lambda s: np.mean(s.to_numpy()))
    wide = task_score.unstack("task").reindex(index=list(models), columns=tasks)
    types = pd.Series({t: TASKS[t]["type"] for t in tasks})
    out = pd.DataFrame(index=wide.index)
    type_order = list(dict.fromkeys(types[tasks]))
    for ty in type_order:
        out[ty] = wide[types[types == ty].index].mean(axis=1, skipna=False)
    out["Mean(TaskType)"] = out[type_order].mean(axis=1, skipna=False)
    out["Mean(Task)"] = wide.mean(axis=1, skipna=False)
    # Borda (_borda_rank_from_long): NaN -> null, per-task mean of the non-null rows
    borda_scores = long.groupby(["model", "task"])["score"].mean().unstack("task")
    borda_scores = borda_scores.reindex(index=list(models), columns=tasks)
    has_row = wide.notna().any(axis=1)
    n_models = int(has_row.sum())
    bs = borda_scores[has_row]
    points = (n_models - bs.rank(axis=0, method="average", ascending=False)).sum(axis=1, min_count=0)
    out["Rank(Borda)"] = points.rank(method="min", ascending=False).reindex(out.index)
    out["points"] = points.reindex(out.index)
    out["n_complete"] = wide.notna().sum(axis=1)
    for t in tasks:
        out["task:" + t] = wide[t]
    return out


def same(a, b):
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None or (isinstance(b, float) and math.isnan(b))
    return b is not None and not math.isnan(b) and abs(a - b) <= 1e-12 * max(1.0, abs(b))


def check_against(js: dict, ref: pd.DataFrame, labels: dict):
    """labels: (name, revision) -> model label of ref."""
    assert len(js["models"]) == len(ref)
    for m in js["models"]:
        r = ref.loc[labels[(m["model"], m["revision"])]]
        assert same(m["Mean(TaskType)"], r["Mean(TaskType)"]), (m["model"], m["Mean(TaskType)"], r["Mean(TaskType)"])
        assert same(m["Mean(Task)"], r["Mean(Task)"])
        for ty, v in m["task_types"].items():
            assert same(v, r[ty]), (m["model"], ty, v, r[ty])
        for t, v in m["task_scores"].items():
            assert same(v, r["task:" + t]), (m["model"], t, v, r["task:" + t])
        assert m["Rank(Borda)"] == int(r["Rank(Borda)"]), (m["model"], m["Rank(Borda)"], r["Rank(Borda)"])
        assert same(m["borda_points"], r["points"])
    # leaderboard order: Mean(TaskType) descending, missing last; Rank is the position
    got = [m["Mean(TaskType)"] for m in js["models"]]
    key = [(-v if v is not None else math.inf) for v in got]
    assert key == sorted(key)
    assert [m["Rank"] for m in js["models"]] == list(range(1, len(got) + 1))


@pytest.fixture(scope="module")
def lite_suite(tmp_path_factory):
    root = tmp_path_factory.mktemp("summary")
    tasks = BENCH["MIEB(lite)"]["tasks"]
    rng = np.random.default_rng(7)
    a = full_results(tasks, rng)
    a["WITT2IRetrieval"]["test"].append(("xx-extra", 5.0))          # subset not defined: ignored
    a["CIRRIT2IRetrieval"]["validation"] = [("default", 9.0)]       # split not defined: ignored
    a["VisualSTS17Multilingual"]["test"].append(("ko-ko", 7.0))     # aggregate: only "default" counts
    b = full_results(tasks, rng)
    for t in tasks[:20]:                                             # ties with a on 20 tasks
        b[t] = json.loads(json.dumps(a[t]))
    c = full_results(tasks, rng)
    c["WITT2IRetrieval"]["test"] = c["WITT2IRetrieval"]["test"][:-1]  # a subset missing
    c["DTD"]["test"][0] = ("default", float("nan"))                  # NaN main_score
    d = full_results(tasks, rng)
    del d["OxfordPets"]                                              # a task missing
    d["Country211"] = json.loads(json.dumps(c["Country211"]))        # tie with c
    e = full_results(tasks, rng)                                     # duplicate of nothing, complete
    models = {"org/a": a, "org/b": b, "org/c": c, "other/d": d, "other/e": e}
    for name, res in models.items():
        write_model(root, name, "rev1", res)
    return root, models, tasks


def test_lite_benchmark_matches_pandas(lite_suite, tmp_path):
    root, models, tasks = lite_suite
    r = mieb("summary", str(root), "-b", "MIEB(lite)", "--json", str(tmp_path / "s.json"),
             "--csv", str(tmp_path / "s.csv"))
    assert r.returncode == 0, r.stderr
    js = json.load(open(tmp_path / "s.json"))
    assert js["benchmark"] == "MIEB(lite)" and js["tasks"] == tasks
    ref = reference(models, tasks)
    check_against(js, ref, {(m, "rev1"): m for m in models})
    by = {m["model"]: m for m in js["models"]}
    assert by["org/c"]["Mean(TaskType)"] is None and by["other/d"]["Mean(Task)"] is None
    assert by["org/a"]["Mean(TaskType)"] is not None
    assert "OxfordPets" in by["other/d"]["incomplete_tasks"]
    # the stdout table lists every model in the JSON's order, scores as 100 x, 2 decimals
    lines = [ln for ln in r.stdout.splitlines()[2:] if ln.strip()]
    assert [ln.split()[1] for ln in lines] == [m["model"] for m in js["models"]]
    top = js["models"][0]
    assert f"{round(top['Mean(TaskType)'] * 100, 2):.2f}" in lines[0]
    # CSV: same numbers, exact (repr) values, empty for None
    rows = list(csv.DictReader(open(tmp_path / "s.csv")))
    assert [x["model"] for x in rows] == [m["model"] for m in js["models"]]
    for x, m in zip(rows, js["models"]):
        v = m["Mean(TaskType)"]
        assert (x["Mean(TaskType)"] == "") if v is None else float(x["Mean(TaskType)"]) == v
        assert float(x["WITT2IRetrieval"] or "nan") == (m["task_scores"]["WITT2IRetrieval"] or float("nan")) \
            or m["task_scores"]["WITT2IRetrieval"] is None


def test_short_key_and_default_task_set(lite_suite, tmp_path):
    root, models, tasks = lite_suite
    # the short key names the same benchmark
    r1 = mieb("summary", str(root), "-b", "lite", "--json", str(tmp_path / "k.json"))
    assert r1.returncode == 0, r1.stderr
    assert json.load(open(tmp_path / "k.json"))["benchmark"] == "MIEB(lite)"
    # no -b: every registry task found in some folder, in registry order; two folders given
    sub = {m: models[m] for m in ("org/a", "other/d")}
    r2 = mieb("summary", str(root / "results" / "org__a"), str(root / "results" / "other__d" / "rev1"),
              "--json", str(tmp_path / "n.json"))
    assert r2.returncode == 0, r2.stderr
    js = json.load(open(tmp_path / "n.json"))
    found = [t for t in TASKS if any(t in res for res in sub.values())]
    assert js["benchmark"] is None and js["tasks"] == found
    check_against(js, reference(sub, found), {(m, "rev1"): m for m in sub})


def test_small_hand_case(tmp_path):
    """Numbers worked out by hand: two tasks of one type, one of another, three models."""
    t1, t2, t3 = "CIFAR10", "DTD", "CIFAR10Clustering"
    models = {
        "m/x": {t1: {"test": [("default", 0.5)]}, t2: {"test": [("default", 0.7)]}, t3: {"test": [("default", 0.2)]}},
        "m/y": {t1: {"test": [("default", 0.5)]}, t2: {"test": [("default", 0.9)]}, t3: {"test": [("default", 0.1)]}},
        "m/z": {t1: {"test": [("default", 0.6)]}, t3: {"test": [("default", 0.3)]}},
    }
    for n, res in models.items():
        write_model(tmp_path, n, "r", res)
    r = mieb("summary", str(tmp_path), "--json", str(tmp_path / "o.json"))
    assert r.returncode == 0, r.stderr
    js = {m["model"]: m for m in json.load(open(tmp_path / "o.json"))["models"]}
    assert js["m/x"]["Mean(TaskType)"] == pytest.approx(((0.5 + 0.7) / 2 + 0.2) / 2)
    assert js["m/y"]["Mean(Task)"] == pytest.approx((0.5 + 0.9 + 0.1) / 3)
    assert js["m/z"]["Mean(TaskType)"] is None and js["m/z"]["task_types"]["ImageClustering"] == 0.3
    # Borda: CIFAR10 z=1, x=y=2.5 -> points 2, .5, .5; DTD y=1, x=2 -> 2, 1; clustering z, x, y -> 2, 1, 0
    assert [js[m]["borda_points"] for m in ("m/x", "m/y", "m/z")] == [2.5, 2.5, 4.0]
    assert [js[m]["Rank(Borda)"] for m in ("m/x", "m/y", "m/z")] == [2, 2, 1]
    # o.json now lies loose in the root beside the model folders: it is not a result folder,
    # so a second summary of the same root still finds the three models
    r = mieb("summary", str(tmp_path), "--json", str(tmp_path / "o2.json"))
    assert r.returncode == 0, r.stderr
    assert sorted(m["model"] for m in json.load(open(tmp_path / "o2.json"))["models"]) == ["m/x", "m/y", "m/z"]


def test_bad_inputs(tmp_path):
    write_model(tmp_path, "m/x", "r", {"CIFAR10": {"test": [("default", 0.5)]}})
    (tmp_path / "results" / "m__x" / "r" / "Broken.json").write_text("{not json")
    r = mieb("summary", str(tmp_path))
    assert r.returncode == 1 and "Broken.json" in r.stderr
    assert mieb("summary", str(tmp_path / "nowhere")).returncode == 1
    r = mieb("summary", str(tmp_path), "-b", "MIEB(nope)")
    assert r.returncode == 2 and "MIEB(lite)" in r.stderr
    assert mieb("summary").returncode == 2
