"""The heap emulation reproduces CPython's heapq (heappush / heappushpop on (score, id)
tuples) entry for entry, including the array order that mteb's results dicts inherit."""
from __future__ import annotations

import heapq
import os
import subprocess

import numpy as np
import pytest

TOOL = os.path.join(os.environ.get("MIEB_BUILD_DIR", "build"), "tests", "pyheap_tool")


@pytest.mark.parametrize("seed", range(40))
def test_heap_matches_heapq(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 3000))
    limit = int(rng.choice([1, 5, 1000, 2000]))
    # few distinct scores -> many ties decided by the id string
    scores = rng.choice(np.array([0.5, 0.25, -1.0, 0.125, 0.75], np.float32), n) if seed % 2 else \
        rng.standard_normal(n).astype(np.float32)
    ids = [f"d{int(x)}" + ("é" if x % 5 == 0 else "") for x in rng.integers(0, 10**6, n)]
    heap = []
    for s, i in zip(scores, ids):
        item = (float(s), i)
        heapq.heappush(heap, item) if len(heap) < limit else heapq.heappushpop(heap, item)
    inp = f"{limit} {n}\n" + "".join(f"{float(s)!r} {i}\n" for s, i in zip(scores, ids))
    out = subprocess.run([TOOL], input=inp.encode(), capture_output=True, check=True).stdout.decode()
    got = [(float(np.float32(a)), b) for a, b in (line.split(" ") for line in out.splitlines())]
    assert got == heap


@pytest.mark.parametrize("seed", range(30))
def test_sorted_desc_matches_python(seed):
    """skip_first_result's sort of a heap array: Python's stable sorted(reverse=True) on the
    score alone, so tied scores (-0.0 and 0.0 among them) keep their heap-array order."""
    rng = np.random.default_rng(1000 + seed)
    n = int(rng.integers(0, 2500))
    limit = int(rng.choice([1, 2, 7, 1000]))
    pool = np.array([0.5, 0.25, -1.0, 0.0, -0.0, 0.75, np.inf, -np.inf], np.float32)
    scores = rng.choice(pool, n) if seed % 3 == 0 else (
        rng.standard_normal(n).astype(np.float32) if seed % 3 == 1 else
        np.round(rng.standard_normal(n) * 4).astype(np.float32) / 4)
    ids = [f"d{i}" for i in range(n)]
    heap = []
    for s, i in zip(scores, ids):
        item = (float(s), i)
        heapq.heappush(heap, item) if len(heap) < limit else heapq.heappushpop(heap, item)
    results = {doc: score for score, doc in heap}  # mteb's results dict, in heap-array order
    want = sorted(results.items(), key=lambda x: x[1], reverse=True)
    inp = f"{limit} {n}\n" + "".join(f"{float(s)!r} {i}\n" for s, i in zip(scores, ids))
    out = subprocess.run([TOOL, "--sorted"], input=inp.encode(), capture_output=True,
                         check=True).stdout.decode()
    got = [(b, float(np.float32(a))) for a, b in (line.split(" ") for line in out.splitlines())]
    assert [d for d, _ in got] == [d for d, _ in want]
    # the scores themselves, with the sign of each zero as it entered
    assert [np.copysign(1.0, s) if s == 0 else s for _, s in got] == \
        [np.copysign(1.0, s) if s == 0 else s for _, s in want]


@pytest.mark.parametrize("seed", range(24))
def test_sorted_prefix_matches_heapq(seed):
    """A chunk's list, best first (score descending, then corpus row), offered to an empty
    heap as mieb_pyheap_offer_sorted_prefix takes it: the heap array equals heapq's after the
    same offers one by one, and it takes exactly the longest strictly decreasing run (ties
    whose ids do not decrease, a NaN, the heap's limit and 1,000 end it)."""
    rng = np.random.default_rng(500 + seed)
    n = int(rng.choice([999, 1000, 1001, 1001, 1200]))
    limit = 1000 if seed % 6 else int(rng.choice([7, 999, 1001]))
    kind = seed % 4
    if kind == 0:    # distinct scores
        scores = rng.standard_normal(n).astype(np.float32)
    elif kind == 1:  # many ties: the id strings decide (they need not decrease with the row)
        scores = rng.choice(np.array([0.5, 0.25, 0.0, -0.0], np.float32), n)
    elif kind == 2:  # ties, with ids that decrease along the rows (the prefix may be taken)
        scores = np.round(rng.standard_normal(n) * 2).astype(np.float32) / 2
    else:            # a NaN somewhere
        scores = rng.standard_normal(n).astype(np.float32)
        scores[int(rng.integers(0, n))] = np.nan
    width = 6
    ids = [f"d{(10**width - 1 - i) if kind == 2 else int(x):0{width}d}"
           for i, x in enumerate(rng.integers(0, 10**width, n))]
    if kind != 2:
        ids = [f"{s}_{i}" for i, s in enumerate(ids)]  # unique
    order = sorted(range(n), key=lambda i: (-float(scores[i]) if not np.isnan(scores[i]) else 0.0, i))
    scores, ids = scores[order], [ids[i] for i in order]
    heap = []
    for s, i in zip(scores, ids):
        item = (float(s), i)
        heapq.heappush(heap, item) if len(heap) < limit else heapq.heappushpop(heap, item)
    inp = f"{limit} {n}\n" + "".join(f"{float(s)!r} {i}\n" for s, i in zip(scores, ids))
    p = subprocess.run([TOOL, "--prefix"], input=inp.encode(), capture_output=True, check=True)
    got = [(float(np.float32(a)), b) for a, b in (line.split(" ") for line in p.stdout.decode().splitlines())]
    def same(x, y):
        return x[1] == y[1] and (x[0] == y[0] or (np.isnan(x[0]) and np.isnan(y[0])))
    assert len(got) == len(heap) and all(same(a, b) for a, b in zip(got, heap))
    took = int(p.stderr.decode().split()[-1])
    run = 1  # the longest run of strictly decreasing (score, id) tuples, as Python compares them
    cap = min(limit, n, 1000)
    while run < cap and (float(scores[run]), ids[run]) < (float(scores[run - 1]), ids[run - 1]):
        run += 1
    assert took == (run if run >= 2 else 0), (took, run)
