"""End to end: files written by h5py -> `mieb-eval run` -> result JSON, compared key by key
with mteb's own metric code run on mteb's search loop (tests/py/helpers/mteb_ref.py), and byte by
byte with Python's json.dump of the same values.

Embeddings are built so that every similarity is exact in float32 (small integer
coordinates; cosine inputs have power-of-two norms), so our scores and numpy's agree to
the bit and exact ties (duplicate documents, equal dot products) are frequent.
"""
from __future__ import annotations

import json
import math
import os
import re
import subprocess
import zlib

import numpy as np
import pytest

from helpers import fmt_writer as fw
from helpers import mteb_ref as ref

# MIEB_TEST_BIN / MIEB_TEST_DEVICE: the same checks against another binary and backend
# (tests/gpu/mock/run_mock.sh and tests/gpu/run.sh run the search tests on --device cuda)
BIN = os.environ.get("MIEB_TEST_BIN") or os.path.join(ref.BUILD, "mieb-eval")
DEVICE = os.environ.get("MIEB_TEST_DEVICE", "cpu")


def exact_vectors(rng, n, dim, scale_pow2=True):
    """Vectors with 4 nonzero entries of +-1 (norm exactly 2), optionally scaled by 2^k."""
    v = np.zeros((n, dim), dtype=np.float32)
    for i in range(n):
        idx = rng.choice(dim, 4, replace=False)
        v[i, idx] = rng.choice([-1.0, 1.0], 4)
    if scale_pow2:
        v *= (2.0 ** rng.integers(-2, 3, size=(n, 1))).astype(np.float32)
    return v


def random_qrels(rng, n_q, n_c, near):
    """Per query: a few graded docs (some near the query), some 0 and negative judgements;
    about 10% of queries get no qrels at all (mteb drops them), a few get only zeros."""
    qrels = []
    for q in range(n_q):
        u = rng.random()
        if u < 0.1:
            qrels.append([])
            continue
        docs = set(near[q]) | set(rng.choice(n_c, rng.integers(0, 4), replace=False).tolist())
        lst = []
        for d in sorted(docs):
            s = int(rng.choice([0, 1, 1, 2, 3, -1])) if u > 0.15 else 0
            lst.append((int(d), s))
        qrels.append(lst)
    return qrels


