"""scripts/slurm/submit.sh's sbatch command lines, against a recording stand-in for sbatch (no
cluster needed; tests/py/test_slurm.py runs the same scripts on a real one-node Slurm):
the array throttle, CPUs per element, and the merge job kept off GPUs and GPU partitions."""
import os
import stat
import subprocess
from pathlib import Path

import pytest

SRC = Path(os.environ.get("MIEB_SOURCE_DIR", Path(__file__).resolve().parents[2]))
SUBMIT = SRC / "scripts" / "slurm" / "submit.sh"

STUB = """#!/bin/sh
# records each call, one argument per line, calls separated by a line '--call--'
{ for a in "$@"; do printf '%s\\n' "$a"; done; echo --call--; } >> "$SBATCH_LOG"
n=$(grep -c -- --call-- "$SBATCH_LOG")
echo "$((1000 + n))"
"""


@pytest.fixture()
def env(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    stub = bindir / "sbatch"
    stub.write_text(STUB)
    stub.chmod(stub.stat().st_mode | stat.S_IEXEC)
    fake = bindir / "mieb-eval"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    e = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}", SBATCH_LOG=str(tmp_path / "calls"))
    e.pop("MIEB_BIN", None)
    return tmp_path, e


def submit(env, *args):
    tmp, e = env
    r = subprocess.run(["bash", str(SUBMIT), "--task-data", tmp / "td", "--embeddings", tmp / "emb",
                        "--output-folder", tmp / "out", *map(str, args)], env=e, capture_output=True, text=True,
                       timeout=60)
    calls = []
    if (tmp / "calls").exists():
        calls = [c.strip("\n").split("\n") for c in (tmp / "calls").read_text().split("--call--\n") if c.strip()]
    return r, calls


def test_throttle_cpus_and_merge_off_gpus(env):
    r, calls = submit(env, "--num-shards", 3, "--corpus-parts", 2, "--max-parallel", 2, "--cpus-per-task", 8,
                      "--sbatch", "--partition=gpu", "--sbatch", "--gres=gpu:a100:1", "--sbatch", "--time=04:00:00",
                      "--sbatch", "--account=proj", "--merge-sbatch", "--partition=cpu", "-b", "MIEB(lite)")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["array_job=1001", "merge_job=1002"]
    array, merge = calls
    assert "--array=0-5%2" in array
    assert "--cpus-per-task=8" in array
    assert {"--partition=gpu", "--gres=gpu:a100:1", "--time=04:00:00", "--account=proj"} <= set(array)
    # the merge job: the time limit and account, its own partition, nothing that asks for a GPU
    assert {"--time=04:00:00", "--account=proj", "--partition=cpu"} <= set(merge)
    assert not [a for a in merge if a.startswith(("--gres", "--gpus", "--partition=gpu", "--cpus-per-task"))]
    assert "--dependency=afterok:1001" in merge
    assert merge[-2:] == ["-b", "MIEB(lite)"]


def test_defaults_unthrottled_and_one_part_has_no_merge(env):
    r, calls = submit(env, "--num-shards", 4, "-t", "DTD", "CUB200I2IRetrieval")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["array_job=1001", "merge_job=none"]
    (array,) = calls
    assert "--array=0-3" in array and not [a for a in array if a.startswith("--cpus-per-task")]


@pytest.mark.parametrize("bad", [["--max-parallel", "0"], ["--max-parallel", "x"], ["--cpus-per-task", "-2"]])
def test_bad_values_are_usage_errors(env, bad):
    r, calls = submit(env, *bad, "-b", "MIEB(lite)")
    assert r.returncode == 2 and calls == [], r.stderr


def test_elements_pass_their_cpus_as_threads(env):
    """An element runs `mieb-eval run ... --threads <its CPUs>` with its shard and corpus part."""
    tmp, e = env
    args_file = tmp / "args"
    fake = tmp / "bin" / "mieb-eval"
    fake.write_text(f"#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > {args_file}\nexit 0\n")
    e = dict(e, MIEB_TASK_DATA=str(tmp / "td"), MIEB_EMBEDDINGS=str(tmp / "emb"), MIEB_OUTPUT=str(tmp / "out"),
             MIEB_NUM_SHARDS="3", MIEB_CORPUS_PARTS="2", MIEB_BIN=str(fake), SLURM_ARRAY_TASK_ID="3",
             SLURM_ARRAY_JOB_ID="7", SLURM_JOB_ID="9", SLURM_CPUS_PER_TASK="8")
    r = subprocess.run(["bash", str(SRC / "scripts" / "slurm" / "mieb-array.sbatch"), "-b", "MIEB(lite)"], env=e,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    got = args_file.read_text().split("\n")
    pairs = {got[i]: got[i + 1] for i in range(len(got) - 1) if got[i].startswith("--")}
    assert pairs["--threads"] == "8"
    assert pairs["--shard-index"] == "1" and pairs["--num-shards"] == "3"  # element 3 = shard 1, part 1
    assert pairs["--corpus-part"] == "1" and pairs["--corpus-parts"] == "2"
