"""mteb's default full-corpus search and reranking, written out from mteb's SearchEncoderWrapper
(mteb/models/search_wrappers.py) in numpy and heapq: the reference mieb_eval.search is held to.

Scores must be exact in float32 for the comparison to mean anything: the tests use integer
embeddings (dot) or rows whose norms are powers of two (cosine), so every product is exact
and ties are real ties.
"""
import heapq

import numpy as np

CHUNK = 50_000


def _topk(scores: np.ndarray, k: int):
    """torch.topk(largest=True) on one row as mteb's parity model has it: score descending,
    equal scores by index ascending."""
    order = np.lexsort((np.arange(scores.shape[0]), -scores.astype(np.float64)))[:k]
    return scores[order], order


def full_corpus(q: np.ndarray, c: np.ndarray, ids: list[str], top_k: int, cosine: bool):
    if cosine:
        q = q / np.linalg.norm(q, axis=1, keepdims=True)
        c = c / np.linalg.norm(c, axis=1, keepdims=True)
    heaps = [[] for _ in range(q.shape[0])]
    for start in range(0, c.shape[0], CHUNK):
        sub = c[start:start + CHUNK]
        s = (q.astype(np.float64) @ sub.astype(np.float64).T).astype(np.float32)
        for qi in range(q.shape[0]):
            vals, idx = _topk(s[qi], min(top_k + 1, sub.shape[0]))
            for v, i in zip(vals.tolist(), idx.tolist()):
                item = (v, ids[start + i])
                if len(heaps[qi]) < top_k:
                    heapq.heappush(heaps[qi], item)
                else:
                    heapq.heappushpop(heaps[qi], item)
    return heaps


def rerank(q: np.ndarray, c: np.ndarray, ids: list[str], candidates, top_k: int, cosine: bool):
    if cosine:
        q = q / np.linalg.norm(q, axis=1, keepdims=True)
        c = c / np.linalg.norm(c, axis=1, keepdims=True)
    heaps = []
    for qi, cand in enumerate(candidates):
        h = []
        if len(cand):
            s = (c[cand].astype(np.float64) @ q[qi].astype(np.float64)).astype(np.float32)
            vals, idx = _topk(s, min(top_k, len(cand)))
            for v, i in zip(vals.tolist(), idx.tolist()):
                heapq.heappush(h, (v, ids[cand[i]]))
        heaps.append(h)
    return heaps
