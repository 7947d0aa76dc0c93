"""The CPU backend's screened top-k (host/screen/screen.h: approximate bf16 scores on the AMX
unit or with AVX512_BF16's VDPBF16PS, with rigorous bounds, exact fixed-order fp32 scores for the candidates) changes nothing:
`mieb-eval run` writes the same result file and the same TREC run, byte for byte, with the
screen on (MIEB_CPU_SCREEN=auto, and the VDPBF16PS kernel by name) and off, on corpora built to make the screen work hard:
several of mteb's 50,000-document chunks, duplicate documents, ties from float16 storage,
clusters of near-identical documents around the queries, dot products of rows of very
different norms. The rankings are also checked against numpy's float64 scores: every
document mieb-eval ranks in a query's top 100 is in numpy's, except where the two differ
only by a tie within float32 rounding. And the portable C, AVX2 and AVX-512 kernels of the
fixed-order dot product write the same files as the default.

The int8 screen (host/screen/screen_int8.c, docs/SCREEN_INT8.md) runs on every x86-64 CPU:
by name (MIEB_CPU_SCREEN=int8, the AVX2 kernel where the CPU has AVX2; int8-scalar, the
portable one) it writes the same files as the exact way for cosine and dot, under several
--threads and --mem-limit.

Where the CPU has neither AMX nor AVX512_BF16 the bf16 screen never runs; those cases then
say so and are skipped. There auto takes the int8 screen for the chunks whose queries all have
a floor, and the files are again the exact way's.
"""
from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pytest

from helpers import fmt_writer as fw

BIN = os.path.join(os.environ.get("MIEB_BUILD_DIR", "build"), "mieb-eval")
TASK = "Fashion200kT2IRetrieval"


