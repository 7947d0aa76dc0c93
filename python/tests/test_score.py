"""mieb_eval.score on arrays against `mieb-eval run` on the same embeddings as files: every
family's result file equal, key for key, but for the times."""
import json
import subprocess
from pathlib import Path

import h5py
import numpy as np
import pytest

import mieb_eval
from mieb_eval import _lib

TASKS = ["BLINKIT2IRetrieval", "WITT2IRetrieval", "CIFAR10", "CIFAR10ZeroShot", "ImageNetDog15Clustering",
         "STS13VisualSTS", "AROFlickrOrder", "BLINKIT2IMultiChoice", "VOC2007"]
TIMES = ("evaluation_time", "date", "evaluation_phases")


def program(*args, **kw):
    return subprocess.run([str(_lib.program_path()), *map(str, args)], check=True, capture_output=True, **kw)


def read_roles(emb: Path, task: str):
    """{(split, subset, role): array or dict} from the task's role files (one file each)."""
    roles = {}
    for f in sorted((emb / task).glob("*/*/*.h5")):
        with h5py.File(f, "r") as h:
            x = h["embeddings"][()]
            value = {"embeddings": x}
            if "offsets" in h:
                value["offsets"] = h["offsets"][()]
            if "row_index" in h:
                value["row_index"] = h["row_index"][()]
            bf16 = h["embeddings"].attrs.get("dtype", b"") in (b"bfloat16", "bfloat16")
        roles[(f.parent.parent.name, f.parent.name, f.stem)] = value
    return roles, bf16


def without_times(doc):
    return {k: v for k, v in doc.items() if k not in TIMES}


@pytest.fixture(scope="module", params=["f32", "f16", "bf16"])
def suite(request, tmp_path_factory):
    root = tmp_path_factory.mktemp(f"suite-{request.param}")
    program("synth", "--out", root, "--tasks", *TASKS, "--scale", "0.02", "--dtype", request.param)
    program("run", "--task-data", root / "task-data", "--embeddings", root / "embeddings", "-t", *TASKS,
            "--output-folder", root / "out", "--device", "cpu")
    meta = json.loads((root / "embeddings" / "model_meta.json").read_text())
    results = next((root / "out" / "results").glob("*/*"))
    return root, results, meta.get("similarity_fn_name") or "cosine"


@pytest.mark.parametrize("task", TASKS)
def test_score_equals_run(suite, task, engine, tmp_path):
    root, results, sim = suite
    roles, bf16 = read_roles(root / "embeddings", task)
    got = mieb_eval.score(task, roles, root / "task-data", similarity=sim, output_folder=tmp_path, bfloat16=bf16,
                          as_mteb=False, engine=engine)
    want = json.loads((results / f"{task}.json").read_text())
    assert without_times(got) == without_times(want)
    # the file it wrote is the file run writes, byte for byte but for the times
    assert without_times(json.loads((tmp_path / f"{task}.json").read_text())) == without_times(want)


def test_score_names_a_missing_role(suite, engine, tmp_path):
    root, _, sim = suite
    roles, bf16 = read_roles(root / "embeddings", "CIFAR10")
    roles = {k: v for k, v in roles.items() if k[2] != "eval"}
    with pytest.raises(mieb_eval.NotFound, match="no array for role eval of CIFAR10"):
        mieb_eval.score("CIFAR10", roles, root / "task-data", similarity=sim, bfloat16=bf16, engine=engine)
    assert not (tmp_path / "CIFAR10.json").exists()


def test_score_refuses_rows_that_do_not_fit_the_task_data(suite, engine, tmp_path):
    root, _, sim = suite
    roles, bf16 = read_roles(root / "embeddings", "BLINKIT2IRetrieval")
    key = next(k for k in roles if k[2] == "corpus")
    roles[key] = {"embeddings": roles[key]["embeddings"][:-1]}
    with pytest.raises(mieb_eval.BadData, match="corpus embeddings but the task data has"):
        mieb_eval.score("BLINKIT2IRetrieval", roles, root / "task-data", similarity=sim, bfloat16=bf16,
                        output_folder=tmp_path, engine=engine)
    assert not list(tmp_path.glob("*.json"))


def test_score_of_a_task_with_one_split_takes_roles_by_name(suite, engine):
    root, results, sim = suite
    roles, bf16 = read_roles(root / "embeddings", "CIFAR10")
    by_name = {k[2]: v for k, v in roles.items()}
    got = mieb_eval.score("CIFAR10", by_name, root / "task-data", similarity=sim, bfloat16=bf16, as_mteb=False,
                          engine=engine)
    assert without_times(got) == without_times(json.loads((results / "CIFAR10.json").read_text()))


def test_score_reports_each_subset(suite, engine):
    root, _, sim = suite
    roles, bf16 = read_roles(root / "embeddings", "WITT2IRetrieval")
    seen = []
    mieb_eval.score("WITT2IRetrieval", roles, root / "task-data", similarity=sim, bfloat16=bf16, as_mteb=False,
                    engine=engine, progress=lambda d, t: seen.append((d, t)))
    n = len({(k[0], k[1]) for k in roles})
    assert seen == [(i, n) for i in range(1, n + 1)] and n > 1
