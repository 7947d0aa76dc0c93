"""Per-sample files of `run --per-query` (host/families/per_sample.c) and `mieb-eval compare`
(host/cli/cmd_compare.c, host/analysis/bootstrap.c, host/analysis/per_sample_reader.c).

Two synthetic models (a `mieb-eval synth` suite and the same embeddings with noise added) are
scored with --per-query. The per-sample files are reduced with numpy / scikit-learn / scipy
and must give the metrics of the result files. `compare` is checked against an independent
numpy / scipy / scikit-learn restatement of its documented procedure (numpy RandomState
draws, percentile CI, shift-method p-value): CIs to 1e-12, p-values exactly. Degenerate
cases: identical models, a task in one folder only, a single query, tied and constant
resamples, different task data, bad command lines."""
from __future__ import annotations

import csv
import glob
import json
import os
import shutil
import subprocess
import warnings

import h5py
import numpy as np
import pytest
import scipy.stats
from sklearn.metrics import f1_score, label_ranking_average_precision_score, normalized_mutual_info_score

from helpers.mieb_tools import build_dir

BIN = str(build_dir() / "mieb-eval")
SRC = os.environ.get("MIEB_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
TASKS = ["CIRRIT2IRetrieval", "XFlickr30kCoT2IRetrieval", "CIFAR10", "VOC2007", "CIFAR10ZeroShot",
         "CIFAR10Clustering", "Winoground", "SugarCrepe", "AROVisualRelation", "STS12VisualSTS",
         "STS17MultilingualVisualSTS", "STSBenchmarkMultilingualVisualSTS"]
AGG = "VisualSTS17Eng"  # an aggregate of STS17MultilingualVisualSTS
RESULT_TOL = 5.0000001e-7  # result files hold values rounded to 6 decimals


def registry():
    return {t["name"]: t for t in json.load(open(os.path.join(SRC, "configs", "tasks.json")))}


REG = registry()
AGGREGATES = json.load(open(os.path.join(SRC, "configs", "benchmarks.json")))["aggregate_tasks"]


def mieb(*args, check=True):
    p = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=600)
    if check and p.returncode != 0:
        raise AssertionError(f"mieb-eval {args[0]} failed ({p.returncode}):\n{p.stderr}")
    return p


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    d = tmp_path_factory.mktemp("cmp")
    mieb("synth", "--out", d / "s", "--tasks", ",".join(TASKS), "--scale", 0.01, "--seed", 5)
    shutil.copytree(d / "s" / "embeddings", d / "embB")
    rng = np.random.default_rng(11)
    for f in sorted(glob.glob(str(d / "embB" / "**" / "*.h5"), recursive=True)):
        with h5py.File(f, "r+") as h:
            e = h["embeddings"][...]
            h["embeddings"][...] = (e + rng.normal(0, 0.6 * e.std(), e.shape)).astype(e.dtype)
    out = {}
    for m, emb in (("A", d / "s" / "embeddings"), ("B", d / "embB")):
        p = mieb("run", "--task-data", d / "s" / "task-data", "--embeddings", emb, "-t", *TASKS, AGG,
                 "--output-folder", d / f"out{m}", "--per-query", d / f"pq{m}", "--device", "cpu", "-q")
        out[m] = p.stdout.strip()
    return {"dir": d, "td": d / "s" / "task-data", "res": out, "pq": {m: d / f"pq{m}" for m in "AB"}}


def read_tsv(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f, delimiter="\t"))
    return rows[0], rows[1:]


def result(suite, m, task):
    return json.load(open(os.path.join(suite["res"][m], f"{task}.json")))["scores"]


def units(task):
    t = REG[task]
    return [(s, h) for s in t["eval_splits"] for h in t["hf_subsets"]]


def close(got, want, tol=RESULT_TOL):
    return (np.isnan(got) and np.isnan(want)) or abs(got - want) <= tol


# ---------------------------------------------------------------------------------------------
# per-sample files reproduce the result files


