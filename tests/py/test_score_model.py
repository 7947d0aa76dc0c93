"""tools/mieb-eval-model end to end: from a model to results, summary and report in one command.

Runs the command in .venv-mteb (scripts/setup-mteb-env.sh) on in-memory and mteb mock tasks
of five families (retrieval, linear probe, zero-shot, clustering, visual STS) with the
deterministic hash encoder of helpers/mteb_inmem.py given as MODULE:CALLABLE; nothing is downloaded.

Checked: the export's progress lines (device and dtype at start; per task and role items,
items/s and ETA; a closing line per task) appear in the log; results, summary (txt, csv,
json) and report are written and the last line names them; a run SIGKILLed after its third
encode call, then rerun, finishes with the same result files as an uninterrupted run (bytes
equal once evaluation_time, date and evaluation_phases are set aside) and encodes only
what was missing; a rerun after a lost result rescores only that task; a CUDA device torch
cannot use is refused at start (exit 3) with the driver found and the one needed, and
nothing is exported; a missing mieb-eval binary is refused before any encoding (exit 2).
The README's own command, with its model name, runs end to end through mteb's loader for
that model on a tiny random CLIP in a local Hugging Face cache (helpers/tiny_clip.py).
A missing .venv-mteb is an error: scripts/test.sh creates it.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

from helpers.mieb_tools import build_dir
from helpers.model_runs import MTEB_PY, SRC, TOOL, result_files, run_model
from helpers.model_runs import model_env as _env

TASKS = {  # command-line name -> mteb task name
    "helpers.mteb_inmem:InMemT2IRetrieval": "InMemT2IRetrieval",
    "helpers.mteb_inmem:InMemImageClassification": "InMemImageClassification",
    "mteb.mocks:MockZeroShotClassificationTask": "MockZeroShotClassification",
    "mteb.mocks:MockImageClusteringTask": "MockImageClustering",
    "helpers.mteb_inmem:InMemVisualSTS": "InMemVisualSTS",
}


def _cmd(out: Path, *extra: str, bin_: Path | None = None) -> list[str]:
    return [str(TOOL), "-m", "helpers.mteb_inmem:HashEncoder", "-t", *TASKS, "--output-folder", str(out),
            "--bin", str(bin_ or build_dir() / "mieb-eval"), "--progress", "plain", *extra]


_run = run_model
_results = result_files


@pytest.fixture(scope="module")
def whole(tmp_path_factory):
    """One uninterrupted run."""
    out = tmp_path_factory.mktemp("whole") / "out"
    res = _run(_cmd(out))
    assert res.returncode == 0, res.stderr[-6000:]
    return out, res


def test_one_command_writes_results_summary_report(whole):
    out, res = whole
    files = _results(out)
    rdir = "results/mieb-test__hash-encoder/1"
    assert set(files) == {f"{rdir}/{t}.json" for t in TASKS.values()} | {f"{rdir}/model_meta.json"}, sorted(files)
    for t in TASKS.values():
        d = json.loads((out / rdir / f"{t}.json").read_text())
        assert d["task_name"] == t and d["scores"], t
        assert '"evaluation_time"' in (out / rdir / f"{t}.json").read_text()
    # the summary names every task, each scored
    txt = (out / "summary.txt").read_text()
    assert "mieb-test/hash-encoder" in txt and f"{len(TASKS)}/{len(TASKS)}" in txt, txt
    assert (out / "summary.csv").stat().st_size > 0 and json.loads((out / "summary.json").read_text())
    html = (out / "report.html").read_text()
    assert html.lstrip().lower().startswith("<!doctype html") and "InMemT2IRetrieval" in html
    # the last line names where each is
    last = res.stdout.strip().splitlines()[-1]
    assert last.startswith("mieb-eval-model: results "), last
    for p in (out / rdir, out / "summary.txt", out / "report.html", out / "export"):
        assert str(p) in last, (p, last)


def test_python_evaluate_writes_what_the_command_writes(whole, tmp_path):
    """mieb_eval.evaluate (the package, in .venv-mteb) encodes in its own process and writes the
    command's files: the same results, a summary and a report; it returns mteb's TaskResults.
    With MIEB_EVAL_INSTALLED=1 (scripts/test-wheel-mteb.sh) the package is the one installed in
    MIEB_MTEB_VENV, not the source tree's, and must be."""
    out = tmp_path / "out"
    script = ("import json, os, sys, mieb_eval\n"
              "os.environ.pop('LD_PRELOAD', None)  # a sanitizer runtime: this process's, not its programs'\n"
              "print('mieb_eval from', mieb_eval.__file__, file=sys.stderr)\n"
              "res = mieb_eval.evaluate('helpers.mteb_inmem:HashEncoder', tasks=json.loads(sys.argv[1]), "
              "output_folder=sys.argv[2], device='cpu')\n"
              "print(json.dumps(sorted((type(r).__name__, r.task_name) for r in res)))\n")
    installed = os.environ.get("MIEB_EVAL_INSTALLED") == "1"
    if installed:
        env = _env()
        for k in ("MIEB_EVAL_LIBRARY", "MIEB_EVAL_PROGRAM"):
            env.pop(k, None)
    else:
        env = _env(PYTHONPATH=f"{SRC / 'python'}:{SRC / 'tests/py'}", MIEB_EVAL_LIBRARY=str(build_dir() / "libmieb.so"),
                   MIEB_EVAL_PROGRAM=str(build_dir() / "mieb-eval"))
        if os.environ.get("MIEB_SANITIZER_RUNTIME"):  # a sanitized library loads into Python with its runtime
            env.update(LD_PRELOAD=os.environ["MIEB_SANITIZER_RUNTIME"],
                       ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:halt_on_error=1")
    res = subprocess.run([str(MTEB_PY), "-c", script, json.dumps(list(TASKS)), str(out)], capture_output=True,
                         text=True, env=env, timeout=900)
    assert res.returncode == 0, res.stderr[-6000:]
    pkg = Path(re.search(r"^mieb_eval from (.+)$", res.stderr, re.M).group(1)).resolve()
    assert (SRC / "python") not in pkg.parents if installed else (SRC / "python") in pkg.parents, pkg
    assert json.loads(res.stdout.splitlines()[-1]) == sorted(["TaskResult", t] for t in TASKS.values())
    assert _results(out) == _results(whole[0])
    # the engine column names the program's commit: an installed wheel may come from another
    # build of the same version than the reference command's program
    stamp = re.compile(r"(mieb-eval \S+) \((?:[0-9a-f]+|unknown)\)")
    summary = (out / "summary.txt").read_text()
    assert summary and stamp.sub(r"\1", summary) == stamp.sub(r"\1", (whole[0] / "summary.txt").read_text())
    assert (out / "report.html").stat().st_size > 0


def test_progress_lines(whole):
    _, res = whole
    err = res.stderr
    assert re.search(r"^mieb-export: encoding 5 task\(s\) on .+; embeddings stored as float32$", err, re.M), err[-3000:]
    # per task and role: items done of total, items/s and ETA
    prog = re.findall(r"^mieb-export: \[(\d)/5\] (\S+) (\S+): (\d+)/(\d+) items \(\d+%\), [\d.]+ items/s, ETA \S+$",
                      err, re.M)
    assert {p[1] for p in prog} == set(TASKS.values()), err[-3000:]
    roles = {(p[1], p[2]) for p in prog}
    assert ("InMemT2IRetrieval", "test/queries") in roles and ("InMemT2IRetrieval", "test/corpus") in roles, roles
    # a role's lines count up to its total
    done = {}
    for _, task, role, n, total in prog:
        assert int(n) >= done.get((task, role), 0) and int(n) <= int(total)
        done[(task, role)] = int(n)
    assert all(done[(t, r)] == int(tot) for _, t, r, _, tot in prog)
    # a closing line per task: items and seconds
    closing = re.findall(r"^mieb-export: \[\d/5\] (\S+): (\d+) items encoded in [\d.]+ s", err, re.M)
    assert [c[0] for c in closing] == list(TASKS.values()), err[-3000:]
    assert all(int(c[1]) > 0 for c in closing)
    # then mieb-eval's steps, in order
    steps = [m.group(1) for m in re.finditer(r"^mieb-eval-model: \[(\d)/4\]", err, re.M)]
    assert steps == ["1", "2", "3", "4"], err[-3000:]


def test_rerun_after_kill_gives_the_same_results(whole, tmp_path):
    out = tmp_path / "out"
    # killed (SIGKILL, no cleanup) once its third encode call is written: InMemT2IRetrieval's
    # queries and corpus are whole files, InMemImageClassification's first role is written but
    # still staged (not renamed), its second not begun
    first = _run(_cmd(out), MIEB_EVAL_MODEL_KILL_AFTER_CALLS="3")
    assert first.returncode == -signal.SIGKILL, (first.returncode, first.stderr[-3000:])
    emb = out / "export/embeddings"
    assert (emb / "InMemT2IRetrieval/test/default/corpus.h5").exists()
    assert not (out / "results").exists()
    second = _run(_cmd(out))
    assert second.returncode == 0, second.stderr[-6000:]
    assert re.search(r"^mieb-export: \[1/5\] InMemT2IRetrieval: already exported$", second.stderr, re.M), \
        second.stderr[-3000:]
    assert not re.search(r"InMemT2IRetrieval \S+: \d+/\d+ items", second.stderr)  # nothing of it re-encoded
    assert _results(out) == _results(whole[0])
    # nothing staged left (the hidden file beside model_meta.json says which model the export is of)
    assert [p.name for p in emb.rglob(".*") if p.is_file()] == [".mieb-export-model.json"]
    # the scoring half resumes too: a lost result is scored again, the others are kept
    rdir = out / "results/mieb-test__hash-encoder/1"
    kept = {p.name: p.stat().st_mtime_ns for p in rdir.glob("*.json") if p.name not in ("InMemVisualSTS.json", "model_meta.json")}
    (rdir / "InMemVisualSTS.json").unlink()
    third = _run(_cmd(out))
    assert third.returncode == 0, third.stderr[-6000:]
    assert third.stderr.count("already exported") == len(TASKS), third.stderr[-3000:]
    assert "items encoded" not in third.stderr
    assert {p: (rdir / p).stat().st_mtime_ns for p in kept} == kept
    assert _results(out) == _results(whole[0])


def test_unusable_cuda_device_is_refused_at_start(tmp_path):
    has_gpu = subprocess.run([str(MTEB_PY), "-c", "import torch; print(torch.cuda.is_available())"],
                             capture_output=True, text=True, env=_env(), timeout=300).stdout.strip() == "True"
    device = "cuda:99" if has_gpu else "cuda"  # a device torch cannot use, on any machine
    out = tmp_path / "out"
    res = _run(_cmd(out, "--device", device))
    assert res.returncode == 3, (res.returncode, res.stderr[-3000:])
    msg = res.stderr
    assert f"refusing to start: --device {device}" in msg and "Nothing was encoded" in msg, msg[-3000:]
    assert "found:" in msg and re.search(r"torch \S+ is built for CUDA [\d.]+ and needs an NVIDIA driver >= \d+", msg), msg
    assert "mieb-export: encoding" not in msg and not out.exists()
    # tools/mieb-export refuses it the same way
    exp = subprocess.run([str(SRC / "tools/mieb-export"), "--model", "mteb/baseline-random-encoder", "-t",
                          "mteb.mocks:MockImageClassificationTask", "--output-folder", str(tmp_path / "x"),
                          "--device", device], capture_output=True, text=True, env=_env(), timeout=600)
    assert exp.returncode == 3 and "refusing to start" in exp.stderr and not (tmp_path / "x").exists(), exp.stderr


def test_missing_binary_is_refused_before_encoding(tmp_path):
    res = _run(_cmd(tmp_path / "out", bin_=tmp_path / "no-such-mieb-eval"))
    assert res.returncode == 2 and "no mieb-eval binary" in res.stderr, res.stderr[-3000:]
    assert not (tmp_path / "out").exists()


def test_readme_model_has_its_dependencies(tmp_path):
    """mteb asks every model with an image modality for its "image" extra (torchvision): the
    model the README's quick start names must pass that check in .venv-mteb, and get as far as
    its download (refused here: no network, so HF_HUB_OFFLINE), never a missing package."""
    readme = (SRC / "README.md").read_text()
    names = re.findall(r"^tools/mieb-eval-model -m (\S+)", readme, re.M)
    assert names, "the README shows no mieb-eval-model command"
    for name in names:
        chk = subprocess.run([str(MTEB_PY), "-c", f"import mteb; mteb.get_model_meta({name!r})._check_requirements()"],
                             capture_output=True, text=True, env=_env(), timeout=300)
        assert chk.returncode == 0, (name, chk.stderr[-3000:])
        res = _run([str(TOOL), "-m", name, "-t", "mteb.mocks:MockImageClusteringTask", "--output-folder",
                    str(tmp_path / "out"), "--device", "cpu", "--bin", str(build_dir() / "mieb-eval")])
        assert "missing required dependencies" not in res.stderr, res.stderr[-3000:]
        if res.returncode == 2:  # offline: the download is what fails, and says so
            assert f"cannot load model {name}:" in res.stderr, res.stderr[-3000:]


def test_readme_model_end_to_end_offline(tmp_path):
    """The README's command with its model name, through mteb's own loader for that model
    (transformers' CLIP, torchvision's image pipeline), from nothing to results, summary and
    report: the weights are a tiny random CLIP in a local Hugging Face cache under the model's
    name and mteb's pinned revision, since no download is allowed here."""
    readme = (SRC / "README.md").read_text()
    name = re.findall(r"^tools/mieb-eval-model -m (\S+)", readme, re.M)[0]
    revision = subprocess.run([str(MTEB_PY), "-c", f"import mteb; print(mteb.get_model_meta({name!r}).revision)"],
                              capture_output=True, text=True, env=_env(), timeout=300).stdout.strip()
    hf_home = tmp_path / "hf"
    subprocess.run([str(MTEB_PY), str(SRC / "tests/py/helpers/tiny_clip.py"), str(hf_home), name, revision],
                   check=True, capture_output=True, env=_env(), timeout=300)
    out = tmp_path / "out"
    res = _run([str(TOOL), "-m", name, "-t", *TASKS, "--output-folder", str(out), "--device", "cpu",
                "--bin", str(build_dir() / "mieb-eval"), "--progress", "plain"], HF_HOME=str(hf_home))
    assert res.returncode == 0, res.stderr[-6000:]
    rdir = out / "results" / name.replace("/", "__") / revision
    for t in TASKS.values():
        d = json.loads((rdir / f"{t}.json").read_text())
        assert d["task_name"] == t and d["scores"], t
    assert json.loads((rdir / "model_meta.json").read_text())["name"] == name
    assert name in (out / "summary.txt").read_text() and f"{len(TASKS)}/{len(TASKS)}" in (out / "summary.txt").read_text()
    assert (out / "report.html").read_text().lstrip().lower().startswith("<!doctype html")


def test_missing_package_names_the_environment(tmp_path):
    res = _run([str(TOOL), "-m", "no_such_module_for_mieb:Encoder", "-t", "mteb.mocks:MockImageClusteringTask",
                "--output-folder", str(tmp_path / "out"), "--bin", str(build_dir() / "mieb-eval")])
    assert res.returncode == 2, (res.returncode, res.stderr[-3000:])
    venv = str(MTEB_PY.parent.parent)
    assert "cannot load model no_such_module_for_mieb:Encoder" in res.stderr, res.stderr[-3000:]
    assert f"This environment is {venv}: install there with" in res.stderr, res.stderr[-3000:]


def test_library_warnings_print_once(tmp_path):
    res = _run([str(TOOL), "-m", "helpers.mteb_inmem:WarnsThenFails", "-t", "mteb.mocks:MockImageClusteringTask",
                "--output-folder", str(tmp_path / "out"), "--bin", str(build_dir() / "mieb-eval")])
    assert res.returncode == 2 and "this test model never loads" in res.stderr, res.stderr[-3000:]
    assert res.stderr.count("hf-warning-said-once") == 1, res.stderr[-3000:]
    assert "mieb-eval-model: WARNING: hf-warning-said-once" in res.stderr, res.stderr[-3000:]


def _progress_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("mieb_export_progress", SRC / "python/mieb_eval/export/progress.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class _Stream:
    def __init__(self, tty: bool) -> None:
        self.text, self.tty = "", tty

    def write(self, s: str) -> None:
        self.text += s

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize("tty", [True, False])
def test_progress_on_a_terminal_and_in_a_log(tty):
    """On a terminal one line is redrawn in place (\\r, erase line); in a log a plain line every
    interval seconds and at the role's end. A fake clock: no timing assumption."""
    P = _progress_module()
    now = [0.0]
    s = _Stream(tty)
    p = P.Progress("auto", interval=10.0, stream=s, clock=lambda: now[0])
    p.start(1, "cuda:0 (torch.float16)", "float32")
    p.task_start("T")
    p.role_start("test", "default", "corpus", 100, 1000)  # resumed after 100 rows
    for _ in range(9):
        now[0] += 4.0
        p.advance(100)  # 25 items/s
    p.role_end()
    p.task_end("T", 900, False)
    p.finish()
    assert s.text.startswith("mieb-export: encoding 1 task(s) on cuda:0 (torch.float16); embeddings stored as float32\n")
    if tty:
        draws = s.text.split("\r\x1b[K")
        assert len(draws) >= 10 and "\n" not in "".join(draws[1:-2]), s.text  # redrawn on one line
        assert "[1/1] T test/corpus: 500/1000 items (50%), 25.0 items/s, ETA 20s" in s.text, s.text
    else:
        assert "\r" not in s.text
        lines = [x for x in s.text.splitlines() if "items/s, ETA" in x]
        # every 10 s (at 12, 24, 36 s) and at the end
        assert lines == [f"mieb-export: [1/1] T test/corpus: {n}/1000 items ({n // 10}%), 25.0 items/s, ETA {e}"
                         for n, e in ((400, "24s"), (700, "12s"), (1000, "0s"))], s.text
    assert s.text.rstrip("\n").endswith("mieb-export: [1/1] T: 900 items encoded in 36.0 s, 25.0 items/s")
