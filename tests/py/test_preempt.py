"""`mieb-eval run` and SIGUSR1 (Slurm's pre-emption notice, --signal=B:USR1@SECONDS):
the run stops at the next corpus block or task boundary, keeps every finished result, writes
nothing for the task it was in, and exits 75; rerunning the same command with
--overwrite-strategy only-missing completes it, and the results then equal an uninterrupted
run's. Without Slurm (tests/py/test_slurm.py runs the same through the job-array templates).

The process is frozen (SIGSTOP) as soon as it logs the start of a retrieval search, so the
signal lands inside the search, whose corpus is two of mteb's 50,000-document blocks."""
import json
import re
import signal
import subprocess
import time
from pathlib import Path

from helpers.mieb_tools import build_dir

TASKS = ["CIFAR10ZeroShot", "Fashion200kT2IRetrieval", "DTD"]


def mieb(*args):
    return subprocess.run([str(build_dir() / "mieb-eval"), *map(str, args)], capture_output=True, text=True,
                          timeout=600)


def results(out):
    files = [p for p in Path(out).glob("results/*/*/*.json") if p.name != "model_meta.json"]
    return {p.stem: json.loads(p.read_text())["scores"] for p in files}


def test_usr1_stops_with_75_and_a_rerun_resumes(tmp_path):
    # Fashion200kT2IRetrieval at scale 0.5: about 100,000 documents, two blocks
    r = mieb("synth", "--out", tmp_path / "s", "--tasks", ",".join(TASKS), "--scale", 0.5, "--dim", 8)
    assert r.returncode == 0, r.stderr
    base = ["--task-data", tmp_path / "s" / "task-data", "--embeddings", tmp_path / "s" / "embeddings",
            "-t", *TASKS, "--device", "cpu", "--progress", "off"]
    r = mieb("run", *base, "--output-folder", tmp_path / "single")
    assert r.returncode == 0, r.stderr
    single = results(tmp_path / "single")
    assert sorted(single) == sorted(TASKS)

    out = tmp_path / "pre"
    cmd = [str(build_dir() / "mieb-eval"), "run", *map(str, base), "--output-folder", str(out),
           "--overwrite-strategy", "only-missing"]
    p = subprocess.Popen(cmd + ["-v"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = []
    for line in p.stderr:
        seen.append(line)
        if re.search(r"Fashion200kT2IRetrieval /test/default: .*blocks of", line):
            p.send_signal(signal.SIGSTOP)  # inside the search, before its first block is done
            break
    state = "?"
    end = time.monotonic() + 10
    while time.monotonic() < end:  # the stop takes effect asynchronously
        state = Path(f"/proc/{p.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        if state in ("T", "Z"):
            break
        time.sleep(0.01)
    assert state == "T", "".join(seen)
    p.send_signal(signal.SIGUSR1)
    p.send_signal(signal.SIGCONT)
    rest = p.stderr.read()
    assert p.wait() == 75, "".join(seen) + rest
    assert "pre-empted (SIGUSR1)" in rest and "only-missing" in rest, rest
    # the finished task is kept, the interrupted one has no result and nothing half-written is left
    assert sorted(results(out)) == ["CIFAR10ZeroShot"], rest
    assert results(out)["CIFAR10ZeroShot"] == single["CIFAR10ZeroShot"]
    assert not [q for q in out.rglob("*") if ".tmp" in q.name]
    assert "Fashion200kT2IRetrieval: scored" not in rest

    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "CIFAR10ZeroShot: result exists, skipped" in r.stderr
    assert results(out) == single


def test_help_documents_75():
    h = mieb("run", "--help")
    assert h.returncode == 0
    assert re.search(r"\n +75 +pre-empted \(SIGUSR1", h.stdout), h.stdout