def test_every_family_writes_per_sample_files(suite):
    for m in "AB":
        pq = suite["pq"][m]
        for task in TASKS:
            name = "per_query.tsv" if REG[task]["type"].endswith("Retrieval") else "predictions.tsv"
            for s, h in units(task):
                assert os.path.isfile(pq / task / s / h / name), (task, s, h)
        hdr, rows = read_tsv(pq / AGG / "test" / "default" / "aggregate.tsv")
        assert hdr == ["task", "split", "subset"]
        assert rows == [[AGGREGATES[AGG], "test", h] for h in REG[AGG]["hf_subsets"]]
        assert not glob.glob(str(pq / "**" / "*.tmp.*"), recursive=True)


@pytest.mark.parametrize("m", "AB")
def test_probe_predictions(suite, m):
    hdr, rows = read_tsv(suite["pq"][m] / "CIFAR10" / "test" / "default" / "predictions.tsv")
    n_exp = REG["CIFAR10"]["params"].get("n_experiments", 10)
    assert hdr == ["index", "label"] + [f"prediction_{e}" for e in range(n_exp)]
    a = np.array(rows, dtype=np.int64)
    with h5py.File(suite["td"] / "CIFAR10.h5") as h:
        assert np.array_equal(a[:, 1], h["test/default/eval_labels"][...])
    assert np.array_equal(a[:, 0], np.arange(len(a)))
    sc = result(suite, m, "CIFAR10")["test"][0]
    for e, per in enumerate(sc["scores_per_experiment"]):
        pred = a[:, 2 + e]
        assert close(float(np.mean(pred == a[:, 1])), per["accuracy"])
        assert close(f1_score(a[:, 1], pred, average="macro"), per["f1"])
    # the mean of the experiments' accuracies is the result's accuracy (and main score)
    acc = np.mean([np.mean(a[:, 2 + e] == a[:, 1]) for e in range(n_exp)])
    assert close(acc, sc["accuracy"]) and close(acc, sc["main_score"])


def parse_set(s):
    return sorted(int(x) for x in s.split(",")) if s else []


@pytest.mark.parametrize("m", "AB")
def test_multilabel_predictions(suite, m):
    hdr, rows = read_tsv(suite["pq"][m] / "VOC2007" / "test" / "default" / "predictions.tsv")
    n_exp = (len(hdr) - 2) // 4
    assert hdr[:2] == ["index", "labels"] and n_exp >= 1
    assert hdr[2:] == [f"{k}_{e}" for e in range(n_exp) for k in ("prediction", "accuracy", "lrap", "hamming")]
    with h5py.File(suite["td"] / "VOC2007.h5") as h:
        ptr, flat = h["test/default/eval_labels_indptr"][...], h["test/default/eval_labels_flat"][...]
    gold = [sorted(set(flat[ptr[i]:ptr[i + 1]].tolist())) for i in range(len(ptr) - 1)]
    assert [parse_set(r[1]) for r in rows] == gold
    classes = sorted(set(flat.tolist()))
    col = {c: j for j, c in enumerate(classes)}

    def binarize(sets):
        y = np.zeros((len(sets), len(classes)), dtype=np.int64)
        for i, s in enumerate(sets):
            y[i, [col[c] for c in s]] = 1
        return y

    yt = binarize(gold)
    sc = result(suite, m, "VOC2007")["test"][0]
    assert len(sc["scores_per_experiment"]) == n_exp
    lraps = []
    for e, per in enumerate(sc["scores_per_experiment"]):
        yp = binarize([parse_set(r[2 + 4 * e]) for r in rows])
        acc = np.array([float(r[3 + 4 * e]) for r in rows])
        lrap = np.array([float(r[4 + 4 * e]) for r in rows])
        ham = np.array([float(r[5 + 4 * e]) for r in rows])
        # the per-sample columns are what sklearn / mteb compute per row
        assert np.array_equal(acc, (yt == yp).all(axis=1).astype(float))
        for i in range(len(rows)):
            assert abs(lrap[i] - label_ranking_average_precision_score(yt[i:i + 1], yp[i:i + 1])) < 1e-15
        inter, union = (yt & yp).sum(axis=1), (yt | yp).sum(axis=1)
        assert np.allclose(ham, np.where(union == 0, 1.0, inter / np.maximum(union, 1)), rtol=0, atol=1e-15)
        # and their means are the experiment's keys
        assert close(acc.mean(), per["accuracy"]) and close(lrap.mean(), per["lrap"])
        assert close(ham.mean(), per["hamming"])
        assert close(label_ranking_average_precision_score(yt, yp), per["lrap"])
        assert close(f1_score(yt, yp, average="macro", zero_division=0), per["f1"])
        lraps.append(lrap.mean())
    assert close(float(np.mean(lraps)), sc["lrap"]) and close(float(np.mean(lraps)), sc["main_score"])


