"""From a model to scores under faults: tools/mieb-eval-model with an encoder that misbehaves.

helpers/fault_encoders.py's FaultyEncoder is the hash encoder of helpers/mteb_inmem.py with one
fault at one encode call, chosen by the environment; the same command without it is the same
model, fixed. Two in-memory tasks (nothing is downloaded): InMemT2IRetrieval (calls 1 and 2:
queries, corpus) and InMemVisualSTS (calls 3 and 4: sentence1, sentence2). Each fault gets
either a clear refusal (exit 1; the message names the model, task, role and call, the first
bad row and column, and that rerunning re-encodes the role; nothing wrong kept in the export)
after which the same command without the fault re-encodes only what was refused and ends with
the clean run's result files, or (an output right in another form) the clean run's result
files at once. Also: Ctrl-C and SIGKILL in the middle of a slow call, another model resumed
into the folder, a full disk while writing, two exports into one folder at once, the closing
line and files when nothing could be scored or the summary or report fails, and the
fingerprint that tells models of one's own apart.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

from conftest import TIME_SCALE
from helpers.mieb_tools import build_dir
from helpers.model_runs import TOOL, model_env, result_files, run_model

TASKS = ["helpers.mteb_inmem:InMemT2IRetrieval", "helpers.mteb_inmem:InMemVisualSTS"]
MODEL = "mieb-test/hash-encoder @ 1"
ROLES = {1: ("InMemT2IRetrieval", "test/default/queries"), 2: ("InMemT2IRetrieval", "test/default/corpus"),
         3: ("InMemVisualSTS", "test/default/sentence1"), 4: ("InMemVisualSTS", "test/default/sentence2")}
ROWS = {1: 59, 2: 366, 3: 120, 4: 120}


def _cmd(out: Path, *extra: str, model: str = "helpers.fault_encoders:FaultyEncoder") -> list[str]:
    return [str(TOOL), "-m", model, "-t", *TASKS, "--output-folder", str(out), "--bin",
            str(build_dir() / "mieb-eval"), "--progress", "plain", *extra]


def _export_is_sound(out: Path) -> None:
    """Every role file the export holds is whole: finite, one row per item key, one width per task."""
    widths: dict[str, set[int]] = {}
    for p in (out / "export/embeddings").rglob("*.h5"):
        if p.name.startswith("."):
            continue
        with h5py.File(p, "r") as f:
            x = f["embeddings"][...].astype(np.float32)
            assert np.isfinite(x).all() and x.shape[0] == f["item_key"].shape[0], p
            widths.setdefault(p.relative_to(out / "export/embeddings").parts[0], set()).add(x.shape[1])
    assert all(len(w) == 1 for w in widths.values()), widths


def _encoded_roles(stderr: str) -> set[tuple[str, str]]:
    """(task, role) of every progress line: what a run encoded."""
    return set(re.findall(r"^mieb-export: \[\d/2\] (\S+) test/(\S+): \d+/\d+ items", stderr, re.M))


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    out = tmp_path_factory.mktemp("clean") / "out"
    res = run_model(_cmd(out))
    assert res.returncode == 0, res.stderr[-6000:]
    return result_files(out)


REFUSED = {  # fault -> what the message says of the call's output
    "nan@2": "row 5 (item 5 of this call), column 3 holds NaN",
    "inf@3": "row 5 (item 5 of this call), column 3 holds Inf",
    "short@2": "the model returned 365 rows for the 366 items it was given",
    "long@4": "the model returned 121 rows for the 120 items it was given",
    "width@2": "the model returned vectors of width 47, the task's rows kept so far have width 48 (the width "
               "the model declares)",
    "dim3@1": "the model returned a 3-D array of shape (59, 1, 48): multi-vector (late-interaction) output",
    "dim1@3": "the model returned a 1-D array of shape (5760,)",
    "strings@4": "the model returned a ndarray of <U",
    "none@2": "the model returned None",
    "raise@3": "the model raised RuntimeError: FaultyEncoder: the model broke in this call",
}


@pytest.mark.parametrize("fault", list(REFUSED))
def test_refused_then_rerun_gives_the_clean_result(fault, clean, tmp_path):
    out = tmp_path / "out"
    at = int(fault.split("@")[1])
    task, role = ROLES[at]
    bad = run_model(_cmd(out), MIEB_TEST_ENCODER_FAULT=fault)
    assert bad.returncode == 1, (bad.returncode, bad.stderr[-4000:])
    call = f"model {MODEL}, task {task}, role {role}, encode call 1 of 1 (rows 0..{ROWS[at] - 1} of the role)"
    msg = next((ln for ln in bad.stderr.splitlines() if call in ln), "")
    assert REFUSED[fault] in msg and "nothing of this call was kept" in msg, bad.stderr[-4000:]
    assert "Rerunning the same command re-encodes this role from this call on" in msg, msg
    assert f"1 task(s) not exported (said above): {task}" in bad.stderr, bad.stderr[-4000:]
    _export_is_sound(out)
    assert not list((out / "export/embeddings" / task).rglob(f"{role.split('/')[-1]}*.h5"))
    good = run_model(_cmd(out))
    assert good.returncode == 0, good.stderr[-6000:]
    # only the refused role, and the roles after it, are encoded again
    again = {(t, r) for t, r in _encoded_roles(good.stderr)}
    assert again == {(ROLES[k][0], ROLES[k][1].split("/", 1)[1].replace("default/", ""))
                     for k in ROLES if ROLES[k][0] == task and k >= at}, (again, good.stderr[-3000:])
    assert result_files(out) == clean
    _export_is_sound(out)


def test_width_of_the_first_call_wrong_removes_the_task(clean, tmp_path):
    """The first call's width (47) differs from the declared embed_dim (48), and the next call's
    agrees: the kept rows are the wrong ones, so the whole task is encoded again on the rerun."""
    out = tmp_path / "out"
    bad = run_model(_cmd(out), MIEB_TEST_ENCODER_FAULT="width@1")
    assert bad.returncode == 1, bad.stderr[-4000:]
    assert bad.stderr.count("declares embed_dim 48 but returns vectors of width 47") == 1, bad.stderr[-4000:]
    assert ("task InMemT2IRetrieval, role test/default/corpus, encode call 1 of 1" in bad.stderr
            and "the model declares that width, so the task's kept rows were removed too" in bad.stderr
            and "Rerunning the same command encodes the whole task again" in bad.stderr), bad.stderr[-4000:]
    assert not list((out / "export/embeddings/InMemT2IRetrieval").rglob("*.h5"))
    good = run_model(_cmd(out))
    assert good.returncode == 0, good.stderr[-6000:]
    assert _encoded_roles(good.stderr) == {("InMemT2IRetrieval", "queries"), ("InMemT2IRetrieval", "corpus")}
    assert result_files(out) == clean


def test_width_change_without_a_declared_width_removes_the_task(tmp_path):
    """No embed_dim declared: which of two widths is right cannot be told, so the task's kept
    rows go too and the rerun encodes the whole task; the result is a clean run's."""
    out, ref = tmp_path / "out", tmp_path / "ref"
    model = "helpers.fault_encoders:UndeclaredEncoder"
    bad = run_model(_cmd(out, model=model), MIEB_TEST_ENCODER_FAULT="width@2")
    assert bad.returncode == 1, bad.stderr[-4000:]
    assert ("role test/default/corpus, encode call 1 of 1" in bad.stderr and "it cannot be told which width is "
            "right, so the task's kept rows were removed too" in bad.stderr), bad.stderr[-4000:]
    assert not list((out / "export/embeddings/InMemT2IRetrieval").rglob("*.h5"))
    good = run_model(_cmd(out, model=model))
    assert good.returncode == 0, good.stderr[-6000:]
    assert _encoded_roles(good.stderr) == {("InMemT2IRetrieval", "queries"), ("InMemT2IRetrieval", "corpus")}
    assert run_model(_cmd(ref, model=model)).returncode == 0
    assert result_files(out) == result_files(ref)


