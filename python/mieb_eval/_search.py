"""mieb_eval.search: mteb's retrieval search on arrays (include/mieb.h, mieb_search)."""
from __future__ import annotations

import ctypes
import operator
from typing import Callable, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from . import _lib
from ._arrays import as_matrix, c_array
from ._engine import Engine, engine_for
from ._progress import Progress

_SIMILARITY = {"cosine": 0, "cos_sim": 0, "dot": 1, "dot_product": 1}
_ORDER = {"rank": 0, "heap": 1}

# The types of the public arguments: numpy arrays or torch tensors (anything np.asarray takes);
# a callable progress gets (done, total).
ProgressArg = Union[bool, Callable[[int, int], object], None]
Candidates = Union[Sequence[Sequence[int]], Tuple[npt.ArrayLike, npt.ArrayLike]]


def similarity_code(similarity: str) -> int:
    """"cosine" or "dot" (mteb's ScoringFunction values too) as the C library's code."""
    name = getattr(similarity, "value", similarity)
    if name not in _SIMILARITY:
        raise ValueError(f"similarity {similarity!r}: mieb_eval supports cosine and dot")
    return _SIMILARITY[name]


def _candidates(candidates: Candidates, nq: int, nd: int) -> tuple[np.ndarray, np.ndarray]:
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


def top_k_arg(top_k: int) -> int:
    """top_k as an int of at least 1: an int or numpy integer (operator.index), never a float
    or a bool, which int() would turn silently into another number of results."""
    if isinstance(top_k, bool):
        raise ValueError(f"top_k {top_k!r}: must be an integer of at least 1")
    try:
        k = operator.index(top_k)
    except TypeError:
        raise ValueError(f"top_k {top_k!r}: must be an integer of at least 1, not {type(top_k).__name__}") from None
    if k < 1:
        raise ValueError(f"top_k {k}: must be at least 1")
    return k


def _unique_ids(ids: list[bytes]) -> None:
    """mteb's result dict is keyed by corpus id: two rows of one id would collapse into one key."""
    if len(set(ids)) == len(ids):
        return
    seen: set[bytes] = set()
    for r, i in enumerate(ids):
        if i in seen:
            raise ValueError(f"corpus_ids: id {i.decode()!r} is repeated (row {r}); ids must be unique")
        seen.add(i)


def _width(top_k: int, nd: int, cand_indptr: Optional[np.ndarray]) -> int:
    """The output's columns: no query can have more results than the corpus has rows, or than
    the longest candidate list when reranking."""
    if cand_indptr is None:
        return min(top_k, nd)
    longest = int(np.diff(cand_indptr).max()) if len(cand_indptr) > 1 else 0
    return min(top_k, longest)


def search(queries: npt.ArrayLike, corpus: npt.ArrayLike, top_k: int = 1000, similarity: str = "cosine",
           device: str = "auto", *, corpus_ids: Optional[Sequence[Union[str, int]]] = None,
           candidates: Optional[Candidates] = None, order: str = "rank", bfloat16: bool = False,
           progress: ProgressArg = None, engine: Optional[Engine] = None
           ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
    """Each query's top_k corpus rows as mteb's default search finds them.

    queries (nq, dim) and corpus (nd, dim): numpy arrays (float32, float16, or bfloat16 bits as
    uint16 with bfloat16=True) or torch tensors. The search is mteb's SearchEncoderWrapper's:
    the corpus in chunks of 50,000, torch.topk(top_k + 1) per chunk, a heapq of top_k (score,
    corpus id) tuples; so ties at the cut are kept as mteb keeps them. top_k: an integer of at
    least 1 (a float is refused). corpus_ids: one unique id per corpus row (a repeated id is
    refused, naming it), whose order breaks those ties (default: "0", "1", ...); ids are compared
    as strings, as mteb compares its string ids, so integer ids 9 and 10 compare as "9" > "10".
    candidates (a list of corpus-row lists, one per query, or an (indptr, rows) pair) rerank each
    query's candidates instead, as mteb does for tasks with top_ranked lists.

    order "rank": best first, equal scores by id descending (pytrec_eval's order); "heap": the
    array of mteb's heap, the order of the result dict mteb builds.

    progress: None draws a bar on a terminal (when tqdm is installed), False none, a
    callable(done, total) gets the query-document pairs searched.

    Returns (scores, indices): float32 and int64 arrays of shape (nq, k), k = min(top_k, nd)
    (reranking: min(top_k, the longest list)); a query with fewer results has -inf and -1 after
    them.
    """
    ids = None
    if corpus_ids is not None:
        ids = [str(i).encode() for i in corpus_ids]
        _unique_ids(ids)
    return search_arrays(queries, corpus, top_k_arg(top_k), similarity, device, ids=ids, candidates=candidates,
                         order=order, bfloat16=bfloat16, progress=progress, engine=engine)


def search_arrays(queries: npt.ArrayLike, corpus: npt.ArrayLike, top_k: int, similarity: str, device: str, *,
                  ids: Optional[list[bytes]], candidates: Optional[Candidates], order: str, bfloat16: bool,
                  progress: ProgressArg, engine: Optional[Engine]
                  ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
    """search() with the ids already encoded; repeated ids pass here (SearchIndex: mteb's corpus
    may repeat one, and mteb's search keeps both rows)."""
    q, qcode = as_matrix(queries, "queries", bfloat16)
    c, ccode = as_matrix(corpus, "corpus", bfloat16)
    nq, nd = q.shape[0], c.shape[0]
    if order not in _ORDER:
        raise ValueError(f"order {order!r}: 'rank' or 'heap'")
    keep: list[object] = []  # what the C call reads stays alive until it returns
    ids_p = None
    if ids is not None:
        if len(ids) != nd:
            raise ValueError(f"corpus_ids: {len(ids)} ids for {nd} corpus rows")
        ids_p = (ctypes.c_char_p * max(nd, 1))(*ids)
        keep.append(ids_p)
    indptr = rows = None
    if candidates is not None:
        indptr, rows = _candidates(candidates, nq, nd)
    # The same results as with top_k itself: a heap of width >= every query's result count
    # never drops one, and torch.topk(top_k + 1) of a chunk is the whole chunk either way.
    width = _width(top_k, nd, indptr)
    rq = _lib.SearchRequest(c_array(q, qcode), c_array(c, ccode), ids_p, similarity_code(similarity),
                            max(width, 1), None, None, _ORDER[order])
    if indptr is not None:
        keep += [indptr, rows]
        rq.cand_indptr, rq.cand_doc = indptr.ctypes.data, rows.ctypes.data
    scores = np.empty((nq, max(width, 1)), dtype=np.float32)
    indices = np.empty((nq, max(width, 1)), dtype=np.int64)
    counts = np.empty(nq, dtype=np.int64)
    eng = engine or engine_for(device)
    with Progress(progress, "mieb_eval.search", "pairs") as bar:
        eng.call(_lib.LIB.mieb_search, ctypes.byref(rq), scores.ctypes.data, indices.ctypes.data,
                 counts.ctypes.data, progress=bar.callback)
    k = int(counts.max()) if nq else width
    return scores[:, :k], indices[:, :k]
