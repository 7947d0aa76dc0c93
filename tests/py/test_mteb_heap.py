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
