"""SIGINT and SIGTERM end `mieb-eval run` within a second, whichever long phase it is in.

The library's long loops look at the stop flag once per block of work (host/core/stop.h):
the embedding reads between pieces, the screened top-k between document blocks, k-means per
step, the probe's L-BFGS per evaluation, the multi-label kNN reduction per query. For each
phase an input makes that phase last several seconds; the run is signalled once its -v log
(or, for the read, the fault shim's mark) says it is inside the phase, and the time from the
signal to the exit is measured. Each run first scores a small task, whose result must stay;
the interrupted task has none, no temporary is left, the exit status is 130, and the stop
came from the run itself, not from the watchdog's 5 s backstop. The measured delays are
printed (pytest -s, or the assertion message)."""
import os
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

from conftest import TIME_SCALE
from helpers.mieb_tools import build_dir

BIN = str(build_dir() / "mieb-eval")
SHIM = build_dir() / "tests" / "libmieb_fault.so"
DONE = "CIFAR10ZeroShot"  # scored first, in a fraction of a second: its result must stay
LIMIT = 1.0 * TIME_SCALE  # seconds from the signal to the exit
DELAYS = {}


def synth(out, tasks, scale, dim, *extra):
    r = subprocess.run([BIN, "synth", "--out", str(out), "--tasks", ",".join(tasks), "--scale", str(scale), "--dim",
                        str(dim), *extra], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([BIN, "synth", "--out", str(out), "--tasks", DONE, "--scale", "0.01", "--dim", str(dim), *extra],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return out / "task-data", out / "embeddings"


def result_of(out, task):
    return list(Path(out).glob(f"results/*/*/{task}.json"))


def interrupt(tmp_path, phase, data, task, ready, sig, after=0.3, extra=(), env=None):
    """Run DONE then task; `ready` (a regex on the -v log, or a file that appears) says the
    run is in the phase; `after` seconds later send sig; return the seconds to the exit."""
    td, ed = data
    out = tmp_path / f"out-{phase}"
    p = subprocess.Popen([BIN, "run", "--task-data", str(td), "--embeddings", str(ed), "-t", DONE, task,
                          "--output-folder", str(out), "--device", "cpu", "--threads", "1", "--progress", "off", "-v",
                          *extra], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, MIEB_BLAS_TUNE="0", OPENBLAS_NUM_THREADS="1", **(env or {})))
    lines, seen = [], threading.Event()

    def reader():
        for line in p.stderr:
            lines.append(line)
            if isinstance(ready, str) and re.search(ready, line):
                seen.set()

    th = threading.Thread(target=reader, daemon=True)
    th.start()
    try:
        end = time.monotonic() + 60 * TIME_SCALE
        while not (seen.is_set() or (isinstance(ready, Path) and ready.exists())):
            assert p.poll() is None and time.monotonic() < end, \
                f"{phase}: the run did not reach the phase (exit {p.poll()}):\n{''.join(lines)[-2000:]}"
            time.sleep(0.01)
        time.sleep(after)
        assert p.poll() is None, f"{phase}: the run ended before the signal:\n{''.join(lines)[-2000:]}"
        t0 = time.monotonic()
        p.send_signal(sig)
        p.wait(timeout=30 * TIME_SCALE)
        delay = time.monotonic() - t0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    th.join(timeout=10)
    err = "".join(lines)
    DELAYS[phase] = delay
    print(f"\ninterrupt delay, {phase}: {delay:.3f} s")
    assert p.returncode == 130, (phase, p.returncode, err[-2000:])
    assert "still running 5 s after the interrupt" not in err, f"{phase}: the watchdog ended it ({delay:.2f} s)"
    assert delay < LIMIT, f"{phase}: {delay:.3f} s from the signal to the exit (limit {LIMIT:g} s)\n{err[-1500:]}"
    assert result_of(out, DONE), f"{phase}: the finished task's result is gone"
    assert not result_of(out, task), f"{phase}: a result for the interrupted task"
    left = [q for q in out.rglob("*") if ".tmp" in q.name]
    assert not left, left
    return delay


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A corpus of 50,456 half-precision documents (one block of 50,000, read, not mapped)."""
    return synth(tmp_path_factory.mktemp("corpus"), ["Fashion200kT2IRetrieval"], 0.25, 256, "--dtype", "f16")


@pytest.mark.skipif(not SHIM.exists(), reason="no fault shim in this build (a sanitizer build)")
def test_read_of_a_block_from_a_slow_disk(tmp_path, corpus):
    # 12 MB/s: the 25 MB block takes 2 s; a piece of the read 0.35 s
    mark = tmp_path / "reading"
    interrupt(tmp_path, "read", corpus, "Fashion200kT2IRetrieval", mark, signal.SIGTERM,
              env={"LD_PRELOAD": str(SHIM), "MIEB_FAULT_PATH": "/corpus.h5", "MIEB_FAULT_READ_RATE": "12000000",
                   "MIEB_FAULT_SLOW_MARK": str(mark)})


def test_screened_top_k(tmp_path, corpus):
    # the portable int8 screen on one thread: 411 queries x 50,000 documents take seconds
    interrupt(tmp_path, "top-k", corpus, "Fashion200kT2IRetrieval", r"queries kept, corpus", signal.SIGINT, after=0.5,
              env={"MIEB_CPU_SCREEN": "int8-scalar"})


def test_kmeans(tmp_path):
    # 80,000 points of noise into 200 clusters: full-batch Lloyd iterates for seconds
    td, ed = synth(tmp_path / "s", ["TinyImageNetClustering"], 8, 256)
    with h5py.File(ed / "TinyImageNetClustering" / "valid" / "default" / "eval.h5", "r+") as f:
        d = f["embeddings"]
        d[...] = np.random.default_rng(0).standard_normal(d.shape).astype(d.dtype)
    interrupt(tmp_path, "k-means", (td, ed), "TinyImageNetClustering", r"k-means of", signal.SIGTERM,
              extra=("--kmeans", "full"))


def test_probe_solver(tmp_path):
    # Birdsnap's few-shot probes: L-BFGS fits of 490 classes x 513 parameters
    data = synth(tmp_path / "s", ["Birdsnap"], 1, 512)
    interrupt(tmp_path, "probe solver", data, "Birdsnap", r"fitting \d+ experiments", signal.SIGINT)


def test_multilabel_knn_reduction(tmp_path):
    # VOC2007 at 6x: each experiment's kNN over 29,712 rows in float64
    data = synth(tmp_path / "s", ["VOC2007"], 6, 256)
    interrupt(tmp_path, "kNN metric", data, "VOC2007", r"k-nearest neighbours", signal.SIGTERM)
