"""`mieb-eval run --shard-index I --num-shards K`: the final task list (after -t/-b
resolution, in its order) is split deterministically by each task's cost
(tests/unit/test_task_shards.c checks the split itself). With K=3
the three shards' result files together must be exactly a single run's (same task set, same
"scores"), no task may be scored by two shards, and bad I/K must be a usage error (exit 2)."""
import json
import subprocess

import pytest

from helpers.mieb_tools import build_dir

# one or more tasks of each family, in a deliberately unsorted order
TASKS = ["Winoground", "CIRRIT2IRetrieval", "DTD", "ImageNetDog15Clustering", "DTDZeroShot",
         "STS13VisualSTS", "CVBenchCount", "VidoreTatdqaRetrieval"]


def mieb(*args):
    return subprocess.run([str(build_dir() / "mieb-eval"), *map(str, args)], capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    out = tmp_path_factory.mktemp("shards") / "s"
    r = mieb("synth", "--out", out, "--tasks", ",".join(TASKS), "--scale", 0.01)
    assert r.returncode == 0, r.stderr
    return str(out / "task-data"), str(out / "embeddings"), out.parent


def run(suite, out, *extra):
    td, ed, _ = suite
    r = mieb("run", "--task-data", td, "--embeddings", ed, "--output-folder", out, "--device", "cpu",
             "--progress", "off", *extra)
    return r


def results(out):
    """TaskName -> its result's "scores", from every <TaskName>.json (model_meta.json aside)."""
    files = [p for p in out.glob("results/*/*/*.json") if p.name != "model_meta.json"]
    return {p.stem: json.loads(p.read_text())["scores"] for p in files}


def check_union(suite, tag, selection, expected_order):
    base = suite[2] / f"{tag}-single"
    r = run(suite, base, *selection)
    assert r.returncode == 0, r.stderr
    single = results(base)
    assert sorted(single) == sorted(expected_order)
    seen = {}
    K = 3
    for i in range(K):
        out = suite[2] / f"{tag}-shard{i}"
        r = run(suite, out, *selection, "--shard-index", i, "--num-shards", K)
        assert r.returncode == 0, r.stderr
        got = results(out)
        # a share of the final list (which share is the cost split's: tests/unit/test_task_shards.c)
        assert set(got) <= set(expected_order), (i, sorted(got))
        for name, scores in got.items():
            assert name not in seen, f"{name} scored by shards {seen[name]} and {i}"
            seen[name] = i
            assert scores == single[name], name
        # model_meta.json is written by every shard
        assert list(out.glob("results/*/*/model_meta.json"))
    assert sorted(seen) == sorted(single)


def test_tasks_union_equals_single_run(suite):
    check_union(suite, "t", ["-t", *TASKS], TASKS)


def test_benchmark_union_equals_single_run(suite):
    # -b scores only the benchmark's tasks whose inputs are present, in mteb's benchmark order;
    # sharding applies to that final list (absent tasks are skipped before the split)
    r = mieb("list-tasks", "-b", "MIEB(lite)", "--json")
    assert r.returncode == 0, r.stderr
    order = [t["name"] for t in json.loads(r.stdout) if t["name"] in TASKS]
    assert len(order) >= 4
    check_union(suite, "b", ["-b", "MIEB(lite)"], order)


def test_single_shard_is_whole_run(suite):
    out = suite[2] / "k1"
    r = run(suite, out, "-t", *TASKS[:2], "--shard-index", 0, "--num-shards", 1)
    assert r.returncode == 0, r.stderr
    assert sorted(results(out)) == sorted(TASKS[:2])


def test_more_shards_than_tasks(suite):
    out = suite[2] / "k5"
    r = run(suite, out, "-t", *TASKS[:2], "--shard-index", 4, "--num-shards", 5)
    assert r.returncode == 0, r.stderr
    assert results(out) == {}


@pytest.mark.parametrize("args", [
    ["--shard-index", 3, "--num-shards", 3],
    ["--shard-index", 5, "--num-shards", 3],
    ["--shard-index", -1, "--num-shards", 3],
    ["--shard-index", 0, "--num-shards", 0],
    ["--shard-index", 0, "--num-shards", -2],
    ["--shard-index", "x", "--num-shards", 3],
    ["--shard-index", 0, "--num-shards", "3x"],
    ["--shard-index", 0],
    ["--num-shards", 2],
    ["--num-shards"],
])
def test_bad_shard_arguments(suite, args):
    out = suite[2] / "bad"
    r = run(suite, out, "-t", TASKS[0], *args)
    assert r.returncode == 2, (args, r.returncode, r.stderr)
    assert "usage:" in r.stderr
    assert not list(out.glob("results/*/*/*.json"))
