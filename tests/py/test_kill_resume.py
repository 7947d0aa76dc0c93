"""Kill and resume at scale: SIGKILL again and again at random moments, resume each time with
the default --overwrite-strategy (only-missing), and the end is an uninterrupted run's.

The suite is every task `mieb-eval synth` writes (all seven families: retrieval, linear probe,
zero-shot, clustering, compositionality, vision-centric QA, visual STS), small, with one
retrieval task (EDIST2ITRetrieval) whose corpus spans two of mteb's 50,000-document chunks, so
corpus parts are not all empty and a kill can land inside a search. Three cases:
  1. a whole-benchmark run with --per-query, killed up to KILLS times (seeded delays drawn over
     the work still missing, as measured by the uninterrupted run), then resumed to the end;
  2. a corpus-parts run (PARTS processes at once, in rounds: each killed a few milliseconds
     after it has finished a seeded random number of its files, the unfinished ones started
     again), then `merge`, itself killed and rerun;
  3. on a real one-node Slurm cluster (test_slurm.py's, same turns through its flock): an array
     element's mieb-eval SIGKILLed mid-run, as on a failed node, and the element requeued with
     `scontrol requeue`; the requeued element resumes and the merge job completes.
After every kill: each result present equals the uninterrupted run's (timing fields aside:
evaluation_time, date, evaluation_phases) and every per-query file is byte-equal; nothing is
set aside (<file>.bad-<time>, core/set_aside.h: atomic writes never leave a broken file); the
only temporaries are the killed processes' own (<path>.tmp.<host>.<pid>, core/tmpfiles.h);
and everything the previous attempt had finished is still there (a resume neither loses nor
redoes a finished result or part: same bytes, same inode and mtime). At the end: exactly the
uninterrupted run's files, and no temporary anywhere. Run with -s for the kills' delays and
the temporaries they left (the sweep's work).
"""
from __future__ import annotations

import collections
import json
import os
import random
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

# the Slurm cluster fixture (with its turns through the flock), the scaled waits, MIEB_TEST_TIME_SCALE
from test_slurm import MISSING, SUBMIT, TIME_SCALE, cluster, wait_for_line  # noqa: F401

BUILD = os.environ.get("MIEB_BUILD_DIR", "")
BIN = os.path.join(BUILD, "mieb-eval")
SCALE, BIG, BIG_SCALE = "0.01", "EDIST2ITRetrieval", "0.06"  # 62,824 documents: two chunks
FAMILIES = {  # registry type -> family: the suite must hold every family
    "Any2AnyRetrieval": "retrieval", "Any2AnyMultilingualRetrieval": "retrieval",
    "DocumentUnderstanding": "retrieval", "ImageClassification": "linear probe",  # multilabel too
    "ZeroShotClassification": "zero-shot",
    "ImageClustering": "clustering", "Compositionality": "compositionality",
    "VisionCentricQA": "vision-centric QA", "VisualSTS(eng)": "visual STS", "VisualSTS(multi)": "visual STS"}
VOLATILE = ("evaluation_time", "date", "evaluation_phases")
KILLS, PARTS = 10, 3
TEMP = re.compile(r"\.tmp\.[^/]+\.(\d+)$")
TEMPS_SEEN = collections.Counter()  # temporaries that kills left, by folder: the sweep had work to do


def env():
    return dict(os.environ, MIEB_BLAS_TUNE="0", OPENBLAS_NUM_THREADS="1")


def mieb(*args, timeout=300):
    return subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=timeout, env=env())


def run_args(td, ed, out, tasks, *extra):
    """`mieb-eval run` with the default --overwrite-strategy: every run after the first resumes."""
    return [BIN, "run", "--task-data", td, "--embeddings", ed, "-t", *tasks, "--output-folder", out,
            "--device", "cpu", "--threads", "1", "--progress", "off", "-q", *map(str, extra)]


def files(root):
    """{path relative to root: absolute path} of every file under root (none when it is absent)."""
    out = {}
    for dp, _, fs in os.walk(root):
        for f in fs:
            out[os.path.relpath(os.path.join(dp, f), root)] = os.path.join(dp, f)
    return out


def stable(path):
    """A result file without its timing fields: the bytes up to "evaluation_time" (task, revision,
    scores, in the writer's order and formatting) and the parsed rest minus VOLATILE."""
    text = open(path, encoding="utf-8").read()
    rest = json.loads(text)
    for k in VOLATILE:
        rest.pop(k, None)
    return text[:text.index('"evaluation_time"')], rest


