"""numpy's default_rng (SeedSequence + PCG64) and the Generator draws of mteb's VOC2007
sampling (host/emulation/np_pcg64.c) against numpy itself and the PROTOCOLS.md §9.2 test
vectors: SeedSequence words, random_raw, the buffered 32-bit halves, random_interval on
both sides of 2^32, list shuffles (consecutive, as mteb's np_rng carries its state), and
random()."""
import numpy as np
import pytest

from helpers.mieb_tools import run_tool


def tool(seed, *ops):
    return run_tool("pcg64_tool", "", str(seed), *map(str, ops)).split("\n")[:-1]


def test_protocol_vectors():
    assert [int(v) for v in tool(42, "raw", 3)] == [14276969152011380360, 8095878257575067585,
                                                    15838336090824644132]
    lines = tool(42, "shuffle", 10, "shuffle", 10)
    assert lines == ["5 6 0 7 3 2 4 9 1 8", "4 8 2 6 5 9 7 3 0 1"]


@pytest.mark.parametrize("seed", [0, 1, 42, 12345, 2**32 - 1, 2**32, 2**63 + 17])
def test_seedseq_and_raw(seed):
    ss = np.random.SeedSequence(seed)
    assert [int(v) for v in tool(seed, "state", 9)] == ss.generate_state(9, np.uint32).tolist()
    g = np.random.default_rng(seed)
    assert [int(v) for v in tool(seed, "raw", 50)] == g.bit_generator.random_raw(50).tolist()


def test_buffered_u32_and_interval():
    g = np.random.default_rng(7)
    want = []
    for _ in range(5):  # random_raw-free path: integers on uint32 use the buffered halves
        want += g.integers(0, 2**32, size=3, dtype=np.uint32, endpoint=False).tolist()
    got = [int(v) for v in tool(7, "u32", 15)]
    assert got == want
    # masked rejection on both widths, compared through a list shuffle of matching sizes
    for n in (1, 2, 3, 17, 1000, 2501):
        g = np.random.default_rng(99)
        ref = []
        for _ in range(3):
            x = list(range(n))
            g.shuffle(x)
            ref.append(" ".join(map(str, x)))
        assert tool(99, "shuffle", n, "shuffle", n, "shuffle", n) == ref, n


def test_shuffle_array_and_list_agree_and_random():
    g = np.random.default_rng(42)
    a = np.arange(2501)
    g.shuffle(a)
    lst = list(np.arange(2501))
    np.random.default_rng(42).shuffle(lst)
    assert a.tolist() == [int(v) for v in lst]
    assert tool(42, "shuffle", 2501)[0] == " ".join(map(str, a.tolist()))
    g = np.random.default_rng(5)
    g.shuffle(list(range(10)))
    want = g.random(20).tolist()
    got = [float(v) for v in tool(5, "shuffle", 10, "random", 20)[1:]]
    assert got == want


def test_interval_64bit():
    """random_interval(max) for max >= 2^32 masks next64 draws (numpy's random_raw stream)."""
    for m in (2**32, 2**40 + 12345, 2**63 + 5):
        raw = iter(np.random.default_rng(3).bit_generator.random_raw(200).tolist())
        mask = (1 << m.bit_length()) - 1
        want = []
        while len(want) < 6:
            v = next(raw) & mask
            if v <= m:
                want.append(v)
        assert [int(v) for v in tool(3, "interval", m, 6)] == want, m
