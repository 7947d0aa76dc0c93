"""mieb_eval.run: `mieb-eval run` from Python, its results and summaries returned, in this
process through the library (mieb_run) for every option, with the program's own files as the
reference; no program is started."""
import json
import logging
import subprocess

import pytest

import mieb_eval
from mieb_eval import _lib

from conftest import RESULT_TIMES, RUN_TASKS, untimed_results


@pytest.fixture(scope="module")
def program_files(run_suite, tmp_path_factory):
    """The program's own run: its result files less their times."""
    out = tmp_path_factory.mktemp("program")
    res = subprocess.run([str(_lib.program_path()), "run", "--task-data", str(run_suite / "task-data"),
                          "--embeddings", str(run_suite / "embeddings"), "-t", *RUN_TASKS, "--output-folder", str(out),
                          "--device", "cpu", "--progress", "off", "-q"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return untimed_results(res.stdout.strip().splitlines()[-1])


def _run(run_suite, out, **kw):
    return mieb_eval.run(task_data=run_suite / "task-data", embeddings=run_suite / "embeddings", tasks=RUN_TASKS,
                         output_folder=out, device="cpu", **kw)


@pytest.fixture
def no_program(monkeypatch):
    """Starting any process fails the test: run, summary and report are the library's."""
    def refuse(*args, **kwargs):
        raise AssertionError(f"a process was started: {args[0] if args else kwargs}")
    monkeypatch.setattr(subprocess, "Popen", refuse)


@pytest.mark.parametrize("extra", [{}, {"precision": "fp32", "similarity": "cosine", "kmeans": "minibatch"}])
def test_run_returns_the_results_and_the_summaries(run_suite, program_files, tmp_path, extra, no_program):
    res = _run(run_suite, tmp_path / "out", progress=False, **extra)
    assert res.exit_status == 0
    assert sorted(res.results) == sorted(RUN_TASKS)
    assert untimed_results(res.results_dir) == program_files
    for t in RUN_TASKS:
        assert res.results[t] == json.loads((res.results_dir / f"{t}.json").read_text())
    # the leaderboard summary is `mieb-eval summary --json`'s, for the same folder
    assert res.summary and res.summary["models"][0]["path"] == str(res.results_dir)
    # the closing summary: every task scored
    assert res.outcomes["scored"] == 3 and [t["task"] for t in res.outcomes["tasks"]] == RUN_TASKS


def test_run_resumes_and_scores_only_what_is_missing(run_suite, tmp_path):
    out = tmp_path / "out"
    first = _run(run_suite, out, progress=False)
    (first.results_dir / "CIFAR10.json").unlink()
    again = _run(run_suite, out, progress=False, overwrite_strategy="only-missing")
    for t in RUN_TASKS:
        keep = {k: v for k, v in again.results[t].items() if k not in RESULT_TIMES}
        assert keep == {k: v for k, v in first.results[t].items() if k not in RESULT_TIMES}
    assert again.results["BLINKIT2IRetrieval"]["date"] == first.results["BLINKIT2IRetrieval"]["date"]
    assert again.results["CIFAR10"]["date"] != first.results["CIFAR10"]["date"]
    assert {t["task"]: t["outcome"] for t in again.outcomes["tasks"]} == {
        "BLINKIT2IRetrieval": "skipped", "CIFAR10": "scored", "STS13VisualSTS": "skipped"}


def test_run_in_the_library_reports_progress_and_logs(run_suite, tmp_path, caplog):
    seen = []
    with caplog.at_level(logging.INFO, logger="mieb_eval"):
        res = _run(run_suite, tmp_path / "out", progress=lambda done, total: seen.append((done, total)))
    assert res.exit_status == 0
    assert seen and seen[-1][0] == seen[-1][1] and all(b == seen[-1][1] for _, b in seen), seen
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert any("scoring 3 task(s)" in r.getMessage() for r in caplog.records), [r.getMessage() for r in caplog.records]


def test_selection_options_narrow_the_run(run_suite, program_files, tmp_path):
    res = _run(run_suite, tmp_path / "out", progress=False, task_types=["ImageClassification"], mem_limit="512M",
               threads=1)
    assert sorted(res.results) == ["CIFAR10"] and res.outcomes["scored"] == 1
    assert untimed_results(res.results_dir) == {k: program_files[k] for k in ("CIFAR10.json", "model_meta.json")}
    res = _run(run_suite, tmp_path / "out2", progress=False, num_shards=3, shard_index=0)
    assert len(res.results) == 1


def test_a_narrowed_run_leaves_the_engine_as_it_was(run_suite, program_files, tmp_path):
    """run's selection keeps the splits it is asked for in views of the registry's tasks, never
    in the registry: the engine's next call, on the same registry, sees every split again."""
    with mieb_eval.Engine("cpu") as eng:
        res = _run(run_suite, tmp_path / "a", progress=False, engine=eng, eval_splits=["validation"])
        assert res.outcomes["scored"] == 0 and res.results == {} and res.summary == {}
        res = _run(run_suite, tmp_path / "b", progress=False, engine=eng)
        assert res.outcomes["scored"] == 3 and untimed_results(res.results_dir) == program_files


def test_a_stop_keeps_the_finished_tasks_and_a_second_call_resumes(run_suite, program_files, tmp_path):
    """A stop during the run (here asked from the progress callback, as Ctrl-C asks it) ends it
    with KeyboardInterrupt after the task in hand; the finished results stay and the next call
    scores only the rest."""
    with mieb_eval.Engine("cpu") as eng:
        stop = lambda done, total: _lib.LIB.mieb_engine_stop(eng._handle)  # noqa: E731
        with pytest.raises(KeyboardInterrupt):
            _run(run_suite, tmp_path / "out", progress=stop, engine=eng)
        folders = list((tmp_path / "out" / "results").glob("*/*"))
        assert len(folders) == 1
        done = sorted(p.name for p in folders[0].glob("*.json") if p.name != "model_meta.json")
        assert len(done) < len(RUN_TASKS)
        res = _run(run_suite, tmp_path / "out", progress=False, engine=eng)
    assert res.outcomes["skipped"] == len(done) and res.outcomes["scored"] == len(RUN_TASKS) - len(done)
    assert untimed_results(res.results_dir) == program_files


def test_a_failed_task_sets_the_exit_status(run_suite, tmp_path):
    import shutil

    emb = tmp_path / "embeddings"
    shutil.copytree(run_suite / "embeddings", emb)
    sorted((emb / "CIFAR10").rglob("*.h5"))[0].unlink()
    res = mieb_eval.run(task_data=run_suite / "task-data", embeddings=emb, tasks=RUN_TASKS,
                        output_folder=tmp_path / "out", device="cpu", progress=False)
    assert res.exit_status == 1 and sorted(res.results) == ["BLINKIT2IRetrieval", "STS13VisualSTS"]
    failed = [t for t in res.outcomes["tasks"] if t["outcome"] == "failed"]
    assert [t["task"] for t in failed] == ["CIFAR10"] and "eval" in failed[0]["error"]


def test_the_summary_is_the_programs(run_suite, tmp_path):
    res = _run(run_suite, tmp_path / "out", progress=False)
    want = tmp_path / "summary.json"
    subprocess.run([str(_lib.program_path()), "summary", str(res.results_dir), "--json", str(want)], check=True,
                   capture_output=True)
    assert res.summary == json.loads(want.read_text()) and res.summary


def test_corpus_parts_run_in_the_library(run_suite, tmp_path, no_program):
    """Options that once made run start the program (corpus parts, MaxSim's neighbours,
    precision) are the library's: part 0 of 2 writes the retrieval task's partials."""
    res = _run(run_suite, tmp_path / "out", progress=False, corpus_parts=2, corpus_part=0,
               partials_dir=tmp_path / "parts", precision="fp32")
    assert sorted(res.results) == ["CIFAR10", "STS13VisualSTS"]
    assert sorted(p.name for p in (tmp_path / "parts").rglob("*.h5")) == ["part-00000-of-00002.h5"]
    assert {t["task"]: t.get("reason") for t in res.outcomes["tasks"]}["BLINKIT2IRetrieval"] == "corpus part"


def test_bad_arguments_raise(run_suite, tmp_path):
    with pytest.raises(mieb_eval.InvalidArgument, match="no run option 'no-such-option'"):
        _run(run_suite, tmp_path / "out", no_such_option=3)
    with pytest.raises(TypeError, match="verbose=True"):  # a flag: logging is Python's own
        _run(run_suite, tmp_path / "out", verbose=True)
    with pytest.raises(mieb_eval.InvalidArgument, match="precision tf32 needs the CUDA backend"):
        _run(run_suite, tmp_path / "out", progress=False, precision="tf32")
    with pytest.raises(mieb_eval.InvalidArgument, match="one of cosine, dot, MaxSim"):
        _run(run_suite, tmp_path / "out", progress=False, similarity="euclidean")
    with pytest.raises(mieb_eval.InvalidArgument, match="NoSuchTask"):  # the library's
        mieb_eval.run(task_data=run_suite / "task-data", embeddings=run_suite / "embeddings", tasks=["NoSuchTask"],
                      output_folder=tmp_path / "out", device="cpu", progress=False)
    with pytest.raises(mieb_eval.InvalidArgument, match="not mieb-test/other"):
        _run(run_suite, tmp_path / "out", progress=False, model="mieb-test/other")
    with pytest.raises(ValueError, match="mem_limit"):
        _run(run_suite, tmp_path / "out", progress=False, mem_limit="lots")
    with pytest.raises(ValueError, match="not both"):
        mieb_eval.run(export=run_suite, task_data=run_suite / "task-data", output_folder=tmp_path / "out",
                      tasks=RUN_TASKS)
    assert not (tmp_path / "out").exists()
