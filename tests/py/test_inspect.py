"""`mieb-eval inspect`: what each task needs against what is present, before scoring.
Inputs are written here (synth for retrieval, h5py for the other families); every row
count the command reports is compared with the arrays written, and each kind of fault
(missing task data, missing group, missing role, row-count mismatch, dim mismatch,
labels beyond the candidate rows, row_index out of range) must give exit status 1 and
name the file at fault."""
import json
import os
import shutil
import subprocess

import numpy as np
import pytest

from helpers.io_helpers import role_dir, write_role_file, write_task_file
from helpers.mieb_tools import build_dir


def mieb(*args):
    return subprocess.run([str(build_dir() / "mieb-eval"), *map(str, args)], capture_output=True, text=True,
                          timeout=120)


def role(ed, task, name, n, dim=8, split="test", subset="default", **kw):
    d = role_dir(ed, task, split, subset)
    write_role_file(os.path.join(d, f"{name}.h5"), np.ones((n, dim), np.float32), role=name, task=task,
                    split=split, subset=subset, **kw)


@pytest.fixture()
def suite(tmp_path):
    out = tmp_path / "s"
    r = mieb("synth", "--out", out, "--tasks", "CIRRIT2IRetrieval", "--scale", 0.002, "--shards", 2)
    assert r.returncode == 0, r.stderr
    td, ed = str(out / "task-data"), str(out / "embeddings")
    # ImageClassification (DTD): 12 train, 5 eval rows; train embeddings hold a row_index subset
    write_task_file(f"{td}/DTD.h5", {"test/default": {"train_labels": np.arange(12) % 3,
                                                       "eval_labels": np.arange(5) % 3}}, task="DTD")
    role(ed, "DTD", "train", 6, row_index=np.arange(0, 12, 2, dtype=np.int64))
    role(ed, "DTD", "eval", 5)
    # ZeroShotClassification (DTDZeroShot): labels reach 3 -> at least 4 candidate rows
    write_task_file(f"{td}/DTDZeroShot.h5", {"test/default": {"eval_labels": np.array([0, 3, 1, 2])}},
                    task="DTDZeroShot")
    role(ed, "DTDZeroShot", "eval", 4)
    role(ed, "DTDZeroShot", "candidate_labels", 4)
    # Compositionality (Winoground): 3 samples x 2 images x 2 texts
    write_task_file(f"{td}/Winoground.h5", {"test/default": {}}, task="Winoground")
    import h5py
    with h5py.File(f"{td}/Winoground.h5", "a") as f:
        for k, v in (("n_samples", 3), ("n_images", 2), ("n_texts", 2)):
            f["test/default"].attrs[k] = np.int64(v)
    role(ed, "Winoground", "images", 6)
    role(ed, "Winoground", "texts", 6)
    # VisualSTS (STS12VisualSTS): 7 pairs
    write_task_file(f"{td}/STS12VisualSTS.h5", {"test/default": {"gold": np.linspace(0, 5, 7)}},
                    task="STS12VisualSTS", attrs=None)
    role(ed, "STS12VisualSTS", "sentence1", 7)
    role(ed, "STS12VisualSTS", "sentence2", 7)
    return td, ed


TASKS = ["CIRRIT2IRetrieval", "DTD", "DTDZeroShot", "Winoground", "STS12VisualSTS", "VisualSTS17Eng"]


def inspect(td, ed, *tasks):
    r = mieb("inspect", "--task-data", td, "--embeddings", ed, "-t", *tasks, "--json")
    return r.returncode, (json.loads(r.stdout) if r.stdout.strip() else None), r.stderr


def test_all_present(suite):
    td, ed = suite
    rc, js, err = inspect(td, ed, *TASKS)
    assert rc == 0, json.dumps(js, indent=1) + err
    by = {t["task"]: t for t in js}
    assert all(t["ok"] for t in js) and by["VisualSTS17Eng"]["aggregate_of"] == "STS17MultilingualVisualSTS"
    import h5py
    with h5py.File(f"{td}/CIRRIT2IRetrieval.h5") as f:
        nq, nc = len(f["test/default/query_ids"]), len(f["test/default/corpus_ids"])
    g = by["CIRRIT2IRetrieval"]["groups"][0]
    assert (g["n_queries"], g["n_corpus"]) == (nq, nc)
    roles = {r["role"]: r for r in g["roles"]}
    assert roles["queries"]["n_items"] == nq and roles["corpus"]["n_items"] == nc
    assert roles["corpus"]["n_shards"] == 2 and roles["corpus"]["dtype"] == "float32"
    assert not roles["corpus"]["multivector"]
    dtd = {r["role"]: r for r in by["DTD"]["groups"][0]["roles"]}
    assert by["DTD"]["groups"][0]["n_train"] == 12 and dtd["train"]["n_items"] == 6 and dtd["train"]["row_index"]
    assert {r["role"] for r in by["Winoground"]["groups"][0]["roles"]} == {"images", "texts"}
    assert by["STS12VisualSTS"]["groups"][0]["n_pairs"] == 7
    r = mieb("inspect", "--task-data", td, "--embeddings", ed, "-t", *TASKS)  # text report
    assert r.returncode == 0 and "6 task(s) inspected, 0 with problems" in r.stdout


