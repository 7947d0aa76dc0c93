"""mieb_eval.mteb: the engine's search as an mteb search index (mteb's IndexEncoderSearchProtocol).

    from mteb.models.search_wrappers import SearchEncoderWrapper
    from mieb_eval.mteb import SearchIndex, search_wrapper
    mteb.evaluate(SearchEncoderWrapper(model, index_backend=SearchIndex(model)), tasks)
    mteb.evaluate(search_wrapper(model), tasks)     # the same results, without mteb's slow rebuild

mteb's SearchEncoderWrapper hands an index the whole corpus's embeddings (add_documents), then
asks it for each query's top_k (search) and rebuilds its result heaps from the lists it gets:
heappush up to top_k, then heappushpop, for a full-corpus search; heappush of every entry,
the indices being positions in top_ranked[query id], when reranking. Its result dict is the
heap's array in order, and that order decides which of two tied documents skip_first_result
drops and in what order nAUC sums. SearchIndex returns each query's list in the array order
of the heap mteb's own search (no index) builds, corpus ids breaking ties as mteb's
(score, id) tuples do, so the heap mteb rebuilds, and with it every result and score, is the
one mteb's default path gives. Where scores are equal, mteb's path depends on the order
torch.topk gives them, which torch leaves unspecified (on the CPU it is std::nth_element's);
mieb_eval takes the lower corpus row (candidate position) first, and its heaps are then those
of mteb's search with that order (docs/PARITY.md, "torch.topk ties").

search_wrapper(model) is that SearchEncoderWrapper with one change: it takes the lists as the
heaps they are instead of pushing every entry again, and reads the corpus ids as a list. mteb's
own rebuild reads each entry's id from the corpus Dataset's "id" column one at a time (about
40 us each, 1,000 per query): that loop, not the search, is most of the search step's time.
A list in heap order is its own heap when pushed in order (no entry is smaller than its
parent, so heappush moves none), so the heaps, and every result, are the ones mteb builds.

mteb is imported only when search_wrapper is called: the package imports without it.
"""
from __future__ import annotations

import logging
import warnings
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

import numpy as np
import numpy.typing as npt

from ._arrays import BFLOAT16, FLOAT32, as_matrix
from ._engine import Engine
from ._search import search_arrays, top_k_arg

if TYPE_CHECKING:  # mteb is imported only when search_wrapper is called
    from mteb.models.search_wrappers import SearchEncoderWrapper

logger = logging.getLogger("mieb_eval")

_SUPPORTED = ("cosine", "dot")


def _bf16_to_float32(bits: np.ndarray) -> np.ndarray:
    """bfloat16 bit patterns as float32 (exact: bfloat16 is float32's upper half)."""
    return (bits.astype(np.uint32) << 16).view(np.float32)


def _id_list(ids: Sequence[str]) -> list:
    """Document ids as a list. mteb passes the corpus Dataset's "id" column: a datasets Column,
    which slices to a list at once but reads row by row when iterated (0.4 s for 60,000 ids)."""
    if isinstance(ids, list):
        return ids
    try:
        part = ids[:]
    except TypeError:
        return list(ids)
    return part if isinstance(part, list) else list(part)


def _concat(parts: list[tuple[np.ndarray, int]]) -> tuple[np.ndarray, int]:
    """One (rows, dim) array of the parts in order; mixed dtypes meet in float32 (exactly)."""
    if len(parts) == 1:
        return parts[0]
    codes = {code for _, code in parts}
    if len(codes) == 1:
        return np.concatenate([a for a, _ in parts]), parts[0][1]
    return np.concatenate([_bf16_to_float32(a) if code == BFLOAT16 else a.astype(np.float32)
                           for a, code in parts]), FLOAT32


