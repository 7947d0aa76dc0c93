"""ZeroShotClassification end to end: h5py-written files -> `mieb-eval run` -> result JSON,
compared with a numpy re-statement of mteb 2.26's ZeroShotClassificationEvaluator and
AbsTaskZeroShotClassification._calculate_scores (sklearn metrics) on the same embeddings.

Both scoring branches are covered: softmax(100*cosine) for tasks whose modalities are
["image","text"] (PatchCamelyonZeroShot, DTDZeroShot) and the model's similarity for the
others (RenderedSST2, CIFAR10ZeroShot), with cosine and dot models. Embeddings have small
integer coordinates and power-of-two norms so fp32 similarities are exact and ties occur.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import zlib

import numpy as np
import pytest
from sklearn import metrics

from helpers import fmt_writer as fw

BUILD = os.environ.get("MIEB_BUILD_DIR", "build")
BIN = os.path.join(BUILD, "mieb-eval")
REPO = os.environ.get("MIEB_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
TASKS = {t["name"]: t for t in json.load(open(os.path.join(REPO, "configs", "tasks.json")))}


def exact_vectors(rng, n, dim):
    v = np.zeros((n, dim), dtype=np.float32)
    for i in range(n):
        v[i, rng.choice(dim, 4, replace=False)] = rng.choice([-1.0, 1.0], 4)
    return v * (2.0 ** rng.integers(-2, 3, size=(n, 1))).astype(np.float32)


def torch_like_softmax(z):
    """torch's fp32 softmax over the last dim: exp(x - max), sum, multiply by 1/sum."""
    z = z.astype(np.float32)
    e = np.exp(z - z.max(axis=1, keepdims=True)).astype(np.float32)
    s = np.float32(1.0) / e.sum(axis=1, keepdims=True, dtype=np.float32)
    return (e * s).astype(np.float32)


def mteb_reference(task, img, txt, labels, sim):
    """mteb's evaluator + _calculate_scores, with numpy standing in for torch (fp32)."""
    if TASKS[task]["modalities"] == ["image", "text"]:
        t = txt / np.linalg.norm(txt, axis=-1, keepdims=True)
        x = img / np.linalg.norm(img, axis=-1, keepdims=True)
        probs = torch_like_softmax((x @ t.T).astype(np.float32) * np.float32(100))
    elif sim == "cosine":
        t = txt / np.maximum(np.linalg.norm(txt, axis=1, keepdims=True), 1e-12)
        x = img / np.maximum(np.linalg.norm(img, axis=1, keepdims=True), 1e-12)
        probs = (x @ t.T).astype(np.float32)
    else:
        probs = (img @ txt.T).astype(np.float32)
    pred = probs.argmax(1)
    s = {"accuracy": metrics.accuracy_score(labels, pred),
         "f1": metrics.f1_score(labels, pred, average="macro"),
         "f1_weighted": metrics.f1_score(labels, pred, average="weighted"),
         "precision": metrics.precision_score(labels, pred, average="macro"),
         "precision_weighted": metrics.precision_score(labels, pred, average="weighted"),
         "recall": metrics.recall_score(labels, pred, average="macro"),
         "recall_weighted": metrics.recall_score(labels, pred, average="weighted"),
         "ap": None, "ap_weighted": None}
    if len(np.unique(labels)) == 2:
        s["ap"] = metrics.average_precision_score(labels, probs[:, 1], average="macro")
        s["ap_weighted"] = metrics.average_precision_score(labels, probs[:, 1], average="weighted")
    return s


