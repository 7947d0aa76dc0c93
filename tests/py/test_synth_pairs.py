"""`mieb-eval synth` for Compositionality and Visual STS (host/synth/synth_compositionality.c,
host/synth/synth_sts.c): FORMAT.md layout (checked with h5py), the planted structure and exact
ties the scorer tests rely on, byte-identical reruns, aggregates generated through their
sub-task, and `mieb-eval run` scoring the whole suite."""
from __future__ import annotations

import filecmp
import json
import os
import subprocess

import h5py
import numpy as np
import pytest

COMPO = ["AROCocoOrder", "AROVisualAttribution", "SugarCrepe", "Winoground", "ImageCoDe"]
STS = ["STS12VisualSTS", "STS17MultilingualVisualSTS", "STSBenchmarkMultilingualVisualSTS"]
AGG = ["VisualSTS17Eng", "VisualSTS-b-Multilingual"]


def binary():
    return os.path.join(os.environ["MIEB_BUILD_DIR"], "mieb-eval")


def registry():
    src = os.environ.get("MIEB_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
    return {t["name"]: t for t in json.load(open(os.path.join(src, "configs", "tasks.json")))}


def synth(out, *args):
    p = subprocess.run([binary(), "synth", "--out", str(out), *map(str, args)], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    return p


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    out = tmp_path_factory.mktemp("synth-pairs")
    synth(out, "--tasks", ",".join(COMPO + STS + AGG), "--seed", 3, "--scale", 0.05)
    return out


def role(out, task, split, subset, name):
    with h5py.File(os.path.join(out, "embeddings", task, split, subset, f"{name}.h5"), "r") as f:
        assert "offsets" not in f
        return f["embeddings"][()], dict(f.attrs)


def test_compositionality_layout_and_structure(suite):
    reg = registry()
    for task in COMPO:
        t = reg[task]
        ni, nt = len(t["columns"]["images_column_names"]), len(t["columns"]["texts_column_names"])
        with h5py.File(os.path.join(suite, "task-data", f"{task}.h5"), "r") as f:
            assert f.attrs["task_name"] == task and f.attrs["format"] == "mieb-task"
            g = f["test/default"]
            assert len(g.keys()) == 0
            ns = int(g.attrs["n_samples"])
            assert (g.attrs["n_images"], g.attrs["n_texts"]) == (ni, nt)
            assert g.attrs["n_samples"].dtype == np.int64
        img, a = role(suite, task, "test", "default", "images")
        txt, _ = role(suite, task, "test", "default", "texts")
        assert img.shape == (ns * ni, 32) and txt.shape == (ns * nt, 32) and a["role"] == "images"
        img = img / np.linalg.norm(img, axis=1, keepdims=True)
        txt = txt / np.linalg.norm(txt, axis=1, keepdims=True)
        s = np.einsum("sid,sjd->sij", img.reshape(ns, ni, -1), txt.reshape(ns, nt, -1))
        if ni == 1:  # image 0 usually prefers text 0
            assert np.mean(np.argmax(s[:, 0, :], axis=1) == 0) > 0.5
        if nt == 1:
            assert np.mean(np.argmax(s[:, :, 0], axis=1) == 0) > 0.5
        tie = (txt.reshape(ns, nt, -1)[:, 0] == txt.reshape(ns, nt, -1)[:, min(1, nt - 1)]).all(axis=1) if nt > 1 \
            else (img.reshape(ns, ni, -1)[:, 0] == img.reshape(ns, ni, -1)[:, 1]).all(axis=1)
        assert tie.any(), task  # exact duplicates -> exact score ties


def test_sts_layout_and_structure(suite):
    reg = registry()
    for task in STS:
        t = reg[task]
        with h5py.File(os.path.join(suite, "task-data", f"{task}.h5"), "r") as f:
            assert sorted(f.keys()) == sorted(t["eval_splits"])
            for split in t["eval_splits"]:
                assert sorted(f[split].keys()) == sorted(t["hf_subsets"])
                for subset in t["hf_subsets"]:
                    g = f[f"{split}/{subset}"]
                    gold = g["gold"][()]
                    assert gold.dtype == np.float64 and g.attrs["min_score"] == 0 and g.attrs["max_score"] == 5
                    assert gold.min() >= 0 and gold.max() <= 5 and len(np.unique(gold)) < len(gold)
                    a, _ = role(suite, task, split, subset, "sentence1")
                    b, _ = role(suite, task, split, subset, "sentence2")
                    assert a.shape == b.shape == (len(gold), 32)
                    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
                    assert np.corrcoef(gold, cos)[0, 1] > 0.3
                    assert (a == b).all(axis=1).any()  # sentence2 == sentence1 pairs
                    assert len(np.unique(np.hstack([a, b]), axis=0)) < len(a)  # repeated pairs


def test_aggregates_generate_their_subtask(suite, tmp_path):
    names = os.listdir(os.path.join(suite, "task-data"))
    assert "VisualSTS17Eng.h5" not in names and "VisualSTS-b-Multilingual.h5" not in names
    synth(tmp_path, "--tasks", "VisualSTS17Eng", "--seed", 3, "--scale", 0.05)
    assert os.listdir(os.path.join(tmp_path, "task-data")) == ["STS17MultilingualVisualSTS.h5"]
    assert filecmp.cmp(os.path.join(suite, "task-data", "STS17MultilingualVisualSTS.h5"),
                       os.path.join(tmp_path, "task-data", "STS17MultilingualVisualSTS.h5"), shallow=False)


def test_deterministic(suite, tmp_path):
    synth(tmp_path, "--tasks", ",".join(COMPO + STS), "--seed", 3, "--scale", 0.05)
    for root, _, files in os.walk(os.path.join(suite, "embeddings")):
        for fn in files:
            p = os.path.join(root, fn)
            assert filecmp.cmp(p, os.path.join(tmp_path, "embeddings", os.path.relpath(p, os.path.join(
                suite, "embeddings"))), shallow=False), p


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_dtypes_and_scorer(tmp_path, dtype):
    synth(tmp_path, "--tasks", ",".join(COMPO + STS + AGG), "--seed", 3, "--scale", 0.05, "--dtype", dtype,
          "--shards", 2)
    out = tmp_path / "out"
    p = subprocess.run([binary(), "run", "--task-data", str(tmp_path / "task-data"), "--embeddings",
                        str(tmp_path / "embeddings"), "-t", *COMPO, *STS, *AGG, "--output-folder", str(out)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    res = os.path.join(out, "results", "mieb-synth__synthetic-encoder", "0" * 40)
    for task in COMPO + STS + AGG:
        d = json.load(open(os.path.join(res, f"{task}.json")))
        for subs in d["scores"].values():
            for s in subs:
                assert 0 < s["main_score"] <= 1, (task, s)