def test_refused_call_leaves_no_older_role_file(tmp_path):
    """A finished export with --batch-size 16, then the same with 32 (each role encoded again)
    whose corpus call is refused: the corpus file of the older export is gone, not left beside
    the new queries."""
    out = tmp_path / "out"
    assert run_model(_cmd(out, "--batch-size", "16")).returncode == 0
    corpus = out / "export/embeddings/InMemT2IRetrieval/test/default/corpus.h5"
    assert corpus.exists()
    bad = run_model(_cmd(out), MIEB_TEST_ENCODER_FAULT="nan@2")
    assert bad.returncode == 1 and "role test/default/corpus" in bad.stderr, bad.stderr[-4000:]
    assert not corpus.exists()
    _export_is_sound(out)


def test_float16_overflow_is_refused(tmp_path):
    """A finite value float16 cannot hold would be stored as Inf: refused, as a NaN is."""
    out, ref = tmp_path / "out", tmp_path / "ref"
    bad = run_model(_cmd(out, "--dtype", "float16"), MIEB_TEST_ENCODER_FAULT="overflow16@2")
    assert bad.returncode == 1, bad.stderr[-4000:]
    assert ("role test/default/corpus, encode call 1 of 1" in bad.stderr and "column 3 holds 1000000.0, beyond "
            "float16's largest value 65504" in bad.stderr), bad.stderr[-4000:]
    _export_is_sound(out)
    assert run_model(_cmd(out, "--dtype", "float16")).returncode == 0
    assert run_model(_cmd(ref, "--dtype", "float16")).returncode == 0
    assert result_files(out) == result_files(ref)