def build(tmp, rng, task, n, k, dim, sim, dtype, two_labels=False):
    td, ed = os.path.join(tmp, "task-data"), os.path.join(tmp, "emb")
    fw.write_model_meta(ed, sim=sim)
    split = TASKS[task]["eval_splits"][0]
    txt = exact_vectors(rng, k, dim)
    labels = rng.integers(0, 2 if two_labels else k, n)
    # images near their class prompt, some noise, some exact duplicates of a prompt (ties)
    img = exact_vectors(rng, n, dim)
    near = rng.random(n) < 0.6
    img[near] = txt[labels[near]] * np.float32(2.0) + img[near] * np.float32(0.5 * (rng.random() < 0.5))
    with fw.open_task_file(td, task) as f:
        fw.write_labels_group(f, split, "default", eval_labels=labels)
    img_seen = fw.write_role(ed, task, split, "default", "eval", img, dtype=dtype)
    txt_seen = fw.write_role(ed, task, split, "default", "candidate_labels", txt, dtype=dtype)
    return td, ed, split, img_seen, txt_seen, labels


def run(td, ed, out, task, check=True):
    p = subprocess.run([BIN, "run", "--task-data", td, "--embeddings", ed, "-t", task, "--output-folder", out,
                        "--device", "cpu"], capture_output=True, text=True)
    if check:
        assert p.returncode == 0, p.stderr
    return p


CASES = [
    ("PatchCamelyonZeroShot", 300, 2, 16, "cosine", "f32", False),
    ("PatchCamelyonZeroShot", 200, 2, 8, "dot", "f16", False),
    ("DTDZeroShot", 400, 47, 32, "dot", "f32", False),
    ("RenderedSST2", 250, 2, 16, "cosine", "f32", False),
    ("RenderedSST2", 250, 2, 16, "dot", "bf16", False),
    ("CIFAR10ZeroShot", 500, 10, 16, "dot", "f32", False),
    ("CIFAR10ZeroShot", 120, 10, 16, "cosine", "f32", True),   # two classes present: ap computed
    ("EuroSATZeroShot", 90, 10, 8, "cosine", "f32", True),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[4]}-{c[5]}-{c[6]}" for c in CASES])
def test_matches_mteb(tmp_path, case):
    task, n, k, dim, sim, dtype, two = case
    rng = np.random.default_rng(zlib.crc32(repr(case).encode()))
    td, ed, split, img, txt, labels = build(str(tmp_path), rng, task, n, k, dim, sim, dtype, two)
    out = str(tmp_path / "out")
    run(td, ed, out, task)
    path = os.path.join(out, "results", "test-org__test-model", "rev0", f"{task}.json")
    text = open(path).read()
    data = json.loads(text)
    assert json.dumps(data, indent=2) == text
    sub = data["scores"][split][0]
    ref = mteb_reference(task, img, txt, labels, sim)
    keys = list(ref) + ["main_score", "hf_subset", "languages", "mteb_version"]
    assert list(sub) == keys
    for key, v in ref.items():
        if v is None:
            assert sub[key] is None, key
        else:
            assert sub[key] == round(v, 6), (key, sub[key], v)
    assert sub["main_score"] == sub["accuracy"]


def test_bad_inputs(tmp_path):
    rng = np.random.default_rng(5)
    task = "CIFAR10ZeroShot"
    td, ed, split, img, txt, labels = build(str(tmp_path), rng, task, 50, 10, 8, "cosine", "f32")
    # label rows disagree with the embeddings
    with fw.open_task_file(td, task) as f:
        fw.write_labels_group(f, split, "default", eval_labels=labels[:-1])
    p = run(td, ed, str(tmp_path / "o1"), task, check=False)
    assert p.returncode == 1 and "49 labels" in p.stderr and "eval" in p.stderr, p.stderr
    # a label that is not a candidate row
    bad = labels.copy()
    bad[3] = 10
    with fw.open_task_file(td, task) as f:
        fw.write_labels_group(f, split, "default", eval_labels=bad)
    p = run(td, ed, str(tmp_path / "o2"), task, check=False)
    assert p.returncode == 1 and "eval_labels[3]" in p.stderr and task in p.stderr, p.stderr
    # binary labels without class 1: sklearn's average_precision_score raises
    two = np.where(labels % 2 == 0, 0, 2)
    with fw.open_task_file(td, task) as f:
        fw.write_labels_group(f, split, "default", eval_labels=two)
    p = run(td, ed, str(tmp_path / "o3"), task, check=False)
    assert p.returncode == 1 and "pos_label=1" in p.stderr, p.stderr
