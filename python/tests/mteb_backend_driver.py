"""The mteb side of test_mteb_backend.py; runs in .venv-mteb (mteb with torch).

    python python/tests/mteb_backend_driver.py OUT.json

Small retrieval tasks built as mteb's own AbsTaskRetrieval classes, in memory, evaluated by
mteb.evaluate five ways: mteb's default search (SearchEncoderWrapper without an index), the
same with torch.topk's ties broken by the lower index ("default-stable"), FaissSearchIndex
(where faiss is installed), mieb_eval.mteb.SearchIndex, and mieb_eval.mteb.search_wrapper
("mieb-wrapper": SearchIndex without mteb's rebuild of the heaps). Each way's search is
recorded: every query's result dict, in order. OUT.json holds, per case and way, the task's
scores (less its times) and those dicts as [query id, [[doc id, score], ...]] lists, or the
error that way raised.

Why default-stable: torch.topk leaves the order of equal scores unspecified (on the CPU it
selects with std::nth_element), and that order decides which tied documents reach mteb's heap
and where they sit in it; mieb_eval takes the lower corpus row (candidate position) first
(docs/PARITY.md). With equal scores, mieb_eval reproduces mteb's search with that rule; with
distinct scores, mteb's search as it is.

The embeddings make every score exact in float32, so that the ways can agree to the bit:
dot-product models get integer vectors, cosine models vectors with four entries of +-1 (norm
2, so normalised entries are +-0.5). The "ties" data repeat vectors (duplicate documents),
which tie at the top and at the top_k cut (k_values up to 10 on corpora of a few hundred);
the "distinct" data give every document a different score for every query.
"""
from __future__ import annotations

import contextlib
import json
import os
import sys
import traceback
import warnings
from pathlib import Path

import numpy as np

SRC = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(SRC / "tests" / "py"))  # helpers.mteb_inmem's task metadata

DIM = 16
ENCODE = {"batch_size": 64, "show_progress_bar": False}


def item_image(n: int):
    """A 2x2 RGB image that carries the item number n in its pixels (PNG keeps them exact)."""
    from PIL import Image

    return Image.frombytes("RGB", (2, 2), int(n).to_bytes(12, "little"))


def item_number(batch: dict, i: int) -> int:
    if "image" in batch:
        return int.from_bytes(batch["image"][i].convert("RGB").tobytes(), "little")
    return int(batch["text"][i][1:])


def make_encoder(table: np.ndarray, similarity: str, out: str):
    """An mteb encoder answering item n with table[n], as numpy float32 or a torch tensor of
    dtype `out` ("float32", "torch-float16", "torch-bfloat16")."""
    import torch
    from mteb.models.abs_encoder import AbsEncoder
    from mteb.models.model_meta import ModelMeta, ScoringFunction

    class TableEncoder(AbsEncoder):
        def __init__(self):
            self.mteb_model_meta = ModelMeta.create_empty(overwrites={
                "name": f"mieb-test/table-{similarity}-{out}", "revision": "1",
                "similarity_fn_name": ScoringFunction(similarity), "modalities": ["image", "text"],
                "embed_dim": DIM})

        def encode(self, inputs, *, task_metadata, hf_split, hf_subset, prompt_type=None, **kwargs):
            rows = [item_number(b, i) for b in inputs for i in range(len(b["image"] if "image" in b else b["text"]))]
            x = table[np.asarray(rows, dtype=np.int64)].reshape(len(rows), DIM)
            if out == "float32":
                return x.astype(np.float32)
            return torch.from_numpy(x.astype(np.float32)).to(getattr(torch, out.split("-")[1]))

    return TableEncoder()


def int_rows(rng, n: int, role: str) -> np.ndarray:
    return rng.integers(-2, 3, size=(n, DIM)).astype(np.float32)


def norm2_rows(rng, n: int, role: str) -> np.ndarray:
    x = np.zeros((n, DIM), np.float32)
    for r in range(n):
        x[r, rng.choice(DIM, 4, replace=False)] = rng.choice([-1.0, 1.0], 4)
    return x


def distinct_rows(rng, n: int, role: str) -> np.ndarray:
    """Integer vectors whose dot products differ for every (query, document): a document's first
    entry is its own number below 1024, a query's is 1, the other entries of documents are
    multiples of 1024."""
    x = rng.integers(-2, 3, size=(n, DIM)).astype(np.float32)
    if role == "query":
        x[:, 0] = 1
    else:
        x[:, 1:] *= 1024
        x[:, 0] = rng.permutation(n) + 1
    return x


