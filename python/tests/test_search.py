"""mieb_eval.search against mteb's search written out in numpy (mteb_search_ref.py), on inputs
full of exact ties: integer embeddings (dot) and rows of norm 2 (cosine)."""
import heapq
import _thread
import signal
import time

import numpy as np
import pytest

import mieb_eval
from mteb_search_ref import full_corpus, rerank


def int_rows(rng, n, dim, hi=3):
    return rng.integers(-hi, hi + 1, size=(n, dim)).astype(np.float32)


def norm2_rows(rng, n, dim):
    """Four entries of +-1, the rest 0: norm exactly 2, so cosine scores are exact."""
    x = np.zeros((n, dim), np.float32)
    for r in range(n):
        cols = rng.choice(dim, 4, replace=False)
        x[r, cols] = rng.choice([-1.0, 1.0], 4)
    return x


def as_lists(scores, indices, ids):
    return [[(float(s), ids[i]) for s, i in zip(sr, ir) if i >= 0] for sr, ir in zip(scores, indices)]


@pytest.mark.parametrize("sim", ["dot", "cosine"])
@pytest.mark.parametrize("seed", range(6))
def test_full_corpus_search_equals_mtebs_heap(engine, sim, seed):
    rng = np.random.default_rng(seed)
    nq, nd, dim = int(rng.integers(1, 40)), int(rng.integers(1, 400)), int(rng.integers(4, 12))
    top_k = int(rng.choice([1, 2, 5, 10, nd, nd + 3]))
    make = int_rows if sim == "dot" else norm2_rows
    q, c = make(rng, nq, dim), make(rng, nd, dim)
    c[rng.integers(0, nd, nd // 3)] = c[0]  # duplicate documents: ties by id
    ids = [f"d{int(x)}" for x in rng.permutation(nd)]  # ids whose order is not the rows'
    ref = full_corpus(q, c, ids, top_k, sim == "cosine")
    s, i = mieb_eval.search(q, c, top_k=top_k, similarity=sim, corpus_ids=ids, order="heap", engine=engine)
    assert as_lists(s, i, ids) == ref
    s, i = mieb_eval.search(q, c, top_k=top_k, similarity=sim, corpus_ids=ids, engine=engine)
    assert as_lists(s, i, ids) == [sorted(h, reverse=True) for h in ref]
    assert s.shape == (nq, min(top_k, nd))


def test_default_ids_are_decimal_row_numbers(engine):
    rng = np.random.default_rng(7)
    q, c = int_rows(rng, 3, 4, 1), int_rows(rng, 30, 4, 1)
    ids = [str(r) for r in range(30)]
    s, i = mieb_eval.search(q, c, top_k=7, similarity="dot", engine=engine)
    assert as_lists(s, i, ids) == [sorted(h, reverse=True) for h in full_corpus(q, c, ids, 7, False)]


def test_heap_order_rebuilds_mtebs_heap_when_pushed():
    """mteb rebuilds its heap from what a search backend returns, pushing in order: the heap
    order must come back as it is."""
    rng = np.random.default_rng(3)
    q, c = int_rows(rng, 8, 6, 1), int_rows(rng, 200, 6, 1)
    ids = [f"{r:03d}" for r in range(200)]
    s, i = mieb_eval.search(q, c, top_k=20, similarity="dot", corpus_ids=ids, order="heap", device="cpu")
    for sr, ir in zip(s, i):
        h = []
        for v, d in zip(sr.tolist(), ir.tolist()):
            heapq.heappush(h, (v, ids[d]))
        assert h == [(v, ids[d]) for v, d in zip(sr.tolist(), ir.tolist())]


def test_chunks_of_fifty_thousand(engine):
    """Across mteb's 50,000-document chunks, torch.topk(top_k + 1) per chunk decides which tied
    documents reach the heap."""
    rng = np.random.default_rng(11)
    nd = 50_000 * 2 + 17
    c = rng.integers(0, 2, size=(nd, 4)).astype(np.float32)  # 16 distinct rows: ties everywhere
    q = np.ones((3, 4), np.float32)
    ids = [str(nd - r) for r in range(nd)]
    ref = full_corpus(q, c, ids, 5, False)
    s, i = mieb_eval.search(q, c, top_k=5, similarity="dot", corpus_ids=ids, order="heap", engine=engine)
    assert as_lists(s, i, ids) == ref


@pytest.mark.parametrize("seed", range(4))
def test_reranking_equals_mtebs(engine, seed):
    rng = np.random.default_rng(100 + seed)
    nq, nd = 12, 80
    q, c = int_rows(rng, nq, 5, 1), int_rows(rng, nd, 5, 1)
    ids = [f"doc{r}" for r in range(nd)]
    cands = [list(rng.choice(nd, int(rng.integers(0, 30)), replace=False)) for _ in range(nq)]
    ref = rerank(q, c, ids, cands, 10, False)
    s, i = mieb_eval.search(q, c, top_k=10, similarity="dot", corpus_ids=ids, candidates=cands, order="heap",
                            engine=engine)
    assert as_lists(s, i, ids) == ref
    assert all(len(h) == sum(ix >= 0 for ix in row) for h, row in zip(ref, i))


def test_float16_bfloat16_and_float32_agree(engine):
    rng = np.random.default_rng(5)
    q, c = int_rows(rng, 4, 8), int_rows(rng, 60, 8)
    want = mieb_eval.search(q, c, top_k=9, similarity="dot", engine=engine)
    got16 = mieb_eval.search(q.astype(np.float16), c.astype(np.float16), top_k=9, similarity="dot", engine=engine)
    bits = lambda x: (x.view(np.uint32) >> 16).astype(np.uint16)  # exact: small integers
    gotbf = mieb_eval.search(bits(q), bits(c), top_k=9, similarity="dot", bfloat16=True, engine=engine)
    for got in (got16, gotbf):
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])