def make_suite(root, sim, dtype, seed, nq=120, nd=61_000, dim=96):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((nq, dim)).astype(np.float32)
    d = rng.standard_normal((nd, dim)).astype(np.float32)
    # clusters around the queries: 40 close documents each, some near-identical
    for i in range(nq):
        rows = rng.integers(0, nd, 40)
        d[rows] = q[i] + rng.standard_normal((40, dim)).astype(np.float32) * rng.choice([0.3, 1e-3], (40, 1))
    # exact duplicates across the chunk boundary and inside chunks
    src = rng.integers(0, nd, nd // 20)
    dst = rng.integers(0, nd, nd // 20)
    d[dst] = d[src]
    if sim == "dot":  # norms over four orders of magnitude
        d *= (10.0 ** rng.uniform(-2, 2, (nd, 1))).astype(np.float32)
    td, ed = os.path.join(root, "td"), os.path.join(root, "emb")
    fw.write_model_meta(ed, sim=sim)
    f = fw.open_task_file(td, TASK)
    rel = rng.integers(0, nd, nq)
    fw.write_retrieval_group(f, "test", "default", [f"q{i}" for i in range(nq)], [f"d{j}" for j in range(nd)],
                             [[(int(rel[i]), 1), (int((rel[i] + 7) % nd), 2)] for i in range(nq)])
    f.close()
    qs = fw.write_role(ed, TASK, "test", "default", "queries", q, dtype=dtype)
    ds = fw.write_role(ed, TASK, "test", "default", "corpus", d, dtype=dtype, shards=2)
    return td, ed, qs, ds


def run(td, ed, out, screen, isa=None, extra=()):
    env = dict(os.environ, MIEB_CPU_SCREEN=screen)
    if isa:
        env["MIEB_CPU_ISA"] = isa
    pq = os.path.join(out, "pq")
    p = subprocess.run([BIN, "run", "--task-data", td, "--embeddings", ed, "-t", TASK, "--output-folder", out,
                        "--device", "cpu", "--per-query", pq, "-v", "--progress", "off", *extra],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    res = json.load(open(os.path.join(p.stdout.strip(), f"{TASK}.json")))
    trec = open(os.path.join(pq, TASK, "test", "default", "run.trec")).read()
    return res["scores"], trec, p.stderr


def top100(trec):
    out = {}
    for line in trec.splitlines():
        qid, _, did, rank, score, _ = line.split()
        if int(rank) <= 100:
            out.setdefault(qid, []).append((did, float(score)))
    return out


@pytest.mark.parametrize("sim,dtype,seed,screen", [("cosine", "f32", 1, "auto"), ("cosine", "f16", 2, "auto"),
                                                   ("dot", "f32", 3, "auto"), ("dot", "bf16", 4, "auto"),
                                                   ("cosine", "f32", 6, "avx512bf16"),
                                                   ("dot", "f16", 7, "avx512bf16"),
                                                   ("cosine", "f32", 11, "int8"), ("dot", "f16", 12, "int8"),
                                                   ("dot", "f32", 13, "int8-scalar")])
def test_screen_on_equals_off(tmp_path, sim, dtype, seed, screen):
    td, ed, qs, ds = make_suite(str(tmp_path), sim, dtype, seed)
    on_scores, on_trec, log = run(td, ed, str(tmp_path / "on"), screen)
    if "screened" not in log:
        pytest.skip(f"MIEB_CPU_SCREEN={screen}: this CPU has no usable AMX-BF16 or AVX512_BF16: the screen never runs here")
    if screen.startswith("int8"):  # int8 names the AVX2 kernel where the CPU has AVX2, else the portable one
        assert "screened (int8-" in log and (screen == "int8" or f"screened ({screen})" in log), log
    elif screen != "auto":  # a named kernel that runs here is the one used
        assert f"screened ({screen})" in log, log
    off_scores, off_trec, log_off = run(td, ed, str(tmp_path / "off"), "off")
    assert "screened" not in log_off
    assert json.dumps(on_scores, sort_keys=True) == json.dumps(off_scores, sort_keys=True)
    assert on_trec == off_trec
    # the screen did the work: no query or job fell back to the exact way (the int8 screen's
    # wider window may hand the near-identical clusters back: that is its budget at work)
    lines = [l for l in log.splitlines() if "screened" in l]
    assert lines and (screen.startswith("int8") or
                      all("0 queries and 0 jobs handed to the exact way" in l for l in lines)), lines

    # the ranking against numpy float64 (cosine: rows normalised as torch does, in float32)
    q64, d64 = qs.astype(np.float64), ds.astype(np.float64)
    if sim == "cosine":
        q64 = qs / np.maximum(np.linalg.norm(qs, axis=1, keepdims=True), 1e-12)
        d64 = ds / np.maximum(np.linalg.norm(ds, axis=1, keepdims=True), 1e-12)
        q64, d64 = q64.astype(np.float32).astype(np.float64), d64.astype(np.float32).astype(np.float64)
    s = q64 @ d64.T
    got = top100(on_trec)
    for i in range(0, len(qs), 7):
        mine = got[f"q{i}"]
        order = np.argsort(-s[i], kind="stable")
        cut = s[i][order[99]]
        tol = 1e-5 * max(1.0, abs(cut))
        for did, sc in mine:
            j = int(did[1:])
            assert s[i][j] >= cut - tol, f"q{i}: {did} ranked by mieb-eval, numpy puts it below the top 100"
            assert abs(s[i][j] - sc) <= 1e-5 * max(1.0, abs(sc)), f"q{i} {did}: score {sc} vs numpy {s[i][j]}"


def test_every_kernel_set_writes_the_same_files(tmp_path):
    """The fixed-order dot product in portable C, AVX2 and AVX-512 (whichever this CPU runs),
    screened or not: one result file and one TREC run, byte for byte."""
    td, ed, _, _ = make_suite(str(tmp_path), "cosine", "f32", 5)
    ref_scores, ref_trec, _ = run(td, ed, str(tmp_path / "ref"), "auto")
    for isa in ("avx2", "scalar"):
        scores, trec, log = run(td, ed, str(tmp_path / isa), "off", isa)
        if "this CPU runs at most" in log:
            continue  # the CPU lacks that kernel set; the fallback it took is covered by the others
        assert json.dumps(scores, sort_keys=True) == json.dumps(ref_scores, sort_keys=True), isa
        assert trec == ref_trec, isa


@pytest.mark.parametrize("sim", ["cosine", "dot"])
def test_int8_screen_threads_and_mem_limit(tmp_path, sim):
    """The int8 screen under other thread counts and memory limits (other query tiles, corpus
    blocks and screen budgets, hence other candidate lists and hand-backs): the exact way's files."""
    td, ed, _, _ = make_suite(str(tmp_path), sim, "f32", 21)
    ref_scores, ref_trec, _ = run(td, ed, str(tmp_path / "ref"), "off")
    for n, extra in enumerate((("--threads", "1", "--mem-limit", "300M"), ("--threads", "2"),
                               ("--threads", "3", "--mem-limit", "1G"))):
        scores, trec, log = run(td, ed, str(tmp_path / f"i8-{n}"), "int8", extra=extra)
        assert "screened (int8-" in log, log
        assert json.dumps(scores, sort_keys=True) == json.dumps(ref_scores, sort_keys=True), extra
        assert trec == ref_trec, extra


def int8_is_autos_choice():
    """AVX2 without AVX512_BF16 or AMX-BF16 (host/screen/screen.c's order), as Linux reports it."""
    try:
        flags = next(l for l in open("/proc/cpuinfo") if l.startswith("flags")).split()
    except (OSError, StopIteration):
        return False
    return "avx2" in flags and "avx512_bf16" not in flags and "amx_bf16" not in flags


def test_auto_screens_the_floored_chunks_with_int8(tmp_path):
    """Where the int8 screen is auto's choice (a CPU without AVX512_BF16), it screens the chunks
    whose queries all have a floor (from mteb's second 50,000-document chunk on: 50 documents
    per k, above MIEB_SCREEN_MIN_DOCS_PER_K_INT8_FLOORED) and not the first (no floor yet,
    below MIEB_SCREEN_MIN_DOCS_PER_K_INT8): one screened block of two, the exact way's files."""
    td, ed, _, _ = make_suite(str(tmp_path), "cosine", "f32", 31, nq=40, nd=100_000, dim=32)
    scores, trec, log = run(td, ed, str(tmp_path / "auto"), "auto")
    lines = [l for l in log.splitlines() if "screened (" in l]
    if not int8_is_autos_choice():
        pytest.skip("this CPU has AVX512_BF16 or AMX-BF16 (a bf16 screen is auto's) or no AVX2")
    assert len(lines) == 1, lines  # the second chunk only
    ref_scores, ref_trec, _ = run(td, ed, str(tmp_path / "off"), "off")
    assert json.dumps(scores, sort_keys=True) == json.dumps(ref_scores, sort_keys=True)
    assert trec == ref_trec