@pytest.mark.parametrize("task", ["Winoground", "SugarCrepe", "AROVisualRelation"])
def test_compositionality_predictions(suite, task):
    for m in "AB":
        hdr, rows = read_tsv(suite["pq"][m] / task / "test" / "default" / "predictions.tsv")
        assert hdr == ["index", "text_correct", "image_correct", "correct"]
        a = np.array(rows, dtype=np.int64)
        assert np.array_equal(a[:, 0], np.arange(len(a)))
        assert np.array_equal(a[:, 3], a[:, 1] & a[:, 2])
        sc = result(suite, m, task)["test"][0]
        for c, key in ((1, "text_acc"), (2, "image_acc"), (3, "accuracy")):
            assert close(float(np.float32(a[:, c].sum()) / np.float32(len(a))), sc[key]), key  # torch float32 mean
        assert sc["main_score"] == sc[REG[task]["main_score"]]


@pytest.mark.parametrize("task", ["STS12VisualSTS", "STS17MultilingualVisualSTS", "STSBenchmarkMultilingualVisualSTS"])
def test_sts_predictions(suite, task):
    cols = {"": "similarity", "cosine_": "cosine", "manhattan_": "manhattan", "euclidean_": "euclidean"}
    for m in "AB":
        res = result(suite, m, task)
        for s, h in units(task):
            hdr, rows = read_tsv(suite["pq"][m] / task / s / h / "predictions.tsv")
            assert hdr == ["index", "gold", "similarity", "cosine", "manhattan", "euclidean"]
            a = np.array(rows, dtype=np.float64)
            with h5py.File(suite["td"] / f"{task}.h5") as f:
                g = f[f"{s}/{h}"]
                lo, hi = g.attrs["min_score"], g.attrs["max_score"]
                assert np.array_equal(a[:, 1], (g["gold"][...].astype(np.float64) - lo) / (hi - lo))
            assert (a[:, 4] <= 0).all() and (a[:, 5] <= 0).all()  # negated distances
            sc = next(x for x in res[s] if x["hf_subset"] == h)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for pre, c in cols.items():
                    x = a[:, hdr.index(c)]
                    assert close(float(scipy.stats.spearmanr(a[:, 1], x).statistic), sc[pre + "spearman"]), (pre, s, h)
                    assert close(float(scipy.stats.pearsonr(a[:, 1], x).statistic), sc[pre + "pearson"]), (pre, s, h)


def test_aggregate_from_subtask_files(suite):
    sub = AGGREGATES[AGG]
    for m in "AB":
        vals = []
        for h in REG[AGG]["hf_subsets"]:
            hdr, rows = read_tsv(suite["pq"][m] / sub / "test" / h / "predictions.tsv")
            a = np.array(rows, dtype=np.float64)
            vals.append(scipy.stats.spearmanr(a[:, 1], a[:, 3]).statistic)
        assert close(float(np.mean(vals)), result(suite, m, AGG)["test"][0]["main_score"])