def results_dir(out):
    dirs = {os.path.dirname(p) for p in files(out).values() if p.endswith("model_meta.json")}
    return dirs.pop() if len(dirs) == 1 else None


# ---------------------------------------------------------------- the suite and its clean run


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    """The synthetic benchmark, its uninterrupted run (results, --per-query files), that run's
    length in seconds and how long each of its tasks took."""
    tmp = tmp_path_factory.mktemp("suite")
    s, big = tmp / "s", tmp / "big"
    for args in (["--out", s, "--scale", SCALE], ["--out", big, "--scale", BIG_SCALE, "--tasks", BIG]):
        p = mieb("synth", *args, "--dim", 8)
        assert p.returncode == 0, p.stderr
    td, ed = str(s / "task-data"), str(s / "embeddings")
    assert (big / "embeddings" / "model_meta.json").read_bytes() == (s / "embeddings" / "model_meta.json").read_bytes()
    shutil.rmtree(os.path.join(ed, BIG))
    shutil.copytree(big / "embeddings" / BIG, os.path.join(ed, BIG))
    shutil.copy(big / "task-data" / f"{BIG}.h5", os.path.join(td, f"{BIG}.h5"))
    tasks = sorted(f[:-3] for f in os.listdir(td) if f.endswith(".h5"))
    types = {t["name"]: t["type"] for t in json.loads(mieb("list-tasks", "--json").stdout)}
    assert set(FAMILIES[types[t]] for t in tasks) == set(FAMILIES.values()), "a family is missing from the suite"
    out, pq = str(tmp / "clean"), str(tmp / "clean-pq")
    t0 = time.monotonic()
    p = subprocess.run(run_args(td, ed, out, tasks, "--per-query", pq), capture_output=True, text=True, timeout=600,
                       env=env())
    secs = time.monotonic() - t0
    assert p.returncode == 0, p.stderr[-3000:]
    res = p.stdout.strip()
    ref = {t: stable(os.path.join(res, f"{t}.json")) for t in tasks}
    ref_pq = {rel: open(p, "rb").read() for rel, p in files(pq).items()}
    assert ref_pq and not [r for r in files(out) if TEMP.search(r)]
    # how long each task took, wall clock from the run's start: the time between its result
    # and the one before (the first one's includes the start-up)
    written = sorted((os.stat(os.path.join(res, f"{t}.json")).st_mtime_ns / 1e9, t) for t in tasks)
    t_start = written[-1][0] - secs
    took = {t: at - prev for (at, t), prev in zip(written, [t_start] + [at for at, _ in written[:-1]])}
    print(f"\n{len(tasks)} tasks; the uninterrupted run takes {secs:.2f} s")
    return dict(td=td, ed=ed, tasks=tasks, ref=ref, ref_pq=ref_pq, secs=secs, took=took,
                meta=open(os.path.join(res, "model_meta.json"), "rb").read())


# ---------------------------------------------------------------- what every state must satisfy


def check_state(suite, roots, killed):
    """The outputs after a kill (or at the end): returns {(root, rel): (bytes, (inode, mtime) or
    None)} of every finished file (results, per-query files, partials; the run manifests aside)
    for the progress check.
    roots: {"out": dir, "pq": dir or None, "pd": dir or None}; killed: the pids SIGKILLed so far."""
    done = {}
    for name, root in roots.items():
        if not root:
            continue
        for rel, p in files(root).items():
            base = os.path.basename(rel)
            assert ".bad-" not in base, f"set aside after SIGKILL (writes are atomic, nothing can be broken): {p}"
            m = TEMP.search(base)
            if m:  # a killed writer's, never a live or a finished one's
                assert int(m.group(1)) in killed, f"temporary of a process that was not killed: {p}"
                TEMPS_SEEN[name] += 1
                continue
            if ".mieb-eval" in rel.split(os.sep):  # a run manifest: whole JSON
                json.loads(open(p).read())
                continue
            data, st = open(p, "rb").read(), os.stat(p)
            ident = (st.st_ino, st.st_mtime_ns)  # a finished result or part is never written again
            if name == "out" and base == "model_meta.json":
                assert data == suite["meta"], p
                ident = None  # copied by every run
            elif name == "out":
                task = base[:-5]
                assert base.endswith(".json") and task in suite["ref"], f"unexpected file {p}"
                assert stable(p) == suite["ref"][task], f"{p} differs from the uninterrupted run's"
            elif name == "pq":
                assert data == suite["ref_pq"].get(rel), f"per-query file {p} differs or is not expected"
                ident = None  # rewritten, the same, when its task was not finished
            else:
                assert re.fullmatch(r"part-\d{5}-of-\d{5}\.h5", base), f"unexpected file in the partials folder: {p}"
            done[(name, rel)] = (data, ident)
    return done


