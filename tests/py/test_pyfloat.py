"""host/core/pyfloat.c against CPython itself: round(x, n) and json.dumps(x) for random
bit patterns, many magnitudes, every power of two (where shortest-repr search is
hardest), decimal halfway cases and the special values."""
import json
import math
import random
import struct

from helpers.mieb_tools import run_tool


def _bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def _double(b):
    return struct.unpack("<d", struct.pack("<Q", b))[0]


def _py_round(x, n):
    try:
        return round(x, n)
    except OverflowError:  # mieb_py_round returns +-inf where Python raises
        return math.copysign(math.inf, x)


def _check(values, ndigits):
    inp = "".join(f"{_bits(v):016x} {n}\n" for v, n in zip(values, ndigits))
    out = run_tool("pyfloat_tool", inp).splitlines()
    assert len(out) == len(values)
    bad = []
    for v, n, line in zip(values, ndigits, out):
        rep, rbits = line.split()
        want_rep = json.dumps(v)
        want = _py_round(v, n)
        got = _double(int(rbits, 16))
        same = (math.isnan(want) and math.isnan(got)) or _bits(want) == _bits(got)
        if rep != want_rep or not same:
            bad.append((repr(v), n, rep, want_rep, got, want))
    assert not bad, bad[:10]


def test_repr_and_round_random():
    rng = random.Random(12345)
    vals = [_double(rng.getrandbits(64)) for _ in range(10000)]
    vals += [rng.uniform(-1, 1) * 10.0 ** rng.randint(-40, 40) for _ in range(10000)]
    vals += [rng.random() for _ in range(3000)]  # metric-like values
    nds = [rng.choice([0, 1, 2, 3, 4, 5, 5, 6, 6, 6, 7, 10, 15, 17, 25, -1, -3, -20, 400, -400])
           for _ in vals]
    _check(vals, nds)


def test_halfway_and_short_decimals():
    rng = random.Random(99)
    vals, nds = [], []
    for i in range(4000):
        # k + 0.5 units of the 5th/6th decimal: exact binary ties are rare, near-ties common
        d = rng.choice([5, 6])
        vals.append((2 * rng.randint(0, 10 ** d) + 1) / (2 * 10 ** d))
        nds.append(d)
        v = round(rng.random(), rng.randint(1, 8))
        vals.append(v)
        nds.append(rng.choice([5, 6]))
    # exact binary ties (half-even in both), and classic cases
    vals += [0.5, 1.5, 2.5, 0.125, 0.375, 0.0000125, 2.675, 1.0000005, 0.1234565, 0.3,
             1e-05, 0.0001, 0.00012, 1e16, 1e15, 9999999999999998.0, 123.456, 1e22, 1.5e300,
             5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 0.0, -0.0, -0.0004,
             float("nan"), float("inf"), float("-inf"), 50.0, 150.0, 250.0, 1234567.5]
    nds += [0, 0, 0, 2, 2, 6, 2, 6, 6, 1, 5, 5, 5, 0, 0, 0, 2, -21, -299, 323, 308, -308, 6,
            6, 2, 6, 6, 6, -2, -2, -2, 0]
    _check(vals, nds)


def test_powers_of_two():
    vals = [2.0 ** k for k in range(-1074, 1024)]
    vals += [-3.0 * 2.0 ** k for k in range(-1074, 1022)]
    _check(vals, [6] * len(vals))