@pytest.mark.parametrize("fault", ["list@2", "float64@1", "tensor@3"])
def test_output_right_in_another_form_is_kept(fault, clean, tmp_path):
    out = tmp_path / "out"
    res = run_model(_cmd(out), MIEB_TEST_ENCODER_FAULT=fault)
    assert res.returncode == 0, res.stderr[-4000:]
    assert result_files(out) == clean


def test_declared_embed_dim_disagreeing_warns_once(clean, tmp_path):
    """mteb keeps vectors of another width than the declared embed_dim: kept, with one warning."""
    out = tmp_path / "out"
    res = run_model(_cmd(out, model="helpers.fault_encoders:WideEncoder"))
    assert res.returncode == 0, res.stderr[-4000:]
    assert res.stderr.count("declares embed_dim 64 but returns vectors of width 48") == 1, res.stderr[-4000:]
    got = {k: v for k, v in result_files(out).items() if not k.endswith("model_meta.json")}
    assert got == {k: v for k, v in clean.items() if not k.endswith("model_meta.json")}


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_another_model_is_refused_in_the_folder(clean, tmp_path):
    """A partial export (the corpus refused) is not resumed by another model of one's own under
    the same name and revision, nor by a model of another name; nothing of it changes."""
    out = tmp_path / "out"
    assert run_model(_cmd(out), MIEB_TEST_ENCODER_FAULT="nan@2").returncode == 1
    before = _snapshot(out / "export/embeddings")
    for model in ("helpers.fault_encoders:OtherEncoder", "helpers.mteb_inmem:HashEncoder"):
        res = run_model(_cmd(out, model=model))
        assert res.returncode == 2, (model, res.returncode, res.stderr[-4000:])
        assert re.search(r"holds an export of mieb-test/hash-encoder @ 1 \(code:[0-9a-f]+\), not of "
                         r"mieb-test/hash-encoder @ 1( \(code:[0-9a-f]+\))?; nothing of it is resumed", res.stderr), \
            res.stderr[-4000:]
        assert _snapshot(out / "export/embeddings") == before
    good = run_model(_cmd(out))
    assert good.returncode == 0, good.stderr[-6000:]
    assert result_files(out) == clean