def test_empty_inputs(engine):
    s, i = mieb_eval.search(np.zeros((0, 4), np.float32), np.ones((5, 4), np.float32), top_k=3, engine=engine)
    assert s.shape == (0, 3) and i.shape == (0, 3)
    s, i = mieb_eval.search(np.ones((2, 4), np.float32), np.zeros((0, 4), np.float32), top_k=3, engine=engine)
    assert s.shape == (2, 0)


def test_bad_inputs_raise_with_the_engines_message(engine):
    q, c = np.ones((2, 4), np.float32), np.ones((5, 4), np.float32)
    bad = c.copy()
    bad[3, 2] = np.nan
    with pytest.raises(mieb_eval.BadData, match=r"row 3 .*column 2 holds NaN"):
        mieb_eval.search(q, bad, engine=engine)
    with pytest.raises(mieb_eval.InvalidArgument, match="dimension"):
        mieb_eval.search(q, np.ones((5, 3), np.float32), engine=engine)
    with pytest.raises(ValueError, match="top_k"):
        mieb_eval.search(q, c, top_k=0, engine=engine)
    with pytest.raises(ValueError, match="similarity"):
        mieb_eval.search(q, c, similarity="euclidean", engine=engine)
    with pytest.raises(mieb_eval.InvalidArgument, match="candidate 9 is not a corpus row"):
        mieb_eval.search(q, c, candidates=[[0], [9]], engine=engine)
    # the engine is usable after a failure
    assert mieb_eval.search(q, c, top_k=2, engine=engine)[1].shape == (2, 2)


def test_ctrl_c_stops_a_search_and_the_engine_goes_on(engine):
    from conftest import TIME_SCALE

    rng = np.random.default_rng(0)
    q = rng.standard_normal((2000, 256)).astype(np.float32)
    c = rng.standard_normal((400_000, 256)).astype(np.float32)
    asked = []

    def ctrl_c(done, total):
        """Ctrl-C once the first of the search's 8 corpus blocks is done (a timer could fire after
        a fast machine has finished): the main thread gets it while 7 blocks remain."""
        if not asked:
            asked.append(time.monotonic())
            _thread.interrupt_main()

    # Python's own SIGINT handler, whatever this process inherited: a job started in the
    # background of a shell ignores SIGINT, and interrupt_main() then does nothing
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            mieb_eval.search(q, c, top_k=100, engine=engine, progress=ctrl_c)
    finally:
        signal.signal(signal.SIGINT, old)
    assert asked and time.monotonic() - asked[0] < 2.0 * TIME_SCALE
    s, i = mieb_eval.search(q[:2], c[:100], top_k=3, engine=engine)
    assert i.shape == (2, 3)


def test_cpu_engine_names_its_device():
    with mieb_eval.Engine("cpu") as e:
        assert e.device == "cpu"


def test_progress_reaches_every_pair(engine):
    rng = np.random.default_rng(9)
    q, c = rng.standard_normal((130, 8)).astype(np.float32), rng.standard_normal((120_000, 8)).astype(np.float32)
    seen = []
    mieb_eval.search(q, c, top_k=5, engine=engine, progress=lambda done, total: seen.append((done, total)))
    assert seen and all(t == 130 * 120_000 for _, t in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen) and seen[-1][0] == 130 * 120_000
    with pytest.raises(TypeError, match="progress"):
        mieb_eval.search(q[:2], c[:10], top_k=5, engine=engine, progress="yes")
    assert mieb_eval.search(q[:2], c[:10], top_k=5, engine=engine, progress=False)[1].shape == (2, 5)