class SearchIndex:
    """mteb's IndexEncoderSearchProtocol on mieb_eval.search (see the module).

    model: the mteb model whose embeddings are searched; its mteb_model_meta.similarity_fn_name
    must be cosine or dot (ValueError otherwise). device and engine as for mieb_eval.search.
    Embeddings are kept as they come (numpy arrays or torch tensors in float32, float16 or
    bfloat16); the index holds them until clear(), which mteb calls after each search.
    """

    def __init__(self, model: Any, device: str = "auto", engine: Optional[Engine] = None) -> None:
        name = model.mteb_model_meta.similarity_fn_name
        value = getattr(name, "value", name)
        if value not in _SUPPORTED:
            raise ValueError(f"mieb_eval SearchIndex does not support similarity function {name}. "
                             f"Available: {', '.join(_SUPPORTED)}.")
        self.similarity = value
        self.device = device
        self.engine = engine
        self.idxs: list[str] = []
        self._parts: list[tuple[np.ndarray, int]] = []

    def add_documents(self, embeddings: npt.ArrayLike, idxs: Sequence[str]) -> None:
        """Append documents: their embeddings (rows) and ids, in the same order."""
        arr, code = as_matrix(embeddings, "documents")
        ids = _id_list(idxs)
        if arr.shape[0] != len(ids):
            raise ValueError(f"add_documents: {arr.shape[0]} embeddings for {len(ids)} ids")
        if self._parts and self._parts[0][0].shape[1] != arr.shape[1]:
            raise ValueError(f"add_documents: dimension {arr.shape[1]}, the index holds {self._parts[0][0].shape[1]}")
        self._parts.append((arr, code))
        self.idxs.extend(ids)
        logger.info("mieb_eval index: %d documents of dim %d added (%d in all)", len(ids), arr.shape[1],
                    len(self.idxs))

    def search(self, embeddings: npt.ArrayLike, top_k: int, similarity_fn: Any = None,
               top_ranked: Optional[Mapping[str, Sequence[str]]] = None,
               query_idx_to_id: Optional[Mapping[int, str]] = None) -> tuple[list[list[float]], list[list[int]]]:
        """Each query's top_k as (scores, indices) lists in the order of mteb's heap (see the
        module). similarity_fn is not called: the similarity is the model's, fixed at __init__.
        With top_ranked ({query id: [doc ids]}), each query's candidates are reranked and the
        indices are positions in top_ranked[query id]; a query without candidates gets empty lists.
        """
        if not self._parts:
            raise ValueError("No index built. Call add_documents() first.")
        corpus, ccode = _concat(self._parts)
        self._parts = [(corpus, ccode)]  # joined once
        queries, qcode = as_matrix(embeddings, "queries")
        bf16 = qcode == BFLOAT16 and ccode == BFLOAT16
        if not bf16:  # one bfloat16 side: the other is not, so it goes as float32 (exactly)
            if qcode == BFLOAT16:
                queries = _bf16_to_float32(queries)
            if ccode == BFLOAT16:
                corpus = _bf16_to_float32(corpus)
        # mteb's corpus may repeat an id (its search keeps both rows), so the ids go in unchecked
        ids = [str(i).encode() for i in self.idxs]
        kw = dict(similarity=self.similarity, device=self.device, ids=ids, order="heap", bfloat16=bf16,
                  progress=None, engine=self.engine)
        if top_ranked is None:
            scores, rows = search_arrays(queries, corpus, top_k_arg(top_k), candidates=None, **kw)
            return self._lists(scores, rows, None)
        if query_idx_to_id is None:
            raise ValueError("query_idx_to_id must be provided when reranking.")
        ranked = self._ranked_lists(queries.shape[0], top_ranked, query_idx_to_id)
        row_of = {doc_id: i for i, doc_id in enumerate(self.idxs)}  # a repeated id: its last row, as mteb
        cands = [[row_of[d] for d in r] for r in ranked]
        scores, rows = search_arrays(queries, corpus, top_k_arg(top_k), candidates=cands, **kw)
        return self._lists(scores, rows, cands)

    @staticmethod
    def _ranked_lists(nq: int, top_ranked: Mapping[str, Sequence[str]], query_idx_to_id: Mapping[int, str]
                      ) -> list[list[str]]:
        out = []
        for q in range(nq):
            qid = query_idx_to_id[q]
            r = top_ranked.get(qid)
            if not r:
                msg = f"No top-ranked documents for query {qid}"
                logger.warning(msg)
                warnings.warn(msg, stacklevel=3)
                r = []
            out.append(list(r))
        return out

    @staticmethod
    def _lists(scores: np.ndarray, rows: np.ndarray, cands: Optional[list[list[int]]]
               ) -> tuple[list[list[float]], list[list[int]]]:
        """Python lists per query, the -1 padding dropped; reranking: corpus rows as positions
        in the query's candidate list (a document listed twice: either position names it)."""
        if cands is None and (rows.size == 0 or rows.min() >= 0):  # no padding: two conversions in C
            return scores.tolist(), rows.tolist()
        s_out, i_out = [], []
        for q in range(scores.shape[0]):
            keep = rows[q] >= 0
            r = rows[q][keep].tolist()
            if cands is not None:
                pos = {row: j for j, row in reversed(list(enumerate(cands[q])))}
                r = list(map(pos.__getitem__, r))
            s_out.append(scores[q][keep].tolist())
            i_out.append(r)
        return s_out, i_out

    def clear(self) -> None:
        """Drop every document and its embeddings."""
        self._parts = []
        self.idxs = []


