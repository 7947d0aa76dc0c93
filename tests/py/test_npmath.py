"""host/emulation/npmath.c against numpy itself, bit for bit: np.sum on every size 0..2000
(and a few large ones), np.mean, np.std, np.add.reduceat segments, stable argsort with
ties and NaNs, scipy's trapezoid as sklearn.metrics.auc calls it, and round(np.float64)."""
import random
import struct

import numpy as np
from scipy.integrate import trapezoid

from helpers.mieb_tools import run_tool


def _hex(a):
    return " ".join(f"{struct.unpack('<Q', struct.pack('<d', float(v)))[0]:016x}" for v in a)


def _from_hex(s):
    return struct.unpack("<d", struct.pack("<Q", int(s, 16)))[0]


def _same(x, y):
    return (np.isnan(x) and np.isnan(y)) or struct.pack("<d", x) == struct.pack("<d", y)


def _data(rng, n, kind):
    if kind == 0:  # mixed magnitudes and signs: rounding of every partial sum matters
        return rng.standard_normal(n) * np.exp(rng.uniform(-8, 8, n))
    if kind == 1:  # metric-like values in [0, 1]
        return rng.random(n)
    return rng.choice([0.0, 1.0, 0.5, 1 / 3, 0.1, 0.2], n)  # many exact ties


def _run(requests):
    lines = "".join(f"{op} {len(a)} {_hex(a)}\n" for op, a in requests)
    return run_tool("npmath_tool", lines).splitlines()


def test_sum_mean_std_all_sizes():
    rng = np.random.default_rng(20240611)
    sizes = list(range(0, 2001)) + [4095, 4096, 8191, 8192, 8193, 10000, 40000]
    reqs, refs = [], []
    for n in sizes:
        a = _data(rng, n, n % 3)
        reqs.append(("sum", a))
        refs.append(float(np.sum(a)))
        if n % 7 == 0 or n > 2000:
            if n > 0:
                reqs.append(("mean", a))
                refs.append(float(np.mean(a)))
                reqs.append(("std", a))
                refs.append(float(np.std(a)))
    out = _run(reqs)
    assert len(out) == len(refs)
    bad = [(op, len(a), _from_hex(o), r) for (op, a), o, r in zip(reqs, out, refs)
           if not _same(_from_hex(o), r)]
    assert not bad, bad[:10]
    # np.sum([-0.0]) is +0.0: the reduction starts from add's identity.
    assert _run([("sum", np.array([-0.0]))]) == ["0000000000000000"]


def test_reduceat_segments():
    rng = np.random.default_rng(7)
    reqs, refs = [], []
    for n in list(range(1, 400)) + [1000, 2000, 5000]:
        a = _data(rng, n, n % 3)
        reqs.append(("reduceat", a))
        # a segment in the middle of a longer array, as abstention_curve uses it
        full = np.concatenate([[1.25], a, [2.5]])
        refs.append(float(np.add.reduceat(full, [0, 1, n + 1])[1]))
    out = _run(reqs)
    bad = [(len(a), _from_hex(o), r) for (_, a), o, r in zip(reqs, out, refs)
           if not _same(_from_hex(o), r)]
    assert not bad, bad[:10]


def test_argsort_stable():
    rng = np.random.default_rng(11)
    reqs, refs = [], []
    for n in [0, 1, 2, 3, 7, 8, 9, 16, 17, 100, 257, 1000, 3000]:
        for kind in range(3):
            a = _data(rng, n, kind)
            if kind == 2 and n > 4:
                a[rng.integers(0, n, n // 5)] = np.nan
                a[rng.integers(0, n, n // 7)] = -0.0
            reqs.append(("argsort", a))
            refs.append(np.argsort(a, stable=True))
    out = _run(reqs)
    for (_, a), o, r in zip(reqs, out, refs):
        got = [int(t) for t in o.split()]
        assert got == r.tolist(), (len(a), got[:20], r[:20])


def test_trapezoid_as_sklearn_auc():
    from sklearn.metrics import auc

    rng = np.random.default_rng(3)
    rates = np.linspace(0, 1, 11)[:-1]
    reqs, refs = [], []
    for t in range(300):
        y = _data(rng, 10, t % 3)
        reqs.append(("trapezoid", np.concatenate([y, rates])))
        refs.append(auc(rates, y))
        n = int(rng.integers(2, 40))
        x = np.sort(rng.random(n))
        y = rng.random(n)
        reqs.append(("trapezoid", np.concatenate([y, x])))
        refs.append(float(trapezoid(y, x)))
    out = _run(reqs)
    bad = [(i, _from_hex(o), r) for i, (o, r) in enumerate(zip(out, refs))
           if not _same(_from_hex(o), r)]
    assert not bad, bad[:10]


def test_numpy_scalar_round():
    """round(np.float64(x), d) (what mteb's to_disk does to an np.float64 score) rounds
    x * 10^d, not the exact value: near-ties go their own way, unlike Python's round."""
    rng = random.Random(17)
    vals = [(rng.randrange(10 ** 6) * 10 + 5) / 10 ** 7 for _ in range(3000)]  # near ties
    vals += [rng.uniform(-1, 1) * 10.0 ** rng.randint(-9, 12) for _ in range(3000)]
    vals += [0.0, -0.0, -1e-9, 0.5, 2.5, float("nan"), float("inf"), -float("inf"), 1e300]
    reqs, refs = [], []
    for d in [0, 1, 2, 5, 6, 8, 9, 11, -1, -2]:
        reqs.append((f"round{d}", np.array(vals)))
        with np.errstate(over="ignore"):  # 1e300 * 10^d overflows to inf in numpy too
            refs.extend(float(round(np.float64(v), d)) for v in vals)
    out = _run(reqs)
    assert len(out) == len(refs)
    bad = [(i, _from_hex(o), r) for i, (o, r) in enumerate(zip(out, refs))
           if not _same(_from_hex(o), r)]
    assert not bad, bad[:10]