def test_zeroshot_clustering_retrieval_main_scores(suite):
    for m in "AB":
        _, rows = read_tsv(suite["pq"][m] / "CIFAR10ZeroShot" / "test" / "default" / "predictions.tsv")
        a = np.array(rows, dtype=np.int64)
        assert close(float(np.mean(a[:, 1] == a[:, 2])), result(suite, m, "CIFAR10ZeroShot")["test"][0]["accuracy"])
        _, rows = read_tsv(suite["pq"][m] / "CIFAR10Clustering" / "test" / "default" / "predictions.tsv")
        a = np.array(rows, dtype=np.int64)
        assert close(normalized_mutual_info_score(a[:, 1], a[:, 2]),
                     result(suite, m, "CIFAR10Clustering")["test"][0]["nmi"])
        for task in ("CIRRIT2IRetrieval", "XFlickr30kCoT2IRetrieval"):
            measure = retrieval_measure(REG[task]["main_score"])
            res = result(suite, m, task)
            for s, h in units(task):
                qv = read_per_query(suite["pq"][m] / task / s / h / "per_query.tsv", measure)
                sc = next(x for x in res[s] if x["hf_subset"] == h)
                assert close(float(np.mean(list(qv.values()))), sc["main_score"], 1e-5)


# ---------------------------------------------------------------------------------------------
# an independent restatement of `compare` (README "Comparing two models")


def retrieval_measure(ms):
    if ms == "accuracy":
        return "recall_1"
    for a, b in (("ndcg_at_", "ndcg_cut_"), ("map_at_", "map_cut_"), ("recall_at_", "recall_"),
                 ("precision_at_", "P_"), ("hit_rate_at_", "success_"), ("mrr_at_", "mrr_cut_")):
        if ms.startswith(a):
            return b + ms[len(a):]
    raise KeyError(ms)


def read_per_query(path, measure):
    out = {}
    for line in open(path, encoding="utf-8"):
        mm, q, v = line.rstrip("\n").split("\t")
        if mm == measure and q != "all":
            out[q] = float(v)
    return out


def load_unit(path, task, ms, is_ret):
    """(statistic, arrays) of one model's unit, as README describes the recomputation."""
    if is_ret:
        return "mean", read_per_query(path, retrieval_measure(ms))
    hdr, rows = read_tsv(path)
    if hdr[1:3] == ["label", "prediction"] and len(hdr) == 3:
        return "mean", np.array([float(r[1] == r[2]) for r in rows])
    if hdr[1:3] == ["label", "cluster"]:
        a = np.array(rows, dtype=np.int64)
        return "nmi", (a[:, 1], a[:, 2])
    if hdr[1] == "label":  # probe: share of experiments right
        a = np.array(rows, dtype=np.int64)
        return "mean", (a[:, 2:] == a[:, 1:2]).mean(axis=1)
    if hdr[1] == "labels":
        cols = [i for i, h in enumerate(hdr) if h.rsplit("_", 1)[0] == ms]
        return "mean", np.array([[float(r[c]) for c in cols] for r in rows]).mean(axis=1)
    if hdr[1] == "text_correct":
        c = {"text_acc": 1, "image_acc": 2, "accuracy": 3}[ms]
        return "mean", np.array([float(r[c]) for r in rows])
    if hdr[1] == "gold":
        kind = "spearman" if ms.endswith("spearman") else "pearson"
        pre = ms[: -len(kind)]
        c = hdr.index({"": "similarity", "cosine_": "cosine", "manhattan_": "manhattan", "euclidean_": "euclidean"}[pre])
        a = np.array(rows, dtype=np.float64)
        return kind, (a[:, 1], a[:, c])
    raise AssertionError(hdr)


def statistic(kind, data, idx):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "mean":
            return float(data[idx].mean())
        if kind == "nmi":
            return float(normalized_mutual_info_score(data[0][idx], data[1][idx]))
        if kind == "spearman":
            return float(scipy.stats.spearmanr(data[0][idx], data[1][idx]).statistic)
        return float(scipy.stats.pearsonr(data[0][idx], data[1][idx]).statistic)


