"""ImageClassification (single-label linear probe) end to end: h5py-written files ->
`mieb-eval run` -> result JSON, compared with a re-statement of mteb 2.26's
AbsTaskClassification (_undersample_data draw, SklearnEvaluator with
LogisticRegression(max_iter=100) on the same float32 embeddings, _calculate_scores and
_calculate_avg_scores) using numpy and scikit-learn. Covers STL10's 10x8 parameters, the
16x5 tasks, a binary task (ap computed on hard predictions), arbitrary int64 label ids,
classes smaller than samples_per_label, f16 embeddings, train_idx and a train role that
holds only the chosen rows (/row_index), and the input errors."""
from __future__ import annotations

import json
import os
import subprocess
import warnings
import zlib

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import (accuracy_score, average_precision_score, f1_score, precision_score,
                             recall_score)

from helpers import fmt_writer as fw
from helpers.mieb_tools import mteb_fewshot_draw

BUILD = os.environ.get("MIEB_BUILD_DIR", "build")
BIN = os.path.join(BUILD, "mieb-eval")
REPO = os.environ.get("MIEB_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
TASKS = {t["name"]: t for t in json.load(open(os.path.join(REPO, "configs", "tasks.json")))}


def calculate_scores(y_test, y_pred):
    """mteb AbsTaskClassification._calculate_scores."""
    s = dict(accuracy=accuracy_score(y_test, y_pred), f1=f1_score(y_test, y_pred, average="macro"),
             f1_weighted=f1_score(y_test, y_pred, average="weighted"),
             precision=precision_score(y_test, y_pred, average="macro"),
             precision_weighted=precision_score(y_test, y_pred, average="weighted"),
             recall=recall_score(y_test, y_pred, average="macro"),
             recall_weighted=recall_score(y_test, y_pred, average="weighted"), ap=None, ap_weighted=None)
    if len(np.unique(y_test)) == 2:
        s["ap"] = average_precision_score(y_test, y_pred, average="macro")
        s["ap_weighted"] = average_precision_score(y_test, y_pred, average="weighted")
    return s


def calculate_avg_scores(scores):
    """mteb AbsTaskClassification._calculate_avg_scores."""
    avg = {k: (float(np.mean(v)) if (v := [s[k] for s in scores if s[k] is not None]) else np.nan)
           for k in scores[0]}
    return dict(scores_per_experiment=scores, **avg)


def mteb_reference(task, train_emb, train_labels, eval_emb, eval_labels):
    p = TASKS[task]["params"]
    sels = mteb_fewshot_draw(train_labels.tolist(), p["samples_per_label"], p["n_experiments"])
    scores, preds = [], []
    for sel in sels:
        clf = LogisticRegression(max_iter=100, random_state=42)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf.fit(train_emb[sel], train_labels[sel].tolist())
        y_pred = clf.predict(eval_emb)
        preds.append(y_pred)
        scores.append(calculate_scores(eval_labels.tolist(), y_pred))
    return calculate_avg_scores(scores), sels, preds


def make(rng, n, k, dim, ids, sep):
    centres = rng.normal(0, 1, (k, dim)).astype(np.float32)
    # skewed class sizes: some classes smaller than samples_per_label
    w = rng.random(k) ** 2 + 0.02
    cls = rng.choice(k, n, p=w / w.sum())
    x = (centres[cls] * np.float32(sep) + rng.normal(0, 1, (n, dim))).astype(np.float32)
    return x, np.asarray(ids, dtype=np.int64)[cls]


def build(tmp, rng, task, n_train, n_eval, k, dim, ids, sep=1.5, dtype="f32", train_idx=False, subset_train=False):
    td, ed = os.path.join(tmp, "task-data"), os.path.join(tmp, "emb")
    fw.write_model_meta(ed)
    split = TASKS[task]["eval_splits"][0]
    xt, yt = make(rng, n_train + n_eval, k, dim, ids, sep)
    tr, tl, ev, el = xt[:n_train], yt[:n_train], xt[n_train:], yt[n_train:]
    p = TASKS[task]["params"]
    sels = mteb_fewshot_draw(tl.tolist(), p["samples_per_label"], p["n_experiments"])
    extra = {}
    if train_idx:
        width = len(sels[0]) + 3
        extra["train_idx"] = np.array([s + [-1] * (width - len(s)) for s in sels], dtype=np.int64)
    with fw.open_task_file(td, task) as f:
        fw.write_labels_group(f, split, "default", train_labels=tl, eval_labels=el, **extra)
    if subset_train:  # only the chosen rows, in a shuffled order, with /row_index
        rows = np.array(sorted(set().union(*sels)), dtype=np.int64)
        rng.shuffle(rows)
        seen_sub = fw.write_role(ed, task, split, "default", "train", tr[rows], dtype=dtype)
        fw.add_row_index(ed, task, split, "default", "train", rows)
        seen_tr = np.zeros_like(tr)
        seen_tr[rows] = seen_sub
    else:
        seen_tr = fw.write_role(ed, task, split, "default", "train", tr, dtype=dtype)
    seen_ev = fw.write_role(ed, task, split, "default", "eval", ev, dtype=dtype)
    return td, ed, split, seen_tr, tl, seen_ev, el


def run(td, ed, out, task, check=True):
    p = subprocess.run([BIN, "run", "--task-data", td, "--embeddings", ed, "-t", task, "--output-folder", out,
                        "--device", "cpu"], capture_output=True, text=True)
    if check:
        assert p.returncode == 0, p.stderr
    return p


def rounded(v):
    return None if v is None else round(v, 6)


CASES = [
    # task, n_train, n_eval, k, dim, label ids, sep, dtype, train_idx, subset_train
    ("STL10", 300, 200, 10, 16, list(range(10)), 1.5, "f32", False, False),
    ("CIFAR10", 400, 300, 10, 24, [-5, 0, 2, 3, 7, 11, 100, 10**10, 42, 9], 1.2, "f32", True, True),
    ("PatchCamelyon", 200, 150, 2, 12, [0, 1], 0.6, "f32", False, False),
    ("DTD", 600, 250, 47, 32, list(range(47)), 2.0, "f16", True, False),
    ("FER2013", 150, 120, 7, 8, [3, 1, 4, 15, 9, 2, 6], 0.8, "f32", False, True),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] + ("-idx" if c[8] else "") + ("-sub" if c[9] else "") for c in CASES])
