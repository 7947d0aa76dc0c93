"""scripts/slurm/ on a real one-node Slurm cluster started inside this test.

munged (own key and socket) and Debian's slurmctld + slurmd (own slurm.conf: linuxproc
process tracking, no cgroups, two fake GPUs so the templates' --gres=gpu:1 is honoured as
written) run from a temporary folder; scripts/slurm/submit.sh submits the job array over
(task shard x corpus part) and the merge job (afterok), on the CPU device. The synthetic
suite has two retrieval tasks with corpora over 50,000 rows (several mteb chunks, so several
corpus parts are non-empty and some are empty) and two tasks of other families, which the
corpus-part-0 elements score.
  1. the merged output folder must hold exactly the tasks of a single-process `mieb-eval run`
     with equal "scores" (every metric key, every subset);
  2. again with element 5 (task shard 1, corpus part 2) pre-empted mid-run: it is frozen
     (SIGSTOP) inside the first of its two corpus blocks of EDIST2ITRetrieval, after its
     Fashion200kT2IRetrieval part was written; Slurm signals the batch shell with USR1 as
     --signal=B:USR1 would, the template forwards it, mieb-eval stops at the next block and
     exits 75, the element requeues itself, and the rerun keeps the finished part and computes
     the missing one; the results must again equal the single run, nothing half-written.
The daemons are always stopped (fixture finalizer), and die with this process when it is
killed (PR_SET_PDEATHSIG). Everything they use is this run's own: the folder (state, spool,
pid files, munge key and socket, logs) and two free TCP ports. Two runs on one machine (two
checkouts' test suites) still take turns, through an flock on LOCK_FILE held while the cluster
is up (the kernel drops it when the holder dies, so a killed run blocks nobody): both clusters
would own all of the node's CPUs and the wait deadlines below would measure the other run's
load, and a port found free here is taken by the daemon only later. MIEB_TEST_TIME_SCALE
(default 1) multiplies every wait. Skipped only when the Slurm or munge programs are missing
(scripts/install-deps.sh installs slurm-wlm and munge)."""
import ctypes
import fcntl
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from helpers.mieb_tools import build_dir

SRC = Path(os.environ.get("MIEB_SOURCE_DIR", Path(__file__).resolve().parents[2]))
SUBMIT = SRC / "scripts" / "slurm" / "submit.sh"
DAEMONS = ("munged", "mungekey", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scontrol", "scancel")
MISSING = [p for p in DAEMONS + CLIENTS if not shutil.which(p) and not os.path.exists(f"/usr/sbin/{p}")]
pytestmark = pytest.mark.skipif(bool(MISSING), reason=f"Slurm/munge not installed ({', '.join(MISSING)} missing); "
                                "scripts/install-deps.sh installs slurm-wlm and munge")

# The shards split the list by cost (plan/task_shards.h): METI2I, the costliest task by the
# registry's sizes, fills shard 0 alone; shard 1 gets the rest: two tasks of other families,
# which only its corpus-part-0 element scores, and two retrieval tasks (Fashion200k: 40,365
# documents, 1 chunk, parts 0 and 1 empty; EDIS: 209,413 documents, 5 chunks over 3 parts)
TASKS = ["CIFAR10ZeroShot", "Fashion200kT2IRetrieval", "DTD", "EDIST2ITRetrieval", "METI2IRetrieval"]
SHARDS, PARTS = 2, 3  # 6 array elements
TIME_SCALE = float(os.environ.get("MIEB_TEST_TIME_SCALE", "1") or 1)
LOCK_FILE = Path(tempfile.gettempdir()) / "mieb-test-slurm.lock"  # shared on purpose: the turns
TERMINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL",
            "DEADLINE", "PREEMPTED"}


def scaled(seconds):
    return seconds * TIME_SCALE


