"""Results do not depend on the number of threads: one synthetic task of every family,
scored with --threads 1, 2 and 3, gives identical scores (the CPU backend splits work by
query tiles and doc ranges, the retrieval metrics split each tile's queries, the probe splits
experiments and GEMM rows). CUB200I2IRetrieval adds skip_first_result's sort."""
from __future__ import annotations

import json
import os
import subprocess

import pytest

BIN = os.path.join(os.environ.get("MIEB_BUILD_DIR", "build"), "mieb-eval")
TASKS = ["CIRRIT2IRetrieval", "CUB200I2IRetrieval", "BLINKIT2IMultiChoice", "CIFAR10", "VOC2007", "CIFAR10ZeroShot",
         "ImageNetDog15Clustering", "Winoground", "STS12VisualSTS"]


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("threads"))
    subprocess.run([BIN, "synth", "--out", d, "--seed", "3", "--scale", "0.15", "--dim", "32",
                    "--tasks", ",".join(TASKS)], check=True, capture_output=True)
    return d


def scores_with(suite, threads, out):
    p = subprocess.run([BIN, "run", "--task-data", os.path.join(suite, "task-data"), "--embeddings",
                        os.path.join(suite, "embeddings"), "-t", *TASKS, "--output-folder", out,
                        "--device", "cpu", "--threads", str(threads), "-q"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    res_dir = p.stdout.strip()
    return {t: json.load(open(os.path.join(res_dir, f"{t}.json")))["scores"] for t in TASKS}


def test_same_scores_for_any_thread_count(suite, tmp_path):
    one = scores_with(suite, 1, str(tmp_path / "t1"))
    for n in (2, 3):
        other = scores_with(suite, n, str(tmp_path / f"t{n}"))
        for t in TASKS:
            # json NaN != NaN: compare the serialised form
            assert json.dumps(other[t], sort_keys=True) == json.dumps(one[t], sort_keys=True), (t, n)