def test_matches_mteb(tmp_path, case):
    task, n_train, n_eval, k, dim, ids, sep, dtype, tidx, sub = case
    rng = np.random.default_rng(zlib.crc32(repr(case).encode()))
    td, ed, split, tr, tl, ev, el = build(str(tmp_path), rng, task, n_train, n_eval, k, dim, ids, sep, dtype, tidx, sub)
    out = str(tmp_path / "out")
    run(td, ed, out, task)
    path = os.path.join(out, "results", "test-org__test-model", "rev0", f"{task}.json")
    text = open(path).read()
    data = json.loads(text)
    assert json.dumps(data, indent=2) == text
    got = data["scores"][split][0]
    ref, _, _ = mteb_reference(task, tr, tl, ev, el)
    assert list(got) == list(ref) + ["main_score", "hf_subset", "languages", "mteb_version"]
    assert len(got["scores_per_experiment"]) == TASKS[task]["params"]["n_experiments"]
    for g, r in zip(got["scores_per_experiment"], ref["scores_per_experiment"]):
        assert list(g) == list(r)
        assert g == {key: rounded(v) for key, v in r.items()}, (g, r)
    for key, v in ref.items():
        if key == "scores_per_experiment":
            continue
        if isinstance(v, float) and np.isnan(v):
            assert isinstance(got[key], float) and np.isnan(got[key]), key
        else:
            assert got[key] == round(v, 6), (key, got[key], v)
    assert got["main_score"] == got["accuracy"]
    binary = len(np.unique(el)) == 2
    assert (got["scores_per_experiment"][0]["ap"] is not None) == binary
    assert "NaN" in text or binary