def build_tasks(rows, ties: bool):
    """(tasks, vector table): retrieval tasks over item numbers; rows(rng, n, role) draws the
    vectors; ties repeats some of them (and adds the skip_first_result task, whose queries are
    corpus images)."""
    from datasets import Dataset
    from helpers.mteb_inmem import _meta
    from mteb.abstasks import AbsTaskRetrieval
    from mteb.abstasks.retrieval_dataset_loaders import RetrievalSplitData

    rng = np.random.default_rng(20261206)
    table: list[np.ndarray] = []

    def take(v: np.ndarray) -> list[int]:
        start = sum(len(t) for t in table)
        table.append(v)
        return list(range(start, start + len(v)))

    def with_dups(v: np.ndarray, frac: float) -> np.ndarray:
        if not ties:
            return v
        v = v.copy()
        src = rng.integers(0, len(v), int(len(v) * frac))
        dst = rng.integers(0, len(v), len(src))
        v[dst] = v[src]  # repeated vectors: exact ties
        return v

    def qrels_for(nq: int, nd: int, dids: list[str]) -> dict:
        out = {}
        for q in range(nq):
            rel = rng.choice(nd, int(rng.integers(1, 4)), replace=False)
            out[f"q{q}"] = {dids[int(d)]: int(rng.integers(0, 3)) for d in rel}
            out[f"q{q}"][dids[int(rel[0])]] = 2
        return out

    class Small(AbsTaskRetrieval):
        k_values = (1, 3, 5, 10)  # top_k 10: the heap's cut lies inside the corpus

    # 1. text queries over an image corpus (Any2AnyRetrieval t2i); ids out of row order
    docs = with_dups(rows(rng, 300, "doc"), 0.3)
    d_items, q_items = take(docs), take(with_dups(rows(rng, 40, "query"), 0.1))
    dids = [f"d{(7 * j) % 300:03d}" for j in range(300)]
    t2i_split = RetrievalSplitData(
        queries=Dataset.from_dict({"id": [f"q{i}" for i in range(40)], "text": [f"t{n}" for n in q_items]}),
        corpus=Dataset.from_dict({"id": dids, "image": [item_image(n) for n in d_items]}),
        relevant_docs=qrels_for(40, 300, dids), top_ranked=None)

    # 2. image queries that are corpus images, skip_first_result (as CUB200I2IRetrieval): a query
    #    ties with its duplicates at the top, and the result dict's order decides which is dropped
    base = rows(rng, 60, "doc")
    docs2 = base[rng.integers(0, 60, 240)]  # every vector about four times
    d2 = take(docs2)
    dids2 = [f"i{j:03d}" for j in range(240)]
    qsel = list(range(0, 240, 6))
    i2i_split = RetrievalSplitData(
        queries=Dataset.from_dict({"id": [f"q{i}" for i in range(len(qsel))],
                                   "image": [item_image(d2[j]) for j in qsel]}),
        corpus=Dataset.from_dict({"id": dids2, "image": [item_image(n) for n in d2]}),
        relevant_docs=qrels_for(len(qsel), 240, dids2), top_ranked=None)

    # 3. reranking (top_ranked): lists of 0 to 25 candidates, repeated vectors among them
    docs3 = with_dups(rows(rng, 120, "doc"), 0.4)
    d3, q3 = take(docs3), take(rows(rng, 30, "query"))
    dids3 = [f"r{j}" for j in range(120)]
    top = {}
    for q in range(30):
        n = 0 if q == 4 else int(rng.integers(1, 26))
        top[f"q{q}"] = [dids3[int(c)] for c in rng.choice(120, n, replace=False)]
    qrels3 = {}
    for q in range(30):
        pool = top[f"q{q}"] or dids3[:3]
        qrels3[f"q{q}"] = {d: int(rng.integers(0, 2)) for d in pool[:5]}
        qrels3[f"q{q}"][pool[0]] = 1
    rerank_split = RetrievalSplitData(
        queries=Dataset.from_dict({"id": [f"q{i}" for i in range(30)], "text": [f"t{n}" for n in q3]}),
        corpus=Dataset.from_dict({"id": dids3, "image": [item_image(n) for n in d3]}),
        relevant_docs=qrels3, top_ranked=top)

    # 4. VisionCentricQA: image + text questions, four candidate answers each, two of them
    #    the same vector (a tie the heap's (score, id) order breaks)
    answers = rows(rng, 24, "doc")
    if ties:
        answers[1::6] = answers[0::6]
    a_items, qv = take(answers), take(rows(rng, 48, "query"))
    aids = [f"a{j:02d}" for j in range(24)]
    top4, qrels4 = {}, {}
    for q in range(48):
        g = 6 * (q % 4)
        opts = [g, g + 1, g + 2 + q % 4, g + 5]
        top4[f"q{q}"] = [aids[o] for o in (opts if q % 2 else opts[::-1])]
        qrels4[f"q{q}"] = {aids[o]: int(o == opts[q % 3]) for o in opts}
    vcqa_split = RetrievalSplitData(
        queries=Dataset.from_dict({"id": [f"q{i}" for i in range(48)], "image": [item_image(n) for n in qv],
                                   "text": [f"t{n}" for n in qv]}),
        corpus=Dataset.from_dict({"id": aids, "text": [f"t{n}" for n in a_items]}),
        relevant_docs=qrels4, top_ranked=top4)

    def task(name, type_, main, mods, cat, split, base=Small, **attrs):
        def load_data(self, num_proc=None, **kw):
            self.dataset = {"default": {"test": split}}
            self.data_loaded = True

        return type(name, (base,), {"metadata": _meta(name, type_, main, mods, cat), "load_data": load_data,
                                    **attrs})()

    tasks = [
        task("BackendT2I", "Any2AnyRetrieval", "ndcg_at_10", ["image", "text"], "t2i", t2i_split),
        task("BackendRerank", "Any2AnyRetrieval", "ndcg_at_10", ["image", "text"], "t2i", rerank_split),
        task("BackendVCQA", "VisionCentricQA", "accuracy", ["image", "text"], "it2t", vcqa_split, base=AbsTaskRetrieval),
    ]
    if ties:
        tasks.append(task("BackendI2ISkip", "Any2AnyRetrieval", "hit_rate_at_1", ["image"], "i2i", i2i_split,
                          skip_first_result=True))
    return tasks, np.concatenate(table)