def check_progress(before, after):
    lost = sorted(k for k in before if k not in after)
    assert not lost, f"finished before the resume and gone after it: {lost[:10]}"
    redone = sorted(k for k in before if after[k] != before[k])
    assert not redone, f"finished before the resume and written again by it: {redone[:10]}"


def check_final(suite, roots):
    out = roots["out"]
    for root in filter(None, roots.values()):
        left = [r for r in files(root) if TEMP.search(r) or ".bad-" in r]
        assert not left, f"left under {root}: {left}"
    res = results_dir(out)
    got = sorted(f[:-5] for f in os.listdir(res) if f.endswith(".json") and f != "model_meta.json")
    assert got == suite["tasks"], set(got) ^ set(suite["tasks"])
    for t in got:
        assert stable(os.path.join(res, f"{t}.json")) == suite["ref"][t], t
    if roots.get("pq"):
        pq = {rel: open(p, "rb").read() for rel, p in files(roots["pq"]).items()}
        assert sorted(pq) == sorted(suite["ref_pq"])
        assert [r for r in pq if pq[r] != suite["ref_pq"][r]] == []


def seconds_left(suite, out):
    """How long the uninterrupted run spent on the tasks whose result is not in out yet."""
    res = results_dir(out)
    have = set(os.listdir(res)) if res else set()
    return sum(s for t, s in suite["took"].items() if f"{t}.json" not in have)


def start(argv):
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env())


def finish(proc, what):
    try:
        _, err = proc.communicate(timeout=300 * TIME_SCALE)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError(f"{what}: still running after {300 * TIME_SCALE:g} s (300 s x "
                             f"MIEB_TEST_TIME_SCALE={TIME_SCALE:g})")
    return proc.returncode, err


# ---------------------------------------------------------------- 1. the whole benchmark


@pytest.mark.parametrize("seed", [1, 2])
def test_whole_benchmark_killed_again_and_again(tmp_path, suite, seed):
    rng = random.Random(seed)
    out, pq = str(tmp_path / "o"), str(tmp_path / "pq")
    roots = {"out": out, "pq": pq}
    argv = run_args(suite["td"], suite["ed"], out, suite["tasks"], "--per-query", pq)
    killed, done, landed, delays = set(), {}, 0, []
    while landed < KILLS:
        left = seconds_left(suite, out)
        if not left:
            break
        # the kills still to come spread over what is left of the uninterrupted run's length
        # (read again after each kill: a machine faster or slower than at the measurement
        # shifts the next delays, not the number of kills that land)
        delay = rng.uniform(0.0, 1.5 * left / (KILLS - landed))
        proc = start(argv)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        rc, err = finish(proc, "a run to be killed")
        assert rc in (0, -signal.SIGKILL), (rc, err[-3000:])
        if rc == -signal.SIGKILL:
            landed += 1
            killed.add(proc.pid)
        delays.append(round(delay, 3))
        now = check_state(suite, roots, killed)
        check_progress(done, now)
        done = now
    rc, err = finish(start(argv), "the last resume")
    assert rc == 0, err[-3000:]
    check_progress(done, check_state(suite, roots, killed))
    check_final(suite, roots)
    print(f"seed {seed}: {landed} kills landed, delays {delays}, temporaries left by them {dict(TEMPS_SEEN)}")
    assert landed >= KILLS // 2, f"only {landed} kills landed inside a run (delays {delays})"


# ---------------------------------------------------------------- 2. corpus parts and merge


def part_progress(out, pd):
    """How many files each corpus part has finished: its partial files, and part 0 the results too."""
    n = [sum(1 for r in files(pd) if r.endswith(f"part-{i:05d}-of-{PARTS:05d}.h5")) for i in range(PARTS)]
    res = results_dir(out)
    n[0] += len([f for f in os.listdir(res) if f.endswith(".json") and f != "model_meta.json"]) if res else 0
    return n


