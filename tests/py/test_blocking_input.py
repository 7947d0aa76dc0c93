"""Inputs that would make a run wait forever, and signals that must end a run wherever it waits.

- HDF5 external links (to a FIFO, to a regular file), virtual datasets, external raw storage
  and soft links in a role or task-data file are refused before HDF5 follows them: the bad
  task is named with the file and the link path, the good task is scored, exit 1. Before,
  an external link to a FIFO hung the run (and SIGTERM did not end it).
- SIGTERM while a read never returns (inside HDF5, on the embedding streamer's thread; the
  LD_PRELOAD shim tests/fault/fault_inject.c blocks it as a hung network file system would)
  ends the run with 130 within the watchdog's grace: the finished task's result is kept, the
  interrupted one has none, no temporary is left.
- An input renamed over by a FIFO just before any of the run's opens of it (the shim's
  MIEB_FAULT_SWAP): task-data, role and shard files, merge partials, model_meta.json, the
  registry, a result read on resume. Each is refused at once, named; the other task is
  scored. Before, a check by path followed by HDF5's (or a guard's, or a later reopen's) open
  by path waited for a writer forever. A role file replaced by a copy of itself after its
  check is refused at the later reopen, not read unchecked.

Every deadline below is generous and named in its failure message."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time

import h5py
import numpy as np
import pytest

from helpers.mieb_tools import build_dir
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


# ---- an input swapped for a FIFO between its check and its open ----
# The shim renames a FIFO over a watched path just before the program's Kth read-only open of
# it (MIEB_FAULT_SWAP=K), for every K up to the number of opens an undisturbed run makes: a
# check by path followed by another open by path (HDF5's, a guard's, a reopen later in the
# stream) would open the FIFO and wait for a writer forever. Each input is opened once,
# checked on the descriptor, and read through it: the run ends at once, the input named.

SWAP_DEADLINE = 20  # seconds for one run (scaled by MIEB_TEST_TIME_SCALE): they take well under 1 s


def shim_run(cmd, watch, report, swap_at=None, env=None, mode="fifo"):
    env = dict(env or os.environ, LD_PRELOAD=str(FAULT_LIB), MIEB_FAULT_PATH=watch, MIEB_FAULT_REPORT=report)
    if swap_at:
        env["MIEB_FAULT_SWAP"] = f"{swap_at}:{mode}"
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=SWAP_DEADLINE, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{watch} swapped for a {mode} before open {swap_at}: the run did not end within "
                    f"{SWAP_DEADLINE} s (x MIEB_TEST_TIME_SCALE): it blocked opening the FIFO")


def shim_report(report):
    return dict(kv.split("=", 1) for kv in open(report).read().split())


def run_cmd(td, ed, out, *extra):
    return [BIN, "run", "--task-data", td, "--embeddings", ed, "-t", GOOD, BAD, "--output-folder", out,
            "--device", "cpu", "--progress", "off", *extra]


def sweep(tmp_path, cmd_for, watch, files, check, env=None, mode="fifo"):
    """Run cmd_for(out) undisturbed under the shim, then once for each of its opens of the
    watched files with a FIFO (or a copy: mode) put in place before that open; `files` are restored between
    runs; check(p, k) judges each disturbed run."""
    keep = {f: open(f, "rb").read() for f in files}
    rep = str(tmp_path / "report")
    p = shim_run(cmd_for(str(tmp_path / "plain")), watch, rep, env=env)
    n = int(shim_report(rep)["opens"])
    assert n >= 1, f"the run never opened {watch} (exit {p.returncode}):\n{p.stderr}"
    for k in range(1, n + 1):
        for f, data in keep.items():
            tmp = f + ".restore"
            open(tmp, "wb").write(data)
            os.replace(tmp, f)
        p = shim_run(cmd_for(str(tmp_path / f"out{k}")), watch, rep, swap_at=k, env=env, mode=mode)
        assert shim_report(rep)["injected"] == "1", f"open {k} of {watch}: no {mode} put in place\n{p.stderr}"
        check(p, k)
    return n


def hdf5_input(td, ed, name):
    d = os.path.join(ed, BAD, "test", "default")
    return {"task_data": (f"{BAD}.h5", [os.path.join(td, f"{BAD}.h5")]),
            "queries": (f"{BAD}/test/default/queries", [os.path.join(d, "queries.h5")]),
            "corpus_shards": (f"{BAD}/test/default/corpus-",
                              [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.startswith("corpus-")])}[name]


@pytest.mark.skipif(not FAULT_LIB.exists(), reason="no fault shim in this build (a sanitizer build)")
@pytest.mark.parametrize("name", ["task_data", "queries", "corpus_shards"])
def test_hdf5_input_swapped_for_a_fifo_after_its_check(tmp_path, name):
    rng = np.random.default_rng(3)
    td, ed, _ = build_task(str(tmp_path), rng, GOOD, 10, 50, 8)
    build_task(str(tmp_path), rng, BAD, 10, 50, 8, shards=2)
    watch, files = hdf5_input(td, ed, name)

    def check(p, k):
        out = str(tmp_path / f"out{k}")
        assert p.returncode == 1, f"open {k}: exit {p.returncode}\n{p.stderr}"
        assert watch in p.stderr and "not a regular file" in p.stderr and BAD in p.stderr, f"open {k}:\n{p.stderr}"
        assert "/proc/self/fd" not in p.stderr, p.stderr
        assert os.path.exists(result_path(out, GOOD)) and not os.path.exists(result_path(out, BAD))

    sweep(tmp_path, lambda out: run_cmd(td, ed, out), watch, files, check)


def two_tasks(tmp_path):
    rng = np.random.default_rng(3)
    td, ed, _ = build_task(str(tmp_path), rng, GOOD, 10, 50, 8)
    build_task(str(tmp_path), rng, BAD, 10, 50, 8)
    return td, ed


@pytest.mark.skipif(not FAULT_LIB.exists(), reason="no fault shim in this build (a sanitizer build)")
@pytest.mark.parametrize("name", ["model_meta", "registry", "result_on_resume"])
def test_json_input_swapped_for_a_fifo_after_its_check(tmp_path, name):
    """model_meta.json, the registry (MIEB_REGISTRY) and a result read back by a resumed run
    (--overwrite-strategy only-missing): refused without blocking, the file named."""
    td, ed = two_tasks(tmp_path)
    env, files, cmd_for = None, [], lambda out: run_cmd(td, ed, out)
    if name == "model_meta":
        watch, files, want = "emb/model_meta.json", [os.path.join(ed, "model_meta.json")], 4
    elif name == "registry":
        reg = str(tmp_path / "my_registry.json")
        shutil.copy(os.path.join(os.path.dirname(__file__), "..", "..", "configs", "tasks.json"), reg)
        watch, files, want, env = "my_registry.json", [reg], 4, dict(os.environ, MIEB_REGISTRY=reg)
    else:
        done = str(tmp_path / "done")
        p = subprocess.run(run_cmd(td, ed, done), capture_output=True, text=True, timeout=DEADLINE)
        assert p.returncode == 0, p.stderr

        def cmd_for(out):  # each run resumes a copy of the finished one
            shutil.rmtree(out, ignore_errors=True)
            shutil.copytree(done, out)
            return run_cmd(td, ed, out, "--overwrite-strategy", "only-missing")
        watch, want = f"rev0/{BAD}.json", 1

    def check(p, k):
        if name == "result_on_resume" and k > 1 and p.returncode == 0:
            # swapped after the resume check found it whole: the task stays skipped, and the
            # summary's read of its score (the later open) is refused without blocking
            assert f"{BAD}: result exists, skipped" in p.stderr, p.stderr
            return
        assert p.returncode == want, f"open {k}: exit {p.returncode}\n{p.stderr}"
        assert watch in p.stderr and "not a regular file" in p.stderr, f"open {k}:\n{p.stderr}"
        if want == 1:  # the other task's result is still there, and its file was never touched
            out = str(tmp_path / f"out{k}")
            assert os.path.isfile(result_path(out, GOOD)), p.stderr

    sweep(tmp_path, cmd_for, watch, files, check, env=env)


@pytest.mark.skipif(not FAULT_LIB.exists(), reason="no fault shim in this build (a sanitizer build)")
def test_merge_partial_swapped_for_a_fifo_after_its_check(tmp_path):
    td, ed = two_tasks(tmp_path)
    pd = str(tmp_path / "partials")
    for i in range(2):
        p = subprocess.run(run_cmd(td, ed, str(tmp_path / "parts"), "--corpus-parts", "2", "--corpus-part", str(i),
                                   "--partials-dir", pd), capture_output=True, text=True, timeout=DEADLINE)
        assert p.returncode == 0, p.stderr
    d = os.path.join(pd, BAD, "test", "default")
    files = [os.path.join(d, f) for f in sorted(os.listdir(d))]
    assert len(files) == 2, files

    def cmd_for(out):
        return [BIN, "merge", "--partials-dir", pd, "--task-data", td, "--embeddings", ed, "--output-folder", out,
                "-t", GOOD, BAD]

    def check(p, k):
        out = str(tmp_path / f"out{k}")
        assert p.returncode == 1, f"open {k}: exit {p.returncode}\n{p.stderr}"
        assert f"{BAD}/test/default/part-" in p.stderr and "not a regular file" in p.stderr, f"open {k}:\n{p.stderr}"
        assert os.path.isfile(result_path(out, GOOD)) and not os.path.exists(result_path(out, BAD)), p.stderr

    sweep(tmp_path, cmd_for, f"{BAD}/test/default/part-", files, check)


@pytest.mark.skipif(not FAULT_LIB.exists(), reason="no fault shim in this build (a sanitizer build)")
def test_role_file_replaced_by_another_file_after_its_check(tmp_path):
    """A regular file renamed over a role file after the role was opened and checked (a copy:
    same bytes, another file) is refused at the reopen later in the stream, not read unchecked;
    before the check, the copy is what is checked and read."""
    td, ed = two_tasks(tmp_path)
    watch, files = hdf5_input(td, ed, "queries")
    said = []

    def check(p, k):
        out = str(tmp_path / f"out{k}")
        assert p.returncode in (0, 1), f"open {k}: exit {p.returncode}\n{p.stderr}"
        assert os.path.exists(result_path(out, GOOD))
        if p.returncode == 1:
            assert f"{watch}.h5: the file was replaced or changed since it was checked" in p.stderr, p.stderr
            assert not os.path.exists(result_path(out, BAD))
            said.append(k)
        else:
            assert os.path.exists(result_path(out, BAD)), p.stderr

    n = sweep(tmp_path, lambda out: run_cmd(td, ed, out), watch, files, check, mode="copy")
    assert said, f"none of the {n} opens found the replaced file refused"


def test_without_proc_the_open_is_refused_with_the_reason(tmp_path):
    """HDF5 opens a checked input through /proc/self/fd: without /proc (a private mount
    namespace with an empty /proc) the task is refused, saying so, never opened by path again."""
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", "mount -t tmpfs none /proc"],
                           capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip(f"no private mount namespace here: {probe.stderr.strip()}")
    td, ed = two_tasks(tmp_path)
    out = str(tmp_path / "out")
    p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                        'mount -t tmpfs none /proc && exec "$@"', "sh", *run_cmd(td, ed, out)],
                       capture_output=True, text=True, timeout=DEADLINE)
    assert p.returncode == 1, p.stderr
    assert f"{GOOD}.h5: cannot open it for HDF5 through /proc/self/fd/" in p.stderr, p.stderr
    assert "(is /proc mounted?)" in p.stderr, p.stderr


@pytest.mark.skipif(not FAULT_LIB.exists(), reason="no fault shim in this build (a sanitizer build)")
def test_hdf5_read_error_names_the_file_not_its_descriptor(tmp_path):
    """HDF5's own message for a failed read names the file it was given, /proc/self/fd/N here:
    the user sees the path, and '(this file)' inside HDF5's part."""
    td, ed = two_tasks(tmp_path)
    watch = f"{BAD}/test/default/queries"
    n = reads_of(td, ed, str(tmp_path / "plain"), watch)  # the last one is HDF5's
    env = dict(os.environ, LD_PRELOAD=str(FAULT_LIB), MIEB_FAULT_PATH=watch, MIEB_FAULT_READ=f"{n}:eio+")
    p = run(td, ed, str(tmp_path / "out"), env=env)
    assert p.returncode == 1, p.stderr
    assert f"{watch}.h5" in p.stderr and "HDF5: file read failed" in p.stderr, p.stderr
    assert "/proc/self/fd" not in p.stderr and "filename = '(this file)'" in p.stderr, p.stderr