def summarise(a, b, delta, reps, alpha, resampled):
    valid = reps[~np.isnan(reps)]
    out = {"a": a, "b": b, "delta": delta, "n_valid": len(valid), "ci_low": np.nan, "ci_high": np.nan,
           "p_value": np.nan}
    if len(valid):
        out["ci_low"], out["ci_high"] = np.percentile(valid, [100 * alpha / 2, 100 * (1 - alpha / 2)])
        if resampled and not np.isnan(delta):
            out["p_value"] = (1 + int(np.sum(np.abs(valid - delta) >= abs(delta)))) / (1 + len(valid))
    out["reps"], out["resampled"] = reps, resampled
    return out


def ref_task(rs, dirs, task, R, alpha):
    t = REG[task]
    src = AGGREGATES.get(task, task)
    is_ret = REG[src]["type"].endswith("Retrieval") or REG[src]["type"] in ("DocumentUnderstanding", "VisionCentricQA")
    pa, pb, va, vb, resampled = [], [], [], [], False
    for s in t["eval_splits"]:
        for h in t["hf_subsets"]:
            name = "per_query.tsv" if is_ret else "predictions.tsv"
            kind, da = load_unit(os.path.join(dirs[0], src, s, h, name), task, t["main_score"], is_ret)
            _, db = load_unit(os.path.join(dirs[1], src, s, h, name), task, t["main_score"], is_ret)
            if is_ret:  # queries in A's order, B's values by query id
                qids = list(da)
                da, db = np.array([da[q] for q in qids]), np.array([db[q] for q in qids])
            n = len(da) if kind == "mean" else len(da[0])
            resampled |= n >= 2
            pa.append(statistic(kind, da, np.arange(n)))
            pb.append(statistic(kind, db, np.arange(n)))
            idx = rs.randint(0, n, size=(R, n))
            va.append([statistic(kind, da, idx[r]) for r in range(R)])
            vb.append([statistic(kind, db, idx[r]) for r in range(R)])
    va, vb = np.array(va), np.array(vb)
    a, b = float(np.mean(pa)), float(np.mean(pb))
    reps = np.array([np.mean(np.ascontiguousarray(va[:, r])) - np.mean(np.ascontiguousarray(vb[:, r]))
                     for r in range(R)])
    return summarise(a, b, a - b, reps, alpha, resampled)


def ref_mean_of(parts, alpha):
    R = len(parts[0]["reps"])
    reps = np.array([np.mean(np.array([p["reps"][r] for p in parts])) for r in range(R)])
    return summarise(float(np.mean([p["a"] for p in parts])), float(np.mean([p["b"] for p in parts])),
                     float(np.mean([p["delta"] for p in parts])), reps, alpha, any(p["resampled"] for p in parts))


def ref_compare(dirs, tasks, R, seed, alpha):
    rs = np.random.RandomState(seed)
    rows = {t: ref_task(rs, dirs, t, R, alpha) for t in tasks}
    types = {}
    for t in tasks:
        types.setdefault(REG[t]["type"], []).append(rows[t])
    trows = {k: ref_mean_of(v, alpha) for k, v in types.items()}
    means = {"Mean(Task)": ref_mean_of(list(rows.values()), alpha),
             "Mean(TaskType)": ref_mean_of(list(trows.values()), alpha)}
    return rows, trows, means


def jnum(x):
    return np.nan if x is None else x


def check_row(got, want, tol=1e-12):
    for k in ("a", "b", "delta", "ci_low", "ci_high"):
        g, w = jnum(got[k]), want[k]
        assert (np.isnan(g) and np.isnan(w)) or abs(g - w) <= tol, (k, g, w)
    g, w = jnum(got["p_value"]), want["p_value"]
    assert (np.isnan(g) and np.isnan(w)) or g == w, ("p_value", g, w)
    assert got["n_valid"] == want["n_valid"]


def run_compare(a, b, *args, check=True, tmp=None):
    js = os.path.join(tmp, "cmp.json")
    cs = os.path.join(tmp, "cmp.csv")
    p = mieb("compare", a, b, "--json", js, "--csv", cs, *args, check=check)
    return p, (json.load(open(js)) if os.path.exists(js) else None), cs


