"""`mieb-eval summary --published DIR`: where the own models stand among published ones, against
mteb's own aggregation (ResultCache.load_results + BenchmarkResults.get_benchmark_result(), run
in .venv-mteb by helpers/mteb_leaderboard_driver.py) of one cache folder holding both.

The published models are real result files of mteb's results repository (published/README.md):
one model over all 132 MIEB tasks, three over MIEB(lite), one over 17 of its tasks. The own
models: a published model's files under another name (a tie on every ordering), a model that
lacks three tasks (listed, not ranked on Mean(TaskType), ranked on Borda) and one of seeded
random scores. Every benchmark is checked: on the three larger ones only one model is complete.
"""
import csv
import json
import math
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from helpers.mieb_tools import build_dir, run_mteb_script

SRC = Path(os.environ.get("MIEB_SOURCE_DIR", Path(__file__).resolve().parents[2]))
PUBLISHED = SRC / "tests" / "py" / "published"
MTEB_PY = Path(os.environ.get("MIEB_MTEB_VENV", SRC / ".venv-mteb")) / "bin" / "python"
BENCHMARKS = ["MIEB(lite)", "MIEB(Img)", "MIEB(eng)", "MIEB(Multilingual)"]
DROPPED = ["DTD", "WITT2IRetrieval", "STS13VisualSTS"]  # what the partial run lacks: three task types
# The own models go by names of models mteb knows (and the fixture lacks): mteb's summary table
# keeps only the models of its registry (an inner join with their metadata).
TIE, PARTIAL, RANDOM = "openai/clip-vit-base-patch16", "google/siglip-base-patch16-256", \
    "laion/CLIP-ViT-L-14-laion2B-s32B-b82K"
OWN = {TIE, PARTIAL, RANDOM}


def mieb(*args):
    import subprocess

    return subprocess.run([str(build_dir() / "mieb-eval"), *args], capture_output=True, text=True, timeout=300)


def published_model(org_model: str) -> Path:
    (rev,) = (PUBLISHED / "results" / org_model).iterdir()
    return rev


def copy_as(src: Path, root: Path, name: str, drop=(), scores=None) -> None:
    """src's result files as model `name` under root/results; `scores` rewrites every main_score."""
    dst = root / "results" / name.replace("/", "__") / "1"
    dst.mkdir(parents=True)
    for f in sorted(src.glob("*.json")):
        doc = json.loads(f.read_text())
        if f.name == "model_meta.json":
            doc.update(name=name, revision="1")
        elif f.stem in drop:
            continue
        elif scores is not None:
            for entries in doc["scores"].values():
                for e in entries:
                    e["main_score"] = float(scores.random())
        (dst / f.name).write_text(json.dumps(doc))


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("placement")
    own = root / "own"
    copy_as(published_model("laion__CLIP-ViT-B-32-laion2B-s34B-b79K"), own, TIE)
    copy_as(published_model("openai__clip-vit-large-patch14"), own, PARTIAL, drop=DROPPED)
    copy_as(published_model("google__siglip-base-patch16-224"), own, RANDOM, scores=np.random.default_rng(5))
    cache = root / "mteb-cache"  # what mteb aggregates: the published models and the own ones together
    shutil.copytree(PUBLISHED / "results", cache / "results")
    shutil.copytree(own / "results", cache / "results", dirs_exist_ok=True)
    out = root / "mteb.json"
    run_mteb_script(MTEB_PY, SRC / "tests" / "py" / "helpers" / "mteb_leaderboard_driver.py", str(cache), str(out),
                    *BENCHMARKS, cache=root / "hf-cache", timeout=600)
    return own, json.loads(out.read_text())


