"""`mieb-eval synth` (host/cli/cmd_synth.c, host/synth/synth_*.c): the files follow FORMAT.md
(checked with h5py, independently of our readers), carry the planted structure the scorer
tests rely on, are byte-identical across runs, and read back through our readers."""
from __future__ import annotations

import filecmp
import json
import os
import subprocess

import h5py
import numpy as np
import pytest

from helpers.io_helpers import OK, emb_dump

TASKS = ["CIRRIT2IRetrieval", "BLINKIT2IMultiChoice", "CUB200I2IRetrieval", "WITT2IRetrieval",
         "VidoreTabfquadRetrieval", "CVBenchRelation"]


def binary():
    return os.path.join(os.environ["MIEB_BUILD_DIR"], "mieb-eval")


def synth(out, *args, check=True):
    p = subprocess.run([binary(), "synth", "--out", str(out), *map(str, args)], capture_output=True, text=True,
                       timeout=300)
    if check:
        assert p.returncode == 0, p.stderr
    return p


def registry():
    src = os.environ.get("MIEB_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
    with open(os.path.join(src, "configs", "tasks.json")) as f:
        return {t["name"]: t for t in json.load(f)}


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    out = tmp_path_factory.mktemp("synth")
    synth(out, "--tasks", ",".join(TASKS), "--seed", 7, "--scale", 0.02)
    return out


def groups(reg, task):
    t = reg[task]
    return [(s, b) for s in t["eval_splits"] for b in t["hf_subsets"]]


def load_group(out, task, split, subset):
    with h5py.File(os.path.join(out, "task-data", f"{task}.h5"), "r") as f:
        g = f[f"{split}/{subset}"]
        d = {k: g[k][()] for k in g}
        attrs = dict(f.attrs)
    d["query_ids"] = [s.decode() for s in d["query_ids"]]
    d["corpus_ids"] = [s.decode() for s in d["corpus_ids"]]
    return d, attrs


def load_role(out, task, split, subset, role):
    with h5py.File(os.path.join(out, "embeddings", task, split, subset, f"{role}.h5"), "r") as f:
        return f["embeddings"][()], dict(f.attrs), (f["offsets"][()] if "offsets" in f else None)


def test_layout_and_attributes(suite):
    reg = registry()
    meta = json.load(open(os.path.join(suite, "embeddings", "model_meta.json")))
    assert meta == {"name": "mieb-synth/synthetic-encoder", "revision": "0" * 40, "similarity_fn_name": "cosine"}
    for task in TASKS:
        with h5py.File(os.path.join(suite, "task-data", f"{task}.h5"), "r") as f:
            assert f.attrs["format"] == "mieb-task" and f.attrs["format_version"] == 1
            assert f.attrs["task_name"] == task and f.attrs["dataset_revision"] == reg[task]["hf_revision"]
            assert isinstance(f.attrs["format"], str)  # variable-length UTF-8, as h5py writes str
        for split, subset in groups(reg, task):
            d, _ = load_group(suite, task, split, subset)
            q, c = len(d["query_ids"]), len(d["corpus_ids"])
            ip = d["qrels_indptr"]
            assert d["qrels_indptr"].dtype == np.int64 and d["qrels_doc"].dtype == np.int64
            assert d["qrels_score"].dtype == np.int32
            assert len(ip) == q + 1 and ip[0] == 0 and np.all(np.diff(ip) >= 0) and ip[-1] == len(d["qrels_doc"])
            assert np.all((d["qrels_doc"] >= 0) & (d["qrels_doc"] < c))
            assert len(set(d["query_ids"])) == q and len(set(d["corpus_ids"])) == c
            for role, n in (("queries", q), ("corpus", c)):
                emb, a, _ = load_role(suite, task, split, subset, role)
                assert emb.shape == (n, 32) and emb.dtype == np.float32
                assert (a["format"], a["format_version"], a["task_name"], a["split"], a["hf_subset"], a["role"],
                        a["dim"]) == ("mieb-emb", 1, task, split, subset, role, 32)
            rc, out = emb_dump("retrieval", os.path.join(suite, "task-data", f"{task}.h5"), split, subset, task)
            assert rc == OK, out
            assert out["query_ids"] == d["query_ids"] and out["qrels_score"] == d["qrels_score"].tolist()


def test_sizes_follow_registry(suite):
    reg = registry()
    t = reg["CIRRIT2IRetrieval"]
    d, _ = load_group(suite, "CIRRIT2IRetrieval", "test", "default")
    assert len(d["query_ids"]) == round(t["n_queries"] * 0.02) and len(d["corpus_ids"]) == round(t["n_corpus"] * 0.02)
    # multilingual: the registry counts are totals over the subsets
    w = reg["WITT2IRetrieval"]
    d, _ = load_group(suite, "WITT2IRetrieval", "test", w["hf_subsets"][0])
    assert len(d["query_ids"]) == max(5, round(w["n_queries"] * 0.02 / len(w["hf_subsets"])))


def test_planted_structure(suite):
    d, _ = load_group(suite, "CIRRIT2IRetrieval", "test", "default")
    ip, doc, sc = d["qrels_indptr"], d["qrels_doc"], d["qrels_score"]
    n_per_q = np.diff(ip)
    assert (n_per_q == 0).any(), "some queries have no qrels"
    assert set(np.unique(sc)) >= {0, 1, 2, 3} and (sc < 0).any()
    all_zero = [i for i in range(len(n_per_q)) if n_per_q[i] and np.all(sc[ip[i]:ip[i + 1]] == 0)]
    assert all_zero, "some queries are judged only 0"
    assert any(any(ord(ch) > 127 for ch in s) for s in d["query_ids"])
    assert any(any(ord(ch) > 127 for ch in s) for s in d["corpus_ids"])
    emb, _, _ = load_role(suite, "CIRRIT2IRetrieval", "test", "default", "corpus")
    _, counts = np.unique(emb, axis=0, return_counts=True)
    assert (counts > 1).any(), "duplicate documents give exact ties"
    # relevant docs are closer to their query than random docs: a cosine model ranks them high
    qe, _, _ = load_role(suite, "CIRRIT2IRetrieval", "test", "default", "queries")
    qn = qe / np.linalg.norm(qe, axis=1, keepdims=True)
    cn = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    s = qn @ cn.T
    rel_hits = [np.argmax(s[i]) in doc[ip[i]:ip[i + 1]][sc[ip[i]:ip[i + 1]] > 0] for i in range(len(qe))
                if (sc[ip[i]:ip[i + 1]] > 0).any()]
    assert np.mean(rel_hits) > 0.3


def test_self_match_tasks(suite):
    d, _ = load_group(suite, "CUB200I2IRetrieval", "test", "default")
    qe, _, _ = load_role(suite, "CUB200I2IRetrieval", "test", "default", "queries")
    ce, _, _ = load_role(suite, "CUB200I2IRetrieval", "test", "default", "corpus")
    ip, doc, sc = d["qrels_indptr"], d["qrels_doc"], d["qrels_score"]
    for i, qid in enumerate(d["query_ids"]):
        j = d["corpus_ids"].index(qid)  # the query's own image is in the corpus, same id
        assert np.array_equal(qe[i], ce[j])
        if (sc[ip[i]:ip[i + 1]] > 0).any():  # judged relevant: the self match is among them
            assert j in doc[ip[i]:ip[i + 1]]


@pytest.mark.parametrize("task", ["BLINKIT2IMultiChoice", "CVBenchRelation"])
def test_multiple_choice_candidates(suite, task):
    d, _ = load_group(suite, task, "test", "default")
    assert np.array_equal(d["candidates_indptr"], d["qrels_indptr"])
    assert np.array_equal(d["candidates_doc"], d["qrels_doc"])  # every query's candidates = its qrels docs
    ip, sc = d["qrels_indptr"], d["qrels_score"]
    for i in range(len(ip) - 1):
        s = sc[ip[i]:ip[i + 1]]
        assert len(s) == 0 or (2 <= len(s) <= 4 and s.max() <= 1 and (s == 0).sum() >= len(s) - 1)


def test_non_retrieval_tasks_have_no_candidates(suite):
    d, _ = load_group(suite, "CIRRIT2IRetrieval", "test", "default")
    assert "candidates_indptr" not in d and "candidates_doc" not in d


def test_deterministic(suite, tmp_path):
    synth(tmp_path / "a", "--tasks", ",".join(TASKS), "--seed", 7, "--scale", 0.02)
    for root, _, files in os.walk(suite):
        for fn in files:
            p = os.path.join(root, fn)
            q = os.path.join(tmp_path / "a", os.path.relpath(p, suite))
            assert filecmp.cmp(p, q, shallow=False), p
    # one task alone gives the same files as inside a larger selection
    synth(tmp_path / "b", "--tasks", "CUB200I2IRetrieval", "--seed", 7, "--scale", 0.02)
    assert filecmp.cmp(os.path.join(suite, "task-data", "CUB200I2IRetrieval.h5"),
                       os.path.join(tmp_path / "b", "task-data", "CUB200I2IRetrieval.h5"), shallow=False)
    synth(tmp_path / "c", "--tasks", "CUB200I2IRetrieval", "--seed", 8, "--scale", 0.02)
    assert not filecmp.cmp(os.path.join(suite, "task-data", "CUB200I2IRetrieval.h5"),
                           os.path.join(tmp_path / "c", "task-data", "CUB200I2IRetrieval.h5"), shallow=False)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_dtypes_shards_compress(suite, tmp_path, dtype):
    task = "CIRRIT2IRetrieval"
    synth(tmp_path, "--tasks", task, "--seed", 7, "--scale", 0.02, "--dtype", dtype, "--shards", 3, "--compress")
    ref, _, _ = load_role(suite, task, "test", "default", "corpus")
    d = os.path.join(tmp_path, "embeddings", task, "test", "default")
    names = sorted(f for f in os.listdir(d) if f.startswith("corpus"))
    assert names == [f"corpus-0000{k}-of-00003.h5" for k in range(3)]
    parts = []
    for k, n in enumerate(names):
        with h5py.File(os.path.join(d, n), "r") as f:
            ds = f["embeddings"]
            assert ds.compression == "gzip" and ds.shuffle and ds.chunks is not None
            assert f.attrs["row_start"] == sum(len(p) for p in parts)
            if dtype == "f16":
                assert ds.dtype == np.float16
                parts.append(ds[()].astype(np.float32))
            else:
                assert ds.dtype == np.uint16 and ds.attrs["dtype"] == "bfloat16"
                parts.append((ds[()].astype(np.uint32) << 16).view(np.float32))
            assert f.attrs["n_rows"] == len(parts[-1])
    got = np.concatenate(parts)
    if dtype == "f16":
        assert np.array_equal(got, ref)  # synthetic values are exact in float16
    else:
        u = ref.view(np.uint32).astype(np.uint64)
        want = (((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint32) << 16).view(np.float32)
        assert np.array_equal(got, want)
    rc, out = emb_dump("role", os.path.join(tmp_path, "embeddings"), task, "test", "default", "corpus")
    assert rc == OK and out["info"]["n_shards"] == 3
    assert np.array_equal(np.array(out["data"], dtype=np.float32), got)


def test_maxsim_multivector(tmp_path):
    task = "CUB200I2IRetrieval"
    synth(tmp_path, "--tasks", task, "--model-sim", "MaxSim", "--scale", 0.02)
    meta = json.load(open(os.path.join(tmp_path, "embeddings", "model_meta.json")))
    assert meta["similarity_fn_name"] == "MaxSim"
    d, _ = load_group(tmp_path, task, "test", "default")
    qe, _, qo = load_role(tmp_path, task, "test", "default", "queries")
    ce, _, co = load_role(tmp_path, task, "test", "default", "corpus")
    assert qo is not None and co is not None and qo[0] == 0 and qo[-1] == len(qe) and co[-1] == len(ce)
    assert len(qo) == len(d["query_ids"]) + 1 and np.all(np.diff(qo) >= 1)
    assert len(np.unique(np.diff(co))) > 1  # items have different token counts
    for i, qid in enumerate(d["query_ids"]):  # the self match keeps identical token blocks
        j = d["corpus_ids"].index(qid)
        assert np.array_equal(qe[qo[i]:qo[i + 1]], ce[co[j]:co[j + 1]])
    rc, out = emb_dump("role", os.path.join(tmp_path, "embeddings"), task, "test", "default", "corpus")
    assert rc == OK and out["info"]["multivector"] and out["offsets"] == co.tolist()


def test_command_line_errors(tmp_path):
    p = synth(tmp_path, "--tasks", "NoSuchTask", check=False)
    assert p.returncode == 2 and "NoSuchTask" in p.stderr
    p = subprocess.run([binary(), "synth"], capture_output=True, text=True)
    assert p.returncode == 2 and "--out" in p.stderr
    for bad in (["--dtype", "f64"], ["--scale", "0"], ["--dim", "x"], ["--shards", "0"], ["--model-sim", "l2"],
                ["--bogus", "1"]):
        p = synth(tmp_path, *bad, check=False)
        assert p.returncode == 2, bad
    # every family now has a generator: a mixed selection writes all of them, atomically
    p = synth(tmp_path, "--tasks", "Birdsnap,CIRRIT2IRetrieval", "--scale", 0.005)
    assert os.path.exists(os.path.join(tmp_path, "task-data", "CIRRIT2IRetrieval.h5"))
    assert os.path.exists(os.path.join(tmp_path, "task-data", "Birdsnap.h5"))
    assert not [f for f in os.listdir(os.path.join(tmp_path, "task-data")) if ".tmp" in f]


def test_scorer_accepts_synth(suite, tmp_path):
    """The whole retrieval selection scores without error (values are checked elsewhere)."""
    p = subprocess.run([binary(), "run", "--task-data", os.path.join(suite, "task-data"), "--embeddings",
                        os.path.join(suite, "embeddings"), "-t", *TASKS, "--output-folder", str(tmp_path)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