def test_engine_warnings_reach_pythons_logging(caplog):
    rng = np.random.default_rng(2)
    q, c = rng.standard_normal((300, 64)).astype(np.float32), rng.standard_normal((3000, 64)).astype(np.float32)
    with caplog.at_level("INFO", logger="mieb_eval"), mieb_eval.Engine("cpu", mem_limit=4096) as tiny:
        s, i = mieb_eval.search(q, c, top_k=10, engine=tiny)
    assert any(r.levelname == "WARNING" and "--mem-limit is below one grid tile" in r.getMessage()
               for r in caplog.records), [r.getMessage() for r in caplog.records]
    # the limit changes nothing in the results (scores do not depend on the tiling)
    s2, i2 = mieb_eval.search(q, c, top_k=10, device="cpu")
    np.testing.assert_array_equal(i, i2)
    np.testing.assert_array_equal(s, s2)


def test_top_k_must_be_an_integer(engine):
    """int(2.7) would search for 2 results without a word; numpy integers are integers."""
    q, c = np.ones((2, 4), np.float32), np.ones((5, 4), np.float32)
    for bad in (2.7, 3.0, "3", True, None):
        with pytest.raises(ValueError, match=r"top_k .*integer"):
            mieb_eval.search(q, c, top_k=bad, engine=engine)
    assert mieb_eval.search(q, c, top_k=np.int64(3), engine=engine)[1].shape == (2, 3)


def test_repeated_corpus_ids_are_refused_by_name(engine):
    """mteb's result dict is keyed by id: two rows of one id would collapse into one result."""
    q, c = np.ones((2, 4), np.float32), np.ones((4, 4), np.float32)
    with pytest.raises(ValueError, match=r"corpus_ids: id 'b' is repeated \(row 3\)"):
        mieb_eval.search(q, c, top_k=2, corpus_ids=["a", "b", "c", "b"], engine=engine)
    with pytest.raises(ValueError, match=r"id '7' is repeated \(row 1\)"):
        mieb_eval.search(q, c, top_k=2, corpus_ids=[7, "7", 8, 9], engine=engine)


def test_integer_ids_compare_as_strings_among_ties(engine):
    """Ids are compared as strings, as mteb's string ids are: among equal scores 9 ("9") ranks
    above 10 ("10") in rank order, and the heap's cut keeps "9" over "10"."""
    q = np.ones((1, 4), np.float32)
    c = np.ones((3, 4), np.float32)  # three equal scores
    ids = [10, 9, 100]
    s, i = mieb_eval.search(q, c, top_k=3, similarity="dot", corpus_ids=ids, engine=engine)
    assert [ids[r] for r in i[0]] == [9, 100, 10]  # "9" > "100" > "10"
    s, i = mieb_eval.search(q, c, top_k=1, similarity="dot", corpus_ids=ids, engine=engine)
    ref = full_corpus(q, c, [str(x) for x in ids], 1, False)
    assert [ids[r] for r in i[0]] == [9] and ref == [[(4.0, "9")]]


@pytest.mark.parametrize("order", ["rank", "heap"])
def test_output_is_as_wide_as_the_corpus_not_top_k(engine, order):
    """top_k far above the corpus size allocates min(top_k, nd) columns (top_k=10**12 would
    need 12 TB at (nq, top_k)), and the results are mteb's with that top_k, across chunks."""
    rng = np.random.default_rng(21)
    nd = 50_000 + 37
    q, c = int_rows(rng, 2, 4, 1), int_rows(rng, nd, 4, 1)
    ids = [f"{(r * 7919) % nd:06d}" for r in range(nd)]
    s, i = mieb_eval.search(q, c, top_k=10**12, similarity="dot", corpus_ids=ids, order=order, engine=engine)
    assert s.shape == i.shape == (2, nd)
    assert (s if s.base is None else s.base).nbytes == 2 * nd * 4  # what was allocated
    ref = full_corpus(q, c, ids, 10**12, False)
    want = ref if order == "heap" else [sorted(h, reverse=True) for h in ref]
    assert as_lists(s, i, ids) == want


def test_reranking_output_is_as_wide_as_the_longest_list(engine):
    rng = np.random.default_rng(22)
    q, c = int_rows(rng, 3, 5, 1), int_rows(rng, 40, 5, 1)
    ids = [f"doc{r}" for r in range(40)]
    cands = [[1, 2, 3], [4, 5, 6, 7, 8, 9, 10], []]
    s, i = mieb_eval.search(q, c, top_k=10**12, similarity="dot", corpus_ids=ids, candidates=cands, order="heap",
                            engine=engine)
    assert s.shape == (3, 7)
    assert as_lists(s, i, ids) == rerank(q, c, ids, cands, 10**12, False)
    assert list(i[2]) == [-1] * 7 and np.all(np.isneginf(s[2]))
