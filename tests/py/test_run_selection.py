"""Task selection flags of `mieb-eval run`, named as in mteb's `mteb run`: --task-types
(with -t/-b, or alone over the registry), --eval-splits (only those splits are scored and
written; a task left without a split is skipped), -m/--model and --model-revision (must
match model_meta.json, else exit 2 and nothing written)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

BIN = os.path.join(os.environ.get("MIEB_BUILD_DIR", "build"), "mieb-eval")
TASKS = ["CIRRIT2IRetrieval", "CIFAR10ZeroShot", "Winoground", "STSBenchmarkMultilingualVisualSTS",
         "STS12VisualSTS"]


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("sel"))
    subprocess.run([BIN, "synth", "--out", d, "--seed", "5", "--scale", "0.05", "--dim", "16",
                    "--tasks", ",".join(TASKS)], check=True, capture_output=True)
    return d


def run(suite, out, *extra):
    return subprocess.run([BIN, "run", "--task-data", os.path.join(suite, "task-data"), "--embeddings",
                           os.path.join(suite, "embeddings"), "--output-folder", out, "--device", "cpu",
                           "--progress", "off", *extra], capture_output=True, text=True)


def written(p):
    d = p.stdout.strip()
    return sorted(f[:-5] for f in os.listdir(d) if f.endswith(".json") and f != "model_meta.json")


def test_task_types_filters_named_tasks(suite, tmp_path):
    p = run(suite, str(tmp_path / "a"), "-t", *TASKS, "--task-types", "Any2AnyRetrieval", "Compositionality")
    assert p.returncode == 0, p.stderr
    assert written(p) == ["CIRRIT2IRetrieval", "Winoground"]


def test_task_types_alone_takes_every_present_task_of_the_types(suite, tmp_path):
    p = run(suite, str(tmp_path / "b"), "--task-types", "VisualSTS(multi)", "ZeroShotClassification")
    assert p.returncode == 0, p.stderr
    # present task data of those types only (synth wrote two of the registry's many; the
    # aggregate VisualSTS-b-Multilingual is computed from STSBenchmarkMultilingualVisualSTS's data)
    assert written(p) == ["CIFAR10ZeroShot", "STSBenchmarkMultilingualVisualSTS", "VisualSTS-b-Multilingual"]
    assert "skipping" in p.stderr  # the absent ones are named


def test_eval_splits_scores_only_those_splits(suite, tmp_path):
    full = run(suite, str(tmp_path / "c"), "-t", "STSBenchmarkMultilingualVisualSTS")
    part = run(suite, str(tmp_path / "d"), "-t", "STSBenchmarkMultilingualVisualSTS", "STS12VisualSTS",
               "--eval-splits", "dev")
    assert full.returncode == 0 and part.returncode == 0, part.stderr
    f = json.load(open(os.path.join(full.stdout.strip(), "STSBenchmarkMultilingualVisualSTS.json")))["scores"]
    g = json.load(open(os.path.join(part.stdout.strip(), "STSBenchmarkMultilingualVisualSTS.json")))["scores"]
    assert sorted(f) == ["dev", "test"] and sorted(g) == ["dev"]
    assert g["dev"] == f["dev"]
    # STS12VisualSTS has only a test split: skipped, said so, nothing written
    assert written(part) == ["STSBenchmarkMultilingualVisualSTS"]
    assert "none of its splits" in part.stderr


def test_model_flags_must_match_model_meta(suite, tmp_path):
    meta = json.load(open(os.path.join(suite, "embeddings", "model_meta.json")))
    ok = run(suite, str(tmp_path / "e"), "-t", "Winoground", "-m", meta["name"], "--model-revision",
             meta["revision"])
    assert ok.returncode == 0, ok.stderr
    bad = run(suite, str(tmp_path / "f"), "-t", "Winoground", "-m", "someone/else")
    assert bad.returncode == 2
    assert "someone/else" in bad.stderr and "model_meta.json" in bad.stderr
    assert not os.path.exists(str(tmp_path / "f" / "results"))
    bad = run(suite, str(tmp_path / "g"), "-t", "Winoground", "--model-revision", "nope")
    assert bad.returncode == 2


def test_selection_flags_need_values(suite, tmp_path):
    for flag in ("--task-types", "--eval-splits"):
        p = run(suite, str(tmp_path / "h"), "-t", "Winoground", flag)
        assert p.returncode == 2 and "needs at least one value" in p.stderr


def test_model_meta_with_python_infinity_is_read(suite, tmp_path):
    """mteb writes model_meta.json with Python's json: max_tokens is often Infinity, which
    is not JSON; it must be read (and copied verbatim beside the results)."""
    src = os.path.join(suite, "embeddings")
    emb = tmp_path / "emb"
    emb.mkdir()
    for name in os.listdir(src):
        if name != "model_meta.json":
            os.symlink(os.path.join(src, name), emb / name)
    meta = json.load(open(os.path.join(src, "model_meta.json")))
    text = json.dumps({**meta, "max_tokens": float("inf"), "n_parameters": float("nan")})
    assert "Infinity" in text and "NaN" in text
    (emb / "model_meta.json").write_text(text)
    p = subprocess.run([BIN, "run", "--task-data", os.path.join(suite, "task-data"), "--embeddings", str(emb),
                        "-t", "Winoground", "--output-folder", str(tmp_path / "o"), "--device", "cpu",
                        "--progress", "off"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    res = p.stdout.strip()
    assert open(os.path.join(res, "model_meta.json")).read() == text
    assert os.path.exists(os.path.join(res, "Winoground.json"))


def test_probe_device_values(suite, tmp_path):
    """--probe-device takes auto or cpu; anything else is a usage error (exit 2, nothing
    written). Which path runs is checked where a backend runs logistic-regression batches: on the mock
    CUDA runtime (tests/gpu/mock/run_mock.sh) and on a GPU (tests/gpu/run.sh)."""
    bad = run(suite, str(tmp_path / "bad"), "-t", "Winoground", "--probe-device", "gpu")
    assert bad.returncode == 2 and "bad --probe-device 'gpu'" in bad.stderr
    assert not os.path.exists(str(tmp_path / "bad" / "results"))
    outs = []
    for v in ("auto", "cpu"):
        p = run(suite, str(tmp_path / v), "-t", "Winoground", "--probe-device", v)
        assert p.returncode == 0, p.stderr
        outs.append(json.load(open(os.path.join(p.stdout.strip(), "Winoground.json")))["scores"])
    assert outs[0] == outs[1]


@pytest.mark.parametrize("value", ["x", "-3", "2.5", "", "5000"])
def test_threads_must_be_a_count(suite, tmp_path, value):
    """--threads takes 0 (the CPUs this process may use) or a count; atoi used to read
    "x" and "-3" as all cores. merge reads it the same way."""
    bad = run(suite, str(tmp_path / "bad"), "-t", "Winoground", "--threads", value)
    assert bad.returncode == 2 and f"bad --threads '{value}'" in bad.stderr, bad.stderr
    assert not os.path.exists(str(tmp_path / "bad" / "results"))
    m = subprocess.run([BIN, "merge", "--partials-dir", str(tmp_path), "--task-data", str(tmp_path),
                        "--embeddings", str(tmp_path), "--output-folder", str(tmp_path / "m"),
                        "-t", "CUB200I2IRetrieval", "--threads", value], capture_output=True, text=True)
    assert m.returncode == 2 and f"'{value}'" in m.stderr and "--threads" in m.stderr, m.stderr


def test_threads_zero_is_the_affinity_mask(suite, tmp_path):
    """--threads 0 under taskset (as a Slurm step or docker --cpuset-cpus confines a job): the
    backend takes one thread, not one per online CPU, and the scores are those of --threads 1."""
    if shutil.which("taskset") is None:
        pytest.skip("taskset not installed")
    p = subprocess.run(["taskset", "-c", "0", BIN, "run", "--task-data", os.path.join(suite, "task-data"),
                        "--embeddings", os.path.join(suite, "embeddings"), "-t", "Winoground",
                        "--output-folder", str(tmp_path / "z"), "--threads", "0", "--device", "cpu", "-v",
                        "--progress", "off"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "CPU backend: 1 thread(s) (the CPUs this process may use)" in p.stderr, p.stderr
    one = run(suite, str(tmp_path / "one"), "-t", "Winoground", "--threads", "1")
    assert one.returncode == 0, one.stderr
    a = json.load(open(os.path.join(p.stdout.strip(), "Winoground.json")))["scores"]
    b = json.load(open(os.path.join(one.stdout.strip(), "Winoground.json")))["scores"]
    assert a == b