def test_bad_inputs(tmp_path):
    rng = np.random.default_rng(11)
    task = "CIFAR10"
    td, ed, split, tr, tl, ev, el = build(str(tmp_path), rng, task, 120, 40, 10, 8, list(range(10)), train_idx=True)
    tfile = os.path.join(td, f"{task}.h5")

    def rewrite(**arrays):
        os.remove(tfile)
        with fw.open_task_file(td, task) as f:
            fw.write_labels_group(f, split, "default", **arrays)

    sels = mteb_fewshot_draw(tl.tolist(), 16, 5)
    # a train_idx that is not mteb's draw: rows swapped inside experiment 2
    bad = np.array(sels, dtype=np.int64)
    bad[2, [0, 1]] = bad[2, [1, 0]]
    rewrite(train_labels=tl, eval_labels=el, train_idx=bad)
    p = run(td, ed, str(tmp_path / "o1"), task, check=False)
    assert p.returncode == 1 and "train_idx[2][0]" in p.stderr and tfile in p.stderr, p.stderr
    # a train_idx of the wrong shape
    rewrite(train_labels=tl, eval_labels=el, train_idx=np.array(sels[:4], dtype=np.int64))
    p = run(td, ed, str(tmp_path / "o2"), task, check=False)
    assert p.returncode == 1 and "train_idx is 4 x" in p.stderr, p.stderr
    # one class in the train split: sklearn's LogisticRegression refuses to fit
    rewrite(train_labels=np.full_like(tl, 3), eval_labels=el)
    p = run(td, ed, str(tmp_path / "o3"), task, check=False)
    assert p.returncode == 1 and "one class" in p.stderr and task in p.stderr, p.stderr
    # labels and embeddings disagree
    rewrite(train_labels=tl, eval_labels=el[:-1])
    p = run(td, ed, str(tmp_path / "o4"), task, check=False)
    assert p.returncode == 1 and "39 labels" in p.stderr and "eval" in p.stderr, p.stderr
    rewrite(train_labels=tl[:-1], eval_labels=el)
    p = run(td, ed, str(tmp_path / "o5"), task, check=False)
    assert p.returncode == 1 and "119 rows" in p.stderr and "train" in p.stderr, p.stderr
    # a train role with /row_index that lacks a chosen row
    rewrite(train_labels=tl, eval_labels=el)
    rows = np.array(sorted(set().union(*sels)), dtype=np.int64)[1:]
    fw.write_role(ed, task, split, "default", "train", tr[rows])
    fw.add_row_index(ed, task, split, "default", "train", rows)
    p = run(td, ed, str(tmp_path / "o6"), task, check=False)
    assert p.returncode == 1 and "not in /row_index" in p.stderr, p.stderr
    assert not os.path.exists(os.path.join(str(tmp_path / "o6"), "results", "test-org__test-model", "rev0",
                                           f"{task}.json"))


def read_role(ed, task, split, role):
    import h5py
    with h5py.File(os.path.join(ed, task, split, "default", f"{role}.h5")) as f:
        return f["embeddings"][...].astype(np.float32)


def test_synth_suite(tmp_path):
    """`mieb-eval synth` classification and zero-shot data: the contract's shapes, train_idx =
    mteb's draw where written, VOC2007's CSR targets, and probe scores equal to the reference."""
    import h5py
    tasks = ["STL10", "PatchCamelyon", "DTD", "Caltech101", "VOC2007", "CIFAR10ZeroShot", "PatchCamelyonZeroShot"]
    out = str(tmp_path / "s")
    p = subprocess.run([BIN, "synth", "--out", out, "--tasks", ",".join(tasks), "--scale", "0.02", "--dim", "16"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    td, ed = os.path.join(out, "task-data"), os.path.join(out, "embeddings")
    seen_idx = 0
    for task in tasks:
        split = TASKS[task]["eval_splits"][0]
        with h5py.File(os.path.join(td, f"{task}.h5")) as f:
            g = f[f"{split}/default"]
            if task == "VOC2007":
                for part in ("train", "eval"):
                    ptr, flat = g[f"{part}_labels_indptr"][...], g[f"{part}_labels_flat"][...]
                    assert ptr[0] == 0 and ptr[-1] == len(flat) and np.all(np.diff(ptr) >= 1)
                    assert np.all(np.diff(ptr) <= 3)
                    assert len(ptr) - 1 == len(read_role(ed, task, split, part))
                continue
            if TASKS[task]["type"] == "ZeroShotClassification":
                el = g["eval_labels"][...]
                cand = read_role(ed, task, split, "candidate_labels")
                assert len(el) == len(read_role(ed, task, split, "eval"))
                assert el.min() >= 0 and el.max() < len(cand)
                continue
            tl, el = g["train_labels"][...], g["eval_labels"][...]
            par = TASKS[task]["params"]
            sels = mteb_fewshot_draw(tl.tolist(), par["samples_per_label"], par["n_experiments"])
            if "train_idx" in g:
                seen_idx += 1
                assert g["train_idx"][...].tolist() == sels
        tr, ev = read_role(ed, task, split, "train"), read_role(ed, task, split, "eval")
        run(td, ed, str(tmp_path / "o"), task)
        got = json.load(open(os.path.join(str(tmp_path / "o"), "results", "mieb-synth__synthetic-encoder",
                                          "0" * 40, f"{task}.json")))["scores"][split][0]
        ref, _, _ = mteb_reference(task, tr, tl, ev, el)
        assert got["accuracy"] == round(ref["accuracy"], 6) and got["f1"] == round(ref["f1"], 6), task
    assert seen_idx >= 1  # about half the tasks carry train_idx
