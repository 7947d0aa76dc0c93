"""Fault injection: `mieb-eval run` under allocation failures, short reads, read errors, a
full disk, a file-size limit, SIGKILL, SIGTERM and SIGUSR1 at random points.

The faults come from tests/fault/fault_inject.c (LD_PRELOAD; built as libmieb_fault.so in
non-sanitizer builds), from RLIMIT_FSIZE and from signals. What every case must show:
  - a documented exit status (0, 1, 4, 75, 130) and, when not 0, a message that says why;
  - no partial result: every results file present parses and equals the uninterrupted
    reference run's (timing fields aside), or is absent; no temporary file left behind
    (SIGKILL aside, which cannot clean up: its temporaries are named *.tmp.<host>.<pid>,
    never *.json, and the rerun on the same host removes them, host/core/tmpfiles.h);
  - after an interruption, a rerun with --overwrite-strategy only-missing gives the same
    final results as an uninterrupted run;
  - a full disk never damages the result that was there before.
The one exception, documented in docs/BAD_INPUT.md: an allocation failure *inside* HDF5 1.10
can make HDF5 itself exit(-1) (status 255) or crash in its one-time library initialisation;
the interposer names the library that asked for the failed allocation, and those runs are
only held to "no partial result". Counts of runs, faults and outcomes are printed (-s) and,
with MIEB_FAULT_SUMMARY=FILE, written there as JSON.
"""
from __future__ import annotations

import collections
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import time

import pytest

BUILD = os.environ.get("MIEB_BUILD_DIR", "")
BIN = os.path.join(BUILD, "mieb-eval")
LIB = os.path.join(BUILD, "tests", "libmieb_fault.so")
TASKS = ["CIRRIT2IRetrieval", "CIFAR10ZeroShot", "STS12VisualSTS"]
MANY = ["CIRRIT2IRetrieval", "CUB200I2IRetrieval", "NIGHTSI2IRetrieval", "WITT2IRetrieval", "CIFAR10ZeroShot",
        "Country211ZeroShot", "STS12VisualSTS", "STS13VisualSTS", "ImageNetDog15Clustering", "AROCocoOrder",
        "Winoground", "Country211", "DTD", "CVBenchCount", "VidoreDocVQARetrieval", "VOC2007"]
VOLATILE = ("evaluation_time", "date", "evaluation_phases")
HDF5_LIBS = ("libhdf5",)
OOM_WORDS = ("out of memory", "Cannot allocate memory")  # ours, and strerror(ENOMEM)
SUMMARY = collections.Counter()


def sanitized() -> bool:
    try:
        cache = open(os.path.join(BUILD, "CMakeCache.txt")).read()
    except OSError:
        return False
    return "MIEB_SANITIZE:BOOL=ON" in cache or "MIEB_FUZZ:BOOL=ON" in cache


needs_preload = pytest.mark.skipif(sanitized(), reason="sanitizer build: ASan owns malloc and must load first, "
                                   "so the LD_PRELOAD interposer is built and run in the plain build only")


def env(**extra):
    e = dict(os.environ, MIEB_BLAS_TUNE="0", OPENBLAS_NUM_THREADS="1")
    e.update({k: str(v) for k, v in extra.items()})
    return e


def synth(out, tasks):
    subprocess.run([BIN, "synth", "--out", out, "--scale", "0.002", "--dim", "8", "--tasks", ",".join(tasks)],
                   check=True, capture_output=True, timeout=300, env=env())
    return os.path.join(out, "task-data"), os.path.join(out, "embeddings")


def run_args(td, ed, out, tasks, *extra):
    return [BIN, "run", "--task-data", td, "--embeddings", ed, "-t", *tasks, "--output-folder", out,
            "--device", "cpu", "--threads", "1", "--progress", "off", "-q", *extra]


def canon(path):
    d = json.load(open(path))
    for k in VOLATILE:
        d.pop(k, None)
    return d


def tree(root):
    """{relative path: bytes} of every file under root (results dir and --per-query dir)."""
    out = {}
    for dp, _, fs in os.walk(root):
        for f in fs:
            p = os.path.join(dp, f)
            out[os.path.relpath(p, root)] = p
    return out


