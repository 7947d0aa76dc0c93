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
