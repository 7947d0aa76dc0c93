#!/usr/bin/env python3
"""MaxSim (late-interaction) retrieval, side by side in one run on the same data:

  mieb-eval  `mieb-eval run` on a ViDoRe task (model_meta.json similarity_fn_name MaxSim,
             multi-vector roles with /offsets), CPU backend or --device cuda; the stage time
             from the result's evaluation_phases
  numpy      the same scores as numpy makes them: per batch of queries one matmul of their
             tokens against every doc token (OpenBLAS SGEMM), the maximum over each doc's
             tokens, the sum over each query's tokens; then a full argsort per query

The default shape is ColPali's on a ViDoRe task: 500 queries of 12 to 28 tokens, 500 pages of
1,030 tokens, dimension 128, unit-norm tokens (about 1.4 TFLOP of token products). Reports
token products per second (2 x query tokens x doc tokens x dim / s) for each and the ratio,
and checks mieb-eval's written top 1000 (--per-query run.trec) against numpy's scores:
every listed score within 1e-4 (relative) of numpy's, and the same top document wherever
numpy's first and second scores are further apart than that.

  .venv/bin/python bench/bench_maxsim.py [--nq 500] [--nd 500] [--q-tokens 12:28] [--d-tokens 1030]
                                         [--dim 128] [--threads 2] [--device cpu|cuda] [--reps 2]
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "py"))
from helpers import fmt_writer as fw  # noqa: E402

TASK = "VidoreArxivQARetrieval"


def token_counts(rng, n, spec):
    lo, _, hi = spec.partition(":")
    lo, hi = int(lo), int(hi or lo)
    return rng.integers(lo, hi + 1, n)


def make_data(tmp, nq, nd, qtok, dtok, dim, seed=0):
    rng = np.random.default_rng(seed)
    qn, dn = token_counts(rng, nq, qtok), token_counts(rng, nd, dtok)
    qoff = np.concatenate([[0], np.cumsum(qn)]).astype(np.int64)
    doff = np.concatenate([[0], np.cumsum(dn)]).astype(np.int64)
    q = rng.standard_normal((qoff[-1], dim), dtype=np.float32)
    d = rng.standard_normal((doff[-1], dim), dtype=np.float32)
    rel = rng.integers(0, nd, nq)
    for i in range(nq):  # the relevant page holds noisy copies of the query's tokens
        a, b = qoff[i], qoff[i + 1]
        at = doff[rel[i]] + rng.choice(dn[rel[i]], b - a, replace=False)
        d[at] = q[a:b] + 0.5 * rng.standard_normal((b - a, dim), dtype=np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    td, ed = os.path.join(tmp, "td"), os.path.join(tmp, "emb")
    fw.write_model_meta(ed, sim="MaxSim")
    f = fw.open_task_file(td, TASK)
    fw.write_retrieval_group(f, "test", "default", [f"q{i}" for i in range(nq)], [f"d{j}" for j in range(nd)],
                             [[(int(rel[i]), 1)] for i in range(nq)])
    f.close()
    fw.write_role(ed, TASK, "test", "default", "queries", q, offsets=qoff)
    fw.write_role(ed, TASK, "test", "default", "corpus", d, offsets=doff)
    return td, ed, q, qoff, d, doff


def run_mieb(binary, td, ed, out, pq, threads, device):
    t0 = time.perf_counter()
    subprocess.run([binary, "run", "--task-data", td, "--embeddings", ed, "-t", TASK, "--output-folder", out,
                    "--device", device, "--threads", str(threads), "--overwrite-strategy", "always", "-q",
                    "--per-query", pq], check=True, capture_output=True)
    wall = time.perf_counter() - t0
    res = json.load(open(os.path.join(out, "results", "test-org__test-model", "rev0", f"{TASK}.json")))
    stages = {p["name"]: p["end"] - p["start"] for p in res["evaluation_phases"]}
    return wall, stages["Stage: similarity and top-k"]


def run_numpy(q, qoff, d, doff, batch_tokens=512):
    """Score matrix [nq, nd] and each query's full ranking; doc token counts may vary."""
    t0 = time.perf_counter()
    nq, nd = len(qoff) - 1, len(doff) - 1
    S = np.empty((nq, nd), np.float32)
    starts = doff[:-1]
    a = 0
    while a < nq:
        b = a + 1
        while b < nq and qoff[b + 1] - qoff[a] <= batch_tokens:
            b += 1
        s = q[qoff[a]:qoff[b]] @ d.T                  # [tokens of the batch, all doc tokens]
        m = np.maximum.reduceat(s, starts, axis=1)    # [tokens, nd]: max over each doc's tokens
        S[a:b] = np.add.reduceat(m, qoff[a:b] - qoff[a], axis=0)
        a = b
    order = np.argsort(-S, axis=1, kind="stable")
    return time.perf_counter() - t0, S, order