def check_outputs(out, ref, pq=None, ref_pq=None, require_all=False):
    """Every results file present equals the reference; no temporaries. Returns the tasks present."""
    files = tree(out)
    temps = [f for f in files if ".tmp." in os.path.basename(f)]
    assert not temps, f"temporary files left behind: {temps}"
    present = set()
    for rel, p in files.items():
        base = os.path.basename(rel)
        if ".mieb-eval" in rel.split(os.sep):  # the run manifest: whole JSON when present
            json.loads(open(p).read())
            continue
        if base == "model_meta.json":
            assert open(p, "rb").read() == ref["model_meta.json"], rel
            continue
        task = base[:-5]
        assert base.endswith(".json") and task in ref, f"unexpected file {rel}"
        assert canon(p) == ref[task], f"{rel} differs from the reference (partial or wrong result)"
        present.add(task)
    if pq is not None and os.path.isdir(pq):
        for rel, p in tree(pq).items():
            assert ".tmp." not in rel, f"temporary per-query file left: {rel}"
            assert open(p, "rb").read() == ref_pq[rel], f"per-query file {rel} differs"
    if require_all:
        assert present == {t for t in ref if t != "model_meta.json"}, present
    return present


def reference(tmp, tasks, per_query=False):
    td, ed = synth(os.path.join(tmp, "suite"), tasks)
    out, pq = os.path.join(tmp, "ref"), os.path.join(tmp, "ref-pq")
    extra = ["--per-query", pq] if per_query else []
    t0 = time.monotonic()
    p = subprocess.run(run_args(td, ed, out, tasks, *extra), capture_output=True, text=True, timeout=300, env=env())
    reference.seconds = time.monotonic() - t0
    assert p.returncode == 0, p.stderr
    res = p.stdout.strip()
    ref = {t: canon(os.path.join(res, f"{t}.json")) for t in tasks}
    ref["model_meta.json"] = open(os.path.join(res, "model_meta.json"), "rb").read()
    ref_pq = {rel: open(p, "rb").read() for rel, p in tree(pq).items()} if per_query else None
    return td, ed, ref, ref_pq, os.path.relpath(res, out)


def report(path):
    """The interposer's counters: {'allocs': .., 'reads': .., 'writes': .., 'injected': .., 'site': ..}."""
    try:
        kv = dict(x.split("=", 1) for x in open(path).read().split())
    except OSError:
        return {"site": "?"}
    return {k: (v if k == "site" else int(v)) for k, v in kv.items()}


def spread(total, n, rng, head=8):
    """The first `head` call numbers, then n more spread over [head+1, total] (stratified random)."""
    pts = list(range(1, min(head, total) + 1))
    if total > head:
        step = (total - head) / n
        pts += sorted({head + 1 + int(i * step + rng.random() * step) for i in range(n)})
    return [p for p in pts if p <= total]


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    return reference(str(tmp_path_factory.mktemp("small")), TASKS)


def tally(kind, **counts):
    for k, v in counts.items():
        SUMMARY[f"{kind}.{k}"] += v


@pytest.fixture(scope="module", autouse=True)
def summary():
    yield
    print("\nfault injection summary:", json.dumps(dict(sorted(SUMMARY.items()))))
    dest = os.environ.get("MIEB_FAULT_SUMMARY")
    if dest:
        with open(dest, "w") as f:
            json.dump(dict(sorted(SUMMARY.items())), f, indent=1)


# ---- allocation failures ----

