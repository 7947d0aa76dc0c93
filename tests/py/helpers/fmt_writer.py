"""Writes FORMAT.md task-data and embedding files with h5py, independently of mieb-eval's own
writer, so the end-to-end tests exercise the readers on files another program wrote."""
from __future__ import annotations

import json
import os

import h5py
import numpy as np

STR = h5py.string_dtype()  # variable-length UTF-8


def write_model_meta(emb_dir, name="test-org/test-model", revision="rev0", sim="cosine"):
    os.makedirs(emb_dir, exist_ok=True)
    with open(os.path.join(emb_dir, "model_meta.json"), "w") as f:
        json.dump({"name": name, "revision": revision, "similarity_fn_name": sim,
                   "languages": None, "n_parameters": None}, f)


def open_task_file(task_dir, task, revision="datarev"):
    os.makedirs(task_dir, exist_ok=True)
    f = h5py.File(os.path.join(task_dir, f"{task}.h5"), "w")
    f.attrs["format"] = "mieb-task"
    f.attrs["format_version"] = 1
    f.attrs["task_name"] = task
    f.attrs["dataset_revision"] = revision
    return f


def write_retrieval_group(f, split, subset, query_ids, corpus_ids, qrels, candidates=None):
    """qrels: list (per query) of list of (doc_row, score); candidates: list of doc-row lists or None."""
    g = f.require_group(f"{split}/{subset}")
    g.create_dataset("query_ids", data=np.array(query_ids, dtype=object), dtype=STR)
    g.create_dataset("corpus_ids", data=np.array(corpus_ids, dtype=object), dtype=STR)
    indptr = np.zeros(len(qrels) + 1, dtype=np.int64)
    docs, scores = [], []
    for i, q in enumerate(qrels):
        indptr[i + 1] = indptr[i] + len(q)
        docs += [d for d, _ in q]
        scores += [s for _, s in q]
    g.create_dataset("qrels_indptr", data=indptr)
    g.create_dataset("qrels_doc", data=np.array(docs, dtype=np.int64))
    g.create_dataset("qrels_score", data=np.array(scores, dtype=np.int32))
    if candidates is not None:
        cp = np.zeros(len(candidates) + 1, dtype=np.int64)
        cd = []
        for i, c in enumerate(candidates):
            cp[i + 1] = cp[i] + len(c)
            cd += list(c)
        g.create_dataset("candidates_indptr", data=cp)
        g.create_dataset("candidates_doc", data=np.array(cd, dtype=np.int64))
    return g


def to_bf16_bits(x: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bit patterns (round to nearest even)."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return r


def from_bf16_bits(b: np.ndarray) -> np.ndarray:
    return (b.astype(np.uint32) << 16).view(np.float32)


def write_role(emb_dir, task, split, subset, role, emb, offsets=None, dtype="f32", shards=1,
               chunked=False, compress=False):
    """Write a role file (or `shards` shard files). Returns the float32 values a reader must see."""
    d = os.path.join(emb_dir, task, split, subset)
    os.makedirs(d, exist_ok=True)
    emb = np.asarray(emb, dtype=np.float32)
    if dtype == "f16":
        stored, seen = emb.astype(np.float16), emb.astype(np.float16).astype(np.float32)
    elif dtype == "bf16":
        stored = to_bf16_bits(emb)
        seen = from_bf16_bits(stored)
    else:
        stored, seen = emb, emb
    n_items = emb.shape[0] if offsets is None else len(offsets) - 1
    bounds = np.linspace(0, n_items, shards + 1).astype(np.int64)
    for s in range(shards):
        a, b = int(bounds[s]), int(bounds[s + 1])
        name = f"{role}.h5" if shards == 1 else f"{role}-{s:05d}-of-{shards:05d}.h5"
        with h5py.File(os.path.join(d, name), "w") as f:
            f.attrs["format"] = "mieb-emb"
            f.attrs["format_version"] = 1
            f.attrs["task_name"] = task
            f.attrs["split"] = split
            f.attrs["hf_subset"] = subset
            f.attrs["role"] = role
            f.attrs["dim"] = int(emb.shape[1])
            if shards > 1:
                f.attrs["row_start"] = np.int64(a)
                f.attrs["n_rows"] = np.int64(b - a)
            if offsets is None:
                part = stored[a:b]
            else:
                r0, r1 = int(offsets[a]), int(offsets[b])
                part = stored[r0:r1]
                f.create_dataset("offsets", data=np.asarray(offsets[a:b + 1], dtype=np.int64) - r0)
            kw = {}
            if chunked or compress:
                kw["chunks"] = (max(1, min(len(part), 7)), part.shape[1]) if len(part) else None
            if compress:
                kw.update(compression="gzip", shuffle=True)
            ds = f.create_dataset("embeddings", data=part, **kw)
            if dtype == "bf16":
                ds.attrs["dtype"] = "bfloat16"
    return seen


def write_labels_group(f, split, subset, **arrays):
    """Classification-family group: int64 label datasets (eval_labels, train_labels, train_idx ...)."""
    g = f.require_group(f"{split}/{subset}")
    for name, a in arrays.items():
        g.create_dataset(name, data=np.asarray(a, dtype=np.int64))
    return g


def add_row_index(emb_dir, task, split, subset, role, row_index):
    """Add the optional /row_index (FORMAT.md §2) to a single-file role written by write_role."""
    with h5py.File(os.path.join(emb_dir, task, split, subset, f"{role}.h5"), "a") as f:
        f.create_dataset("row_index", data=np.asarray(row_index, dtype=np.int64))