def close(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= 1e-12 * max(1.0, abs(b))


def expected_place(rows: dict, me: str, col: str, published: set):
    """rank, of, and the published neighbours' values above (a tie included) and below, from
    mteb's table: higher is better."""
    v = rows[me][col]
    vals = {m: r[col] for m, r in rows.items() if r[col] is not None}
    if v is None:
        return None, len(vals), None, None
    rank = 1 + sum(w > v for w in vals.values())
    up = [w for m, w in vals.items() if m in published and w >= v]
    down = [w for m, w in vals.items() if m in published and w < v]
    above = min(up, key=lambda w: abs(w - v)) if up else None
    below = min(down, key=lambda w: abs(w - v)) if down else None
    return rank, len(vals), above, below


def check_place(got: dict, want: tuple, value_of):
    rank, of, above, below = want
    assert got["rank"] == rank and got["of"] == of, (got, want)
    for side, w in (("above", above), ("below", below)):
        if w is None:
            assert got[side] is None, (side, got)
        else:
            assert got[side] is not None and close(value_of(got[side]), w), (side, got, w)


@pytest.mark.parametrize("bench", BENCHMARKS)
def test_placement_equals_mtebs_aggregation(folders, bench, tmp_path):
    own, ref = folders
    r = mieb("summary", str(own), "-b", bench, "--published", str(PUBLISHED), "--json", str(tmp_path / "s.json"),
             "--csv", str(tmp_path / "s.csv"))
    assert r.returncode == 0, r.stderr
    js = json.loads((tmp_path / "s.json").read_text())
    rows = {row["Model"]: row for row in ref[bench]}
    assert sorted(rows) == sorted(m["model"] for m in js["models"])
    published = {m["model"] for m in js["models"] if m["source"] == "published"}
    assert published == set(rows) - OWN
    for m in js["models"]:  # every row, own or published, is mteb's
        want = rows[m["model"]]
        assert close(m["Mean(TaskType)"], want["Mean (TaskType)"]), (m["model"], m["Mean(TaskType)"])
        for ty, v in m["task_types"].items():
            assert close(v, want[ty]), (m["model"], ty, v, want[ty])
        assert m["Rank(Borda)"] == want["Rank (Borda)"], m["model"]
    points = {m["model"]: m["borda_points"] for m in js["models"]}
    assert sorted(p["model"] for p in js["placement"]) == sorted(OWN)
    for p in js["placement"]:
        me = p["model"]
        check_place(p["Mean(TaskType)"], expected_place(rows, me, "Mean (TaskType)", published),
                    lambda n: rows[n["model"]]["Mean (TaskType)"])
        for ty, got in p["task_types"].items():
            check_place(got, expected_place(rows, me, ty, published), lambda n, ty=ty: rows[n["model"]][ty])
            for side in ("above", "below"):
                if got[side]:
                    assert close(got[side]["difference"], rows[got[side]["model"]][ty] - rows[me][ty])
        # Borda: mteb's rank (lower is better); the neighbours' ranks are the nearest published ones
        ranks = {n: row["Rank (Borda)"] for n, row in rows.items() if row["Rank (Borda)"] is not None}
        assert p["Borda"]["rank"] == ranks[me] and p["Borda"]["of"] == len(ranks)
        up = [ranks[n] for n in published if n in ranks and ranks[n] <= ranks[me]]
        down = [ranks[n] for n in published if n in ranks and ranks[n] > ranks[me]]
        for side, want in (("above", max(up) if up else None), ("below", min(down) if down else None)):
            got = p["Borda"][side]
            assert (got and ranks[got["model"]]) == want, (me, side, got, want)
            if got:
                assert close(got["difference"], points[got["model"]] - points[me])
        scores = next(m["task_scores"] for m in js["models"] if m["model"] == me)
        assert p["missing_tasks"] == [t for t in js["tasks"] if scores[t] is None]
        if me == PARTIAL and bench == "MIEB(lite)":
            assert p["missing_tasks"] == [t for t in js["tasks"] if t in DROPPED] and len(DROPPED) == 3
    # the CSV tells the rows apart as the JSON does
    rows_csv = list(csv.DictReader(open(tmp_path / "s.csv")))
    assert [x["source"] for x in rows_csv] == [m["source"] for m in js["models"]]


def test_ties_and_missing_tasks_in_the_text(folders, tmp_path):
    own, _ = folders
    r = mieb("summary", str(own), "-b", "lite", "--published", str(PUBLISHED / "results"))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    table = [ln for ln in lines if ln.startswith(("own ", "published "))]
    assert len(table) == 8 and sum(ln.startswith("own ") for ln in table) == 3
    text = r.stdout
    # the tie: it has laion's numbers, so laion is its neighbour above at +0.00
    block = text[text.index(f"{TIE} (1) among 5 published models:"):]
    first = block.splitlines()[1]
    assert "Mean(TaskType)" in first and "above: laion/CLIP-ViT-B-32-laion2B-s34B-b79K 42.61 (+0.00)" in first
    # the partial run: not ranked on Mean(TaskType) but on Borda; its missing tasks named
    block = text[text.index(f"{PARTIAL} (1) among 5 published models:"):].split("\n\n")[0]
    assert "Mean(TaskType)               not ranked" in block
    assert "Borda (points)               rank " in block
    assert "missing 3 of 51 tasks: DTD STS13VisualSTS WITT2IRetrieval\n" in block
    assert "Borda counts the 48 tasks scored" in block


def test_bad_published_folders(folders, tmp_path):
    own, _ = folders
    r = mieb("summary", str(own), "--published", str(tmp_path / "nowhere"))
    assert r.returncode == 1 and "nowhere" in r.stderr
    r = mieb("summary", str(tmp_path / "empty-own"), "--published", str(PUBLISHED))
    assert r.returncode == 1
    r = mieb("summary", str(own), "--published")
    assert r.returncode == 2


def test_the_line_that_ends_mieb_eval_model(folders, tmp_path):
    """mieb_eval.export.placement.placement_line, which tools/mieb-eval-model prints last: one
    line per own model, from summary's placement; nothing without a benchmark or a folder."""
    import subprocess
    import sys

    own, ref = folders
    code = ("import sys\nfrom mieb_eval.export.placement import placement_line\n"
            "print(placement_line(sys.argv[1], sys.argv[2], sys.argv[3] or None, sys.argv[4] or None))\n")
    env = dict(os.environ, PYTHONPATH=str(SRC / "python"), MTEB_CACHE=str(tmp_path / "no-cache"))

    def line(bench, published):
        r = subprocess.run([sys.executable, "-c", code, str(build_dir() / "mieb-eval"), str(own / "results"), bench,
                            published], capture_output=True, text=True, env=env, timeout=300)
        assert r.returncode == 0, r.stderr
        return r.stdout.strip()

    text = line("MIEB(lite)", str(PUBLISHED))
    rows = {r["Model"]: r for r in ref["MIEB(lite)"]}
    ranked = sorted((r["Mean (TaskType)"] for r in rows.values() if r["Mean (TaskType)"] is not None), reverse=True)
    rank = ranked.index(rows[TIE]["Mean (TaskType)"]) + 1
    by_model = dict(ln.split(": ", 1) for ln in text.splitlines())
    assert set(by_model) == OWN
    assert by_model[TIE].startswith(f"rank {rank} of {len(ranked)} on MIEB(lite) (Mean(TaskType)), ")
    assert f"{rows[TIE]['Rank (Borda)']} of " in by_model[TIE] and str(PUBLISHED) in by_model[TIE]
    assert "next above: laion/CLIP-ViT-B-32-laion2B-s34B-b79K (+0.00)" in by_model[TIE]
    assert by_model[PARTIAL].startswith(f"not ranked ({len(ranked)} are) on MIEB(lite)")
    assert "3 of its tasks missing" in by_model[PARTIAL]
    assert line("", str(PUBLISHED)) == "None"  # a task list: no published ordering
    assert line("MIEB(lite)", "") == "None"    # no folder given and no mteb copy


def test_report_shows_own_models_among_the_top_published(folders, tmp_path):
    """report --published --top N: the own models starred and highlighted, with the N best published
    ones (by the full leaderboard, whose Rank and Rank(Borda) the table keeps), the placement card
    stating summary's ranks, and the first own model as the default baseline."""
    import re

    own, _ = folders
    html = tmp_path / "r.html"
    r = mieb("report", str(own), "-b", "lite", "--published", str(PUBLISHED), "--top", "2", "--html", str(html))
    assert r.returncode == 0, r.stderr
    s = mieb("summary", str(own), "-b", "lite", "--published", str(PUBLISHED), "--json", str(tmp_path / "s.json"))
    assert s.returncode == 0, s.stderr
    js = json.loads((tmp_path / "s.json").read_text())
    text = html.read_text()
    table = text[text.index('<table class="summary">'):]
    table = table[:table.index("</table>")]
    rows = re.findall(r'<tr data-series="([^"]*)"( class="own")?><td>(\d+)</td>', table)
    want = [m for m in js["models"] if m["source"] == "own" or m["Rank"] <= 2 + sum(
        o["source"] == "own" and o["Rank"] < m["Rank"] for o in js["models"])]
    assert [int(rank) for _, _, rank in rows] == [m["Rank"] for m in want]
    for (label, own_class, _), m in zip(rows, want):
        assert (own_class != "") == (m["source"] == "own")
        assert label == ("\u2605 " if m["source"] == "own" else "") + m["model"]
    assert sum(m["source"] == "published" for m in want) == 2
    card = text[text.index('<table class="placement">'):]
    card = card[:card.index("</table>")]
    for p in js["placement"]:
        mean = p["Mean(TaskType)"]
        cell = f"{mean['rank']} of {mean['of']}" if mean["rank"] else "not ranked"
        assert re.search(rf"&#9733; {re.escape(p['model'])}</td><td>[^<]*</td><td[^>]*>{cell}</td>"
                         rf"<td>{p['Borda']['rank']} of {p['Borda']['of']}</td>", card), p["model"]
    first_own = sorted(p.name for p in (own / "results").iterdir())[0].replace("__", "/")
    assert f"the baseline, <b>\u2605 {first_own}</b>" in text


def test_published_report_renders_in_chromium(folders, tmp_path):
    """The page as a person sees it: headless Chromium logs no console message, and the own
    rows' highlight (#fff3bf) is on the screen."""
    from PIL import Image
    from test_report import chromium, console_lines, render

    if chromium() is None:
        pytest.skip("chromium is not installed (scripts/install-deps.sh installs it)")
    own, _ = folders
    html = tmp_path / "r.html"
    r = mieb("report", str(own), "-b", "lite", "--published", str(PUBLISHED), "--html", str(html))
    assert r.returncode == 0, r.stderr
    png = tmp_path / "r.png"
    assert console_lines(render(html, png, tmp_path / "prof")) == []
    counts = {c: n for n, c in Image.open(png).convert("RGB").getcolors(maxcolors=1 << 22)}
    assert counts.get((0xFF, 0xF3, 0xBF), 0) > 5000