@needs_preload
@pytest.mark.parametrize("persist", [False, True], ids=["once", "from-then-on"])
def test_allocation_failures(tmp_path, small, persist):
    td, ed, ref, _, _ = small
    rep = str(tmp_path / "rep")
    p = subprocess.run(run_args(td, ed, str(tmp_path / "o"), TASKS), capture_output=True, text=True, timeout=300,
                       env=env(LD_PRELOAD=LIB, MIEB_FAULT_REPORT=rep))
    assert p.returncode == 0, p.stderr
    total = report(rep)["allocs"]
    assert total > 1000  # the count covers the run (HDF5, cJSON, ours)
    n_runs = int(os.environ.get("MIEB_FAULT_SWEEP", "40" if not persist else "15"))
    outcomes = collections.Counter()
    for n in spread(total, n_runs, random.Random(8 + persist)):
        out = str(tmp_path / f"o{n}")
        spec = f"{n}+" if persist else str(n)
        p = subprocess.run(run_args(td, ed, out, TASKS), capture_output=True, text=True, timeout=300,
                           env=env(LD_PRELOAD=LIB, MIEB_FAULT_ALLOC=spec, MIEB_FAULT_REPORT=rep))
        r = report(rep)
        site, inside_hdf5 = r.get("site", "?"), r.get("site", "").startswith(HDF5_LIBS)
        what = f"allocation {spec} (asked by {site}): status {p.returncode}\n{p.stderr[-1500:]}"
        check_outputs(out, ref, require_all=p.returncode == 0)  # never a partial or wrong result
        if inside_hdf5 and p.returncode in (255, -signal.SIGSEGV, -signal.SIGABRT):
            outcomes["hdf5_internal_exit_or_crash"] += 1  # HDF5 1.10's own OOM handling (documented)
            continue
        assert p.returncode in (0, 1, 4), what
        said_oom = any(m in p.stderr for m in OOM_WORDS)
        if p.returncode != 0 and not inside_hdf5:
            assert said_oom, what
        outcomes[f"status_{p.returncode}"] += 1
        outcomes["oom_message" if said_oom else "other_message"] += p.returncode != 0
        shutil.rmtree(out, ignore_errors=True)
    kind = "alloc_persist" if persist else "alloc_once"
    tally(kind, runs=sum(v for k, v in outcomes.items() if k.startswith(("status", "hdf5"))), **outcomes)


# ---- short reads and read errors on the HDF5 inputs ----

@needs_preload
@pytest.mark.parametrize("mode", ["short+", "eio", "eio+"])
def test_read_faults(tmp_path, small, mode):
    td, ed, ref, _, _ = small
    rep = str(tmp_path / "rep")
    suite = os.path.dirname(td)
    p = subprocess.run(run_args(td, ed, str(tmp_path / "o"), TASKS), capture_output=True, text=True, timeout=300,
                       env=env(LD_PRELOAD=LIB, MIEB_FAULT_PATH=suite, MIEB_FAULT_REPORT=rep))
    assert p.returncode == 0, p.stderr
    total = report(rep)["reads"]
    assert total > 20  # HDF5 (sec2: pread) and our raw readers go through the interposer
    outcomes = collections.Counter()
    for n in spread(total, 15, random.Random(3)):
        out = str(tmp_path / f"o{n}")
        spec = f"{n}:short+" if mode == "short+" else f"{n}:eio" + ("+" if mode == "eio+" else "")
        p = subprocess.run(run_args(td, ed, out, TASKS), capture_output=True, text=True, timeout=300,
                           env=env(LD_PRELOAD=LIB, MIEB_FAULT_PATH=suite, MIEB_FAULT_READ=spec))
        what = f"read fault {spec}: status {p.returncode}\n{p.stderr[-1500:]}"
        if mode == "short+":  # a short count is not an error: readers must retry, results identical
            assert p.returncode == 0, what
            check_outputs(out, ref, require_all=True)
        else:
            assert p.returncode in (0, 1), what
            present = check_outputs(out, ref, require_all=p.returncode == 0)
            if p.returncode == 1:  # the failed task is named with the file it could not read
                failed = [t for t in TASKS if t not in present]
                assert failed and all(f"task {t} not scored" in p.stderr for t in failed), what
                assert ".h5" in p.stderr, what
        outcomes[f"status_{p.returncode}"] += 1
        shutil.rmtree(out, ignore_errors=True)
    tally(f"read_{mode}", runs=sum(outcomes.values()), **outcomes)


# ---- a full disk while writing results ----