def check_run(pq, S, order, nq):
    run = {}
    with open(os.path.join(pq, TASK, "test", "default", "run.trec")) as f:
        for line in f:
            qid, _, did, rank, score, _ = line.split()
            run.setdefault(int(qid[1:]), []).append((int(rank), int(did[1:]), float(score)))
    worst, top_diff = 0.0, 0
    for i in range(nq):
        rows = sorted(run.get(i, []))
        for _, j, s in rows:
            worst = max(worst, abs(s - S[i, j]) / max(1.0, abs(S[i, j])))
        a, b = S[i, order[i, 0]], S[i, order[i, 1]]
        if abs(a - b) > 1e-4 * max(1.0, abs(a)) and rows and rows[0][1] != order[i, 0]:
            top_diff += 1
    return worst, top_diff


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nq", type=int, default=500)
    ap.add_argument("--nd", type=int, default=500)
    ap.add_argument("--q-tokens", default="12:28", help="tokens per query: N or LO:HI (uniform)")
    ap.add_argument("--d-tokens", default="1030", help="tokens per page: N or LO:HI")
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--binary", default=os.path.join(os.environ.get("MIEB_BUILD_DIR", os.path.join(REPO, "build")),
                                                     "mieb-eval"))
    ap.add_argument("--reps", type=int, default=2)
    args = ap.parse_args()
    try:  # numpy's BLAS on --threads threads (without threadpoolctl: its default, every core)
        from threadpoolctl import threadpool_limits

        def blas_threads():
            return threadpool_limits(args.threads)
    except ImportError:
        blas_threads = contextlib.nullcontext
    with tempfile.TemporaryDirectory() as tmp:
        td, ed, q, qoff, d, doff = make_data(tmp, args.nq, args.nd, args.q_tokens, args.d_tokens, args.dim)
        flop = 0.0
        for i in range(args.nq):  # every query token against every doc token
            flop += 2.0 * (qoff[i + 1] - qoff[i]) * len(d) * args.dim
        print(f"{TASK}: {args.nq} queries ({len(q)} tokens), {args.nd} docs ({len(d)} tokens), dim {args.dim}, "
              f"{flop / 1e12:.2f} TFLOP of token products, {args.threads} threads, device {args.device}")
        best = {"mieb": (1e30, 1e30), "numpy": 1e30}
        S = order = None
        pq = os.path.join(tmp, "pq")
        for _ in range(args.reps):  # interleaved: a load change hits both
            wall, stage = run_mieb(args.binary, td, ed, os.path.join(tmp, "out"), pq, args.threads, args.device)
            best["mieb"] = min(best["mieb"], (stage, wall))
            with blas_threads():
                t, S, order = run_numpy(q, qoff, d, doff)
            best["numpy"] = min(best["numpy"], t)
        stage, wall = best["mieb"]
        print(f"  mieb-eval  stage {stage:8.3f} s  ({flop / stage / 1e9:7.1f} GFLOP/s)   whole run {wall:.3f} s")
        print(f"  numpy      {best['numpy']:14.3f} s  ({flop / best['numpy'] / 1e9:7.1f} GFLOP/s)")
        print(f"  ratio (numpy / mieb-eval stage): {best['numpy'] / stage:.2f}x")
        worst, top_diff = check_run(pq, S, order, args.nq)
        print(f"  check: largest relative score difference {worst:.2e}; top document differs (beyond near-ties) "
              f"for {top_diff} of {args.nq} queries")
        if worst > 1e-4 or top_diff:
            sys.exit("mieb-eval's MaxSim scores disagree with numpy's")


if __name__ == "__main__":
    main()
