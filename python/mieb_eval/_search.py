"""mieb_eval.search: mteb's retrieval search on arrays (include/mieb.h, mieb_search)."""
from __future__ import annotations

import ctypes

import numpy as np

from . import _lib
from ._arrays import as_matrix, c_array
from ._engine import Engine, engine_for
from ._progress import Progress

_SIMILARITY = {"cosine": 0, "cos_sim": 0, "dot": 1, "dot_product": 1}
_ORDER = {"rank": 0, "heap": 1}


def similarity_code(similarity) -> int:
    """"cosine" or "dot" (mteb's ScoringFunction values too) as the C library's code."""
    name = getattr(similarity, "value", similarity)
    if name not in _SIMILARITY:
        raise ValueError(f"similarity {similarity!r}: mieb_eval supports cosine and dot")
    return _SIMILARITY[name]


def _candidates(candidates, nq: int, nd: int):
    """Per-query lists of corpus rows as (indptr, rows) int64 arrays."""
    if isinstance(candidates, tuple) and len(candidates) == 2:
        indptr, rows = (np.ascontiguousarray(a, dtype=np.int64) for a in candidates)
    else:
        lists = list(candidates)
        indptr = np.zeros(len(lists) + 1, dtype=np.int64)
        indptr[1:] = np.cumsum([len(c) for c in lists])
        rows = np.ascontiguousarray(np.concatenate([np.asarray(c, dtype=np.int64) for c in lists])
                                    if lists else np.zeros(0, np.int64))
    if indptr.shape != (nq + 1,):
        raise ValueError(f"candidates: {indptr.shape[0] - 1} lists for {nq} queries")
    return indptr, rows


def search(queries, corpus, top_k: int = 1000, similarity="cosine", device: str = "auto", *,
           corpus_ids=None, candidates=None, order: str = "rank", bfloat16: bool = False,
           progress=None, engine: Engine | None = None):
    """Each query's top_k corpus rows as mteb's default search finds them.

    queries (nq, dim) and corpus (nd, dim): numpy arrays (float32, float16, or bfloat16 bits as
    uint16 with bfloat16=True) or torch tensors. The search is mteb's SearchEncoderWrapper's:
    the corpus in chunks of 50,000, torch.topk(top_k + 1) per chunk, a heapq of top_k (score,
    corpus id) tuples; so ties at the cut are kept as mteb keeps them. corpus_ids (a list of
    str) are the ids whose order breaks those ties (default: "0", "1", ...). candidates (a
    list of corpus-row lists, one per query, or an (indptr, rows) pair) rerank each query's
    candidates instead, as mteb does for tasks with top_ranked lists.

    order "rank": best first, equal scores by id descending (pytrec_eval's order); "heap": the
    array of mteb's heap, the order of the result dict mteb builds.

    progress: None draws a bar on a terminal (when tqdm is installed), False none, a
    callable(done, total) gets the query-document pairs searched.

    Returns (scores, indices): float32 and int64 arrays of shape (nq, k), k = min(top_k, nd)
    (reranking: the longest list); a query with fewer results has -inf and -1 after them.
    """
    q, qcode = as_matrix(queries, "queries", bfloat16)
    c, ccode = as_matrix(corpus, "corpus", bfloat16)
    nq, nd = q.shape[0], c.shape[0]
    top_k = int(top_k)
    if top_k < 1:
        raise ValueError(f"top_k {top_k}: must be at least 1")
    if order not in _ORDER:
        raise ValueError(f"order {order!r}: 'rank' or 'heap'")
    keep = []  # what the C call reads stays alive until it returns
    ids_p = None
    if corpus_ids is not None:
        ids = [str(i).encode() for i in corpus_ids]
        if len(ids) != nd:
            raise ValueError(f"corpus_ids: {len(ids)} ids for {nd} corpus rows")
        ids_p = (ctypes.c_char_p * max(nd, 1))(*ids)
        keep.append(ids_p)
    rq = _lib.SearchRequest(c_array(q, qcode), c_array(c, ccode), ids_p, similarity_code(similarity), top_k,
                            None, None, _ORDER[order])
    if candidates is not None:
        indptr, rows = _candidates(candidates, nq, nd)
        keep += [indptr, rows]
        rq.cand_indptr, rq.cand_doc = indptr.ctypes.data, rows.ctypes.data
    scores = np.empty((nq, top_k), dtype=np.float32)
    indices = np.empty((nq, top_k), dtype=np.int64)
    counts = np.empty(nq, dtype=np.int64)
    eng = engine or engine_for(device)
    with Progress(progress, "mieb_eval.search", "pairs") as bar:
        eng.call(_lib.LIB.mieb_search, ctypes.byref(rq), scores.ctypes.data, indices.ctypes.data,
                 counts.ctypes.data, progress=bar.callback)
    k = int(counts.max()) if nq else min(top_k, nd)
    return scores[:, :k], indices[:, :k]
