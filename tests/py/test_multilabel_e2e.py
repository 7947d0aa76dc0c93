"""VOC2007 (multilabel ImageClassification) end to end: h5py-written files ->
`mieb-eval run` -> result JSON, compared with a re-statement of mteb 2.26.24's
AbsTaskMultilabelClassification._evaluate_subset with numpy and scikit-learn on the same
float32 embeddings: the task's default_rng(42) shuffles and per-label undersampling
(_undersample_data_indices), MultiLabelBinarizer fitted on the eval labels,
KNeighborsClassifier(n_neighbors=5) (the `evaluator_model` the abstask reads; VOC2007's
`evaluator` attribute is never used), classifier.score, lrap on the 0/1 predictions, macro
f1, mteb's own hamming_score (loaded from the installed mteb), and np.mean over the
experiments. Embeddings on a coarse grid make many distances tie exactly, so sklearn's
heap tie rule is exercised; plain normal embeddings, f16 files, a KDTree-sized dimension,
train_idx and a subset train role (/row_index) are covered, and so are the input errors."""
from __future__ import annotations

import importlib.util
import itertools
import json
import os
import subprocess
import zlib
from collections import defaultdict

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.metrics import f1_score, label_ranking_average_precision_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import MultiLabelBinarizer

from helpers import fmt_writer as fw

BUILD = os.environ.get("MIEB_BUILD_DIR", "build")
BIN = os.path.join(BUILD, "mieb-eval")
REPO = os.environ.get("MIEB_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
TASK = "VOC2007"
MTEB = os.path.join(REPO, ".venv", "lib", "python3.11", "site-packages", "mteb")


def _load(relpath, name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(MTEB, relpath))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


hamming_score = _load("_evaluators/classification_metrics.py", "mteb_clf_metrics").hamming_score


def test_installed_mteb_runs_knn():
    """The installed code: the abstask classifies with evaluator_model (kNN 5); VOC2007 sets only `evaluator`."""
    abst = open(os.path.join(MTEB, "abstasks", "multilabel_classification.py")).read()
    voc = open(os.path.join(MTEB, "tasks", "multilabel_classification", "eng", "pascal_voc2007.py")).read()
    assert "evaluator_model: SklearnModelProtocol = KNeighborsClassifier(n_neighbors=5)" in abst
    assert "X_train, y_train, X_test, self.evaluator_model" in abst
    assert "evaluator_model" not in voc and "evaluator = MultiOutputClassifier" in voc


def undersample(np_rng, y, spl):
    """AbsTaskMultilabelClassification._undersample_data_indices (idxs=None)."""
    sample_indices = []
    idxs = list(np.arange(len(y)))
    np_rng.shuffle(idxs)
    label_counter = defaultdict(int)
    for i in idxs:
        if any((label_counter[label] < spl) for label in y[i]):
            sample_indices.append(i)
            for label in y[i]:
                label_counter[label] += 1
    return sample_indices


def mteb_reference(train_emb, y_train, eval_emb, y_eval, spl=8, n_exp=5):
    np_rng = np.random.default_rng(42)
    train_samples = [undersample(np_rng, y_train, spl) for _ in range(n_exp)]
    unique = list(set(itertools.chain.from_iterable(train_samples)))
    unique_emb = dict(zip(unique, train_emb[unique], strict=True))
    binarizer = MultiLabelBinarizer()
    y_test = binarizer.fit_transform(y_eval)
    scores = []
    for sample_indices in train_samples:
        X_train = np.stack([unique_emb[idx] for idx in sample_indices])
        ytr = binarizer.transform([y_train[i] for i in sample_indices])
        clf = clone(KNeighborsClassifier(n_neighbors=5))
        clf.fit(X_train, ytr)
        y_pred = clf.predict(eval_emb)
        scores.append(dict(accuracy=clf.score(eval_emb, y_test),
                           lrap=label_ranking_average_precision_score(y_test, y_pred),
                           f1=f1_score(y_test, y_pred, average="macro"),
                           hamming=hamming_score(y_test, y_pred)))
    avg = {k: np.mean([s[k] for s in scores]) for k in scores[0]}
    return dict(scores_per_experiment=scores, **avg), [[int(i) for i in s] for s in train_samples]


def make(rng, n, n_lab, dim, ids, grid, empty_frac):
    """Items with 1-3 labels (some empty) near the mean of their labels' centres."""
    centres = rng.normal(0, 1.5, (n_lab, dim))
    labels = []
    x = np.empty((n, dim))
    for i in range(n):
        k = 0 if rng.random() < empty_frac else int(rng.integers(1, 4))
        ls = sorted(rng.choice(n_lab, size=k, replace=False).tolist())
        labels.append([ids[j] for j in ls])
        x[i] = (centres[ls].mean(0) if k else 0) + rng.normal(0, 1, dim)
    if grid:  # values on a 1/4 grid in [-2, 2]: float64 dot products are exact, ties abound
        x = np.clip(np.round(x * 2) / 4, -2, 2)
    return x.astype(np.float32), labels


def csr(lists):
    ptr = np.zeros(len(lists) + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(l) for l in lists])
    return ptr, np.asarray([v for l in lists for v in l], dtype=np.int64)