def faulty(td, ed, task, substr):
    rc, js, err = inspect(td, ed, task)
    assert rc == 1, js
    text = json.dumps(js)
    assert substr in text, text
    assert not js[0]["ok"]


def test_missing_inputs(suite):
    td, ed = suite
    os.remove(f"{td}/STS12VisualSTS.h5")
    faulty(td, ed, "STS12VisualSTS", "STS12VisualSTS.h5: task-data file is missing")
    shutil.rmtree(f"{ed}/Winoground")
    faulty(td, ed, "Winoground", "texts")
    for p in os.listdir(f"{ed}/CIRRIT2IRetrieval/test/default"):
        if p.startswith("corpus"):
            os.remove(f"{ed}/CIRRIT2IRetrieval/test/default/{p}")
    faulty(td, ed, "CIRRIT2IRetrieval", "corpus")
    write_task_file(f"{td}/DTD.h5", {"train/default": {"eval_labels": np.arange(3)}}, task="DTD")
    faulty(td, ed, "DTD", "group /test/default is missing")


def test_inconsistent_inputs(suite):
    td, ed = suite
    role(ed, "STS12VisualSTS", "sentence2", 6)
    faulty(td, ed, "STS12VisualSTS", "sentence2.h5: 6 items, the task data has 7")
    role(ed, "DTDZeroShot", "candidate_labels", 3)
    faulty(td, ed, "DTDZeroShot", "labels reach index 3")
    role(ed, "Winoground", "texts", 6, dim=4)
    faulty(td, ed, "Winoground", "dim 4 differs")
    role(ed, "DTD", "train", 2, row_index=np.array([0, 12], dtype=np.int64))
    faulty(td, ed, "DTD", "/row_index[1] = 12 is outside the 12 rows")
    write_task_file(f"{td}/DTD.h5", {"test/default": {"train_labels": np.arange(4), "eval_labels": np.arange(5)}},
                    task="Other")
    faulty(td, ed, "DTD", "DTD.h5")


def test_benchmark_and_usage(suite):
    td, ed = suite
    r = mieb("inspect", "--task-data", td, "--embeddings", ed, "-b", "lite", "--json")
    assert r.returncode == 1
    js = json.loads(r.stdout)
    assert len(js) == 51
    # present here: CIRR, DTD, Winoground; the two aggregate STS tasks need no files
    assert {t["task"] for t in js if t["ok"]} == {"CIRRIT2IRetrieval", "DTD", "Winoground", "VisualSTS17Multilingual",
                                                  "VisualSTS-b-Multilingual"}
    assert mieb("inspect", "--task-data", td, "--embeddings", ed).returncode == 2
    assert mieb("inspect", "--task-data", td, "--embeddings", ed, "-t", "NoSuchTask").returncode == 2
    assert mieb("inspect", "--task-data", td, "--embeddings", ed, "-b", "nope").returncode == 2


def test_row_index_on_full_roles(suite):
    """A role that holds every row may store them in another order (reported as reordered, and
    fine); a /row_index that is not a permutation of its rows is a problem naming the file."""
    td, ed = suite
    role(ed, "STS12VisualSTS", "sentence1", 7, row_index=np.array([3, 0, 6, 1, 5, 2, 4], dtype=np.int64))
    role(ed, "STS12VisualSTS", "sentence2", 7, row_index=np.arange(7, dtype=np.int64))
    rc, js, err = inspect(td, ed, "STS12VisualSTS")
    assert rc == 0, json.dumps(js, indent=1) + err
    roles = {r["role"]: r for r in js[0]["groups"][0]["roles"]}
    assert roles["sentence1"]["row_index"] and roles["sentence1"]["reordered"]
    assert roles["sentence2"]["row_index"] and not roles["sentence2"]["reordered"]
    r = mieb("inspect", "--task-data", td, "--embeddings", ed, "-t", "STS12VisualSTS")
    assert r.returncode == 0 and "row_index (rows stored in another order" in r.stdout, r.stdout
    role(ed, "STS12VisualSTS", "sentence2", 7, row_index=np.array([0, 1, 2, 3, 4, 5, 1], dtype=np.int64))
    faulty(td, ed, "STS12VisualSTS", "sentence2.h5: /row_index[6] = 1 repeats /row_index[1]")