def test_corpus_parts_and_merge_killed_again_and_again(tmp_path, suite):
    rng = random.Random(7)
    out, pd, pq = str(tmp_path / "o"), str(tmp_path / "pd"), str(tmp_path / "pq")
    roots = {"out": out, "pq": pq, "pd": pd}
    td, ed, tasks = suite["td"], suite["ed"], suite["tasks"]
    # --per-query as on a cluster: part 0 writes the other families' files, merge the retrieval ones
    argv = [run_args(td, ed, out, tasks, "--corpus-parts", PARTS, "--corpus-part", i, "--partials-dir", pd,
                     "--per-query", pq) for i in range(PARTS)]
    # what each part finishes: a partial file per retrieval subset (those with a run.trec: about
    # all), and part 0 the other tasks' results
    subsets = {os.path.dirname(r) for r in suite["ref_pq"] if os.path.basename(r) == "run.trec"}
    others = len(suite["tasks"]) - len({r.split(os.sep)[0] for r in subsets})
    total = [len(subsets) + (others if i == 0 else 0) for i in range(PARTS)]
    killed, done, todo, landed, rounds = set(), {}, set(range(PARTS)), collections.Counter(), 0
    while todo and rounds < KILLS:  # every unfinished part at once, each killed at its own moment
        rounds += 1
        now = part_progress(out, pd)
        procs = {i: start(argv[i]) for i in sorted(todo)}
        # once it has finished a random number of files more (short of the last one, as far as
        # the count above tells), and a random few milliseconds later: inside the next one
        target = {i: rng.randint(now[i] + 1, max(now[i] + 1, total[i] - 1)) for i in procs}
        later = {i: rng.uniform(0.0, 0.05) for i in procs}
        kill_at, alive = {}, set(procs)
        while alive:
            now = part_progress(out, pd)
            for i in sorted(alive):
                if procs[i].poll() is not None:
                    alive.discard(i)
                elif i in kill_at and time.monotonic() >= kill_at[i]:
                    procs[i].send_signal(signal.SIGKILL)
                    alive.discard(i)
                elif i not in kill_at and now[i] >= target[i]:
                    kill_at[i] = time.monotonic() + later[i]
            time.sleep(0.005)
        for i, proc in procs.items():
            rc, err = finish(proc, f"corpus part {i}")
            assert rc in (0, -signal.SIGKILL), (i, rc, err[-3000:])
            if rc == 0:
                todo.discard(i)
            else:
                landed[i] += 1
                killed.add(proc.pid)
        now = check_state(suite, roots, killed)
        check_progress(done, now)
        done = now
    for i in sorted(todo):
        rc, err = finish(start(argv[i]), f"the last resume of corpus part {i}")
        assert rc == 0, err[-3000:]
    check_progress(done, check_state(suite, roots, killed))
    parts = [r for r in files(pd) if r.endswith(".h5")]
    assert parts and all(r.startswith(BIG) or f"-of-{PARTS:05d}" in r for r in parts)
    assert len([r for r in parts if r.startswith(BIG)]) == PARTS
    # merge: killed the same way (it writes every result again each time), then run to the end
    merge = [BIN, "merge", "--partials-dir", pd, "--task-data", td, "--embeddings", ed, "--output-folder", out,
             "-t", *tasks, "--per-query", pq, "--threads", "1", "-q"]
    merge_secs = suite["secs"] * 0.5
    for _ in range(3):
        proc = start(merge)
        time.sleep(rng.uniform(0.0, merge_secs))
        proc.send_signal(signal.SIGKILL)
        rc, err = finish(proc, "a merge to be killed")
        assert rc in (0, -signal.SIGKILL), (rc, err[-3000:])
        if rc == -signal.SIGKILL:
            killed.add(proc.pid)
        check_state(suite, roots, killed)
    rc, err = finish(start(merge), "the last merge")
    assert rc == 0, err[-3000:]
    check_state(suite, roots, killed)
    check_final(suite, roots)
    print(f"corpus parts: {rounds} rounds, kills landed by part {dict(landed)}, temporaries left by them "
          f"{dict(TEMPS_SEEN)}")
    # part 0 has the most to do (the other families too): its first kill, after a seeded number
    # of files well short of its last, always lands; parts 1 and 2 may finish first
    assert landed[0] >= 1, f"no kill landed inside corpus part 0 ({dict(landed)})"


# ---------------------------------------------------------------- 3. a requeued Slurm array element

