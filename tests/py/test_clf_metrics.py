"""Classification metrics (host/metrics/classification_metrics.c) against sklearn.metrics.

Randomised inputs: missing classes on either side, a single class, all-wrong predictions,
arbitrary (negative, sparse) label ids, binary AP on continuous scores with ties and on
hard 0/1 predictions, as mteb's zero-shot and linear-probe code call them.
"""
import os
import subprocess
import warnings

import numpy as np
import pytest
from sklearn import metrics

TOOL = os.path.join(os.environ.get("MIEB_BUILD_DIR", "build"), "tests", "clf_metrics_tool")


def run_tool(y, p, s):
    lines = [str(len(y))] + [f"{int(a)} {int(b)} {float(c)!r}" for a, b, c in zip(y, p, s)]
    out = subprocess.run([TOOL], input="\n".join(lines) + "\n", capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout.split("\n")[:8]


def reference(y, p, s):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = [metrics.accuracy_score(y, p),
             metrics.f1_score(y, p, average="macro"), metrics.f1_score(y, p, average="weighted"),
             metrics.precision_score(y, p, average="macro"),
             metrics.precision_score(y, p, average="weighted"),
             metrics.recall_score(y, p, average="macro"), metrics.recall_score(y, p, average="weighted")]
        if len(np.unique(y)) == 2:
            try:
                r.append(metrics.average_precision_score(y, s, average="macro"))
                assert r[-1] == metrics.average_precision_score(y, s, average="weighted")
            except ValueError:
                r.append("ERR")
        else:
            r.append(None)
    return r


def check(y, p, s):
    got = run_tool(list(y), list(p), list(s))
    ref = reference(np.asarray(y), np.asarray(p), np.asarray(s))
    for i, (g, r) in enumerate(zip(got, ref)):
        if r is None:
            assert g == "None"
        elif r == "ERR":
            assert g.startswith("ERR") and "pos_label=1" in g
        else:
            # same arithmetic order as sklearn/numpy: equal to the last bit
            assert float(g) == r, (i, g, r, y, p)


@pytest.mark.parametrize("seed", range(60))
def test_random_multiclass(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    k = int(rng.integers(1, 12))
    ids = rng.choice(np.arange(-5, 40), size=k, replace=False)
    y = rng.choice(ids, size=n)
    p = np.where(rng.random(n) < rng.random(), y, rng.choice(np.arange(-5, 45), size=n))
    s = rng.random(n)
    check(y, p, s)


@pytest.mark.parametrize("seed", range(40))
def test_random_binary_ap(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(2, 400))
    y = rng.integers(0, 2, n)
    if len(np.unique(y)) < 2:
        y[0], y[-1] = 0, 1
    # continuous scores with ties (rounded), saturated 0/1 values, and hard predictions
    kind = seed % 3
    if kind == 0:
        s = np.round(rng.random(n), 2)
    elif kind == 1:
        s = np.clip(rng.normal(0.5, 1.0, n), 0.0, 1.0).astype(np.float32).astype(np.float64)
    else:
        s = rng.integers(0, 2, n).astype(np.float64)
    p = (s > 0.5).astype(np.int64)
    check(y, p, s)


def test_degenerate():
    check([3, 3, 3], [3, 3, 3], [0.1, 0.2, 0.3])          # a single class, all right
    check([1, 1, 1], [2, 2, 2], [0.1, 0.2, 0.3])          # all wrong, predicted class never true
    check([0, 1, 2, 3], [1, 2, 3, 0], [0, 0, 0, 0])        # all wrong, every class seen
    check([0, 1], [1, 0], [0.5, 0.5])                     # binary AP with a full tie
    check([1, 0, 0], [1, 1, 1], [1.0, 1.0, 1.0])
    check([5, 7, 5, 7], [5, 5, 7, 7], [0.1, 0.2, 0.3, 0.4])  # two classes without 1: sklearn raises
    check([1, 5, 5, 1], [5, 5, 1, 1], [0.1, 0.2, 0.3, 0.4])  # pos label 1 present, 5 is negative
    check([7], [9], [0.0])