def test_mieb_export_refuses_another_model_the_same_way(tmp_path):
    """tools/mieb-export (mteb's random baseline encoder, loaded offline) into a folder holding
    the hash encoder's partial export: exit 2, the same message, nothing changed."""
    out = tmp_path / "out"
    assert run_model(_cmd(out), MIEB_TEST_ENCODER_FAULT="nan@2").returncode == 1
    before = _snapshot(out / "export/embeddings")
    res = subprocess.run([str(TOOL.parent / "mieb-export"), "--model", "mteb/baseline-random-encoder", "-t", *TASKS,
                          "--output-folder", str(out / "export")], capture_output=True, text=True, env=model_env(),
                         timeout=600)
    assert res.returncode == 2, (res.returncode, res.stderr[-3000:])
    assert re.search(r"holds an export of mieb-test/hash-encoder @ 1 \(code:[0-9a-f]+\), not of "
                     r"mteb/baseline-random-encoder @ \S+; nothing of it is resumed", res.stderr), res.stderr[-3000:]
    assert _snapshot(out / "export/embeddings") == before


def _wait_for(path: Path, proc: subprocess.Popen, what: str) -> None:
    limit = 300 * TIME_SCALE
    t0 = time.monotonic()
    while not path.exists():
        assert proc.poll() is None, f"the run ended ({proc.returncode}) before {what}: {proc.stderr.read()[-3000:]}"
        assert time.monotonic() - t0 < limit, f"no {what} within {limit:g} s (300 s x MIEB_TEST_TIME_SCALE)"
        time.sleep(0.05)


