"""What a run says when it ends and what it leaves beside its results: the closing summary
(counts, each task's main score as mteb's get_score, each failure's first error, the inspect
hint), its JSON record under --log-format json, the run manifest (tool, command, device,
precision, kernels, input fingerprints) that summary and report show, mteb's default
--overwrite-strategy only-missing, and -l/--languages."""
import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from helpers.mieb_tools import build_dir

TASKS = ["DTD", "CIRRIT2IRetrieval", "STS17MultilingualVisualSTS"]


def mieb(*args):
    return subprocess.run([str(build_dir() / "mieb-eval"), *map(str, args)], capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    d = tmp_path_factory.mktemp("summary")
    r = mieb("synth", "--out", d / "s", "--tasks", ",".join(TASKS), "--scale", 0.01, "--dim", 16)
    assert r.returncode == 0, r.stderr
    return d


def run(suite, out, *extra):
    s = suite / "s"
    return mieb("run", "--task-data", s / "task-data", "--embeddings", s / "embeddings", "--output-folder", out,
                "--progress", "off", *extra)


def get_score(path):
    doc = json.loads(Path(path).read_text())
    return float(np.mean([e["main_score"] for entries in doc["scores"].values() for e in entries]))


def test_closing_summary_and_json_record(suite, tmp_path):
    out = tmp_path / "o"
    (suite / "s" / "task-data" / "Winoground.h5").unlink(missing_ok=True)
    r = run(suite, out, "-t", *TASKS, "Winoground")  # Winoground's task data is not there
    assert r.returncode == 1
    rev = Path(r.stdout.strip())
    m = re.search(r"summary: (\d+) scored, (\d+) skipped, (\d+) failed; results in (.*)", r.stderr)
    assert m and m.groups()[:3] == ("3", "0", "1") and m.group(4) == str(rev), r.stderr
    for t in TASKS:
        line = next(ln for ln in r.stderr.splitlines() if ln.strip().startswith(t + " "))
        assert f"{get_score(rev / f'{t}.json'):.4f}" in line and " scored " in line, line
    fail = next(ln for ln in r.stderr.splitlines() if ln.strip().startswith("Winoground "))
    assert "FAILED" in fail and "Winoground.h5" in fail
    assert "hint: inputs are missing; `mieb-eval inspect" in r.stderr
    # quiet by default: no path per task unless -v
    assert not re.search(r"scored in [\d.]+ s ->", r.stderr)
    assert re.search(r"scored in [\d.]+ s ->", run(suite, tmp_path / "v", "-t", "DTD", "-v").stderr)
    # the same as one JSON record, the last summary line of a json log
    r = run(suite, tmp_path / "j", "-t", *TASKS, "Winoground", "--log-format", "json")
    recs = [json.loads(ln) for ln in r.stderr.splitlines() if ln.startswith("{")]
    (summ,) = [x["summary"] for x in recs if x.get("msg") == "summary"]
    assert (summ["scored"], summ["skipped"], summ["failed"]) == (3, 0, 1)
    by = {t["task"]: t for t in summ["tasks"]}
    for t in TASKS:
        assert by[t]["outcome"] == "scored"
        assert by[t]["main_score"] == pytest.approx(get_score(Path(r.stdout.strip()) / f"{t}.json"), abs=1e-12)
    assert by["Winoground"]["outcome"] == "failed" and "Winoground.h5" in by["Winoground"]["error"]


def test_manifest_and_produced_by(suite, tmp_path):
    out = tmp_path / "o"
    r = run(suite, out, "-t", "DTD", "CIRRIT2IRetrieval")
    assert r.returncode == 0, r.stderr
    rev = Path(r.stdout.strip())
    (mf,) = list((rev / ".mieb-eval").glob("run-*.json"))
    man = json.loads(mf.read_text())
    assert man["tool"].startswith("mieb-eval ") and man["precision"] == "fp32" and man["device"] == "cpu"
    assert man["command"][0] == "run" and "DTD" in man["command"]
    assert set(man["cpu_kernels"]) == {"fixed_order_dot", "screen", "screen_floored", "openblas_core"}
    assert man["summary"]["scored"] == 2
    files = {Path(f["path"]).name: f for f in man["inputs"]["CIRRIT2IRetrieval"]}
    assert {"CIRRIT2IRetrieval.h5", "queries.h5", "corpus.h5"} <= set(files)
    for f in man["inputs"]["CIRRIT2IRetrieval"]:
        assert f["bytes"] == Path(f["path"]).stat().st_size and re.fullmatch(r"[0-9a-f]{16}", f["edges_fnv1a64"])
    # the revision folder still reads as mteb's: only result files and model_meta.json at its top
    assert sorted(p.name for p in rev.glob("*.json")) == ["CIRRIT2IRetrieval.json", "DTD.json", "model_meta.json"]
    # summary and report say what produced each row; a folder without a manifest says "-"
    plain = tmp_path / "plain"
    (plain / "results" / "org__m" / "r1").mkdir(parents=True)
    for p in rev.glob("*.json"):
        (plain / "results" / "org__m" / "r1" / p.name).write_text(
            p.read_text().replace('"mieb-synth/synthetic-encoder"', '"org/m"') if p.name == "model_meta.json"
            else p.read_text())
    js = tmp_path / "s.json"
    r = mieb("summary", out, plain, "--json", js)
    assert r.returncode == 0, r.stderr
    rows = {m["model"]: m["produced_by"] for m in json.loads(js.read_text())["models"]}
    assert rows["org/m"] is None and rows["mieb-synth/synthetic-encoder"] == f"{man['tool']}, fp32"
    html = tmp_path / "r.html"
    assert mieb("report", out, plain, "--html", html).returncode == 0
    assert f'data-col="produced_by">{man["tool"]}, fp32<' in html.read_text()


def test_default_overwrite_is_only_missing(suite, tmp_path):
    out = tmp_path / "o"
    assert run(suite, out, "-t", "DTD").returncode == 0
    res = next(out.glob("results/*/*/DTD.json"))
    before = res.read_bytes()
    r = run(suite, out, "-t", "DTD")
    assert r.returncode == 0 and "1 skipped" in r.stderr and res.read_bytes() == before, r.stderr
    r = run(suite, out, "-t", "DTD", "--overwrite-strategy", "always")
    assert "1 scored" in r.stderr and json.loads(res.read_text())["date"] != json.loads(before)["date"]


def test_languages_keep_only_those_subsets(suite, tmp_path):
    r = run(suite, tmp_path / "o", "-t", "STS17MultilingualVisualSTS", "DTD", "-l", "kor", "--languages", "ara-Arab")
    assert r.returncode == 0, r.stderr
    doc = json.loads(next((tmp_path / "o").glob("results/*/*/STS17MultilingualVisualSTS.json")).read_text())
    subsets = {e["hf_subset"] for e in doc["scores"]["test"]}
    # as mteb filters: a subset stays when any of its languages is asked for ("kor" = "kor-Hang")
    src = Path(__file__).resolve().parents[2]
    (task,) = [t for t in json.load(open(src / "configs" / "tasks.json")) if t["name"] == "STS17MultilingualVisualSTS"]
    want = {s for s, langs in task["eval_langs"].items()
            if any(lang.split("-")[0] == "kor" or lang == "ara-Arab" for lang in langs)}
    assert subsets == want and {"ko-ko", "ar-ar", "en-ar"} <= want, (subsets, want)
    # DTD (English only) has no subset in those languages: skipped, said so
    assert not list((tmp_path / "o").glob("results/*/*/DTD.json"))
    assert "DTD: none of its subsets is in --languages" in run(
        suite, tmp_path / "o2", "-t", "DTD", "-l", "kor", "-v").stderr