def die_with_parent():
    """preexec_fn: SIGKILL this child when the test process dies, however it dies."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def sbin(name):
    return shutil.which(name) or f"/usr/sbin/{name}"


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


class Cluster:
    """munged + slurmctld + slurmd in `root`, all in the foreground as our children."""

    def __init__(self, root: Path):
        self.root, self.procs = root, []
        self.env = dict(os.environ, SLURM_CONF=str(root / "slurm.conf"))
        for k in list(self.env):  # a test run inside a Slurm job must not leak its job's settings
            if k.startswith(("SLURM_", "SBATCH_", "SALLOC_", "SRUN_")) and k != "SLURM_CONF":
                del self.env[k]

    def start(self):
        r = self.root
        for d in ("munge", "state", "spool", "log"):
            (r / d).mkdir(mode=0o700)
        key, sock = r / "munge" / "munge.key", r / "munge" / "munge.sock"
        subprocess.run([sbin("mungekey"), "-c", "-k", str(key)], check=True, capture_output=True)
        self._spawn("munged", [sbin("munged"), "-F", "--force", f"--socket={sock}", f"--key-file={key}",
                               f"--pid-file={r}/munge/munged.pid", f"--log-file={r}/log/munged.log",
                               f"--seed-file={r}/munge/munged.seed"])
        self._until(lambda: sock.exists(), 10, "munged did not create its socket")
        host = socket.gethostname().split(".")[0]
        # the node as slurmd sees it (CPUs, sockets, cores, threads), so that it registers cleanly
        hw = subprocess.run([sbin("slurmd"), "-C"], capture_output=True, text=True, check=True).stdout
        node = next(line for line in hw.splitlines() if line.startswith("NodeName="))
        node = " ".join(f for f in node.split() if not f.startswith(("NodeName=", "RealMemory=")))
        user = subprocess.run(["id", "-un"], capture_output=True, text=True, check=True).stdout.strip()
        ctld_port, d_port = free_ports(2)
        (r / "slurm.conf").write_text(f"""\
ClusterName=miebtest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SlurmUser={user}
SlurmdUser={user}
# cred_expire is also how long a requeued job waits before it may start again (120 s by default)
AuthType=auth/munge
AuthInfo=socket={sock},cred_expire=5
CredType=cred/munge
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool
SlurmctldPidFile={r}/slurmctld.pid
SlurmdPidFile={r}/slurmd.pid
SlurmctldLogFile={r}/log/slurmctld.log
SlurmdLogFile={r}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=2
ReturnToService=2
KillWait=2
MinJobAge=600
GresTypes=gpu
NodeName={host} NodeAddr=127.0.0.1 {node} Gres=gpu:2 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")
        # gres/gpu drops GPUs without a device file; these two only make --gres=gpu:1 countable
        (r / "gres.conf").write_text(f"NodeName={host} Name=gpu File=/dev/null\n"
                                     f"NodeName={host} Name=gpu File=/dev/zero\n")
        self._spawn("slurmctld", [sbin("slurmctld"), "-D", "-i", "-f", str(r / "slurm.conf")])
        self._spawn("slurmd", [sbin("slurmd"), "-D", "-f", str(r / "slurm.conf")])

        def idle():
            p = self.run("sinfo", "-h", "-o", "%T", check=False)
            return p.returncode == 0 and p.stdout.strip() in ("idle", "mixed", "allocated")
        self._until(idle, 60, "the node did not come up")

    def _spawn(self, name, argv):
        log = open(self.root / "log" / f"{name}.out", "wb")
        self.procs.append((name, subprocess.Popen(argv, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                                  stdin=subprocess.DEVNULL, start_new_session=True,
                                                  preexec_fn=die_with_parent)))
        log.close()

    def _until(self, cond, timeout, what):
        timeout = scaled(timeout)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for name, p in self.procs:
                if p.poll() is not None:
                    raise RuntimeError(f"{name} exited with {p.returncode}:\n{self.logs()}")
            if cond():
                return
            time.sleep(0.2)
        raise RuntimeError(f"{what} within {timeout:g} s (deadline {timeout / TIME_SCALE:g} s x "
                           f"MIEB_TEST_TIME_SCALE={TIME_SCALE:g}):\n{self.logs()}")

    def logs(self):
        out = []
        for f in sorted((self.root / "log").glob("*")):
            out.append(f"--- {f.name}\n" + "\n".join(f.read_text(errors="replace").splitlines()[-25:]))
        return "\n".join(out)

    def run(self, *args, check=True):
        # (subprocess timeouts are scaled by conftest.py)
        p = subprocess.run(list(args), env=self.env, capture_output=True, text=True, timeout=60)
        if check and p.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed ({p.returncode}): {p.stderr}")
        return p

    def jobs(self, job_id):
        """[{JobId, ArrayTaskId, JobState, ExitCode, Restarts, ...}] of a job or every element of an array."""
        p = self.run("scontrol", "-o", "show", "job", str(job_id))
        return [dict(kv.split("=", 1) for kv in line.split() if "=" in kv) for line in p.stdout.splitlines()]

    def wait(self, job_ids, timeout):
        timeout = scaled(timeout)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            states = [j for i in job_ids for j in self.jobs(i)]
            if states and all(j["JobState"] in TERMINAL for j in states):
                return states
            time.sleep(0.5)
        raise AssertionError(f"jobs {job_ids} not finished within {timeout:g} s (the wait's deadline, "
                             f"x MIEB_TEST_TIME_SCALE={TIME_SCALE:g}): "
                             f"{[(j['JobId'], j['JobState']) for j in states]}\n{self.logs()}")

    def stop(self):
        self.run("scancel", "--full", "--user", str(os.getuid()), check=False)
        end = time.monotonic() + scaled(20)
        while time.monotonic() < end and self.run("squeue", "-h", check=False).stdout.strip():
            time.sleep(0.5)
        for name, p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