def test_compare_matches_numpy_reference(suite, tmp_path):
    dirs = [str(suite["pq"]["A"]), str(suite["pq"]["B"])]
    order = ["STS12VisualSTS", "CIFAR10Clustering", "CIRRIT2IRetrieval", "VOC2007", "CIFAR10", AGG,
             "CIFAR10ZeroShot", "Winoground", "SugarCrepe", "XFlickr30kCoT2IRetrieval", "AROVisualRelation",
             "STS17MultilingualVisualSTS", "STSBenchmarkMultilingualVisualSTS"]
    R, seed, alpha = 150, 1234567, 0.1
    p, js, cs = run_compare(*dirs, "-t", *order, "--resamples", R, "--seed", seed, "--alpha", alpha, tmp=str(tmp_path))
    rows, trows, means = ref_compare(dirs, order, R, seed, alpha)
    assert [t["task"] for t in js["tasks"]] == order
    assert js["skipped"] == [] and js["errors"] == []
    for t in js["tasks"]:
        check_row(t, rows[t["task"]])
        assert t["significant"] == (t["p_value"] is not None and t["p_value"] < alpha)
        assert t["type"] == REG[t["task"]]["type"] and t["main_score"] == REG[t["task"]]["main_score"]
    assert [t["type"] for t in js["task_types"]] == list(trows)
    for t in js["task_types"]:
        check_row(t, trows[t["type"]])
    for t in js["means"]:
        check_row(t, means[t["name"]])
    # the point estimates are the result files' main scores (rounded there)
    for t in js["tasks"]:
        for m, k in (("A", "a"), ("B", "b")):
            res = result(suite, m, t["task"])
            vals = [x["main_score"] for s in REG[t["task"]]["eval_splits"] for x in res[s]]
            # retrieval: 5-decimal rounding first; compositionality: mteb's float32 mean, ours float64
            tol = 1e-5 if "Retrieval" in t["type"] else 1e-6 if t["type"] == "Compositionality" else RESULT_TOL
            assert close(t[k], float(np.mean(vals)), tol), (t["task"], m)
    # the perturbation is large: some task differs significantly, and the table marks it
    assert any(t["significant"] for t in js["tasks"])
    assert " *" in p.stdout and "STS12VisualSTS" in p.stdout
    # CSV: the same rows and exact values
    with open(cs, newline="") as f:
        crow = list(csv.DictReader(f))
    assert [r["name"] for r in crow] == order + list(trows) + ["Mean(Task)", "Mean(TaskType)"]
    for r, t in zip(crow, js["tasks"]):
        for k in ("a", "b", "delta", "ci_low", "ci_high"):
            assert float(r[k]) == t[k]
        assert (r["p_value"] == "" and t["p_value"] is None) or float(r["p_value"]) == t["p_value"]


def test_compare_default_task_order_and_seed(suite, tmp_path):
    """Without -t: registry order; the same seed gives the same numbers, another seed others."""
    dirs = [str(suite["pq"]["A"]), str(suite["pq"]["B"])]
    _, js, _ = run_compare(*dirs, "--resamples", 40, tmp=str(tmp_path))
    names = list(REG)
    want = [t for t in names if t in TASKS or t == AGG]
    assert [t["task"] for t in js["tasks"]] == want
    rows, _, _ = ref_compare(dirs, want, 40, 42, 0.05)
    for t in js["tasks"]:
        check_row(t, rows[t["task"]])
    _, js2, _ = run_compare(*dirs, "--resamples", 40, tmp=str(tmp_path))
    assert js2 == js
    _, js3, _ = run_compare(*dirs, "--resamples", 40, "--seed", 43, tmp=str(tmp_path))
    assert [t["ci_low"] for t in js3["tasks"]] != [t["ci_low"] for t in js["tasks"]]


def test_identical_models(suite, tmp_path):
    a = str(suite["pq"]["A"])
    p, js, _ = run_compare(a, a, "--resamples", 50, tmp=str(tmp_path))
    assert js["tasks"] and js["task_types"] and len(js["means"]) == 2
    for t in js["tasks"] + js["task_types"] + js["means"]:
        assert t["delta"] == 0 and t["ci_low"] == 0 and t["ci_high"] == 0 and t["p_value"] == 1.0, t
        assert t["a"] == t["b"] and not t["significant"]
    assert " *" not in p.stdout