def build(tmp, rng, n_train, n_eval, dim, ids, grid, dtype="f32", train_idx=False, subset_train=False,
          extra_train_label=None):
    td, ed = os.path.join(tmp, "task-data"), os.path.join(tmp, "emb")
    fw.write_model_meta(ed)
    x, labels = make(rng, n_train + n_eval, len(ids), dim, ids, grid, 0.03)
    ytr, yev = labels[:n_train], labels[n_train:]
    if extra_train_label is not None:  # a label id the eval split never uses: the binarizer drops it
        for i in range(0, n_train, 7):
            ytr[i] = ytr[i] + [extra_train_label]
    arrays = {}
    tp, tf = csr(ytr)
    ep, ef = csr(yev)
    np_rng = np.random.default_rng(42)
    sels = [undersample(np_rng, ytr, 8) for _ in range(5)]
    if train_idx:
        width = max(map(len, sels)) + 2
        arrays["train_idx"] = np.array([s + [-1] * (width - len(s)) for s in sels], dtype=np.int64)
    with fw.open_task_file(td, TASK) as f:
        fw.write_labels_group(f, "test", "default", train_labels_indptr=tp, train_labels_flat=tf,
                              eval_labels_indptr=ep, eval_labels_flat=ef, **arrays)
    tr = x[:n_train]
    if subset_train:
        rows = np.array(sorted(set().union(*sels)), dtype=np.int64)
        rng.shuffle(rows)
        seen_sub = fw.write_role(ed, TASK, "test", "default", "train", tr[rows], dtype=dtype)
        fw.add_row_index(ed, TASK, "test", "default", "train", rows)
        seen_tr = np.zeros_like(tr)
        seen_tr[rows] = seen_sub
    else:
        seen_tr = fw.write_role(ed, TASK, "test", "default", "train", tr, dtype=dtype)
    seen_ev = fw.write_role(ed, TASK, "test", "default", "eval", x[n_train:], dtype=dtype)
    return td, ed, np.ascontiguousarray(seen_tr, dtype=np.float32), ytr, \
        np.ascontiguousarray(seen_ev, dtype=np.float32), yev


def run(td, ed, out, check=True):
    p = subprocess.run([BIN, "run", "--task-data", td, "--embeddings", ed, "-t", TASK, "--output-folder", out,
                        "--device", "cpu"], capture_output=True, text=True, timeout=300)
    if check:
        assert p.returncode == 0, p.stderr
    return p


CASES = [
    # n_train, n_eval, dim, label ids, grid, dtype, train_idx, subset_train, extra train label
    (300, 200, 32, list(range(20)), True, "f32", False, False, None),
    (250, 160, 24, [-7, 3, 10**12, 5, 0, 99, 42, -1, 8, 17, 23, 4], True, "f32", True, True, 1234),
    (400, 180, 48, list(range(20)), False, "f32", False, False, None),
    (220, 150, 20, list(range(15)), False, "f16", True, False, None),
    (200, 120, 8, list(range(10)), False, "f32", False, True, None),  # D <= 15: sklearn's KDTree
]


@pytest.mark.parametrize("case", CASES, ids=[f"n{c[0]}-d{c[2]}-{'grid' if c[4] else 'normal'}-{c[5]}"
                                            + ("-idx" if c[6] else "") + ("-sub" if c[7] else "") for c in CASES])
