"""`mieb-eval run --export DIR` (mieb-export's output folder: DIR/task-data and DIR/embeddings)
and the default --mem-limit on shared machines.

--export gives the same result files as --task-data DIR/task-data --embeddings DIR/embeddings;
with either of those it is refused; an export folder given to --task-data or --embeddings is
refused with a message that names --export. The default --mem-limit follows Slurm's allocation
and `-v` says so (the cgroup trees are covered by tests/unit/test_mem_default.c)."""
from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

BIN = os.path.join(os.environ.get("MIEB_BUILD_DIR", "build"), "mieb-eval")
TASKS = ["CIRRIT2IRetrieval", "CIFAR10ZeroShot", "Winoground", "STS12VisualSTS"]
VOLATILE = ("evaluation_time", "date", "evaluation_phases", "kg_co2_emissions")


@pytest.fixture(scope="module")
def export(tmp_path_factory):
    d = tmp_path_factory.mktemp("export")
    subprocess.run([BIN, "synth", "--out", str(d), "--seed", "3", "--scale", "0.05", "--dim", "16",
                    "--tasks", ",".join(TASKS)], check=True, capture_output=True)
    return d


def run(*args, env=None):
    return subprocess.run([BIN, "run", "-t", *TASKS, "--device", "cpu", "--progress", "off", *args],
                          capture_output=True, text=True, env=env, timeout=600)


def results(folder: str) -> dict[str, dict]:
    out = {}
    for p in sorted(Path(folder).rglob("*.json")):
        if ".mieb-eval" in p.parts:  # the run manifest: provenance, not a result
            continue
        d = json.loads(p.read_text())
        for k in VOLATILE:
            d.pop(k, None)
        out[str(p.relative_to(folder))] = d
    return out


def test_export_equals_the_two_options(export, tmp_path):
    a = run("--task-data", str(export / "task-data"), "--embeddings", str(export / "embeddings"),
            "--output-folder", str(tmp_path / "a"))
    b = run("--export", str(export), "--output-folder", str(tmp_path / "b"))
    assert a.returncode == 0 and b.returncode == 0, (a.stderr, b.stderr)
    ra, rb = results(str(tmp_path / "a")), results(str(tmp_path / "b"))
    assert len(ra) == len(TASKS) + 1 and ra == rb  # + model_meta.json
    assert b.stdout.strip() == a.stdout.strip().replace(str(tmp_path / "a"), str(tmp_path / "b"))


def test_export_with_either_option_is_refused(export, tmp_path):
    for extra in (["--task-data", str(export / "task-data")], ["--embeddings", str(export / "embeddings")]):
        r = run("--export", str(export), *extra, "--output-folder", str(tmp_path / "c"))
        assert r.returncode == 2 and "give one or the other" in r.stderr, r.stderr
    assert not (tmp_path / "c").exists()


def test_export_folder_given_as_task_data_names_export(export, tmp_path):
    for opt, other in (("--task-data", ["--embeddings", str(export / "embeddings")]),
                       ("--embeddings", ["--task-data", str(export / "task-data")])):
        r = run(opt, str(export), *other, "--output-folder", str(tmp_path / "d"))
        assert r.returncode == 2, r.stderr
        assert "holds task-data/ and embeddings/" in r.stderr and f"--export {export}" in r.stderr, r.stderr
    assert not (tmp_path / "d").exists()


def test_mem_limit_default_follows_slurm(export, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    r = run("--export", str(export), "--output-folder", str(tmp_path / "e"), "-v", env=dict(env, SLURM_MEM_PER_NODE="1"))
    assert r.returncode == 0, r.stderr
    m = re.search(r"--mem-limit default: (.*)", r.stderr)
    assert m and "SLURM_MEM_PER_NODE" in m.group(1) and m.group(1).startswith("0.00 GiB, half of the 0.00 GiB"), r.stderr
    r = run("--export", str(export), "--output-folder", str(tmp_path / "f"), "-v",
            env=dict(env, SLURM_MEM_PER_CPU="300", SLURM_CPUS_PER_TASK="2"))
    m = re.search(r"--mem-limit default: (.*)", r.stderr)
    assert r.returncode == 0 and m, r.stderr
    # the cgroup of this test may be tighter still; when Slurm's is the smallest, it is named
    if "Slurm" in m.group(1):
        assert "SLURM_MEM_PER_CPU x SLURM_CPUS_PER_TASK" in m.group(1) and m.group(1).startswith("0.29 GiB"), m.group(1)
    r = run("--export", str(export), "--output-folder", str(tmp_path / "g"), "-v", "--mem-limit", "64M", env=env)
    assert r.returncode == 0 and "--mem-limit default" not in r.stderr
    # half a megabyte streams these tiny tasks in smaller blocks: the same scores
    assert results(str(tmp_path / "e")) == results(str(tmp_path / "g"))