def test_task_in_one_folder_only(suite, tmp_path):
    b = tmp_path / "pqB"
    shutil.copytree(suite["pq"]["B"], b)
    shutil.rmtree(b / "CIFAR10")
    shutil.rmtree(b / "STSBenchmarkMultilingualVisualSTS" / "dev" / "de")  # an incomplete task
    os.makedirs(b / "NotATask")
    a = str(suite["pq"]["A"])
    p, js, _ = run_compare(a, str(b), "--resamples", 30, tmp=str(tmp_path))
    assert p.returncode == 0
    skipped = {s["task"]: s["reason"] for s in js["skipped"]}
    assert skipped["CIFAR10"] == "only in A"
    assert "incomplete: B lacks" in skipped["STSBenchmarkMultilingualVisualSTS"]
    assert skipped["NotATask"] == "not a task of the registry"
    assert "CIFAR10" not in [t["task"] for t in js["tasks"]]
    assert "skipped: CIFAR10: only in A" in p.stdout
    # skipped tasks draw nothing: the others equal a comparison without them
    kept = [t["task"] for t in js["tasks"]]
    rows, _, _ = ref_compare([a, str(b)], kept, 30, 42, 0.05)
    for t in js["tasks"]:
        check_row(t, rows[t["task"]])


def write_pq(root, task, split, subset, name, text):
    d = os.path.join(root, task, split, subset)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "w", encoding="utf-8") as f:
        f.write(text)