@needs_preload
@pytest.mark.parametrize("persist", [False, True], ids=["once", "disk-stays-full"])
def test_disk_full_keeps_old_results(tmp_path, small, persist):
    td, ed, ref, _, rel = small
    out = str(tmp_path / "o")
    p = subprocess.run(run_args(td, ed, out, TASKS, "--overwrite-strategy", "always"), capture_output=True, text=True, timeout=300, env=env())
    assert p.returncode == 0, p.stderr
    res = os.path.join(out, rel)
    before = {f: open(os.path.join(res, f), "rb").read() for f in os.listdir(res) if not f.startswith(".")}
    rep = str(tmp_path / "rep")
    p = subprocess.run(run_args(td, ed, out, TASKS, "--overwrite-strategy", "always"), capture_output=True, text=True, timeout=300,
                       env=env(LD_PRELOAD=LIB, MIEB_FAULT_PATH=out, MIEB_FAULT_REPORT=rep))
    assert p.returncode == 0, p.stderr
    total = report(rep)["writes"]
    assert total >= 4 * 3  # write, fsync, rename per file (and model_meta.json)
    outcomes = collections.Counter()
    for n in range(1, total + 2):
        before = {f: open(os.path.join(res, f), "rb").read() for f in os.listdir(res) if not f.startswith(".")}
        spec = f"{n}+" if persist else str(n)
        p = subprocess.run(run_args(td, ed, out, TASKS, "--overwrite-strategy", "always"), capture_output=True, text=True, timeout=300,
                           env=env(LD_PRELOAD=LIB, MIEB_FAULT_PATH=out, MIEB_FAULT_WRITE=spec))
        what = f"write fault {spec}: status {p.returncode}\n{p.stderr[-1500:]}"
        assert p.returncode in (0, 1, 4), what
        check_outputs(out, ref, require_all=True)  # the old results are all still there, whole
        after = {f: open(os.path.join(res, f), "rb").read() for f in os.listdir(res) if not f.startswith(".")}
        assert after.keys() == before.keys(), what
        failed = [t for t in TASKS if f"task {t} not scored" in p.stderr]
        for t in failed:  # a task that could not write kept its old file byte for byte
            assert after[f"{t}.json"] == before[f"{t}.json"], what
        if p.returncode != 0:
            assert "No space left on device" in p.stderr, what
        outcomes[f"status_{p.returncode}"] += 1
        outcomes["results_kept_intact"] += len(failed) + (p.returncode == 4) * len(TASKS)
    tally("disk_full_persist" if persist else "disk_full_once", runs=sum(
        v for k, v in outcomes.items() if k.startswith("status")), **outcomes)


@pytest.mark.parametrize("limit", [0, 1, 200, 1500, 4000])
def test_file_size_limit(tmp_path, limit):
    """RLIMIT_FSIZE (SIGXFSZ ignored): every write past `limit` bytes fails with EFBIG, through
    stdio too (--per-query files). What is written is whole or absent; the status says why."""
    tasks = ["CIRRIT2IRetrieval", "CIFAR10ZeroShot"]
    td, ed, ref, ref_pq, _ = reference(str(tmp_path), tasks, per_query=True)
    out, pq = str(tmp_path / "o"), str(tmp_path / "pq")

    def limit_size():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    p = subprocess.run(run_args(td, ed, out, tasks, "--per-query", pq), capture_output=True, text=True,
                       timeout=300, env=env(), preexec_fn=limit_size)
    assert p.returncode in (1, 4), p.stderr
    assert "File too large" in p.stderr, p.stderr
    check_outputs(out, ref, pq, ref_pq)
    tally("fsize_limit", runs=1, **{f"status_{p.returncode}": 1})


# ---- SIGKILL, SIGTERM, SIGUSR1 at random points of a run with many tasks ----

@pytest.fixture(scope="module")
def many(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("many"))
    r = reference(tmp, MANY, per_query=True)
    return r + (reference.seconds,)  # how long an uninterrupted run takes: signals land inside it


def kill_at_random(td, ed, out, pq, sig, delay):
    proc = subprocess.Popen(run_args(td, ed, out, MANY, "--per-query", pq), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env())
    time.sleep(delay)
    proc.send_signal(sig)
    so, se = proc.communicate(timeout=300)
    return proc.returncode, se


def rerun_only_missing(td, ed, out, pq, ref, ref_pq):
    p = subprocess.run(run_args(td, ed, out, MANY, "--per-query", pq, "--overwrite-strategy", "only-missing"),
                       capture_output=True, text=True, timeout=300, env=env())
    assert p.returncode == 0, p.stderr
    check_outputs(out, ref, require_all=True)
    return p


@pytest.mark.parametrize("trial", range(5))
def test_sigkill_never_leaves_half_a_result(tmp_path, many, trial):
    td, ed, ref, ref_pq, _, secs = many
    out, pq = str(tmp_path / "o"), str(tmp_path / "pq")
    rng = random.Random(100 + trial)
    rc, _ = kill_at_random(td, ed, out, pq, signal.SIGKILL, rng.uniform(0.0, secs * 0.6))
    # SIGKILL cannot clean up: temporaries may remain, named *.tmp.<host>.<pid> (never *.json);
    # set them aside to check the rest, then put them back: the rerun must remove them
    aside = {}
    for root in (out, pq):
        for rel, p in tree(root).items() if os.path.isdir(root) else []:
            if ".tmp." in rel:
                assert not rel.endswith(".json"), rel
                aside[p] = open(p, "rb").read()
                os.remove(p)
    present = check_outputs(out, ref, pq, ref_pq)
    for p, data in aside.items():
        open(p, "wb").write(data)
    rerun_only_missing(td, ed, out, pq, ref, ref_pq)  # asserts that no temporary is left in out
    left = [rel for rel in tree(pq) if ".tmp." in rel] if os.path.isdir(pq) else []
    assert not left, f"the rerun left the killed run's per-query temporaries: {left}"
    tally("sigkill", runs=1, results_present_at_kill=len(present), killed=int(rc == -signal.SIGKILL))


