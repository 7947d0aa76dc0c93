"""The linear probe's few-shot draw (host/emulation/fewshot_sample.c) against numpy itself:
RandomState(42).shuffle on a list (PROTOCOLS.md §9.1 test vectors, n up to 50,000) and a
verbatim copy of mteb 2.26's AbsTaskClassification._undersample_data loop run on the same
labels (ties of class sizes, classes smaller than samples_per_label, one class, int64 ids)."""
from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from helpers.mieb_tools import run_tool


def perm(n):
    return [int(x) for x in run_tool("fewshot_tool", "", "perm", str(n)).split()]


def mteb_draw(labels, spl, n_exp):
    """mteb/abstasks/classification.py: _evaluate_subset + _undersample_data, minus datasets."""
    idxs = None
    out = []
    for _ in range(n_exp):
        if idxs is None:
            idxs = list(range(len(labels)))
        rng_state = np.random.RandomState(42)
        rng_state.shuffle(idxs)
        label_counter = defaultdict(int)
        sampled = []
        for i in idxs:
            if label_counter[labels[i]] < spl:
                sampled.append(i)
                label_counter[labels[i]] += 1
        out.append(sampled)
    return out


def tool_draw(labels, spl, n_exp):
    text = run_tool("fewshot_tool", f"{len(labels)} " + " ".join(str(int(x)) for x in labels), "draw",
                    str(spl), str(n_exp))
    lines = text.split("\n")
    L = int(lines[0])
    rows = [[int(x) for x in ln.split()] for ln in lines[1:1 + n_exp]]
    assert all(len(r) == L for r in rows)
    return rows


def test_spec_vectors():
    p = perm(10)
    idxs = list(range(10))
    got = []
    for _ in range(3):
        idxs = [idxs[j] for j in p]
        got.append(idxs)
    assert got == [[8, 1, 5, 0, 7, 2, 9, 4, 3, 6], [3, 1, 2, 8, 4, 5, 6, 7, 0, 9], [0, 1, 5, 3, 7, 2, 9, 4, 8, 6]]


@pytest.mark.parametrize("n", [1, 2, 3, 7, 64, 65, 1000, 4097, 50000])
def test_perm_matches_numpy(n):
    x = list(range(n))
    np.random.RandomState(42).shuffle(x)
    assert perm(n) == x


CASES = [
    # (n, n_classes, spl, n_exp, seed)
    (50, 5, 16, 5, 0),        # classes smaller than samples_per_label: all rows taken
    (500, 10, 8, 10, 1),      # STL10's parameters
    (2000, 37, 16, 5, 2),
    (300, 2, 16, 5, 3),       # binary
    (40, 1, 4, 3, 4),         # one class
    (1, 1, 16, 2, 5),
    (5000, 200, 16, 5, 6),    # many classes, skewed sizes
]


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_draw_matches_mteb(case):
    n, k, spl, n_exp, seed = case
    rng = np.random.default_rng(seed)
    w = rng.random(k) ** 3 + 0.01                  # skewed class sizes
    ids = rng.choice(np.array([-7, 0, 3, 10**12] + list(range(100, 100 + k)), dtype=np.int64), k, replace=False)
    labels = ids[rng.choice(k, n, p=w / w.sum())].tolist()
    assert tool_draw(labels, spl, n_exp) == mteb_draw(labels, spl, n_exp)