def _slow_run(out: Path, marks: Path) -> subprocess.Popen:
    """The run in the background, each call 3 s long, saying when each call starts; SIGINT as a
    terminal would deliver it (a process started from a shell's background ignores it)."""
    marks.mkdir()
    env = model_env(MIEB_TEST_ENCODER_SLOW="3", MIEB_TEST_ENCODER_MARK=str(marks))
    return subprocess.Popen(_cmd(out), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


@pytest.mark.parametrize("sig", ["SIGINT", "SIGKILL"])
def test_signal_in_a_slow_call_then_rerun(sig, clean, tmp_path):
    out = tmp_path / "out"
    proc = _slow_run(out, tmp_path / "marks")
    _wait_for(tmp_path / "marks/call-2", proc, "the second encode call")
    proc.send_signal(getattr(signal, sig))
    _, err = proc.communicate(timeout=300 * TIME_SCALE)
    if sig == "SIGINT":
        assert proc.returncode == 130 and "interrupted; rerun the same command to resume" in err, (proc.returncode,
                                                                                                  err[-3000:])
    else:
        assert proc.returncode == -signal.SIGKILL
    _export_is_sound(out)
    assert (out / "export/embeddings/InMemT2IRetrieval/test/default/queries.h5").exists()
    assert not (out / "results").exists()
    good = run_model(_cmd(out))
    assert good.returncode == 0, good.stderr[-6000:]
    assert ("InMemT2IRetrieval", "queries") not in _encoded_roles(good.stderr), good.stderr[-3000:]
    assert result_files(out) == clean


def test_two_exports_into_one_folder(clean, tmp_path):
    """The second is refused at once and changes nothing; the first ends as a clean run."""
    out = tmp_path / "out"
    first = _slow_run(out, tmp_path / "marks")
    _wait_for(tmp_path / "marks/call-1", first, "the first encode call")
    second = run_model(_cmd(out))
    assert second.returncode == 2, (second.returncode, second.stderr[-3000:])
    assert "another export is writing into this folder now; nothing was changed" in second.stderr, second.stderr
    assert "mieb-export: encoding" not in second.stderr
    _, err = first.communicate(timeout=600 * TIME_SCALE)
    assert first.returncode == 0, err[-4000:]
    assert result_files(out) == clean


@pytest.mark.parametrize("nth", ["1+", "6+", "12+"])
def test_disk_full_while_writing(nth, clean, tmp_path):
    """Every write-side call from the Nth on to the retrieval task's role files fails with ENOSPC
    (tests/fault/fault_inject.c, preloaded into the exporter): that task is not exported and
    says why, the export stops there (HDF5 may be left broken: a later close could crash),
    nothing broken is kept, and the rerun ends as a clean run."""
    out = tmp_path / "out"
    lib = build_dir() / "tests" / "libmieb_fault.so"
    watch = str(out / "export/embeddings/InMemT2IRetrieval") + "/"
    bad = run_model(_cmd(out), LD_PRELOAD=str(lib), MIEB_FAULT_PATH=watch, MIEB_FAULT_WRITE=nth)
    assert bad.returncode == 1, (bad.returncode, bad.stderr[-4000:])
    assert re.search(r"InMemT2IRetrieval: not exported: writing its embeddings failed \(.*No space left on device",
                     bad.stderr, re.S), bad.stderr[-4000:]
    assert "2 task(s) not exported (said above): InMemT2IRetrieval, InMemVisualSTS" in bad.stderr, bad.stderr[-4000:]
    _export_is_sound(out)
    assert not [p for p in out.rglob("*.tmp*")], list(out.rglob("*.tmp*"))
    good = run_model(_cmd(out))
    assert good.returncode == 0, good.stderr[-6000:]
    assert result_files(out) == clean
    _export_is_sound(out)


def _wrapper(tmp_path: Path, script: str) -> str:
    """A --bin that runs `script` (sh, with $REAL the build's mieb-eval) before the real program."""
    w = tmp_path / "mieb-eval"
    w.write_text(f'#!/bin/sh\nREAL={build_dir() / "mieb-eval"}\n{script}\nexec "$REAL" "$@"\n')
    w.chmod(0o755)
    return str(w)


def test_nothing_exported_names_nothing_else(tmp_path):
    """The only task refused: nothing is scored, and the closing line says so."""
    out = tmp_path / "out"
    cmd = _cmd(out)
    cmd[cmd.index("-t") + 1:cmd.index("-t") + 1 + len(TASKS)] = TASKS[:1]
    res = run_model(cmd, MIEB_TEST_ENCODER_FAULT="raise@1")
    assert res.returncode == 1, res.stderr[-4000:]
    last = res.stdout.strip().splitlines()[-1]
    assert last == ("mieb-eval-model: no results; no summary (see above); no report (see above); "
                    f"export {out}/export"), last
    assert sorted(p.name for p in out.iterdir()) == ["export"]


def test_nothing_scored_names_no_summary(tmp_path):
    """mieb-eval run writes no result (its result files taken away as it ends): summary and report
    find nothing and exit 1; the closing line names no summary or report, and none is left
    (before: an empty summary.txt, and a closing line naming four files never written)."""
    out = tmp_path / "out"
    cmd = _cmd(out)
    cmd[cmd.index("--bin") + 1] = _wrapper(tmp_path, f'if [ "$1" = run ]; then "$REAL" "$@"; find {out}/results '
                                                     '-name "*.json" ! -name model_meta.json -delete; exit 1; fi')
    res = run_model(cmd)
    assert res.returncode == 1, res.stderr[-4000:]
    assert "mieb-eval summary: no result files found" in res.stderr, res.stderr[-3000:]
    last = res.stdout.strip().splitlines()[-1]
    assert last == (f"mieb-eval-model: results {out}/results/mieb-test__hash-encoder/1; no summary (see above); "
                    f"no report (see above); export {out}/export"), last
    assert "the summary leaves" not in res.stderr, res.stderr[-3000:]
    assert sorted(p.name for p in out.iterdir()) == ["export", "results"]


@pytest.mark.parametrize("step", ["summary", "report"])
def test_summary_or_report_that_cannot_run(step, tmp_path):
    """mieb-eval summary (or report) ends with exit 4: said, exit 4, no file of that step left."""
    out = tmp_path / "out"
    cmd = _cmd(out)
    fail = f'if [ "$1" = {step} ]; then echo "{step} fails" >&2; exit 4; fi'
    cmd[cmd.index("--bin") + 1] = _wrapper(tmp_path, fail)
    res = run_model(cmd)
    assert res.returncode == 4, (res.returncode, res.stderr[-3000:])
    assert f"mieb-eval {step} could not run (exit 4); no {step} written" in res.stderr, res.stderr[-3000:]
    left = sorted(p.name for p in out.iterdir())
    assert left == (["export", "results"] if step == "summary" else
                    ["export", "results", "summary.csv", "summary.json", "summary.txt"]), left


def test_fingerprint_of_a_torch_model_is_its_weights():
    """A model of one's own holding torch modules is told apart by its weights: the same
    weights, the same fingerprint (a fix of its code keeps what was encoded); other weights,
    another one. A model loaded by mteb (its class is mteb's) has none."""
    script = (
        "import json, torch\n"
        "from mieb_eval.export.identity import model_identity\n"
        "from helpers.mteb_inmem import HashEncoder\n"
        "from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper as Wrapper\n"
        "class Net(HashEncoder):\n"
        "    def __init__(self, seed):\n"
        "        super().__init__()\n"
        "        torch.manual_seed(seed)\n"
        "        self.proj = torch.nn.Linear(4, 4)\n"
        "meta = {'name': 'n', 'revision': 'r'}\n"
        "fps = [model_identity(m, meta)['fingerprint'] for m in (Net(0), Net(0), Net(1))]\n"
        "mteb_own = model_identity(object.__new__(Wrapper), meta)['fingerprint']\n"
        "print(json.dumps(fps + [mteb_own]))\n")
    env = model_env(PYTHONPATH=f"{TOOL.parents[1] / 'python'}:{TOOL.parents[1] / 'tests/py'}")
    res = subprocess.run([env["MIEB_EXPORT_PYTHON"], "-c", script], capture_output=True, text=True, env=env,
                         timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    a, b, c, none = json.loads(res.stdout.splitlines()[-1])
    assert a == b and a != c and a.startswith("weights:") and c.startswith("weights:"), (a, b, c)
    assert none is None


def test_evaluate_raises_for_a_refused_task_then_recovers(clean, tmp_path):
    """mieb_eval.evaluate, where the tools exit 1: the other task is scored and summarised, then
    TasksFailed names the refused task and carries the scored task's result; the same call with
    the model fixed gives the clean run's result files."""
    from helpers.model_runs import MTEB_PY, SRC

    out = tmp_path / "out"
    script = ("import json, sys, mieb_eval\n"
              "try:\n"
              "    res = mieb_eval.evaluate('helpers.fault_encoders:FaultyEncoder', tasks=json.loads(sys.argv[1]),\n"
              "                             output_folder=sys.argv[2], device='cpu')\n"
              "    print(json.dumps({'returned': sorted(r.task_name for r in res)}))\n"
              "except mieb_eval.TasksFailed as e:\n"
              "    print(json.dumps({'failed': e.failed, 'results': sorted(r.task_name for r in e.results)}))\n")
    lib = dict(PYTHONPATH=f"{SRC / 'python'}:{SRC / 'tests/py'}", MIEB_EVAL_LIBRARY=str(build_dir() / "libmieb.so"),
               MIEB_EVAL_PROGRAM=str(build_dir() / "mieb-eval"))

    def evaluate(**fault: str) -> dict:
        from helpers.model_runs import model_env

        r = subprocess.run([str(MTEB_PY), "-c", script, json.dumps(TASKS), str(out)], capture_output=True, text=True,
                           env=model_env(**lib, **fault), timeout=900 * TIME_SCALE)
        assert r.returncode == 0, r.stderr[-6000:]
        return json.loads(r.stdout.strip().splitlines()[-1])

    bad = evaluate(MIEB_TEST_ENCODER_FAULT="nan@2")
    assert list(bad["failed"]) == ["InMemT2IRetrieval"] and "column 3 holds NaN" in bad["failed"]["InMemT2IRetrieval"]
    assert bad["results"] == ["InMemVisualSTS"]
    assert (out / "summary.txt").read_text().strip()
    good = evaluate()
    assert good == {"returned": ["InMemT2IRetrieval", "InMemVisualSTS"]}
    assert result_files(out) == clean