@pytest.mark.parametrize("sig,trial", [(signal.SIGTERM, t) for t in range(3)] + [(signal.SIGUSR1, t) for t in range(3)])
def test_signal_then_resume(tmp_path, many, sig, trial):
    td, ed, ref, ref_pq, _, secs = many
    out, pq = str(tmp_path / "o"), str(tmp_path / "pq")
    rng = random.Random(200 + trial + 10 * int(sig))
    rc, err = kill_at_random(td, ed, out, pq, sig, rng.uniform(0.0, secs * 0.6))
    stopped = {signal.SIGTERM: 130, signal.SIGUSR1: 75}[sig]
    # before the handlers are installed the default action applies (the process dies of it)
    assert rc in (0, stopped, -sig), (rc, err[-1500:])
    if rc == stopped:
        assert ("pre-empted" if sig == signal.SIGUSR1 else "interrupted") in err, err[-1500:]
    check_outputs(out, ref, pq, ref_pq)  # a stop never leaves anything half-done
    rerun_only_missing(td, ed, out, pq, ref, ref_pq)
    # per-query files of every retrieval task are there too, equal to the uninterrupted run's
    got = {rel for rel in tree(pq)}
    assert got == set(ref_pq), set(ref_pq) ^ got
    tally(f"signal_{signal.Signals(sig).name}", runs=1, **{f"status_{rc}": 1})


def test_stale_temporaries_removed_only_when_their_writer_is_gone(tmp_path):
    """The rerun removes this host's temporaries of dead processes, and nothing else: not those
    of a live process (it may still be writing), of another host (a cluster node sharing the
    folder) or anything not named like a temporary."""
    td, ed = synth(str(tmp_path / "suite"), TASKS[:1])
    out, pq = str(tmp_path / "o"), str(tmp_path / "pq")
    p = subprocess.run(run_args(td, ed, out, TASKS[:1], "--per-query", pq), capture_output=True, text=True,
                       timeout=300, env=env())
    assert p.returncode == 0, p.stderr
    res = os.path.dirname(next(f for f in tree(out).values() if f.endswith(f"{TASKS[0]}.json")))
    sub = os.path.dirname(next(iter(tree(pq).values())))
    host = "".join(c if c.isalnum() and c.isascii() or c == "-" else "_" for c in os.uname().nodename)[:64]
    dead = subprocess.Popen(["true"])
    dead.wait()  # its pid is free now (reuse within this test is vanishingly unlikely)
    live = os.getpid()
    manifests = os.path.join(res, ".mieb-eval")  # the run manifest's folder, written last
    names = {
        os.path.join(res, f"{TASKS[0]}.json.tmp.{host}.{dead.pid}"): False,
        os.path.join(sub, f"run.trec.tmp.{host}.{dead.pid}"): False,
        os.path.join(manifests, f"run-20260101T000000Z-{dead.pid}.json.tmp.{host}.{dead.pid}"): False,
        os.path.join(res, f"{TASKS[0]}.json.tmp.{host}.{live}"): True,
        os.path.join(res, f"{TASKS[0]}.json.tmp.other-node.{dead.pid}"): True,
        os.path.join(res, f"notes.tmp.{host}.x{dead.pid}"): True,
    }
    for n in names:
        open(n, "w").write("half a file")
    args = [a for a in run_args(td, ed, out, TASKS[:1], "--per-query", pq, "--overwrite-strategy", "only-missing")
            if a != "-q"]  # the removals are logged at info level
    p = subprocess.run(args, capture_output=True, text=True, timeout=300, env=env())
    assert p.returncode == 0, p.stderr
    for n, kept in names.items():
        assert os.path.exists(n) == kept, (n, kept, p.stderr[-2000:])
    assert p.stderr.count("which is gone") == 3, p.stderr[-2000:]