needs_slurm = pytest.mark.skipif(bool(MISSING), reason=f"Slurm/munge not installed ({', '.join(MISSING)} missing); "
                                 "scripts/install-deps.sh installs slurm-wlm and munge")


def proc_state(pid):
    """The process's state letter (R, S, T, Z, ...), or None once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return None


@needs_slurm
def test_slurm_element_killed_and_requeued(tmp_path, suite, cluster):
    """Element 0 (corpus part 0: every task of the other families, part 0 of each retrieval task)
    loses its mieb-eval to SIGKILL at a random moment, as on a node that fails, and is requeued
    (`scontrol requeue`, what the controller does for a --requeue job on a failed node). Its batch
    shell is frozen first, so that the element is still running when the requeue comes (its own
    exit status, 137, would otherwise fail it and cancel the merge job). The second attempt
    removes the killed process's temporaries, keeps what it finished and scores the rest; the
    merge job then writes results equal to the uninterrupted run's."""
    out = tmp_path / "o"
    argv = [str(SUBMIT), "--task-data", suite["td"], "--embeddings", suite["ed"], "--output-folder", str(out),
            "--num-shards", "1", "--corpus-parts", "2", "--device", "cpu", "--bin", BIN, "-t", *suite["tasks"]]
    ids = dict(line.split("=", 1) for line in cluster.run(*argv).stdout.split())
    array_id, merge_id = ids["array_job"], ids["merge_job"]
    log = out / "slurm-logs" / f"mieb-eval-{array_id}_0.out"
    m, _ = wait_for_line(log, r"mieb-eval started \(pid (\d+)\)", 120)
    pid = int(m.group(1))
    shell = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])  # its parent
    # a random point of its work: once it has finished n tasks (its log's progress lines)...
    n = random.Random(11).randrange(5, 100)
    wait_for_line(log, rf"progress \(\w+ scored\): {n}/{len(suite['tasks'])} tasks", 120)
    # ...the first moment after that it has a file half-written (a partial's search, a result
    # being written), so that the second attempt has a dead process's temporary to remove
    mine = re.compile(rf"\.tmp\.[^/]+\.{pid}$")

    def half_written():
        return [r for r in files(out) if mine.search(r)]
    while True:  # freeze it when it has one, and look again: the file may have been finished meanwhile
        state = proc_state(pid)
        assert state not in (None, "Z"), f"element 0 finished before the kill (state {state}):\n{log.read_text()}"
        if half_written():
            os.kill(pid, signal.SIGSTOP)
            while proc_state(pid) not in ("T", None, "Z"):
                time.sleep(0.001)
            if half_written():
                break
            os.kill(pid, signal.SIGCONT)
        time.sleep(0.001)
    os.kill(shell, signal.SIGSTOP)
    os.kill(pid, signal.SIGKILL)
    while proc_state(pid) not in (None, "Z"):
        time.sleep(0.01)
    left = half_written()
    t0 = time.monotonic()
    cluster.run("scontrol", "requeue", f"{array_id}_0")
    try:  # Slurm ends the frozen attempt itself (SIGCONT, SIGTERM, then SIGKILL): maybe already
        os.kill(shell, signal.SIGCONT)
    except ProcessLookupError:
        pass
    elems = cluster.wait([array_id, merge_id], 300)
    text = log.read_text(errors="replace")
    logs = "\n".join(f"--- {f.name}\n{f.read_text(errors='replace')[-3000:]}" for f in (out / "slurm-logs").glob("*"))
    bad = [(j["JobId"], j.get("ArrayTaskId"), j["JobState"], j["ExitCode"]) for j in elems
           if j["JobState"] != "COMPLETED" or j["ExitCode"] != "0:0"]
    assert not bad, f"{bad}\n{logs}\n{cluster.logs()}"
    e0 = next(j for j in elems if j.get("ArrayTaskId") == "0")
    assert e0["Restarts"] == "1", text
    first, _, second = text.partition("attempt 2 on")
    assert second and f"mieb-eval started (pid {pid})" in first, text
    assert "mieb-eval exited with status 0" in second, text
    for r in left:  # removed by the second attempt (core/tmpfiles.h), each named in its log
        assert f"{os.path.basename(r)}" in second and "which is gone" in second, (r, text)
    check_final(suite, {"out": str(out), "pq": None, "pd": str(out / "partials")})
    print(f"slurm: element 0 killed after {n} tasks with {left} half-written; requeued, all done "
          f"{time.monotonic() - t0:.1f} s later")