def test_matches_mteb(tmp_path, case):
    n_train, n_eval, dim, ids, grid, dtype, tidx, sub, extra = case
    rng = np.random.default_rng(zlib.crc32(repr(case).encode()))
    td, ed, tr, ytr, ev, yev = build(str(tmp_path), rng, n_train, n_eval, dim, ids, grid, dtype, tidx, sub, extra)
    out = str(tmp_path / "out")
    run(td, ed, out)
    path = os.path.join(out, "results", "test-org__test-model", "rev0", f"{TASK}.json")
    text = open(path).read()
    data = json.loads(text)
    assert json.dumps(data, indent=2) == text
    got = data["scores"]["test"][0]
    ref, _ = mteb_reference(tr, ytr, ev, yev)
    assert list(got) == list(ref) + ["main_score", "hf_subset", "languages", "mteb_version"]
    assert len(got["scores_per_experiment"]) == 5
    for g, r in zip(got["scores_per_experiment"], ref["scores_per_experiment"]):
        assert list(g) == ["accuracy", "lrap", "f1", "hamming"]
        assert g == {k: round(v, 6) for k, v in r.items()}, (g, r)
    for k in ("accuracy", "lrap", "f1", "hamming"):
        assert got[k] == round(ref[k], 6), (k, got[k], ref[k])
    assert got["main_score"] == got["lrap"]


def test_bad_inputs(tmp_path):
    rng = np.random.default_rng(3)
    td, ed, tr, ytr, ev, yev = build(str(tmp_path), rng, 120, 40, 20, list(range(6)), True, train_idx=True)
    tfile = os.path.join(td, f"{TASK}.h5")
    tp, tf = csr(ytr)
    ep, ef = csr(yev)

    def rewrite(**arrays):
        os.remove(tfile)
        with fw.open_task_file(td, TASK) as f:
            fw.write_labels_group(f, "test", "default", **arrays)

    def expect(tag, *needles):
        p = run(td, ed, str(tmp_path / tag), check=False)
        assert p.returncode == 1, p.stderr
        for s in needles:
            assert s in p.stderr, (s, p.stderr)

    base = dict(train_labels_indptr=tp, train_labels_flat=tf, eval_labels_indptr=ep, eval_labels_flat=ef)
    bad = tp.copy()
    bad[5], bad[6] = bad[6] + 1, bad[5]
    rewrite(**{**base, "train_labels_indptr": bad})
    expect("o1", tfile, "train_labels_indptr decreases at row")
    rewrite(**{**base, "eval_labels_flat": ef[:-1]})
    expect("o2", tfile, "eval_labels_indptr ends at", "eval_labels_flat")
    rewrite(**{**base, "eval_labels_indptr": ep[:-1], "eval_labels_flat": ef[:ep[-2]]})  # 39 rows, 40 embeddings
    expect("o3", "eval.h5", "40 eval embeddings", "39 rows", tfile)
    rewrite(**{**base, "train_labels_indptr": tp[:-1], "train_labels_flat": tf[:tp[-2]]})
    expect("o4", "train.h5", "120 train embeddings", "119 rows")
    rewrite(**{**base, "eval_labels_flat": np.full_like(ef, 3)})
    expect("o5", tfile, "eval_labels_flat holds 1 distinct label id")
    rewrite(**{**base, "eval_labels_indptr": np.r_[ep[:1] + 1, ep[1:]]})
    expect("o6", tfile, "eval_labels_indptr[0] = 1")
    np_rng = np.random.default_rng(42)
    sels = [undersample(np_rng, ytr, 8) for _ in range(5)]
    w = max(map(len, sels)) + 1
    ti = np.array([s + [-1] * (w - len(s)) for s in sels], dtype=np.int64)
    ti[3, [0, 1]] = ti[3, [1, 0]]
    rewrite(**base, train_idx=ti)
    expect("o7", tfile, "train_idx[3][0]", "default_rng(42)")
    rewrite(**{k: v for k, v in base.items() if k != "eval_labels_flat"})
    expect("o8", tfile, "eval_labels_flat")
    # fewer than 5 train rows drawn: sklearn refuses n_neighbors > n_samples_fit
    few = [[0]] * 3 + [[]] * 117
    fp, ff = csr(few)
    rewrite(**{**base, "train_labels_indptr": fp, "train_labels_flat": ff})
    expect("o9", "n_neighbors", tfile)
