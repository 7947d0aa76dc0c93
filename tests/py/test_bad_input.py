"""Bad input through the command line: every case names the file and the dataset at fault,
exits with status 1, writes no result for the broken task, and still scores the good one."""
from __future__ import annotations

import os
import shutil

import h5py
import numpy as np
import pytest

import fmt_writer as fw
from test_retrieval_e2e import build_task, result_path, run_mieb

GOOD, BAD = "CIRRIT2IRetrieval", "Flickr30kT2IRetrieval"


def make(tmp):
    rng = np.random.default_rng(3)
    td, ed, _ = build_task(tmp, rng, GOOD, 10, 50, 8)
    build_task(tmp, rng, BAD, 10, 50, 8, shards=2)
    return td, ed


def emb(ed, role, shard=None):
    d = os.path.join(ed, BAD, "test", "default")
    return os.path.join(d, f"{role}.h5" if shard is None else f"{role}-{shard:05d}-of-00002.h5")


def break_dim(td, ed):
    with h5py.File(emb(ed, "queries"), "r+") as f:
        x = f["embeddings"][:]
        del f["embeddings"]
        f.create_dataset("embeddings", data=np.zeros((x.shape[0], x.shape[1] + 1), np.float32))
        f.attrs["dim"] = x.shape[1] + 1
    return "queries.h5", "dimension"


def break_qrels(td, ed):
    with h5py.File(os.path.join(td, f"{BAD}.h5"), "r+") as f:
        f["test/default/qrels_doc"][0] = 10_000
    return f"{BAD}.h5", "qrels_doc"


def break_nan(td, ed):
    with h5py.File(emb(ed, "queries"), "r+") as f:
        f["embeddings"][3, 1] = np.nan
    return "queries.h5", "embeddings"


def break_inf(td, ed):
    with h5py.File(emb(ed, "corpus", 1), "r+") as f:
        f["embeddings"][0, 0] = np.inf
    return "corpus-00001-of-00002.h5", "embeddings"


def break_missing_role(td, ed):
    os.remove(emb(ed, "queries"))
    return "queries", "queries"


def break_overlap(td, ed):
    with h5py.File(emb(ed, "corpus", 1), "r+") as f:
        f.attrs["row_start"] = np.int64(f.attrs["row_start"] - 1)
    return "corpus-0000", "row_start"


def break_gap(td, ed):
    """Shard 1 claims to start one row later than shard 0 ends: row 25 is covered by no shard."""
    with h5py.File(emb(ed, "corpus", 1), "r+") as f:
        f.attrs["row_start"] = np.int64(f.attrs["row_start"] + 1)
    return "corpus-0000", "row"


def break_short_role(td, ed):
    """The shards cover fewer rows than the task has corpus ids."""
    with h5py.File(emb(ed, "corpus", 1), "r+") as f:
        x = f["embeddings"][:-1]
        del f["embeddings"]
        f.create_dataset("embeddings", data=x)
        f.attrs["n_rows"] = np.int64(x.shape[0])
    return "corpus-0000", "corpus_ids"


def break_format(td, ed):
    with h5py.File(os.path.join(td, f"{BAD}.h5"), "r+") as f:
        f.attrs["format"] = "something-else"
    return f"{BAD}.h5", "format"


def break_truncated(td, ed):
    p = emb(ed, "corpus", 0)
    size = os.path.getsize(p)
    with open(p, "r+b") as f:
        f.truncate(size // 2)
    return "corpus-00000-of-00002.h5", ""


CASES = [break_dim, break_qrels, break_nan, break_inf, break_missing_role, break_overlap, break_gap,
         break_short_role, break_format, break_truncated]


@pytest.mark.parametrize("breaker", CASES, ids=[c.__name__ for c in CASES])
def test_bad_input(tmp_path, breaker):
    td, ed = make(str(tmp_path))
    fname, dataset = breaker(td, ed)
    out = str(tmp_path / "out")
    p = run_mieb(td, ed, out, [GOOD, BAD], check=False)
    assert p.returncode == 1, p.stderr
    assert fname in p.stderr, p.stderr
    assert dataset.lower() in p.stderr.lower(), p.stderr
    assert BAD in p.stderr
    assert not os.path.exists(result_path(out, BAD))
    assert os.path.exists(result_path(out, GOOD))
    leftovers = [f for f in os.listdir(os.path.dirname(result_path(out, GOOD))) if ".tmp" in f]
    assert not leftovers


def test_unknown_task_is_usage_error(tmp_path):
    td, ed = make(str(tmp_path))
    p = run_mieb(td, ed, str(tmp_path / "o"), ["NoSuchTask"], check=False)
    assert p.returncode == 2 and "NoSuchTask" in p.stderr


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="a GPU is present")
def test_cuda_without_gpu_is_clear_error(tmp_path):
    td, ed = make(str(tmp_path))
    import subprocess
    from test_retrieval_e2e import BIN
    p = subprocess.run([BIN, "run", "--task-data", td, "--embeddings", ed, "-t", GOOD, "--output-folder",
                        str(tmp_path / "o"), "--device", "cuda"], capture_output=True, text=True)
    assert p.returncode == 3, p.stderr
    assert "cuda" in p.stderr.lower()
