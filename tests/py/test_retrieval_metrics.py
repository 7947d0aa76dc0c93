"""The retrieval metric reduction (host/metrics/retrieval_metrics.c and friends) against
mteb's own calculate_retrieval_scores + make_score_dict (mteb 2.26, pytrec_eval-terrier,
numpy 2.x), on several hundred seeded random cases. Every one of the 148 keys must be
equal, in order, after mteb's internal rounding and again after the 6-decimal rounding
the results writer applies (NaN matching NaN)."""
import json
import math
import multiprocessing
import os
import random

import numpy as np
import pytest

from helpers.mieb_tools import load_mteb_retrieval_metrics, run_tool

K_VALUES = [1, 3, 5, 10, 20, 100, 1000]
REF = load_mteb_retrieval_metrics()  # fails the module (not skip) if mteb is missing

# Doc ids whose strcmp order differs from numeric order, plus non-ASCII ones (UTF-8 byte
# order must equal Python's code point order for the tie-break).
_ID_STYLES = [
    lambda i: f"d{i}",
    lambda i: str(i),
    lambda i: f"doc_{i:05d}",
    lambda i: f"{chr(0xe9 + i % 40)}{i}",
    lambda i: f"{chr(0x4e00 + i % 500)}-{i}",
    lambda i: f"Z{i}" if i % 2 else f"a{i}",
]


def _f32(x):
    return float(np.float32(x))


