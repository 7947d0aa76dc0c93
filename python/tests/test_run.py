"""mieb_eval.run: `mieb-eval run` from Python, its results and summary returned."""
import json
import subprocess

import pytest

import mieb_eval
from mieb_eval import _lib

TASKS = ["BLINKIT2IRetrieval", "CIFAR10", "STS13VisualSTS"]
TIMES = ("evaluation_time", "date", "evaluation_phases")


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    root = tmp_path_factory.mktemp("suite")
    subprocess.run([str(_lib.program_path()), "synth", "--out", str(root), "--tasks", *TASKS, "--scale", "0.02"],
                   check=True, capture_output=True)
    return root


def test_run_returns_the_results_and_the_summary(suite, tmp_path):
    res = mieb_eval.run(task_data=suite / "task-data", embeddings=suite / "embeddings", tasks=TASKS,
                        output_folder=tmp_path / "out", device="cpu", progress="off")
    assert res.exit_status == 0
    assert sorted(res.results) == sorted(TASKS)
    for t in TASKS:
        on_disk = json.loads((res.results_dir / f"{t}.json").read_text())
        assert res.results[t] == on_disk and on_disk["task_name"] == t
    # the summary is `mieb-eval summary --json`'s, for the same folder
    want = tmp_path / "summary.json"
    subprocess.run([str(_lib.program_path()), "summary", str(res.results_dir), "--json", str(want)], check=True,
                   capture_output=True)
    assert res.summary == json.loads(want.read_text()) and res.summary


def test_run_resumes_and_scores_only_what_is_missing(suite, tmp_path):
    out = tmp_path / "out"
    first = mieb_eval.run(task_data=suite / "task-data", embeddings=suite / "embeddings", tasks=TASKS,
                          output_folder=out, device="cpu", progress="off")
    (first.results_dir / "CIFAR10.json").unlink()
    again = mieb_eval.run(task_data=suite / "task-data", embeddings=suite / "embeddings", tasks=TASKS,
                          output_folder=out, device="cpu", progress="off", overwrite_strategy="only-missing")
    for t in TASKS:
        keep = {k: v for k, v in again.results[t].items() if k not in TIMES}
        assert keep == {k: v for k, v in first.results[t].items() if k not in TIMES}
    assert again.results["BLINKIT2IRetrieval"]["date"] == first.results["BLINKIT2IRetrieval"]["date"]
    assert again.results["CIFAR10"]["date"] != first.results["CIFAR10"]["date"]


def test_a_bad_option_raises(suite, tmp_path):
    with pytest.raises(mieb_eval.MiebError, match="exited with status 2"):
        mieb_eval.run(task_data=suite / "task-data", embeddings=suite / "embeddings", tasks=TASKS,
                      output_folder=tmp_path / "out", no_such_option=3)
    assert not (tmp_path / "out").exists()
