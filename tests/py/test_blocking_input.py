"""Inputs that would make a run wait forever, and signals that must end a run wherever it waits.

- HDF5 external links (to a FIFO, to a regular file), virtual datasets, external raw storage
  and soft links in a role or task-data file are refused before HDF5 follows them: the bad
  task is named with the file and the link path, the good task is scored, exit 1. Before,
  an external link to a FIFO hung the run (and SIGTERM did not end it).
- SIGTERM while a read never returns (inside HDF5, on the embedding streamer's thread; the
  LD_PRELOAD shim tests/fault/fault_inject.c blocks it as a hung network file system would)
  ends the run with 130 within the watchdog's grace: the finished task's result is kept, the
  interrupted one has none, no temporary is left.

Every deadline below is generous and named in its failure message."""
from __future__ import annotations

import os
import signal
import subprocess
import time

import h5py
import numpy as np
import pytest

from mieb_tools import build_dir
from test_retrieval_e2e import BIN, build_task, result_path

GOOD, BAD = "CIRRIT2IRetrieval", "Flickr30kT2IRetrieval"
DEADLINE = 60  # seconds for a whole run that must not block


def make(tmp):
    rng = np.random.default_rng(3)
    td, ed, _ = build_task(tmp, rng, GOOD, 10, 50, 8)
    build_task(tmp, rng, BAD, 10, 50, 8)
    return td, ed


def role(ed, name):
    return os.path.join(ed, BAD, "test", "default", f"{name}.h5")


def run(td, ed, out, env=None):
    cmd = [BIN, "run", "--task-data", td, "--embeddings", ed, "-t", GOOD, BAD, "--output-folder", out,
           "--device", "cpu", "--progress", "off"]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=DEADLINE, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"mieb-eval run did not finish within the {DEADLINE} s deadline (blocked opening a linked file?)")


def replace_embeddings(path, make_new):
    """Swap the role file's /embeddings for what make_new(f, data, folder) puts there."""
    with h5py.File(path, "r+") as f:
        x = f["embeddings"][:]
        del f["embeddings"]
        make_new(f, x, os.path.dirname(path))


def elink_fifo(td, ed):
    def new(f, x, d):
        os.mkfifo(os.path.join(d, "fifo.h5"))
        f["embeddings"] = h5py.ExternalLink("fifo.h5", "/x")
    replace_embeddings(role(ed, "queries"), new)
    return "queries.h5", "embeddings is an external link to fifo.h5:/x"


def elink_regular(td, ed):
    def new(f, x, d):
        with h5py.File(os.path.join(d, "other.h5"), "w") as o:
            o["x"] = x
        f["embeddings"] = h5py.ExternalLink("other.h5", "/x")
    replace_embeddings(role(ed, "corpus"), new)
    return "corpus.h5", "embeddings is an external link to other.h5:/x"


def elink_task_data(td, ed):
    os.mkfifo(os.path.join(td, "fifo.h5"))
    with h5py.File(os.path.join(td, f"{BAD}.h5"), "r+") as f:
        del f["test/default/query_ids"]
        f["test/default/query_ids"] = h5py.ExternalLink("fifo.h5", "/q")
    return f"{BAD}.h5", "query_ids is an external link to fifo.h5:/q"


def virtual_dataset(td, ed):
    def new(f, x, d):
        with h5py.File(os.path.join(d, "src.h5"), "w") as o:
            o["x"] = x
        layout = h5py.VirtualLayout(shape=x.shape, dtype=x.dtype)
        layout[:] = h5py.VirtualSource("src.h5", "x", shape=x.shape)
        f.create_virtual_dataset("embeddings", layout)
    replace_embeddings(role(ed, "queries"), new)
    return "queries.h5", "embeddings: it is a virtual dataset"


def external_storage(td, ed):
    def new(f, x, d):
        raw = os.path.join(d, "raw.bin")
        x.astype("<f4").tofile(raw)
        f.create_dataset("embeddings", shape=x.shape, dtype="<f4", external=[(raw, 0, x.nbytes)])
    replace_embeddings(role(ed, "queries"), new)
    return "queries.h5", "external raw files"


def soft_link(td, ed):
    def new(f, x, d):
        f["real"] = x
        f["embeddings"] = h5py.SoftLink("/real")
    replace_embeddings(role(ed, "queries"), new)
    return "queries.h5", "embeddings is a soft link to /real"


CASES = [elink_fifo, elink_regular, elink_task_data, virtual_dataset, external_storage, soft_link]


@pytest.mark.parametrize("breaker", CASES, ids=[c.__name__ for c in CASES])
def test_data_in_other_files_is_refused(tmp_path, breaker):
    td, ed = make(str(tmp_path))
    fname, says = breaker(td, ed)
    out = str(tmp_path / "out")
    p = run(td, ed, out)
    assert p.returncode == 1, p.stderr
    assert fname in p.stderr and says in p.stderr and BAD in p.stderr, p.stderr
    assert not os.path.exists(result_path(out, BAD))
    assert os.path.exists(result_path(out, GOOD))


def reads_of(td, ed, out, watch):
    """Reads an uninterrupted run makes on the watched file (the shim counts them)."""
    report = out + ".report"
    env = dict(os.environ, LD_PRELOAD=str(build_dir() / "tests" / "libmieb_fault.so"), MIEB_FAULT_PATH=watch,
               MIEB_FAULT_REPORT=report)
    p = run(td, ed, out, env=env)
    assert p.returncode == 0, p.stderr
    fields = dict(kv.split("=", 1) for kv in open(report).read().split())
    return int(fields["reads"])


FAULT_LIB = build_dir() / "tests" / "libmieb_fault.so"


# The fault shim is an LD_PRELOAD interposer, built in the plain build only: in a sanitizer build
# ASan owns malloc and must load first (tests/CMakeLists.txt), as test_faults.py's cases say too.
@pytest.mark.skipif(not FAULT_LIB.exists(), reason="no fault shim in this build (a sanitizer build)")
def test_sigterm_ends_a_run_blocked_in_a_read(tmp_path):
    td, ed = make(str(tmp_path))
    watch = f"{BAD}/test/default/corpus"
    n = reads_of(td, ed, str(tmp_path / "plain"), watch)  # the last one is HDF5 reading the corpus
    blocked = str(tmp_path / "blocked")
    out = str(tmp_path / "out")
    env = dict(os.environ, LD_PRELOAD=str(build_dir() / "tests" / "libmieb_fault.so"), MIEB_FAULT_PATH=watch,
               MIEB_FAULT_READ=f"{n}:block", MIEB_FAULT_BLOCKED=blocked)
    p = subprocess.Popen([BIN, "run", "--task-data", td, "--embeddings", ed, "-t", GOOD, BAD, "--output-folder", out,
                          "--device", "cpu", "--progress", "off"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env)
    try:
        end = time.monotonic() + DEADLINE
        while not os.path.exists(blocked) and p.poll() is None and time.monotonic() < end:
            time.sleep(0.05)
        assert os.path.exists(blocked), f"the read did not block within {DEADLINE} s (exit {p.poll()})"
        p.send_signal(signal.SIGTERM)
        try:  # the watchdog's grace is 5 s: 30 s is generous
            _, err = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail("mieb-eval was still running 30 s after SIGTERM (blocked in a read)")
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 130, err
    assert "stopping now, finished results are kept" in err, err
    assert os.path.exists(result_path(out, GOOD))
    assert not os.path.exists(result_path(out, BAD))
    left = [q for q in (tmp_path / "out").rglob("*") if ".tmp" in q.name]
    assert not left, left