def _make_scores(rng, n, mode):
    if mode == "ties":  # a handful of fp32 values: ties everywhere
        pool = [_f32(rng.choice([0.0, 0.25, 0.5, 0.75, 1.0, 1 / 3, 0.1, -0.2]))
                for _ in range(rng.randint(1, 4))]
        return [rng.choice(pool) for _ in range(n)]
    if mode == "dups":  # continuous, with duplicated documents (identical scores)
        vals = [_f32(rng.gauss(0.3, 0.2)) for _ in range(n)]
        for _ in range(n // 4):
            vals[rng.randrange(n)] = vals[rng.randrange(n)]
        return vals
    if mode == "grid":  # few distinct conf values across queries
        return [_f32(rng.randint(0, 6) / 8) for _ in range(n)]
    return [_f32(rng.uniform(-1, 1)) for _ in range(n)]


def _qrels_value(rng, style):
    if style == "binary":
        return rng.choice([0, 1, 1, 1])
    if style == "graded":
        return rng.choice([0, 1, 2, 3])
    if style == "negative":  # -1/-2 mixed in (all <= -2 crashes pytrec_eval: avoided)
        return rng.choice([-2, -1, 0, 1, 2])
    return 0  # "zeros": query kept although nothing is relevant


def make_case(seed):
    """One random case: results {qid: {doc: score}} in insertion order, qrels, skip flag."""
    rng = random.Random(seed)
    style_id = rng.choice(_ID_STYLES)
    n_queries = rng.choice([1, 1, 2, 3, 5, 8, 13, 30, 60, 150])
    pool_size = rng.choice([5, 20, 200, 1500])
    pool = [style_id(i) for i in range(pool_size)]
    score_mode = rng.choice(["ties", "dups", "grid", "cont"])
    skip = rng.random() < 0.2
    results, qrels = {}, {}
    for qi in range(n_queries):
        qid = f"q{qi}"
        r = rng.random()
        if r < 0.08:
            n = 0
        elif r < 0.18:
            n = 1
        elif r < 0.6:
            n = rng.randint(2, 15)
        elif r < 0.95:
            n = rng.randint(min(16, pool_size), min(150, pool_size))
        else:
            n = min(pool_size, rng.choice([999, 1000, 1001]))
        n = min(n, pool_size)
        docs = rng.sample(pool, n)
        scores = _make_scores(rng, n, score_mode if rng.random() < 0.9 else "cont")
        results[qid] = dict(zip(docs, scores))
        style = rng.choice(["binary", "graded", "graded", "negative", "zeros"])
        judged = {}
        # judged docs: some retrieved, some never retrieved (they count in R and IDCG)
        for d in docs:
            if rng.random() < 0.3:
                judged[d] = _qrels_value(rng, style)
        for _ in range(rng.randint(0, 4)):
            d = rng.choice(pool)
            judged.setdefault(d, _qrels_value(rng, style))
        if not judged:  # mteb drops queries without qrels; they never reach the metrics
            judged[rng.choice(pool)] = _qrels_value(rng, style)
        if max(judged.values()) <= -2:
            judged[next(iter(judged))] = -1
        qrels[qid] = judged
    return results, qrels, skip


def special_cases():
    """Hand-made edge cases: each a (results, qrels, skip) triple."""
    cases = []
    # one query, one doc: nAUC is NaN (oracle area equals the flat one)
    cases.append(({"q": {"d": 0.5}}, {"q": {"d": 1}}, False))
    # every results dict empty: all zeros, nAUC NaN
    cases.append(({"a": {}, "b": {}}, {"a": {"x": 1}, "b": {"y": 2}}, False))
    # all scores tied: ranking purely by doc id descending
    docs = [f"d{i}" for i in range(30)]
    cases.append(({"q": {d: 0.5 for d in docs}}, {"q": {"d7": 1, "d29": 2, "d3": 1}}, False))
    # the same score set in different insertion orders (np.std sees different orders)
    rng = random.Random(5)
    base = [_f32(rng.random()) for _ in range(200)]
    res, qr = {}, {}
    for qi in range(40):
        perm = base[:]
        rng.shuffle(perm)
        res[f"q{qi}"] = {f"d{i}": s for i, s in enumerate(perm)}
        qr[f"q{qi}"] = {f"d{rng.randrange(200)}": 1 for _ in range(3)}
    cases.append((res, qr, False))
    # 1000-doc lists, skip_first_result, graded qrels with many relevant docs
    res, qr = {}, {}
    for qi in range(4):
        res[f"q{qi}"] = {f"d{i}": _f32(rng.gauss(0, 1)) for i in range(1000)}
        qr[f"q{qi}"] = {f"d{i}": rng.choice([0, 1, 2, 3]) for i in rng.sample(range(1200), 300)}
    cases.append((res, qr, True))
    cases.append((res, qr, False))
    # many queries (pairwise sums over > 128 and > 1000 values in the means and nAUC)
    res, qr = {}, {}
    for qi in range(2500):
        n = rng.randint(0, 6)
        res[f"q{qi}"] = {f"d{i}": _f32(rng.randint(0, 4) / 4) for i in range(n)}
        qr[f"q{qi}"] = {f"d{rng.randrange(8)}": rng.choice([0, 1, 2])}
    cases.append((res, qr, False))
    # skip_first_result removes the top doc whatever it is (a stable score-only sort)
    cases.append(({"q": {"a": 0.9, "b": 0.9, "c": 0.1}}, {"q": {"a": 1, "b": 1}}, True))
    # a query whose qrels are all -1 (pytrec_eval's stale-level path) next to normal ones
    cases.append(({"p": {"x": 0.3, "y": 0.2}, "q": {"x": 0.4}},
                  {"p": {"x": 2}, "q": {"x": -1, "z": -1}}, False))
    return cases


def _no_abstention(results, metric_scores):
    return {}


def reference(results, qrels, skip, with_nauc=True):
    """mteb's score dict. Without nAUC (mteb's evaluate_abstention swapped for a stub for
    the duration of the call) it is ~50x cheaper: the 148 - 105 other keys only."""
    saved = REF.evaluate_abstention
    if not with_nauc:
        REF.evaluate_abstention = _no_abstention
    try:
        r = REF.calculate_retrieval_scores(results, qrels, K_VALUES, skip_first_result=skip)
    finally:
        REF.evaluate_abstention = saved
    return REF.make_score_dict(ndcg=r.ndcg, _map=r.map, recall=r.recall,
                               precision=r.precision, naucs=r.naucs, mrr=r.mrr,
                               naucs_mrr=r.naucs_mrr, hit_rate=r.hit_rate, task_scores={})


def tool_case(results, qrels, skip):
    """The tool's input: the results dicts exactly as mteb holds them after the skip."""
    if skip:
        results = {q: dict(sorted(d.items(), key=lambda x: x[1], reverse=True)[1:])
                   for q, d in results.items()}
    queries = []
    for qid, docs in results.items():
        queries.append({
            "scores": list(docs.values()),
            "doc_ids": list(docs.keys()),
            "rel": [qrels[qid].get(d, 0) for d in docs],
            "qrels_values": list(qrels[qid].values()),
        })
    return {"queries": queries}


def _same(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b and math.copysign(1, a) == math.copysign(1, b)


def _reference_star(case):
    return reference(*case)


def _references(cases):
    # The reference spends ~0.1 s per case in sklearn/numpy overhead of its 210 nAUC
    # curves; spread the cases over the cores (fork keeps the loaded mteb module).
    workers = min(len(cases), os.cpu_count() or 1, 4)
    if workers < 2:
        return [reference(*c) for c in cases]
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        return pool.map(_reference_star, cases, chunksize=4)


def _compare(cases, label, with_nauc=True):
    if with_nauc:
        refs = _references(cases)
    else:
        refs = [reference(*c, with_nauc=False) for c in cases]
    payload = json.dumps([tool_case(*c) for c in cases], ensure_ascii=False)
    got = json.loads(run_tool("ret_metrics_tool", payload))
    got6 = json.loads(run_tool("ret_metrics_tool", payload, "--round", "6"))
    assert len(got) == len(refs) == len(got6)
    failures = []
    for i, (ref, mine, mine6) in enumerate(zip(refs, got, got6)):
        assert "error" not in mine, (label, i, mine)
        if not with_nauc:  # keep mine's order, minus the nAUC keys the stub left out
            mine = {k: v for k, v in mine.items() if not k.startswith("nauc_")}
            mine6 = {k: v for k, v in mine6.items() if not k.startswith("nauc_")}
        if list(mine.keys()) != list(ref.keys()):
            failures.append((label, i, "key order", list(mine)[:5], list(ref)[:5]))
            continue
        for k, v in ref.items():
            # mteb's nAUC values are np.float64 (NaN aside), the rest Python floats; the
            # write-time round(v, 6) dispatches on that type, so keep it (float() below
            # only normalises the result for comparison).
            if k.startswith("nauc_") and not math.isnan(v):
                assert type(v) is np.float64, (k, type(v))
            else:
                assert type(v) is float, (k, type(v))
            if not _same(mine[k], float(v)):
                failures.append((label, i, k, mine[k], float(v)))
            want6 = float(round(v, 6))
            if not _same(mine6[k], want6):
                failures.append((label, i, k + " (round 6)", mine6[k], want6))
    assert not failures, failures[:15]
    return refs


def test_key_order_and_count():
    refs = _compare(special_cases()[:1], "basic")
    assert len(refs[0]) == 148


def test_special_cases():
    _compare(special_cases(), "special")


@pytest.mark.parametrize("block", range(2))
def test_random_cases(block):
    # 2 blocks x 100 seeded cases, all 148 keys (the reference's nAUC costs ~0.1 s of CPU
    # per case, so the bulk of the random cases below skips it)
    _compare([make_case(1000 * block + i) for i in range(100)], f"random block {block}")


def test_random_cases_without_nauc():
    # 500 more seeded cases for the trec measures, MRR and the rounding of the means
    _compare([make_case(100000 + i) for i in range(500)], "random, no nAUC", with_nauc=False)


def test_empty_results_dict_is_scored_with_zeros():
    """pytrec_eval reports a query with an empty results dict (all zeros) rather than
    omitting it, so it counts in len(scores) and its confidences are 0: pin that down."""
    ev = REF.pytrec_eval.RelevanceEvaluator({"a": {"x": 1}, "b": {"x": 1}}, {"P.1"})
    out = ev.evaluate({"a": {}, "b": {"x": 1.0}})
    assert list(out) == ["a", "b"] and out["a"]["P_1"] == 0.0
    mine = json.loads(run_tool("ret_metrics_tool", json.dumps(tool_case(
        {"a": {}, "b": {"x": 1.0}}, {"a": {"x": 1}, "b": {"x": 1}}, False))))
    assert mine["precision_at_1"] == 0.5


def test_nan_score_is_rejected():
    # JSON has no NaN number: the tool reads a score given as a string with strtod.
    case = {"queries": [{"scores": [0.5, "nan"], "doc_ids": ["a", "b"], "rel": [1, 0],
                         "qrels_values": [1]}]}
    mine = json.loads(run_tool("ret_metrics_tool", json.dumps(case)))
    assert "NaN" in mine["error"]


def test_no_query_is_an_error():
    mine = json.loads(run_tool("ret_metrics_tool", json.dumps({"queries": []})))
    assert "no query" in mine["error"]
