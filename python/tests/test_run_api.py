"""mieb_run (include/mieb.h), the C API's `mieb-eval run` over folders, called through ctypes:
the same result files, results folder and closing summary as the program, every option by its
name (bad names and values refused at once), resume, a task with a missing input reported while
the others are scored, bad requests refused with nothing written, and a stop."""
import ctypes
import json
import shutil
import subprocess
from pathlib import Path

import pytest

import mieb_eval
from mieb_eval import _lib

from conftest import RUN_TASKS, untimed_results

INVALID_ARG, NOT_FOUND, INTERRUPTED = 1, 13, 12


def request(pairs) -> ctypes.c_void_p:
    """A mieb_run_request with these (option, value) pairs set in order; a refused one raises."""
    rq = ctypes.c_void_p()
    assert _lib.LIB.mieb_run_request_new(ctypes.byref(rq)) == 0
    for name, value in pairs:
        status = _lib.LIB.mieb_run_request_set(rq, name.encode(), str(value).encode())
        if status:
            message = _lib.LIB.mieb_error_message().decode()
            _lib.LIB.mieb_run_request_free(rq)
            raise mieb_eval.InvalidArgument(message, status)
    return rq


def mieb_run(engine, run_suite, out, tasks=RUN_TASKS, benchmarks=(), embeddings=None, **options):
    """(status, results folder, summary, the error message) of one mieb_run call; options are
    further (name, value) settings by their C names, lists as lists."""
    pairs = [("task-data", run_suite / "task-data"), ("embeddings", embeddings or run_suite / "embeddings"),
             ("output-folder", out), *(("tasks", t) for t in tasks), *(("benchmark", b) for b in benchmarks)]
    for name, value in options.items():
        pairs += [(name.replace("_", "-"), v) for v in (value if isinstance(value, list) else [value])]
    rq = request(pairs)
    folder, summary = ctypes.c_void_p(), ctypes.c_void_p()
    try:
        engine.call(_lib.LIB.mieb_run, rq, ctypes.byref(folder), ctypes.byref(summary))
        status, message = 0, ""
    except mieb_eval.MiebError as e:
        status, message = e.status, str(e)
    except KeyboardInterrupt as e:  # an interrupted call (12) is raised as Python's own
        status, message = INTERRUPTED, str(e)
    finally:
        _lib.LIB.mieb_run_request_free(rq)
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
    status, _, summary, msg = mieb_run(engine, run_suite, tmp_path / "out", overwrite_strategy="always")
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
    (dict(tasks=[]), "name tasks with -t, a benchmark with -b, or task types"),
    (dict(tasks=["NoSuchTask"]), "NoSuchTask"),
    (dict(shard_index=2, num_shards=2), "--shard-index 2 out of range"),
    (dict(num_shards=2), "--num-shards needs --shard-index"),
    (dict(corpus_parts=2, corpus_part=0), "go together"),
    (dict(model="mieb-test/other"), "not mieb-test/other"),
    (dict(precision="tf32"), "needs the CUDA backend"),
])
def test_bad_requests_are_refused_and_write_nothing(engine, run_suite, tmp_path, kw, words):
    status, folder, summary, msg = mieb_run(engine, run_suite, tmp_path / "out", **kw)
    assert status == INVALID_ARG and words in msg, (status, msg)
    assert folder is None and summary is None
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name, value, words", [
    ("no-such-option", "1", "no run option 'no-such-option'"),
    ("overwrite-strategy", "sometimes", "one of always, never, only-missing"),
    ("similarity", "euclidean", "one of cosine, dot, MaxSim"),
    ("shard-index", "-1", "a whole number from 0"),
    ("num-shards", "2x", "a whole number from 1"),
    ("corpus-parts", "100000", "to 99999"),
    ("kmeans", "Full", "one of minibatch, full"),
    ("tasks", "", "an empty value"),
])
def test_a_bad_option_name_or_value_is_refused_when_set(name, value, words):
    with pytest.raises(mieb_eval.InvalidArgument, match=words):
        request([(name, value)])


def test_every_option_of_the_program_reaches_the_run(engine, run_suite, tmp_path):
    """Corpus parts, precision, a similarity override, a per-query folder and the k-means and
    probe modes, set by name: the files equal the program's with the same options."""
    opts = dict(similarity="dot", per_query=tmp_path / "pq-{}", kmeans="full", probe_device="cpu",
                precision="fp32", corpus_parts=2, corpus_part=0, partials_dir=tmp_path / "parts-{}",
                overwrite_strategy="always")
    flags = []
    for name, value in opts.items():
        flags += [f"--{name.replace('_', '-')}", str(value).format("prog")]
    prog = subprocess.run([str(_lib.program_path()), "run", "--task-data", str(run_suite / "task-data"), "--embeddings",
                           str(run_suite / "embeddings"), "-t", *RUN_TASKS, "--output-folder", str(tmp_path / "prog"),
                           "--device", "cpu", "--progress", "off", "-q", *flags], capture_output=True, text=True)
    assert prog.returncode == 0, prog.stderr
    status, folder, summary, msg = mieb_run(engine, run_suite, tmp_path / "api",
                                            **{k: str(v).format("api") for k, v in opts.items()})
    assert status == 0, msg
    assert [t["reason"] for t in summary["tasks"] if t["task"] == "BLINKIT2IRetrieval"] == ["corpus part"]

    def files(root):
        return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
                and p.suffix != ".json"}
    # the corpus part's partial files and the per-query files: byte for byte
    for kind in ("parts", "pq"):
        api, ref = files(tmp_path / f"{kind}-api"), files(tmp_path / f"{kind}-prog")
        assert api and api.keys() == ref.keys(), (sorted(api), sorted(ref))
        if kind == "pq":
            assert api == ref
    rdir = Path(folder)
    assert untimed_results(rdir) == untimed_results(tmp_path / "prog" / rdir.relative_to(tmp_path / "api"))
    assert sorted(p.name for p in rdir.glob("*.json")) == ["CIFAR10.json", "STS13VisualSTS.json", "model_meta.json"]


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
