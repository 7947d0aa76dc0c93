"""The in-process HDF5 guard (host/hdf5/h5_guard.h) against the forked probe it was measured
with (tests/programs/h5_probe.c), on the fuzz regression inputs (tests/fuzz/regressions/): the guard
refuses every one of them before libhdf5 touches the bad bytes; the probe lets through a file
on which libhdf5 reads past a chunk buffer without crashing (the reason the guard is kept,
docs/BAD_INPUT.md). Both go through tests/programs/h5_guard_measure. And the guard stays behind
its one header: only the readers' doors (h5_util.c, h5_read.c) and its own files include it;
the probe stays out of the program: no source of host/ holds it and mieb-eval has none of its
functions (but in a measuring build, -DMIEB_H5_PROBE_IN_OPEN)."""
from __future__ import annotations

import os
import re
import struct
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("MIEB_SOURCE_DIR", os.path.join(HERE, "..", ".."))
REG = os.path.join(SRC, "tests", "fuzz", "regressions")


def measure(*args: str) -> list[list[str]]:
    exe = os.path.join(os.environ["MIEB_BUILD_DIR"], "tests", "h5_guard_measure")
    p = subprocess.run([exe, *args], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return [line.split("\t") for line in p.stdout.splitlines()]


def regression_files(tmp_path, target: str, name: str) -> list[str]:
    """The HDF5 file(s) of a fuzz input: taskdata inputs are the file; emb inputs are a selector
    byte, then one file or (bit 0x80) a u32 length and two shards (fuzz_emb.c)."""
    d = open(os.path.join(REG, target, name), "rb").read()
    if target == "taskdata":
        parts = [d]
    else:
        sel, d = d[0], d[1:]
        if sel & 0x80:
            n = min(struct.unpack_from("<I", d, 0)[0], len(d) - 4)
            parts = [d[4:4 + n], d[4 + n:]]
        else:
            parts = [d]
    out = []
    for i, b in enumerate(parts):
        p = str(tmp_path / f"{name}-{i}.h5")
        open(p, "wb").write(b)
        out.append(p)
    return out


INPUTS = [(t, n) for t in ("taskdata", "emb") if os.path.isdir(os.path.join(REG, t))
          for n in sorted(os.listdir(os.path.join(REG, t)))]


@pytest.mark.parametrize("target,name", INPUTS, ids=[f"{t}-{n}" for t, n in INPUTS])
def test_guard_refuses_every_regression_input(tmp_path, target, name):
    rows = measure("guard", *regression_files(tmp_path, target, name))
    refused = [r for r in rows if r[1] == "refused"]
    assert refused, rows  # without the guard: a crash, a hang, or the file read through
    assert all(os.path.basename(r[0]) in r[3] for r in refused), rows  # the message names the file


def test_probe_passes_a_silent_overread_the_guard_refuses(tmp_path):
    # a chunk recorded 218 columns wide in a 4-column dataset: libhdf5 1.10 reads past the
    # decompressed chunk, which does not crash; ASan alone sees it
    (f,) = regression_files(tmp_path, "emb", "hdf5-chunk-longer-than-dim-overread")
    (probe,) = measure("probe", "--data", f)
    assert probe[1] in ("clean", "crash"), probe  # crash only where the child has ASan
    (guard,) = measure("guard", f)
    assert guard[1] == "refused" and "chunk dimension 1 (218) exceeds" in guard[3], guard


def test_probe_verdicts(tmp_path):
    (hang,) = regression_files(tmp_path, "taskdata", "hdf5-H5HG-vlen-attr-hang")
    segv = regression_files(tmp_path, "emb", "hdf5-H5HG_read-attr-segv")[0]
    rows = measure("probe", "--timeout", "1", hang, segv)
    assert rows[0][1] == "timeout" and "did not finish" in rows[0][3], rows
    assert rows[1][1] in ("crash", "memory"), rows  # memory: an allocation sized by the heap ID failed first
    bin_ = os.path.join(os.environ["MIEB_BUILD_DIR"], "mieb-eval")
    out = str(tmp_path / "suite")
    subprocess.run([bin_, "synth", "--out", out, "--scale", "0.001", "--dim", "4", "--tasks", "CIRRIT2IRetrieval",
                    "--shards", "2"], check=True, capture_output=True, timeout=300)
    good = [os.path.join(dp, n) for dp, _, ns in os.walk(out) for n in ns if n.endswith(".h5")]
    assert len(good) >= 5
    for r in measure("probe", "--data", *good) + measure("guard", *good):
        assert r[1] in ("clean", "read"), r


def test_guard_behind_one_header():
    hdf5 = os.path.join(SRC, "host", "hdf5")
    guard_files = {"h5_guard.h", "h5_guard_headers.c", "h5_guard_attrs.c", "h5_guard_heaps.c", "h5_guard_storage.c"}
    doors = {"h5_open.c", "h5_util.c", "h5_read.c"}  # where the readers call the guard
    includers = set()
    for dp, _, names in os.walk(os.path.join(SRC, "host")):
        for n in names:
            if n.endswith((".c", ".h")) and re.search(r'#include "(\.\./hdf5/|hdf5/)?h5_guard\.h"',
                                                       open(os.path.join(dp, n)).read()):
                includers.add(n)
    assert includers == (guard_files - {"h5_guard.h"}) | doors, includers
    util_h = open(os.path.join(hdf5, "h5_util.h")).read()
    for fn in ("mieb_h5_check_object", "mieb_h5_check_attr_msgs", "mieb_h5_check_root_header",
               "mieb_h5_check_global_heaps", "mieb_h5_vlen_strings_raw", "mieb_h5_layout_of"):
        assert not re.search(rf"\b{fn}\(", util_h), fn  # declared in h5_guard.h alone


def test_probe_outside_the_program():
    names = ("mieb_h5_probe_file", "mieb_h5_probe_walk_here", "mieb_h5_probe_opts", "mieb_h5_probe_in_open")
    for dp, _, files in os.walk(os.path.join(SRC, "host")):
        for n in files:
            text = open(os.path.join(dp, n), errors="replace").read()
            if n == "h5_open.c":  # the measuring build's one hook, behind its flag
                text = re.sub(r"#ifdef MIEB_H5_PROBE_IN_OPEN\n.*?#endif", "", text, flags=re.S)
            assert not any(x in text for x in names), os.path.join(dp, n)
    build = os.environ["MIEB_BUILD_DIR"]
    cache = open(os.path.join(build, "CMakeCache.txt")).read()
    if re.search(r"^MIEB_H5_PROBE_IN_OPEN:STRING=[12]$", cache, re.M):
        pytest.skip("a measuring build: its program runs the probe")
    syms = subprocess.run(["nm", os.path.join(build, "mieb-eval")], capture_output=True, text=True,
                          check=True).stdout
    assert "mieb_h5_open_ro" in syms  # the program has symbols to look at
    assert not re.search(r"\bmieb_h5_probe_", syms), [ln for ln in syms.splitlines() if "probe_" in ln][:3]
    syms = subprocess.run(["nm", os.path.join(build, "tests", "h5_guard_measure")], capture_output=True,
                          text=True, check=True).stdout
    assert re.search(r" T mieb_h5_probe_file$", syms, re.M)