def recording(wrapper):
    """The wrapper, its search recording each call's result dicts (items in order)."""
    wrapper.recorded = []
    search = wrapper.search

    def search_and_record(queries, **kw):
        res = search(queries, **kw)
        wrapper.recorded.append([[qid, [[d, s] for d, s in docs.items()]] for qid, docs in res.items()])
        return res

    wrapper.search = search_and_record
    return wrapper


def _scores(task_result) -> dict:
    out = {}
    for split, subsets in task_result.scores.items():
        out[split] = [{k: v for k, v in sorted(s.items()) if "time" not in k} for s in subsets]
    return out


@contextlib.contextmanager
def _topk(way: str):
    """torch.topk with equal values in index order (a stable sort's), for default-stable."""
    import torch

    if way != "default-stable":
        yield
        return
    real = torch.topk

    def stable_topk(x, k, dim=-1, largest=True, sorted=True):
        assert largest and sorted
        v, i = torch.sort(x, dim=dim, descending=True, stable=True)
        return v.narrow(dim, 0, k), i.narrow(dim, 0, k)

    torch.topk = stable_topk
    try:
        yield
    finally:
        torch.topk = real


def run_way(way: str, model, task) -> dict:
    import mteb

    try:
        from mteb.models.search_wrappers import SearchEncoderWrapper

        if way.startswith("default"):
            wrapper = SearchEncoderWrapper(model)
        elif way == "faiss":
            from mteb.models.search_encoder_index.search_indexes.faiss_search_index import FaissSearchIndex

            wrapper = SearchEncoderWrapper(model, index_backend=FaissSearchIndex(model))
        elif way == "mieb":
            from mieb_eval.mteb import SearchIndex

            wrapper = SearchEncoderWrapper(model, index_backend=SearchIndex(model, device="cpu"))
        else:
            from mieb_eval.mteb import search_wrapper

            wrapper = search_wrapper(model, device="cpu")
        wrapper = recording(wrapper)
        with warnings.catch_warnings(record=True) as caught, _topk(way):
            warnings.simplefilter("always")
            res = mteb.evaluate(wrapper, task, cache=None, encode_kwargs=dict(ENCODE), raise_error=True,
                                show_progress_bar=False)
        return {"scores": _scores(res.task_results[0]), "results": wrapper.recorded,
                "warnings": sorted({str(w.message) for w in caught if "top-ranked" in str(w.message)})}
    except Exception as e:  # noqa: BLE001 - the test reports what each way raised
        return {"error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()[-3000:]}


def main() -> int:
    out = Path(sys.argv[1])
    try:
        import faiss  # noqa: F401

        ways = ["default", "default-stable", "faiss", "mieb", "mieb-wrapper"]
    except ImportError:
        ways = ["default", "default-stable", "mieb", "mieb-wrapper"]
    # (data, similarity, what the encoder returns, tasks: all, or the first n)
    cases = [("ties", "cosine", "float32", norm2_rows, None), ("ties", "dot", "float32", int_rows, None),
             ("distinct", "dot", "float32", distinct_rows, None),
             ("ties", "cosine", "torch-bfloat16", norm2_rows, 2), ("ties", "dot", "torch-float16", int_rows, 2)]
    report = {"ways": ways, "cases": {}}
    for data, sim, dtype, rows, first in cases:
        tasks, table = build_tasks(rows, data == "ties")
        model = make_encoder(table, sim, dtype)
        for t in tasks[:first]:
            report["cases"][f"{t.metadata.name}/{data}/{sim}/{dtype}"] = {way: run_way(way, model, t) for way in ways}
    out.write_text(json.dumps(report))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main())
