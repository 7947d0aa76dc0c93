"""mieb_run (include/mieb.h), the C API's `mieb-eval run` over folders, called through ctypes:
the same result files, results folder and closing summary as the program, resume, a task with a
missing input reported while the others are scored, bad requests refused with nothing written,
and a stop."""
import ctypes
import json
import shutil
import subprocess
from pathlib import Path

import pytest

import mieb_eval
from mieb_eval import _lib
from mieb_eval._run import _strings

from conftest import RUN_TASKS, untimed_results

INVALID_ARG, NOT_FOUND, INTERRUPTED = 1, 13, 12


def mieb_run(engine, run_suite, out, tasks=RUN_TASKS, benchmarks=(), overwrite=None, similarity=-1, embeddings=None,
             shard=(0, 0)):
    """(status, results folder, summary, the error message) of one mieb_run call."""
    t, nt = _strings(list(tasks))
    b, nb = _strings(list(benchmarks))
    rq = _lib.RunRequest(task_data=str(run_suite / "task-data").encode(),
                         embeddings=str(embeddings or run_suite / "embeddings").encode(),
                         output_folder=str(out).encode(),
                         tasks=t, n_tasks=nt, benchmarks=b, n_benchmarks=nb, shard_index=shard[0],
                         num_shards=shard[1], overwrite_strategy=overwrite.encode() if overwrite else None,
                         similarity=similarity)
    folder, summary = ctypes.c_void_p(), ctypes.c_void_p()
    try:
        engine.call(_lib.LIB.mieb_run, ctypes.byref(rq), ctypes.byref(folder), ctypes.byref(summary))
        status, message = 0, ""
    except mieb_eval.MiebError as e:
        status, message = e.status, str(e)
    except KeyboardInterrupt as e:  # an interrupted call (12) is raised as Python's own
        status, message = INTERRUPTED, str(e)
    got = [ctypes.string_at(p.value).decode() if p.value else None for p in (folder, summary)]
    for p in (folder, summary):
        _lib.LIB.mieb_free(p)
    return status, got[0], json.loads(got[1]) if got[1] else None, message


def test_mieb_run_writes_what_the_program_writes(engine, run_suite, tmp_path):
    prog = subprocess.run([str(_lib.program_path()), "run", "--task-data", str(run_suite / "task-data"), "--embeddings",
                           str(run_suite / "embeddings"), "-t", *RUN_TASKS, "--output-folder", str(tmp_path / "prog"),
                           "--device", "cpu", "--progress", "off", "-q"], capture_output=True, text=True)
    assert prog.returncode == 0, prog.stderr
    status, folder, summary, msg = mieb_run(engine, run_suite, tmp_path / "api")
    assert status == 0, msg
    want = prog.stdout.strip().splitlines()[-1].replace(str(tmp_path / "prog"), str(tmp_path / "api"))
    assert folder == want
    assert untimed_results(tmp_path / "api" / folder.split("/api/", 1)[1]) == untimed_results(
        tmp_path / "prog" / folder.split("/api/", 1)[1])
    assert {k: summary[k] for k in ("scored", "skipped", "failed")} == {"scored": 3, "skipped": 0, "failed": 0}
    assert [t["task"] for t in summary["tasks"]] == RUN_TASKS and summary["results"] == folder
    for t in summary["tasks"]:
        res = json.loads((tmp_path / "api" / folder.split("/api/", 1)[1] / f"{t['task']}.json").read_text())
        main = res["scores"]["test"][0]["main_score"] if "test" in res["scores"] else None
        assert t["outcome"] == "scored" and (main is None or abs(t["main_score"] - main) < 1e-12)
    assert (Path(folder) / "model_meta.json").exists()
    manifests = list((Path(folder) / ".mieb-eval").glob("run-*.json"))
    assert len(manifests) == 1 and json.loads(manifests[0].read_text())["summary"]["scored"] == 3


def test_mieb_run_resumes(engine, run_suite, tmp_path):
    status, folder, _, msg = mieb_run(engine, run_suite, tmp_path / "out")
    assert status == 0, msg
    before = json.loads((Path(folder) / "BLINKIT2IRetrieval.json").read_text())
    (Path(folder) / "CIFAR10.json").unlink()
    status, _, summary, msg = mieb_run(engine, run_suite, tmp_path / "out")
    assert status == 0, msg
    assert {t["task"]: t["outcome"] for t in summary["tasks"]} == {
        "BLINKIT2IRetrieval": "skipped", "CIFAR10": "scored", "STS13VisualSTS": "skipped"}
    assert json.loads((Path(folder) / "BLINKIT2IRetrieval.json").read_text()) == before
    status, _, summary, msg = mieb_run(engine, run_suite, tmp_path / "out", overwrite="always")
    assert status == 0 and summary["scored"] == 3, msg


def test_a_task_with_a_missing_role_fails_alone(engine, run_suite, tmp_path):
    emb = tmp_path / "embeddings"
    shutil.copytree(run_suite / "embeddings", emb)
    gone = sorted((emb / "CIFAR10").rglob("*.h5"))[0]
    gone.unlink()
    status, folder, summary, msg = mieb_run(engine, run_suite, tmp_path / "out", embeddings=emb)
    assert status == 0, msg
    outcome = {t["task"]: t for t in summary["tasks"]}
    assert outcome["CIFAR10"]["outcome"] == "failed" and gone.name in outcome["CIFAR10"]["error"], outcome
    assert summary["scored"] == 2 and summary["failed"] == 1
    assert not (Path(folder) / "CIFAR10.json").exists()


@pytest.mark.parametrize("kw, words", [
    (dict(tasks=[]), "needs tasks or benchmarks"),
    (dict(tasks=["NoSuchTask"]), "NoSuchTask"),
    (dict(overwrite="sometimes"), "sometimes"),
    (dict(shard=(2, 2)), "shard 2 of 2"),
    (dict(similarity=7), "similarity 7"),
])
def test_bad_requests_are_refused_and_write_nothing(engine, run_suite, tmp_path, kw, words):
    status, folder, summary, msg = mieb_run(engine, run_suite, tmp_path / "out", **kw)
    assert status == INVALID_ARG and words in msg, (status, msg)
    assert folder is None and summary is None
    if "similarity" not in kw:  # the similarity is checked once model_meta.json is read, before any task
        assert not (tmp_path / "out").exists()
    assert not list((tmp_path).rglob("*.json")) or "similarity" in kw
    assert not list(tmp_path.rglob("CIFAR10.json"))


def test_missing_embeddings_folder(engine, run_suite, tmp_path):
    status, folder, _, msg = mieb_run(engine, run_suite, tmp_path / "out", embeddings=tmp_path / "nowhere")
    assert status == NOT_FOUND and "model_meta.json" in msg, (status, msg)
    assert folder is None and not (tmp_path / "out").exists()


def test_a_stop_asked_before_the_call_stops_it(engine, run_suite, tmp_path):
    _lib.LIB.mieb_engine_stop(engine._handle)
    status, folder, _, msg = mieb_run(engine, run_suite, tmp_path / "out")
    assert status == INTERRUPTED and folder is None, (status, msg)
    assert not list(tmp_path.rglob("*.json"))
    status, _, summary, msg = mieb_run(engine, run_suite, tmp_path / "out")  # the next call runs
    assert status == 0 and summary["scored"] == 3, msg