def test_single_query_ties_and_constant_resamples(tmp_path):
    """Hand-written per-sample files: a retrieval task with one query (no draws, p undefined),
    STS with tied gold and scores (constant resamples: NaN Spearman replicates dropped),
    clustering with ties, a probe with equal accuracies."""
    A, B = str(tmp_path / "A"), str(tmp_path / "B")
    write_pq(A, "CIRRIT2IRetrieval", "test", "default", "per_query.tsv",
             "ndcg_cut_10\tq1\t0.5\nrecall_1\tq1\t1.0\nndcg_cut_10\tall\t0.5\n")
    write_pq(B, "CIRRIT2IRetrieval", "test", "default", "per_query.tsv", "ndcg_cut_10\tq1\t0.25\n")
    gold = [0.0, 0.0, 1.0, 1.0, 0.5]
    sa, sb = [0.1, 0.1, 0.9, 0.9, 0.9], [0.3, 0.2, 0.2, 0.3, 0.3]
    for root, s in ((A, sa), (B, sb)):
        lines = "".join(f"{i}\t{g!r}\t{v!r}\t{v!r}\t{-v!r}\t{-v!r}\n" for i, (g, v) in enumerate(zip(gold, s)))
        write_pq(root, "STS12VisualSTS", "test", "default", "predictions.tsv",
                 "index\tgold\tsimilarity\tcosine\tmanhattan\teuclidean\n" + lines)
    lab = [0, 0, 1, 1, 2, 2, 2]
    for root, cl in ((A, [5, 5, 6, 6, 7, 7, 7]), (B, [1, 1, 1, 1, 2, 2, 2])):
        write_pq(root, "CIFAR10Clustering", "test", "default", "predictions.tsv",
                 "index\tlabel\tcluster\n" + "".join(f"{i}\t{x}\t{c}\n" for i, (x, c) in enumerate(zip(lab, cl))))
    for root, pr in ((A, [[0, 1], [1, 1], [2, 0]]), (B, [[1, 0], [1, 1], [0, 2]])):
        write_pq(root, "CIFAR10", "test", "default", "predictions.tsv",
                 "index\tlabel\tprediction_0\tprediction_1\n" +
                 "".join(f"{i}\t{i}\t{p[0]}\t{p[1]}\n" for i, p in enumerate(pr)))
    order = ["CIRRIT2IRetrieval", "STS12VisualSTS", "CIFAR10Clustering", "CIFAR10"]
    R = 300
    p, js, _ = run_compare(A, B, "--resamples", R, tmp=str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert [t["task"] for t in js["tasks"]] == [t for t in REG if t in order]  # registry order without -t
    p, js, _ = run_compare(A, B, "--resamples", R, "-t", *order, tmp=str(tmp_path))
    assert [t["task"] for t in js["tasks"]] == order
    rows, trows, means = ref_compare([A, B], order, R, 42, 0.05)
    for t in js["tasks"]:
        check_row(t, rows[t["task"]])
    for t in js["task_types"]:
        check_row(t, trows[t["type"]])
    for t in js["means"]:
        check_row(t, means[t["name"]])
    got = {t["task"]: t for t in js["tasks"]}
    one = got["CIRRIT2IRetrieval"]
    assert one["n_samples"] == 1 and one["delta"] == 0.25 and one["ci_low"] == one["ci_high"] == 0.25
    assert one["p_value"] is None and not one["significant"]
    assert 0 < got["STS12VisualSTS"]["n_valid"] < R  # some resamples are constant: dropped
    assert got["CIFAR10"]["delta"] == 0.0 and got["CIFAR10"]["p_value"] == 1.0  # tied accuracies
    # the single query drew nothing: the same tasks without it give the same numbers
    rest = [t for t in order if t != "CIRRIT2IRetrieval"]
    _, js2, _ = run_compare(A, B, "--resamples", R, "-t", *rest, tmp=str(tmp_path))
    assert js2["tasks"] == [got[t] for t in rest]


def test_different_task_data_is_an_error(suite, tmp_path):
    b = tmp_path / "pqB"
    shutil.copytree(suite["pq"]["B"], b)
    f = b / "CIFAR10ZeroShot" / "test" / "default" / "predictions.tsv"
    hdr, rows = read_tsv(f)
    rows[3][1] = str(int(rows[3][1]) + 1)
    f.write_text("\t".join(hdr) + "\n" + "".join("\t".join(r) + "\n" for r in rows))
    q = b / "CIRRIT2IRetrieval" / "test" / "default" / "per_query.tsv"
    lines = [ln.split("\t") for ln in q.read_text().splitlines()]
    first = lines[0][1]
    q.write_text("".join("\t".join([m, "other-query-id" if qid == first else qid, v]) + "\n" for m, qid, v in lines))
    p, js, _ = run_compare(str(suite["pq"]["A"]), str(b), "--resamples", 20, check=False, tmp=str(tmp_path))
    assert p.returncode == 1
    err = {e["task"]: e["reason"] for e in js["errors"]}
    assert "not the same task data" in err["CIFAR10ZeroShot"] and "sample 3" in err["CIFAR10ZeroShot"]
    assert "different query ids" in err["CIRRIT2IRetrieval"]
    assert "CIFAR10ZeroShot" in p.stderr
    assert "CIFAR10" in [t["task"] for t in js["tasks"]]  # the others are still compared


def test_bad_command_lines(suite, tmp_path):
    a, b = str(suite["pq"]["A"]), str(suite["pq"]["B"])
    for args in (["compare", a], ["compare", a, b, "--alpha", "1.5"], ["compare", a, b, "--resamples", "0"],
                 ["compare", a, b, "--seed", "-1"], ["compare", a, b, "--seed", "4294967296"],
                 ["compare", a, b, "-t", "NoSuchTask"], ["compare", a, b, "--bogus"],
                 ["compare", a, str(tmp_path / "missing")], ["compare", a, b, "c"]):
        p = mieb(*args, check=False)
        assert p.returncode == 2, (args, p.stderr)
        assert p.stderr
    p = mieb("compare", "--help")
    assert p.returncode == 0 and "shift method" in p.stdout
    # nothing in common: exit 1
    empty = tmp_path / "empty"
    os.makedirs(empty)
    p = mieb("compare", a, str(empty), check=False)
    assert p.returncode == 1 and "no task could be compared" in p.stderr
