"""Independent reference for mieb-eval's retrieval scoring: mteb's own code where it can run
without its model stack, and a line-by-line re-statement of mteb's search loop otherwise.

* Metrics: mteb's `calculate_retrieval_scores` and `make_score_dict`, loaded from the installed
  mteb package (installed --no-deps; only this module is imported, with a stub for mteb.types),
  which calls pytrec_eval-terrier (trec_eval 9.0.8).
* Search: mteb's SearchEncoderWrapper._full_corpus_search / _rerank_documents, restated with
  numpy float32 scores (torch.topk is replaced by a sort on (-score, index): torch leaves the
  order of ties unspecified, and this is the rule mieb-eval documents) and Python's heapq.
* Writing: TaskResult.to_disk's 6-decimal rounding and json.dump(indent=2).
"""
from __future__ import annotations

import glob
import heapq
import importlib.util
import json
import os
import sys
import types

import numpy as np

REPO = os.environ.get("MIEB_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))
BUILD = os.environ.get("MIEB_BUILD_DIR", os.path.join(REPO, "build"))
K_VALUES = (1, 3, 5, 10, 20, 100, 1000)


def load_mteb_retrieval_metrics():
    """Import mteb/_evaluators/retrieval_metrics.py from the installed mteb without importing mteb."""
    paths = glob.glob(os.path.join(sys.prefix, "lib", "python3*", "site-packages", "mteb", "_evaluators",
                                   "retrieval_metrics.py"))
    if not paths:
        raise RuntimeError("mteb is not installed in this environment (scripts/setup-pyenv.sh installs it)")
    if "mteb.types" not in sys.modules:
        stub = types.ModuleType("mteb.types")

        class RetrievalEvaluationResult(dict):
            def __init__(self, **kw):
                super().__init__(**kw)
                self.__dict__.update(kw)

        stub.RetrievalEvaluationResult = RetrievalEvaluationResult
        stub.RelevantDocumentsType = dict
        sys.modules.setdefault("mteb", types.ModuleType("mteb"))
        sys.modules["mteb.types"] = stub
    spec = importlib.util.spec_from_file_location("mteb_retrieval_metrics_ref", paths[0])
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _topk_desc(scores: np.ndarray, k: int):
    """Indices of the k best scores, best first, ties by index ascending."""
    order = np.lexsort((np.arange(scores.shape[0]), -scores.astype(np.float64)))
    return order[:k]


def normalize(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float32)
    n = np.sqrt((x.astype(np.float64) ** 2).sum(axis=1)).astype(np.float32)
    n = np.maximum(n, np.float32(1e-12))
    return (x / n[:, None]).astype(np.float32)


def search_full(q: np.ndarray, d: np.ndarray, query_ids, corpus_ids, top_k=1000, chunk=50000):
    heaps = {qid: [] for qid in query_ids}
    for start in range(0, d.shape[0], chunk):
        sub = d[start:start + chunk]
        s = (q @ sub.T).astype(np.float32)
        k = min(top_k + 1, sub.shape[0])
        for qi, qid in enumerate(query_ids):
            for j in _topk_desc(s[qi], k):
                item = (float(s[qi, j]), corpus_ids[start + j])
                if len(heaps[qid]) < top_k:
                    heapq.heappush(heaps[qid], item)
                else:
                    heapq.heappushpop(heaps[qid], item)
    return {qid: {cid: sc for sc, cid in heaps[qid]} for qid in query_ids}


def search_candidates(q: np.ndarray, d: np.ndarray, query_ids, corpus_ids, top_ranked, top_k=1000):
    idx = {c: i for i, c in enumerate(corpus_ids)}
    res = {}
    for qi, qid in enumerate(query_ids):
        heap = []
        ranked = top_ranked.get(qid, [])
        if ranked:
            s = (d[[idx[c] for c in ranked]] @ q[qi]).astype(np.float32)
            for j in _topk_desc(s, min(top_k, len(ranked))):
                heapq.heappush(heap, (float(s[j]), ranked[j]))
        res[qid] = {cid: sc for sc, cid in heap}
    return res


def score_dict(results, qrels, skip_first_result=False):
    m = load_mteb_retrieval_metrics()
    r = m.calculate_retrieval_scores(results, qrels, K_VALUES, skip_first_result=skip_first_result)
    return m.make_score_dict(ndcg=r.ndcg, _map=r.map, recall=r.recall, precision=r.precision, mrr=r.mrr,
                             naucs=r.naucs, naucs_mrr=r.naucs_mrr, hit_rate=r.hit_rate, task_scores={})


def round_scores(obj, nd=6):
    """TaskResult._round_scores."""
    if isinstance(obj, dict):
        return {k: round_scores(v, nd) for k, v in obj.items()}
    if isinstance(obj, list):
        return [round_scores(v, nd) for v in obj]
    if isinstance(obj, float):
        return round(obj, nd)
    return obj