def search_wrapper(model: Any, device: str = "auto", engine: Optional[Engine] = None,
                   **kwargs: Any) -> SearchEncoderWrapper:
    """mteb's SearchEncoderWrapper over a SearchIndex of `model`, its heaps taken as SearchIndex
    returns them (see the module); kwargs go to SearchEncoderWrapper (corpus_chunk_size)."""
    from mteb.models.search_wrappers import SearchEncoderWrapper

    class MiebSearchWrapper(SearchEncoderWrapper):
        def _sort_full_corpus_results(self, *, result_heaps, query_idx_to_id, query_embeddings,
                                      cos_scores_top_k_idx, cos_scores_top_k_values, sub_corpus_ids, top_k):
            ids = _id_list(sub_corpus_ids)
            for q in range(len(query_embeddings)):
                heap = result_heaps[query_idx_to_id[q]]
                if heap:  # not the empty heap SearchEncoderWrapper.search starts from: push as mteb does
                    return super()._sort_full_corpus_results(
                        result_heaps=result_heaps, query_idx_to_id=query_idx_to_id,
                        query_embeddings=query_embeddings, cos_scores_top_k_idx=cos_scores_top_k_idx,
                        cos_scores_top_k_values=cos_scores_top_k_values, sub_corpus_ids=ids, top_k=top_k)
            for q in range(len(query_embeddings)):
                rows, vals = cos_scores_top_k_idx[q], cos_scores_top_k_values[q]
                if len(rows) > top_k:
                    raise ValueError(f"search index returned {len(rows)} results for top_k {top_k}")
                result_heaps[query_idx_to_id[q]].extend(zip(vals, map(ids.__getitem__, rows)))
            return result_heaps

        def _rerank_sort_results(self, result_heaps, query_id, ranked_ids, scores_top_k_idx, scores_top_k_values):
            if result_heaps[query_id]:
                return super()._rerank_sort_results(result_heaps, query_id, ranked_ids, scores_top_k_idx,
                                                    scores_top_k_values)
            pos, vals = scores_top_k_idx[0].tolist(), scores_top_k_values[0].tolist()
            result_heaps[query_id].extend(zip(vals, map(ranked_ids.__getitem__, pos)))
            return result_heaps

    return MiebSearchWrapper(model, index_backend=SearchIndex(model, device=device, engine=engine), **kwargs)