def build_task(tmp, rng, task, n_q, n_c, dim, sim="cosine", dtype="f32", shards=1, candidates=False,
               self_match=False, subsets=("default",), split="test", multivector=False, compress=False):
    td, ed = os.path.join(tmp, "task-data"), os.path.join(tmp, "emb")
    fw.write_model_meta(ed, sim=sim)
    f = fw.open_task_file(td, task)
    truth = {}
    for subset in subsets:
        q = exact_vectors(rng, n_q, dim)
        c = exact_vectors(rng, n_c, dim)
        near = []
        for i in range(n_q):
            k = rng.integers(1, 4)
            rows = rng.choice(n_c, k, replace=False)
            c[rows] = q[i] * (2.0 ** rng.integers(-1, 2))  # planted relevant docs (ties with each other)
            near.append(rows.tolist())
        if self_match:
            c[:n_q] = q  # each query's own image is in the corpus
        dup = rng.choice(n_c, max(1, n_c // 20), replace=False)
        c[dup[1:]] = c[dup[0]]  # duplicate documents: exact ties
        query_ids = [f"q{i}-{subset}" for i in range(n_q)]
        corpus_ids = [f"d{i:05d}" if i % 7 else f"dé{i}ü" for i in range(n_c)]
        qrels = random_qrels(rng, n_q, n_c, near)
        cands = None
        if candidates:
            cands = [[d for d, _ in ql] for ql in qrels]
        fw.write_retrieval_group(f, split, subset, query_ids, corpus_ids, qrels, cands)
        qoff = coff = None
        if multivector:
            # items of 1..3 tokens
            qt = rng.integers(1, 4, n_q)
            ct = rng.integers(1, 4, n_c)
            qoff = np.concatenate([[0], np.cumsum(qt)])
            coff = np.concatenate([[0], np.cumsum(ct)])
            q = exact_vectors(rng, int(qoff[-1]), dim)
            c = exact_vectors(rng, int(coff[-1]), dim)
        qs = fw.write_role(ed, task, split, subset, "queries", q, offsets=qoff, dtype=dtype, shards=1,
                           compress=compress)
        cs = fw.write_role(ed, task, split, subset, "corpus", c, offsets=coff, dtype=dtype, shards=shards,
                           compress=compress)
        truth[subset] = dict(q=qs, c=cs, qoff=qoff, coff=coff, query_ids=query_ids, corpus_ids=corpus_ids,
                             qrels=qrels, cands=cands)
    f.close()
    return td, ed, truth


def maxsim(q, qoff, c, coff):
    s = np.zeros((len(qoff) - 1, len(coff) - 1), dtype=np.float32)
    for i in range(len(qoff) - 1):
        qq = q[qoff[i]:qoff[i + 1]]
        for j in range(len(coff) - 1):
            tok = (qq @ c[coff[j]:coff[j + 1]].T).astype(np.float32)
            acc = np.float32(0)
            for t in tok.max(axis=1):
                acc = np.float32(acc + t)
            s[i, j] = acc
    return s


def reference_subset(t, sim, skip):
    qids_kept = [i for i, ql in enumerate(t["qrels"]) if ql]
    query_ids = [t["query_ids"][i] for i in qids_kept]
    qrels = {t["query_ids"][i]: {t["corpus_ids"][d]: s for d, s in t["qrels"][i]} for i in qids_kept}
    if sim == "MaxSim":
        s = maxsim(t["q"], t["qoff"], t["c"], t["coff"])
        qv = s[qids_kept]  # precomputed score rows; search on identity "embeddings"
        heaps = {}
        results = {}
        import heapq
        for qi, qid in zip(range(len(qids_kept)), query_ids):
            h = []
            row = qv[qi]
            for start in range(0, row.shape[0], 50000):
                sub = row[start:start + 50000]
                for j in ref._topk_desc(sub, min(1001, sub.shape[0])):
                    item = (float(sub[j]), t["corpus_ids"][start + j])
                    heapq.heappush(h, item) if len(h) < 1000 else heapq.heappushpop(h, item)
            results[qid] = {c: sc for sc, c in h}
    else:
        q, c = t["q"][qids_kept], t["c"]
        if sim == "cosine":
            q, c = ref.normalize(q), ref.normalize(c)
        if t["cands"] is not None:
            top_ranked = {t["query_ids"][i]: [t["corpus_ids"][d] for d in t["cands"][i]] for i in qids_kept}
            results = ref.search_candidates(q, c, query_ids, t["corpus_ids"], top_ranked)
        else:
            results = ref.search_full(q, c, query_ids, t["corpus_ids"])
    return ref.score_dict(results, qrels, skip_first_result=skip)


def run_mieb(td, ed, out, tasks, *extra, check=True):
    p = subprocess.run([BIN, "run", "--task-data", td, "--embeddings", ed, "-t", *tasks, "--output-folder", out,
                        "--device", DEVICE, *extra], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"mieb-eval failed ({p.returncode}):\n{p.stderr}")
    return p


def result_path(out, task):
    return os.path.join(out, "results", "test-org__test-model", "rev0", f"{task}.json")


def assert_same(ours_sub, ref_scores, main_score, subset, langs):
    expected = ref.round_scores(dict(ref_scores))
    expected["main_score"] = expected[main_score]
    expected.update({"hf_subset": subset, "languages": langs, "mteb_version": ours_sub["mteb_version"]})
    assert list(ours_sub.keys()) == list(expected.keys())
    for k, v in expected.items():
        o = ours_sub[k]
        if isinstance(v, float) and math.isnan(v):
            assert isinstance(o, float) and math.isnan(o), k
        else:
            assert o == v, f"{k}: ours {o!r} != mteb {v!r}"


def check_file_format(path):
    """Our bytes == Python's json.dump(indent=2) of the values we wrote."""
    text = open(path, encoding="utf-8").read()
    data = json.loads(text)
    assert list(data.keys()) == ["dataset_revision", "task_name", "mteb_version", "scores", "evaluation_time",
                                 "kg_co2_emissions", "date", "evaluation_phases"]
    assert json.dumps(data, indent=2) == text
    return data


CASES = [
    # task, n_q, n_c, dim, sim, dtype, shards, candidates, self_match
    ("CIRRIT2IRetrieval", 40, 1500, 16, "cosine", "f32", 1, False, False),
    ("CIRRIT2IRetrieval", 25, 700, 12, "dot", "f16", 3, False, False),
    ("CUB200I2IRetrieval", 30, 1200, 16, "cosine", "bf16", 2, False, True),
    ("BLINKIT2IMultiChoice", 50, 200, 8, "cosine", "f32", 1, True, False),
    ("VidoreArxivQARetrieval", 12, 60, 8, "MaxSim", "f32", 1, False, False),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[4]}-{c[5]}" for c in CASES])
def test_matches_mteb(tmp_path, case):
    task, n_q, n_c, dim, sim, dtype, shards, cands, selfm = case
    rng = np.random.default_rng(zlib.crc32(repr(case).encode()))
    td, ed, truth = build_task(str(tmp_path), rng, task, n_q, n_c, dim, sim=sim, dtype=dtype, shards=shards,
                               candidates=cands, self_match=selfm, multivector=(sim == "MaxSim"),
                               compress=(dtype == "f16"))
    out = str(tmp_path / "out")
    run_mieb(td, ed, out, [task])
    data = check_file_format(result_path(out, task))
    reg = {t["name"]: t for t in json.load(open(os.path.join(ref.REPO, "configs", "tasks.json")))}[task]
    sub = data["scores"]["test"][0]
    r = reference_subset(truth["default"], sim, reg["params"].get("skip_first_result", False))
    assert_same(sub, r, reg["main_score"], "default", reg["eval_langs"])
    assert data["dataset_revision"] == "datarev" and data["task_name"] == task


def test_chunk_boundary_and_memory_limit(tmp_path):
    """A corpus over mteb's 50,000-document chunk, scored unlimited and with a memory limit
    a quarter of the corpus size: identical JSON scores, both equal to mteb's."""
    rng = np.random.default_rng(11)
    task, n_q, n_c, dim = "CIRRIT2IRetrieval", 12, 120_000, 8
    td, ed, truth = build_task(str(tmp_path), rng, task, n_q, n_c, dim, sim="dot", shards=3)
    corpus_bytes = n_c * dim * 4
    out1, out2 = str(tmp_path / "o1"), str(tmp_path / "o2")
    run_mieb(td, ed, out1, [task], "--per-query", out1 + "/pq")
    run_mieb(td, ed, out2, [task], "--mem-limit", str(corpus_bytes // 4), "--per-query", out2 + "/pq")
    a = json.load(open(result_path(out1, task)))["scores"]
    b = json.load(open(result_path(out2, task)))["scores"]
    assert a == b
    r = reference_subset(truth["default"], "dot", False)
    assert_same(a["test"][0], r, "ndcg_at_10", "default", ["eng-Latn"])
    # Every query's whole top 1000, not only what the metrics see: later blocks and chunks are
    # scored only above what the running top-k and heap already hold (backend.h,
    # topk_block_floor), and the heap's boundary, ties included, must come out as mteb's.
    t = truth["default"]
    kept = [i for i, ql in enumerate(t["qrels"]) if ql]
    full = ref.search_full(t["q"][kept], t["c"], [t["query_ids"][i] for i in kept], t["corpus_ids"])
    for out in (out1, out2):
        ours = {}
        for line in open(os.path.join(out, "pq", task, "test", "default", "run.trec"), encoding="utf-8"):
            qid, _, did, _, score, _ = line.split()
            ours.setdefault(qid, {})[did] = float(score)
        for qid, docs in full.items():
            assert set(ours[qid]) == set(docs), f"{out}: {qid}: the top 1000 differs from mteb's"
            for did, sc in docs.items():
                assert abs(ours[qid][did] - sc) <= 1e-6 * max(1.0, abs(sc)), (qid, did)


@pytest.mark.parametrize("sim", ["dot", "MaxSim"])
def test_search_floors(tmp_path, sim):
    """Later blocks and chunks are scored only above what a query's running top-k and heap
    already hold (backend.h, topk_block_floor). Here the first chunk fills every heap, the
    second scores lower but holds exact copies of first-chunk documents, among them each
    query's documents around its rank 1000 (ties at the heap's minimum, resolved by corpus
    id), and a memory limit cuts each chunk into blocks, so the
    floors of both kinds decide. Integer entries keep every score exact in any summation
    order, with many distinct values and many ties. Every query's whole top 1000 must be
    mteb's. MaxSim: the same scores from multi-vector items (one token per query; per
    document its vector twice, so each maximum is a tie), through the late-interaction path."""
    rng = np.random.default_rng(12)
    task, n_q, n_c, dim = "CIRRIT2IRetrieval", 4, 70_000, 8
    q = np.zeros((n_q, dim), np.float32)  # query i lives on dimensions 2i and 2i + 1
    for i in range(n_q):
        q[i, 2 * i:2 * i + 2] = rng.choice([-1, 1], 2) * rng.integers(1, 65, 2)
    c = rng.integers(-64, 65, (n_c, dim)).astype(np.float32)
    c[rng.choice(50_000, 2000)] = c[rng.choice(50_000, 2000)]  # duplicates inside the first chunk
    c[50_000:] *= np.float32(0.125)
    # the second chunk's best for query i: copies (on its dimensions only) of its first-chunk
    # documents of rank 1000-1011, so they tie with its heap's minimum
    s1 = q @ c[:50_000].T
    for i in range(n_q):
        src = np.lexsort((np.arange(50_000), -s1[i]))[999:1011]
        dst = 50_000 + rng.choice(n_c - 50_000, len(src), replace=False)
        c[dst] = 0
        c[dst, 2 * i:2 * i + 2] = c[src, 2 * i:2 * i + 2]
    query_ids = [f"q{i}" for i in range(n_q)]
    # id order is not row order, and the second chunk's ids are the larger: its ties enter
    corpus_ids = [f"{'d' if j < 50_000 else 'e'}{(j * 7919) % n_c:05d}" for j in range(n_c)]
    td, ed = str(tmp_path / "task-data"), str(tmp_path / "emb")
    fw.write_model_meta(ed, sim=sim)
    f = fw.open_task_file(td, task)
    fw.write_retrieval_group(f, "test", "default", query_ids, corpus_ids, [[(i, 1)] for i in range(n_q)])
    f.close()
    if sim == "MaxSim":
        fw.write_role(ed, task, "test", "default", "queries", q, offsets=np.arange(n_q + 1, dtype=np.int64))
        fw.write_role(ed, task, "test", "default", "corpus", np.repeat(c, 2, axis=0), shards=2,
                      offsets=np.arange(0, 2 * n_c + 1, 2, dtype=np.int64))
    else:
        fw.write_role(ed, task, "test", "default", "queries", q)
        fw.write_role(ed, task, "test", "default", "corpus", c, shards=2)
    full = ref.search_full(q, c, query_ids, corpus_ids)
    for limit in (None, n_c * dim * 4 // 4):
        out = str(tmp_path / f"o{limit}")
        p = run_mieb(td, ed, out, [task], "--per-query", out + "/pq", "-v",
                     *(["--mem-limit", str(limit)] if limit else []))
        if limit:  # each chunk in many blocks (20 of 2500 on the CPU backend)
            blocks = re.search(r"blocks of (\d+) docs", p.stderr)
            assert blocks and int(blocks.group(1)) <= 5000, p.stderr[-2000:]
            if DEVICE == "cpu" and sim == "dot":
                assert blocks.group(1) == "2500"
        ours = {}
        for line in open(os.path.join(out, "pq", task, "test", "default", "run.trec"), encoding="utf-8"):
            qid, _, did, _, score, _ = line.split()
            ours.setdefault(qid, {})[did] = float(score)
        for qid, docs in full.items():
            assert ours[qid] == docs, f"limit {limit}: {qid}: the top 1000 differs from mteb's"


def test_multilingual_subsets(tmp_path):
    rng = np.random.default_rng(5)
    task = "WITT2IRetrieval"
    reg = {t["name"]: t for t in json.load(open(os.path.join(ref.REPO, "configs", "tasks.json")))}[task]
    td, ed, truth = build_task(str(tmp_path), rng, task, 10, 80, 8, subsets=tuple(reg["hf_subsets"]))
    out = str(tmp_path / "out")
    run_mieb(td, ed, out, [task])
    data = check_file_format(result_path(out, task))
    subs = data["scores"]["test"]
    assert [s["hf_subset"] for s in subs] == reg["hf_subsets"]
    for s in subs:
        r = reference_subset(truth[s["hf_subset"]], "cosine", False)
        assert_same(s, r, "ndcg_at_10", s["hf_subset"], reg["eval_langs"][s["hf_subset"]])


def mteb_max_sim_padded(qp, dp):
    """mteb's max_sim on 3D arrays, as its multi-vector wrappers (ColPali, ColQwen, ...) return
    them: every item padded with zero rows to the longest of its encode call. One einsum
    ('ash,bth->abst'), the maximum over the document's rows, the sum over the query's. With
    integer entries every product and sum is exact, so float64 here is torch's float32."""
    s = np.einsum("ash,bth->abst", qp.astype(np.float64), dp.astype(np.float64))
    return s.max(axis=-1).sum(axis=-1)


def test_maxsim_zero_padding_as_mteb(tmp_path):
    """mteb scores MaxSim on zero-padded arrays, so a padding row is a document token whose
    product with every query token is 0: a query token whose products with a document's real
    tokens are all negative adds 0, not the largest of them, against a padded document. Shards
    holding the rows as the model returned them, padding included, score exactly as mteb;
    shards without the padding give the formula over the real tokens, which differs from
    mteb's exactly at such pairs (docs/PARITY.md, "MaxSim and zero padding")."""
    rng = np.random.default_rng(31)
    task, nq, nd, dim = "VidoreArxivQARetrieval", 6, 40, 4
    qn, dn = rng.integers(1, 6, nq), rng.integers(1, 7, nd)
    qp = np.zeros((nq, qn.max(), dim), np.float32)
    dp = np.zeros((nd, dn.max(), dim), np.float32)
    for i in range(nq):
        qp[i, :qn[i]] = rng.integers(-3, 4, (qn[i], dim))
    for j in range(nd):
        dp[j, :dn[j]] = rng.integers(-3, 4, (dn[j], dim))
    mteb_scores = mteb_max_sim_padded(qp, dp)
    formula = np.array([[sum(max(float(qp[i, t] @ dp[j, u]) for u in range(dn[j])) for t in range(qn[i]))
                         for j in range(nd)] for i in range(nq)])
    differ = mteb_scores != formula
    assert differ.any() and not differ.all()  # the data has both kinds of pair
    query_ids, corpus_ids = [f"q{i}" for i in range(nq)], [f"d{j}" for j in range(nd)]
    for padded in (True, False):
        td, ed = str(tmp_path / f"td{padded}"), str(tmp_path / f"emb{padded}")
        fw.write_model_meta(ed, sim="MaxSim")
        f = fw.open_task_file(td, task)
        fw.write_retrieval_group(f, "test", "default", query_ids, corpus_ids, [[(i, 1)] for i in range(nq)])
        f.close()
        if padded:
            q, qoff = qp.reshape(-1, dim), np.arange(0, qp.shape[0] * qp.shape[1] + 1, qp.shape[1])
            c, coff = dp.reshape(-1, dim), np.arange(0, dp.shape[0] * dp.shape[1] + 1, dp.shape[1])
        else:
            q, qoff = np.concatenate([qp[i, :qn[i]] for i in range(nq)]), np.concatenate([[0], np.cumsum(qn)])
            c, coff = np.concatenate([dp[j, :dn[j]] for j in range(nd)]), np.concatenate([[0], np.cumsum(dn)])
        fw.write_role(ed, task, "test", "default", "queries", q, offsets=qoff.astype(np.int64))
        fw.write_role(ed, task, "test", "default", "corpus", c, offsets=coff.astype(np.int64))
        out = str(tmp_path / f"out{padded}")
        run_mieb(td, ed, out, [task], "--per-query", out + "/pq")
        ours = {}
        for line in open(os.path.join(out, "pq", task, "test", "default", "run.trec"), encoding="utf-8"):
            qid, _, did, _, score, _ = line.split()
            ours[(int(qid[1:]), int(did[1:]))] = float(score)
        want = mteb_scores if padded else formula
        assert len(ours) == nq * nd
        bad = [(i, j, ours[(i, j)], want[i, j]) for i in range(nq) for j in range(nd) if ours[(i, j)] != want[i, j]]
        assert not bad, f"padded={padded}: (query, doc, ours, want) {bad[:5]}"
