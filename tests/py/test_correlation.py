"""host/metrics/correlation.c against scipy itself: scipy.stats.pearsonr and spearmanr on
randomised inputs with ties (gold scores on a coarse grid, repeated similarity values),
constant inputs, n = 2 and 3, NaN, and magnitudes from 1e-3 to 1e3; plus rankdata.

Spearman must equal scipy to the bit (average ranks are exact, then np.corrcoef's rounding
order); Pearson to 1e-12 (numpy's last step is a BLAS dot product)."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy.stats import pearsonr, rankdata, spearmanr

from helpers.mieb_tools import run_tool


def _hx(a):
    return " ".join(float(v).hex() for v in a)


def _corr(cases):
    lines = "".join(f"corr {len(x)} {_hx(x)} {_hx(y)}\n" for x, y in cases)
    out = run_tool("pairwise_tool", lines).splitlines()
    return [tuple(float.fromhex(t) for t in line.split()) for line in out]


def _scipy(x, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = float(pearsonr(x, y)[0]) if len(x) >= 2 else math.nan
        s = float(spearmanr(x, y)[0])
    return p, s


def _same_nan(a, b):
    return math.isnan(a) and math.isnan(b)


def _cases(rng):
    cases = []
    for n in [2, 3, 4, 5, 7, 8, 9, 16, 31, 100, 129, 257, 1000, 3000]:
        for kind in range(6):
            if kind == 0:  # STS-like: gold on a 0.2 grid (ties), float32 similarity values
                x = rng.integers(0, 26, n) / 5 / 5
                y = (x + rng.normal(0, 0.3, n)).astype(np.float32).astype(np.float64)
            elif kind == 1:  # heavy ties on both sides
                x = rng.integers(0, 4, n).astype(np.float64)
                y = rng.integers(0, 3, n) * 0.25
            elif kind == 2:  # wide magnitudes, negative (-distances)
                x = rng.random(n)
                y = -np.abs(rng.normal(0, 1, n)) * 10.0 ** rng.uniform(-3, 3)
            elif kind == 3:  # perfectly (anti-)correlated
                x = rng.random(n)
                y = -3 * x + 1
            elif kind == 4:  # near-constant y (tiny spread around a large mean)
                x = rng.random(n)
                y = 1e3 + rng.random(n) * 1e-9
            else:  # repeated blocks: exact ties across many values
                base = rng.random(max(1, n // 4))
                x = np.resize(base, n)
                y = np.resize(rng.random(max(1, n // 3)), n)
            cases.append((x, y))
    return cases


def test_random_against_scipy():
    rng = np.random.default_rng(20250101)
    cases = _cases(rng)
    got = _corr(cases)
    for (x, y), (p, s) in zip(cases, got):
        ep, es = _scipy(x, y)
        assert (p == ep) or _same_nan(p, ep) or abs(p - ep) <= 1e-12, (len(x), p, ep)
        # Spearman: bit-identical
        assert (s == es) or _same_nan(s, es), (len(x), s, es)


def test_constant_and_degenerate_inputs():
    cases = [
        (np.array([1.0, 1.0, 1.0, 1.0]), np.array([0.1, 0.2, 0.3, 0.4])),  # constant gold
        (np.array([0.1, 0.2, 0.3, 0.4]), np.array([2.0, 2.0, 2.0, 2.0])),  # constant scores
        (np.array([0.5, 0.5]), np.array([1.0, 2.0])),                    # n = 2, constant
        (np.array([0.1, 0.7]), np.array([3.0, -2.0])),                   # n = 2: exactly -1
        (np.array([0.1, 0.7]), np.array([3.0, 4.0])),                    # n = 2: exactly +1
        (np.array([0.0, -0.0, 1.0]), np.array([1.0, 1.0, 2.0])),         # -0.0 ties with 0.0
        (np.array([0.2, 0.4, 0.6, 0.8]), np.array([1.0, np.nan, 2.0, 3.0])),  # NaN -> NaN
        (np.array([0.2]), np.array([1.0])),                              # n = 1: spearman NaN
        (np.array([]), np.array([])),                                    # n = 0
    ]
    got = _corr(cases)
    for (x, y), (p, s) in zip(cases, got):
        ep, es = _scipy(x, y)
        assert (p == ep) or _same_nan(p, ep), (x, y, p, ep)
        assert (s == es) or _same_nan(s, es), (x, y, s, es)
    assert got[3][0] == -1.0 and got[4][0] == 1.0  # pearsonr rounds n == 2 to exactly +-1
    assert all(math.isnan(v) for v in got[0]) and all(math.isnan(v) for v in got[1])


@pytest.mark.parametrize("n", [1, 2, 5, 50, 1001])
def test_rankdata_average(n):
    rng = np.random.default_rng(n)
    x = rng.integers(0, max(2, n // 3), n) * 0.5
    x[: n // 5] = -0.0 if n > 4 else x[: n // 5]
    out = run_tool("pairwise_tool", f"rank {n} {_hx(x)}\n").split()
    got = np.array([float.fromhex(t) for t in out])
    assert np.array_equal(got, rankdata(x, method="average"))
