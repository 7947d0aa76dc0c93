"""Write a large synthetic retrieval task (FORMAT.md) chunk by chunk, for bench/run_10m.sh.

Task CIRRIT2IRetrieval (split test, subset default), similarity dot. Every coordinate is an
integer in [-3, 3] divided by 4, so every dot product is a multiple of 1/16 far below 2^20:
exact in float32 whatever the summation order, and the brute-force reference
(bench/bruteforce_topk.c) computes the same scores as mieb-eval's BLAS to the bit. Query i is
a copy of corpus row p_i with a tenth of its coordinates redrawn; its one qrel is p_i.

The corpus is written as shards of --shard-rows rows (corpus-NNNNN-of-MMMMM.h5), generated
and written one shard at a time, so memory stays at one shard whatever --n-corpus is.

  python bench/gen_big_retrieval.py --out /work/big --n-corpus 10000000 --dim 768 --n-queries 200
"""
from __future__ import annotations

import argparse
import json
import os
import time

import h5py
import numpy as np

TASK, SPLIT, SUBSET = "CIRRIT2IRetrieval", "test", "default"
STR = h5py.string_dtype()


def role_attrs(f, role, dim, row_start=None, n_rows=None):
    for k, v in dict(format="mieb-emb", format_version=1, task_name=TASK, split=SPLIT, hf_subset=SUBSET, role=role,
                     dim=dim).items():
        f.attrs[k] = v
    if row_start is not None:
        f.attrs["row_start"] = np.int64(row_start)
        f.attrs["n_rows"] = np.int64(n_rows)


def rows(rng, n, dim):
    return rng.integers(-3, 4, size=(n, dim), dtype=np.int8).astype(np.float32) * np.float32(0.25)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--n-corpus", type=int, default=10_000_000)
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--n-queries", type=int, default=200)
    ap.add_argument("--shard-rows", type=int, default=500_000)
    ap.add_argument("--seed", type=int, default=2026)
    a = ap.parse_args()
    t0 = time.time()
    emb = os.path.join(a.out, "embeddings")
    sub = os.path.join(emb, TASK, SPLIT, SUBSET)
    os.makedirs(sub, exist_ok=True)
    os.makedirs(os.path.join(a.out, "task-data"), exist_ok=True)
    with open(os.path.join(emb, "model_meta.json"), "w") as f:
        json.dump({"name": "bench/big-synthetic", "revision": "r1", "similarity_fn_name": "dot"}, f)

    rng = np.random.default_rng(a.seed)
    planted = np.sort(rng.choice(a.n_corpus, a.n_queries, replace=False))
    queries = np.zeros((a.n_queries, a.dim), dtype=np.float32)
    n_shards = (a.n_corpus + a.shard_rows - 1) // a.shard_rows
    for s in range(n_shards):
        r0, r1 = s * a.shard_rows, min(a.n_corpus, (s + 1) * a.shard_rows)
        srng = np.random.default_rng([a.seed, s])
        block = rows(srng, r1 - r0, a.dim)
        for qi in np.nonzero((planted >= r0) & (planted < r1))[0]:
            q = block[planted[qi] - r0].copy()
            redraw = srng.choice(a.dim, a.dim // 10, replace=False)
            q[redraw] = rows(srng, 1, len(redraw))[0]
            queries[qi] = q
        path = os.path.join(sub, f"corpus-{s:05d}-of-{n_shards:05d}.h5")
        with h5py.File(path + ".tmp", "w") as f:
            role_attrs(f, "corpus", a.dim, r0, r1 - r0)
            f.create_dataset("embeddings", data=block)
        os.replace(path + ".tmp", path)
        print(f"shard {s + 1}/{n_shards} rows {r0}..{r1} ({time.time() - t0:.0f} s)", flush=True)
    with h5py.File(os.path.join(sub, "queries.h5"), "w") as f:
        role_attrs(f, "queries", a.dim)
        f.create_dataset("embeddings", data=queries)

    with h5py.File(os.path.join(a.out, "task-data", f"{TASK}.h5"), "w") as f:
        for k, v in dict(format="mieb-task", format_version=1, task_name=TASK, dataset_revision="big1").items():
            f.attrs[k] = v
        g = f.require_group(f"{SPLIT}/{SUBSET}")
        g.create_dataset("query_ids", data=np.array([f"q{i:05d}" for i in range(a.n_queries)], dtype=object),
                         dtype=STR)
        ids = g.create_dataset("corpus_ids", shape=(a.n_corpus,), dtype=STR)
        step = 1_000_000
        for i in range(0, a.n_corpus, step):
            j = min(a.n_corpus, i + step)
            ids[i:j] = np.array([f"d{r:08d}" for r in range(i, j)], dtype=object)
        g.create_dataset("qrels_indptr", data=np.arange(a.n_queries + 1, dtype=np.int64))
        g.create_dataset("qrels_doc", data=planted.astype(np.int64))
        g.create_dataset("qrels_score", data=np.ones(a.n_queries, dtype=np.int32))
    print(f"done in {time.time() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