def take_turn():
    """An exclusive flock on LOCK_FILE (waits for another run's cluster to stop)."""
    fd = os.open(LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    limit, t0 = scaled(1800), time.monotonic()
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() - t0 > limit:
                os.close(fd)
                pytest.fail(f"another run's Slurm cluster held {LOCK_FILE} for over {limit:g} s "
                            f"(the turn's deadline, x MIEB_TEST_TIME_SCALE={TIME_SCALE:g})")
            time.sleep(1)
    if time.monotonic() - t0 > 1:
        print(f"waited {time.monotonic() - t0:.0f} s for another run's cluster ({LOCK_FILE})")
    return fd


@pytest.fixture(scope="module")
def cluster():
    lock = take_turn()
    try:
        root = Path(tempfile.mkdtemp(prefix="mieb-slurm-", dir="/tmp"))  # short: unix socket paths
        c = Cluster(root)
        try:
            c.start()
            yield c
        finally:
            c.stop()
            shutil.rmtree(root, ignore_errors=True)
    finally:
        os.close(lock)  # the turn ends


def mieb(*args):
    return subprocess.run([str(build_dir() / "mieb-eval"), *map(str, args)], capture_output=True, text=True,
                          timeout=600)


def results(out):
    """TaskName -> its result's "scores", from every <TaskName>.json (model_meta.json aside)."""
    files = [p for p in Path(out).glob("results/*/*/*.json") if p.name != "model_meta.json"]
    return {p.stem: json.loads(p.read_text())["scores"] for p in files}


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    d = tmp_path_factory.mktemp("slurm")
    r = mieb("synth", "--out", d / "s", "--tasks", ",".join(TASKS), "--scale", 0.2, "--dim", 8)
    assert r.returncode == 0, r.stderr
    td, ed = d / "s" / "task-data", d / "s" / "embeddings"
    r = mieb("run", "--task-data", td, "--embeddings", ed, "-t", *TASKS, "--output-folder", d / "single",
             "--device", "cpu", "--progress", "off")
    assert r.returncode == 0, r.stderr
    single = results(d / "single")
    assert sorted(single) == sorted(TASKS)
    return td, ed, d, single


def submit(cluster, suite, tag, *run_extra):
    td, ed, d, _ = suite
    out = d / tag
    argv = [str(SUBMIT), "--task-data", str(td), "--embeddings", str(ed), "--output-folder", str(out),
            "--num-shards", str(SHARDS), "--corpus-parts", str(PARTS), "--device", "cpu",
            "--bin", str(build_dir() / "mieb-eval"), "-t", *TASKS]
    if run_extra:
        argv += ["--", *run_extra]
    p = cluster.run(*argv)
    ids = dict(line.split("=", 1) for line in p.stdout.split())
    assert ids["array_job"].isdigit(), p.stdout
    assert ids["merge_job"].isdigit() if PARTS > 1 else ids["merge_job"] == "none", p.stdout
    return out, ids["array_job"], ids["merge_job"] if PARTS > 1 else None


def check_done(cluster, out, array_id, merge_id, single):
    elems = cluster.wait([array_id] + ([merge_id] if merge_id else []), 300)
    logs = "\n".join(f"--- {f.name}\n{f.read_text(errors='replace')}" for f in sorted((out / "slurm-logs").glob("*")))
    bad = [(j["JobId"], j.get("ArrayTaskId"), j["JobState"], j["ExitCode"]) for j in elems
           if j["JobState"] != "COMPLETED" or j["ExitCode"] != "0:0"]
    assert not bad, f"{bad}\n{logs}\n{cluster.logs()}"
    assert len(elems) == SHARDS * PARTS + (1 if merge_id else 0)
    # one GPU per element, as the template asks; the merge job (afterok) started after the last element ended
    arr = [j for j in elems if j["JobId"] != merge_id]
    assert all(j.get("TresPerNode") == "gres:gpu:1" for j in arr), [j.get("TresPerNode") for j in arr]
    if merge_id:
        merge = next(j for j in elems if j["JobId"] == merge_id)
        assert merge["StartTime"] >= max(j["EndTime"] for j in arr), (merge["StartTime"], [j["EndTime"] for j in arr])
    got = results(out)
    assert sorted(got) == sorted(single), logs
    for task in single:
        assert got[task] == single[task], task
    # nothing half-written: no temporary files anywhere under the output folder
    assert not [p for p in out.rglob("*") if ".tmp" in p.name], list(out.rglob("*.tmp*"))
    return elems, logs


def test_array_and_merge_equal_single_run(cluster, suite):
    out, array_id, merge_id = submit(cluster, suite, "round1")
    elems, logs = check_done(cluster, out, array_id, merge_id, suite[3])
    assert all(j.get("Restarts", "0") == "0" for j in elems)
    # each element ran its (shard, part)
    for e in range(SHARDS * PARTS):
        log = (out / "slurm-logs" / f"mieb-eval-{array_id}_{e}.out").read_text()
        assert f"element {e} (shard {e // PARTS} of {SHARDS}, corpus part {e % PARTS} of {PARTS})" in log, log
        assert "mieb-eval exited with status 0" in log, log


def wait_for_line(path, pattern, timeout):
    timeout = scaled(timeout)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        text = path.read_text(errors="replace") if path.exists() else ""
        m = re.search(pattern, text)
        if m:
            return m, text
        time.sleep(0.01)
    raise AssertionError(f"{pattern!r} not in {path} within {timeout:g} s (the wait's deadline, "
                         f"x MIEB_TEST_TIME_SCALE={TIME_SCALE:g}):\n{text}")


def test_preempted_element_is_requeued_and_resumes(cluster, suite):
    # "-- -v": extra `mieb-eval run` options reach every element (its debug lines are used below)
    out, array_id, merge_id = submit(cluster, suite, "round2", "-v")
    # element 5 = task shard 1 (Fashion200kT2IRetrieval, EDIST2ITRetrieval), corpus part 2: all of
    # Fashion200k, and EDIS's chunks 3..5, two blocks at the default --mem-limit. The last element
    # to start: Slurm 22.05 refuses (and scancel retries) a signal to an element while others of
    # its array are still pending.
    log = out / "slurm-logs" / f"mieb-eval-{array_id}_5.out"
    # it starts only after elements 0..4 have run, two at a time on this node: the deadline
    # covers their work, which a sanitized build or a loaded machine makes several times slower
    m, _ = wait_for_line(log, r"mieb-eval started \(pid (\d+)\)", 240)
    pid = int(m.group(1))
    wait_for_line(log, r"EDIST2ITRetrieval /test/default: .*blocks of", 60)
    os.kill(pid, signal.SIGSTOP)  # freeze it inside the first block
    end = time.monotonic() + scaled(10)
    while True:  # the stop takes effect asynchronously
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            state = "gone"
        if state in ("T", "Z", "gone") or time.monotonic() > end:
            break
        time.sleep(0.01)
    assert state == "T", f"element 5 finished before it could be pre-empted (state {state}):\n{log.read_text()}"
    # what --signal=B:USR1@SECONDS does before the time limit: USR1 to the batch shell only.
    # ARRAYID_5, not element 5's job id: the last element carries the array's own id, which
    # would address every element
    t0 = time.monotonic()
    cluster.run("scancel", "--batch", "--signal=USR1", f"{array_id}_5")
    t1 = time.monotonic()
    wait_for_line(log, r"SIGUSR1 \(pre-emption notice\): forwarding to mieb-eval", 30)
    os.kill(pid, signal.SIGCONT)
    print(f"scancel took {t1 - t0:.2f} s, the notice reached the batch shell after {time.monotonic() - t0:.2f} s")
    elems, logs = check_done(cluster, out, array_id, merge_id, suite[3])
    text = log.read_text()
    e5 = next(j for j in elems if j.get("ArrayTaskId") == "5")
    assert e5["Restarts"] == "1", text
    assert "pre-empted (SIGUSR1)" in text and f"pre-empted (status 75): requeueing {array_id}_5" in text, text
    first, _, second = text.partition("attempt 2 on")
    assert second, f"no second attempt:\n{text}"
    # the first attempt wrote its Fashion200k part, then stopped inside EDIS's search, before its part file
    assert "Fashion200kT2IRetrieval /test/default: part 2 of 3" in first, text
    assert "EDIST2ITRetrieval /test/default: part 2 of 3" not in first, text
    # the rerun kept the finished part and computed only the missing one
    assert "Fashion200kT2IRetrieval /test/default: partial exists, skipped" in second, text
    assert "EDIST2ITRetrieval /test/default: part 2 of 3" in second, text
    assert "mieb-eval exited with status 0" in second, text
    others = [j for j in elems if j.get("ArrayTaskId") not in (None, "5") and j["JobId"] != merge_id]
    assert len(others) == SHARDS * PARTS - 1
    assert all(j.get("Restarts", "0") == "0" for j in others), [(j["ArrayTaskId"], j.get("Restarts")) for j in others]
