"""Writes the seeds of tests/fuzz/seeds/{taskdata,emb}/value-*: small files HDF5 reads without an
error but with made-up values (storage never written, uint64 beyond int64, NaN / Inf task data,
embedding rows whose dot products overflow float32, an LZF filter, dimension 0). The readers
refuse each (docs/BAD_INPUT.md); fuzzing mutates them from there. Run from this directory with
the test venv: ../../../.venv/bin/python make_value_seeds.py"""
import io
import os

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
U64_MAX = 2**64 - 1


def task_file(name, fill):
    bio = io.BytesIO()
    with h5py.File(bio, "w", libver="earliest") as f:
        f.attrs.update(format="mieb-task", format_version=1, task_name="Task", dataset_revision="r")
        g = f.create_group("test/default")
        fill(g)
    with open(os.path.join(HERE, "taskdata", f"value-{name}.h5"), "wb") as out:
        out.write(bio.getvalue())


def retrieval(g, qrels_doc=True):
    g["query_ids"] = np.array([b"q0", b"q1"], dtype=h5py.string_dtype())
    g["corpus_ids"] = np.array([b"d0", b"d1", b"d2"], dtype=h5py.string_dtype())
    g["qrels_indptr"] = np.array([0, 1, 2], np.int64)
    if qrels_doc:
        g["qrels_doc"] = np.array([0, 2], np.int64)
    g["qrels_score"] = np.array([1, 1], np.int64)


def emb_file(name, sel, emb, chunks=None, compression=None, dim=None, write_rows=None):
    bio = io.BytesIO()
    with h5py.File(bio, "w", libver="earliest") as f:
        f.attrs.update(format="mieb-emb", format_version=1, task_name="CIRRIT2IRetrieval", split="test",
                       hf_subset="default", role="corpus", dim=emb.shape[1] if dim is None else dim)
        if write_rows is None:
            f.create_dataset("embeddings", data=emb, chunks=chunks, compression=compression)
        else:
            ds = f.create_dataset("embeddings", shape=emb.shape, dtype="f4", chunks=chunks)
            if write_rows:
                ds[write_rows] = emb[write_rows]
    with open(os.path.join(HERE, "emb", f"value-{name}"), "wb") as out:
        out.write(bytes([sel]) + bio.getvalue())


task_file("qrels_doc-never-written",
          lambda g: (retrieval(g, False), g.create_dataset("qrels_doc", shape=(2,), dtype="i8")))
task_file("eval_labels-missing-chunk",
          lambda g: g.create_dataset("eval_labels", shape=(8,), dtype="i8", chunks=(2,)).__setitem__(
              slice(0, 4), np.arange(4)))
task_file("eval_labels-uint64", lambda g: g.create_dataset("eval_labels", data=np.array([1, U64_MAX, U64_MAX - 1],
                                                                                            np.uint64)))


def sts(g, gold, lo=0.0, hi=5.0):
    g["gold"] = np.array(gold, np.float64)
    g.attrs["min_score"], g.attrs["max_score"] = lo, hi
    g.attrs["n_samples"] = np.uint64(U64_MAX)


task_file("gold-nan", lambda g: sts(g, [1.0, np.nan, 3.0]))
task_file("gold-inf", lambda g: sts(g, [1.0, np.inf, 3.0]))
task_file("min_score-nan", lambda g: sts(g, [1.0, 2.0], lo=np.nan))

x = np.random.default_rng(0).standard_normal((12, 4)).astype(np.float32)
emb_file("never-written", 0x01, x, write_rows=False)
emb_file("missing-chunk", 0x01, x, chunks=(4, 4), write_rows=slice(0, 8))
emb_file("lzf", 0x01, x, chunks=(4, 4), compression="lzf")
emb_file("dim0", 0x01, np.zeros((12, 0), np.float32))
huge = x.copy()
huge[5] = 1e30
emb_file("huge-finite", 0x01, huge)
