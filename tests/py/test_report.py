"""`mieb-eval report --html`: the page's numbers against an independent computation from the
result files, its markup (well-formed SVG, escaping, nothing external) and how Chromium
renders it.

Two synthetic "models" (synth with seeds 7 and 8, scored by `run`) over tasks of every
family, one of them given a hostile name (<script>, quotes, ampersand), a hostile phase
name and an extra subset with a hostile name, and one task file removed (missing values).
Every chart's data points (data-value) are compared with numbers computed here from the
JSON files with numpy, and their pixel positions with the mapping each <svg> declares.
"""
import json
import math
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import rankdata

from helpers.mieb_tools import build_dir

SRC = Path(os.environ.get("MIEB_SOURCE_DIR", Path(__file__).resolve().parents[2]))
TASKS = {t["name"]: t for t in json.load(open(SRC / "configs" / "tasks.json"))}
AGGREGATES = set(json.load(open(SRC / "configs" / "benchmarks.json"))["aggregate_tasks"])
RUN_TASKS = ["DTD", "EuroSAT", "CIFAR100ZeroShot", "ImageNetDog15Clustering", "Winoground", "STS13VisualSTS",
             "STS17MultilingualVisualSTS", "VisualSTS17Multilingual", "CIRRIT2IRetrieval", "WITT2IRetrieval",
             "VidoreDocVQARetrieval", "CVBenchCount"]
EVIL = 'evil/<script>alert("m")</script>&\'x'
EVIL_PHASE = "Stage: <script>alert('p')</script>"
EVIL_SUBSET = '<img src=x onerror=alert("s")>'
REMOVED = "Winoground"  # missing from model B


def mieb(*args, timeout=600):
    return subprocess.run([str(build_dir() / "mieb-eval"), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)


def model_dir(out: Path) -> Path:
    (d,) = [p for p in (out / "results").glob("*/*") if p.is_dir()]
    return d


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    root = tmp_path_factory.mktemp("report")
    outs = []
    for seed in (7, 8):
        s = root / f"suite{seed}"
        r = mieb("synth", "--out", s, "--seed", seed, "--scale", "0.01", "--dim", 32, "--tasks", ",".join(RUN_TASKS))
        assert r.returncode == 0, r.stderr
        out = root / f"out{seed}"
        r = mieb("run", "--task-data", s / "task-data", "--embeddings", s / "embeddings", "-t", *RUN_TASKS,
                 "--output-folder", out, "-q")
        assert r.returncode == 0, r.stderr
        outs.append(out)
    # model B: a hostile name, phase and subset, and a task missing
    b = model_dir(outs[1])
    meta = json.loads((b / "model_meta.json").read_text())
    meta["name"] = EVIL
    (b / "model_meta.json").write_text(json.dumps(meta))
    cirr = json.loads((b / "CIRRIT2IRetrieval.json").read_text())
    cirr["evaluation_phases"].append({"name": EVIL_PHASE, "start": 0.0, "end": 0.001, "split": "", "subset": ""})
    (b / "CIRRIT2IRetrieval.json").write_text(json.dumps(cirr))
    wit = json.loads((b / "WITT2IRetrieval.json").read_text())
    extra = dict(wit["scores"]["test"][0], hf_subset=EVIL_SUBSET, languages=["<b>lang</b>"], main_score=0.123)
    wit["scores"]["test"].append(extra)  # not a subset of the task: ignored by the leaderboard, shown per language
    (b / "WITT2IRetrieval.json").write_text(json.dumps(wit))
    (b / f"{REMOVED}.json").unlink()
    html = root / "report.html"
    r = mieb("report", outs[0], outs[1], "--html", html)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(html)
    return root, outs, html


# ---- the reference: numbers computed here from the files ----

def load_results(out: Path):
    d = model_dir(out)
    meta = json.loads((d / "model_meta.json").read_text())
    files = {p.stem: json.loads(p.read_text()) for p in d.glob("*.json") if p.name != "model_meta.json"}
    return meta["name"], files


def task_score(task, doc):
    """TaskResult.get_score over the task's splits x subsets (aggregates: "default"); NaN when any is missing."""
    if doc is None:
        return math.nan
    meta = TASKS[task]
    subs = ["default"] if task in AGGREGATES else meta["hf_subsets"]
    vals = []
    for split in meta["eval_splits"]:
        got = {e["hf_subset"]: e["main_score"] for e in doc["scores"].get(split, [])}
        vals += [got.get(s, math.nan) if got.get(s) is not None else math.nan for s in subs]
    return float(np.mean(vals))


def reference(outs):
    models = dict(load_results(o) for o in outs)
    tasks = [t for t in TASKS if any(t in f for f in models.values())]  # registry order, found anywhere
    types = list(dict.fromkeys(TASKS[t]["type"] for t in tasks))
    scores = {m: {t: task_score(t, f.get(t)) for t in tasks} for m, f in models.items()}
    tmeans = {m: {ty: float(np.mean([scores[m][t] for t in tasks if TASKS[t]["type"] == ty])) for ty in types}
              for m in models}
    mtt = {m: float(np.mean(list(tmeans[m].values()))) for m in models}
    mt = {m: float(np.mean(list(scores[m].values()))) for m in models}
    # Borda: per task, average rank (descending) among models with a value; points n - rank
    names = list(models)
    points = dict.fromkeys(names, 0.0)
    for t in tasks:
        have = [m for m in names if not math.isnan(scores[m][t])]
        ranks = rankdata([-scores[m][t] for m in have], method="average")
        for m, r in zip(have, ranks):
            points[m] += len(names) - r
    borda = dict(zip(names, rankdata([-points[m] for m in names], method="min").astype(int)))
    return dict(models=models, tasks=tasks, types=types, scores=scores, tmeans=tmeans, mtt=mtt, mt=mt, borda=borda)


def close(a, b, tol=1e-12):
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return abs(a - b) <= tol * max(1.0, abs(b))


def pct(x):
    return "-" if math.isnan(x) else f"{round(x * 100, 2):.2f}"


# ---- reading the page ----

class Cells(HTMLParser):
    """Table rows (their attributes) and cells (attributes and text), and every href/src seen."""

    def __init__(self):
        super().__init__()
        self.rows, self.refs, self.tags = [], [], set()
        self._cell = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.add(tag)
        self.refs += [(k, v) for k, v in attrs if k in ("href", "src", "xlink:href", "action")]
        if tag == "tr":
            self.rows.append((a, []))
        elif tag in ("td", "th") and self.rows:
            self._cell = [a, ""]
            self.rows[-1][1].append(self._cell)

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[1] += data


def svgs(text):
    """Every <svg> of the page parsed as XML (so each must be well-formed), keyed by data-chart."""
    out = {}
    for frag in re.findall(r"<svg\b.*?</svg>", text, flags=re.S):
        el = ET.fromstring(frag)
        out[el.get("data-chart")] = el
    return out


def fl(el, k):
    return float(el.get(k))


@pytest.fixture(scope="module")
def page(suite):
    root, outs, html = suite
    text = html.read_text(encoding="utf-8")
    cells = Cells()
    cells.feed(text)
    return text, cells, svgs(text), reference(outs)


def test_summary_table(page):
    text, cells, charts, ref = page
    a_name, b_name = list(ref["models"])
    rows = {r[0]["data-series"]: {c[0].get("data-col"): c[1] for c in r[1]} for r in cells.rows
            if "data-series" in r[0] and any(c[0].get("data-col") == "Mean(Task)" for c in r[1])}
    assert set(rows) == {a_name, b_name}
    for m, cols in rows.items():
        assert cols["Mean(TaskType)"] == pct(ref["mtt"][m])
        assert cols["Mean(Task)"] == pct(ref["mt"][m])
        assert cols["Rank(Borda)"] == str(ref["borda"][m])
        n_complete = sum(not math.isnan(v) for v in ref["scores"][m].values())
        assert cols["Tasks"] == f"{n_complete}/{len(ref['tasks'])}"
    assert math.isnan(ref["mt"][b_name]) and rows[b_name]["Mean(Task)"] == "-"  # the removed task


def score_rows(cells, key):
    """data-task / data-label rows: {row key: {(kind, series): (data-value, text)}}."""
    out = {}
    for attrs, cs in cells.rows:
        if key not in attrs:
            continue
        d = {}
        for a, t in cs:
            cls = a.get("class", "")
            kind = "delta" if "delta" in cls else "score" if "score" in cls else None
            if kind:
                d[(kind, a["data-series"])] = (float(a["data-value"]), t)
        out[attrs[key]] = d
    return out


def check_delta_cells(d, base, other, va, vb):
    assert close(d[("score", base)][0], va) and d[("score", base)][1] == pct(va)
    assert close(d[("score", other)][0], vb) and d[("score", other)][1] == pct(vb)
    delta = vb - va
    got, shown = d[("delta", other)]
    assert close(got, delta, 1e-9)
    assert shown == ("-" if math.isnan(delta) else f"{delta * 100:+.2f}")
    assert ("delta", base) not in d  # no delta column for the baseline itself


def test_per_task_and_per_type_deltas(page):
    text, cells, charts, ref = page
    a, b = list(ref["models"])  # the baseline is the first model of the first folder
    tasks = score_rows(cells, "data-task")
    assert list(tasks) == [t for ty in ref["types"] for t in ref["tasks"] if TASKS[t]["type"] == ty]
    for t, d in tasks.items():
        check_delta_cells(d, a, b, ref["scores"][a][t], ref["scores"][b][t])
    labels = score_rows(cells, "data-label")
    for ty in ref["types"]:
        check_delta_cells(labels[ty], a, b, ref["tmeans"][a][ty], ref["tmeans"][b][ty])
    check_delta_cells(labels["Mean(TaskType)"], a, b, ref["mtt"][a], ref["mtt"][b])
    check_delta_cells(labels["Mean(Task)"], a, b, ref["mt"][a], ref["mt"][b])
    assert any(not math.isnan(ref["scores"][b][t] - ref["scores"][a][t]) and
               ref["scores"][b][t] != ref["scores"][a][t] for t in ref["tasks"])  # deltas are not all zero


def bar_pixels(chart, bar):
    """Where a bar should be along the value axis, from the chart's declared mapping."""
    v0, sc, vmin = fl(chart, "data-v0"), fl(chart, "data-scale"), fl(chart, "data-vmin")
    v = fl(bar, "data-value")
    lo, hi = min(v, 0.0), max(v, 0.0)
    if chart.get("data-horizontal") == "1":
        return (fl(bar, "x"), fl(bar, "width")), (v0 + (lo - vmin) * sc, (hi - lo) * sc)
    return (fl(bar, "y"), fl(bar, "height")), (v0 - (hi - vmin) * sc, (hi - lo) * sc)


def check_bars(chart, expected):
    """expected: {(series, label): value}; NaN values must be drawn as an n/a mark."""
    got = {}
    for bar in chart.iter("rect"):
        if bar.get("class") != "bar":
            continue
        got[(bar.get("data-series"), bar.get("data-label"))] = fl(bar, "data-value")
        have, want = bar_pixels(chart, bar)
        assert abs(have[0] - want[0]) < 0.011 and abs(have[1] - want[1]) < 0.011, (bar.attrib, want)
    nas = {(t.get("data-series"), t.get("data-label")) for t in chart.iter("text") if t.get("class") == "na"}
    want_bars = {k: v for k, v in expected.items() if not math.isnan(v)}
    assert set(got) == set(want_bars)
    for k, v in want_bars.items():
        assert close(got[k], v), (k, got[k], v)
    assert nas == {k for k, v in expected.items() if math.isnan(v)}


def test_type_bars_and_per_type_bars(page):
    text, cells, charts, ref = page
    check_bars(charts["type-means"], {(m, ty): ref["tmeans"][m][ty] for m in ref["models"] for ty in ref["types"]})
    for ty in ref["types"]:
        check_bars(charts[f"type-{ty}"], {(m, t): ref["scores"][m][t] for m in ref["models"] for t in ref["tasks"]
                                          if TASKS[t]["type"] == ty})
    b = list(ref["models"])[1]
    assert math.isnan(ref["tmeans"][b][TASKS[REMOVED]["type"]])  # so an n/a mark was checked


def test_radar(page):
    text, cells, charts, ref = page
    c = charts["radar"]
    cx, cy, r = fl(c, "data-cx"), fl(c, "data-cy"), fl(c, "data-r")
    vmin, vmax = fl(c, "data-vmin"), fl(c, "data-vmax")
    types = ref["types"]
    pts = [p for p in c.iter("circle") if p.get("class") == "pt"]
    want = {(m, ty): v for m in ref["models"] for ty, v in ref["tmeans"][m].items() if not math.isnan(v)}
    assert {(p.get("data-series"), p.get("data-label")) for p in pts} == set(want)
    for p in pts:
        v = fl(p, "data-value")
        assert close(v, want[(p.get("data-series"), p.get("data-label"))])
        k = types.index(p.get("data-label"))
        a = 2 * math.pi * k / len(types)
        dist = (v - vmin) / (vmax - vmin) * r
        assert abs(fl(p, "cx") - (cx + dist * math.sin(a))) < 0.011 and abs(fl(p, "cy") - (cy - dist * math.cos(a))) < 0.011
    assert len([p for p in c.iter("polygon") if p.get("class") == "radar-area"]) == len(ref["models"])


def test_probe_spread(page):
    text, cells, charts, ref = page
    c = charts["probe-spread"]
    v0, sc, vmin = fl(c, "data-v0"), fl(c, "data-scale"), fl(c, "data-vmin")
    probe_tasks = [t for t in ref["tasks"] if any("scores_per_experiment" in e for f in ref["models"].values()
                                                   for s in f.get(t, {"scores": {}})["scores"].values() for e in s)]
    assert probe_tasks == ["DTD", "EuroSAT"]
    for m, files in ref["models"].items():
        for t in probe_tasks:
            key = TASKS[t]["main_score"]
            exps = [x[key] for s in files[t]["scores"].values() for e in s for x in e["scores_per_experiment"]]
            dots = [p for p in c.iter("circle") if p.get("data-series") == m and p.get("data-label") == t]
            assert [fl(p, "data-value") for p in dots] == exps and len(exps) >= 2
            for p in dots:
                assert abs(fl(p, "cy") - (v0 - (fl(p, "data-value") - vmin) * sc)) < 0.011
            (mean,) = [x for x in c.iter("line") if x.get("class") == "mean" and x.get("data-series") == m
                       and x.get("data-label") == t]
            assert close(fl(mean, "data-value"), float(np.mean(exps)), 1e-9)


def test_recall_curves(page):
    text, cells, charts, ref = page
    retrieval = [t for t in ref["tasks"] if any(k.startswith("recall_at_") for f in ref["models"].values() if t in f
                                                for s in f[t]["scores"].values() for e in s for k in e)]
    assert {"CIRRIT2IRetrieval", "WITT2IRetrieval", "VidoreDocVQARetrieval", "CVBenchCount"} <= set(retrieval)
    assert {k[len("recall-"):] for k in charts if k.startswith("recall-")} == set(retrieval)
    for t in retrieval:
        c = charts[f"recall-{t}"]
        v0, sc, vmin = fl(c, "data-v0"), fl(c, "data-scale"), fl(c, "data-vmin")
        x0, xs = fl(c, "data-x0"), fl(c, "data-xscale")
        for m, files in ref["models"].items():
            entries = [e for s in files[t]["scores"].values() for e in s]
            ks = sorted({int(k[len("recall_at_"):]) for e in entries for k in e if k.startswith("recall_at_")})
            want = [float(np.mean([e[f"recall_at_{k}"] for e in entries if f"recall_at_{k}" in e])) for k in ks]
            pts = [p for p in c.iter("circle") if p.get("data-series") == m]
            assert [int(fl(p, "data-x")) for p in pts] == ks
            for p, w in zip(pts, want):
                assert close(fl(p, "data-value"), w, 1e-9)
                assert abs(fl(p, "cy") - (v0 - (w - vmin) * sc)) < 0.011
                assert abs(fl(p, "cx") - (x0 + (math.log10(fl(p, "data-x")) - math.log10(ks[0])) * xs)) < 0.011


def test_per_language(page):
    text, cells, charts, ref = page
    multi = {k[len("lang-"):] for k in charts if k.startswith("lang-")}
    assert multi == {"WITT2IRetrieval", "STS17MultilingualVisualSTS"}
    for t in multi:
        c = charts[f"lang-{t}"]
        order = []  # (split, subset) in order of first appearance over the models (leaderboard order)
        seen = [p for p in c.iter("rect") if p.get("class") == "bar"]
        series_in_chart = list(dict.fromkeys(p.get("data-series") for p in seen))
        for m in series_in_chart:
            for s, es in ref["models"][m][t]["scores"].items():
                for e in es:
                    if (s, e["hf_subset"]) not in order:
                        order.append((s, e["hf_subset"]))
        labels = list(dict.fromkeys(p.get("data-label") for p in seen))
        assert len(labels) == len(order)
        exp = {}
        for (s, sub), lab in zip(order, labels):
            assert lab == sub or lab.startswith(sub + " ") or lab.startswith(f"{s}/{sub}")
            for m, files in ref["models"].items():
                e = [e for e in files[t]["scores"].get(s, []) if e["hf_subset"] == sub]
                exp[(m, lab)] = e[0]["main_score"] if e else math.nan
        check_bars(c, exp)
    wit = {p.get("data-label") for p in charts["lang-WITT2IRetrieval"].iter("rect") if p.get("class") == "bar"}
    assert any(lab.startswith(EVIL_SUBSET) for lab in wit)  # the extra subset, its name intact


def phase_segments(doc):
    """Seconds per segment of one result, computed from its phases as the report defines them."""
    out, ev, stages, top = {}, 0.0, 0.0, 0.0
    for p in doc.get("evaluation_phases") or []:
        d = p["end"] - p["start"]
        if d <= 0:
            continue
        if p["name"] == "Evaluation":
            ev += d
            top += d
            continue
        label = p["name"][7:] if p["name"].startswith("Stage: ") else p["name"]
        out[label] = out.get(label, 0.0) + d
        if p["name"].startswith("Stage: "):
            stages += d
        else:
            top += d
    out["Evaluation (other)"] = max(ev - stages, 0.0)
    out["unattributed"] = max(doc["evaluation_time"] - top, 0.0)
    return out


def test_time_per_task_and_stage(page):
    text, cells, charts, ref = page
    stacks = {}
    for frag in re.findall(r'<div class="card" data-series="([^"]*)">.*?(<svg\b.*?</svg>)', text, flags=re.S):
        stacks[ET.fromstring(f'<x a="{frag[0]}"/>').get("a")] = ET.fromstring(frag[1])
    assert set(stacks) == set(ref["models"])
    totals = {r[0]["data-series"]: {c[0]["data-col"]: float(c[0]["data-value"]) for c in r[1] if "data-col" in c[0]}
              for r in cells.rows if "data-series" in r[0] and any(c[0].get("data-col") == "total" for c in r[1])}
    for m, files in ref["models"].items():
        c = stacks[m]
        v0, sc = fl(c, "data-v0"), fl(c, "data-scale")
        segs = [x for x in c.iter("rect") if x.get("class") == "seg"]
        want_tot = {}
        for t in ref["tasks"]:
            if t not in files:
                assert not [x for x in segs if x.get("data-label") == t]
                continue
            want = phase_segments(files[t])
            got = [x for x in segs if x.get("data-label") == t]
            assert {x.get("data-series"): fl(x, "data-value") for x in got} == pytest.approx(
                {k: v for k, v in want.items() if v > 0}, rel=1e-9, abs=1e-12)
            at = v0  # segments laid end to end from the axis, in segment order
            for x in got:
                assert abs(fl(x, "x") - at) < 0.002 and abs(fl(x, "width") - fl(x, "data-value") * sc) < 0.002
                at += fl(x, "data-value") * sc
            for k, v in want.items():
                want_tot[k] = want_tot.get(k, 0.0) + v
            # the segments cover evaluation_time (more only where a derived segment was clamped at 0)
            assert sum(want.values()) >= files[t]["evaluation_time"] * (1 - 1e-9)
        for k, v in want_tot.items():
            assert totals[m][k] == pytest.approx(v, rel=1e-9, abs=1e-12), (m, k)
    b = list(ref["models"])[1]
    assert totals[b][EVIL_PHASE[7:]] == pytest.approx(0.001)


def test_escaping_and_nothing_external(page, suite):
    text, cells, charts, ref = page
    # no script, image, frame, link or style sheet element, whatever the result files hold
    assert "<script" not in text.lower() and "<img" not in text.lower()
    assert not cells.tags & {"script", "img", "iframe", "object", "embed", "link", "base", "form"}
    # the hostile strings round-trip as text: parsed back, they are exactly what the files hold
    assert EVIL in {r[0].get("data-series") for r in cells.rows}
    assert any(EVIL_PHASE[7:] in c[1] for r in cells.rows for c in r[1])
    assert "&lt;script&gt;alert(&quot;m&quot;)&lt;/script&gt;&amp;&#39;x" in text
    # nothing is fetched: only in-page links, no URL anywhere, no CSS import or url()
    assert cells.refs and all(k == "href" and v.startswith("#") for k, v in cells.refs)
    assert not re.search(r"(?i)(https?:|ftp:|file:|data:|//[a-z0-9.-]+\.[a-z]{2,})", text)
    assert "url(" not in text and "@import" not in text


def test_command_line(suite, tmp_path):
    root, outs, html = suite
    ref = reference(outs)
    a, b = list(ref["models"])
    # --baseline: deltas against the other model (signs flip)
    out = tmp_path / "flip.html"
    r = mieb("report", outs[0], outs[1], "--html", out, "--baseline", EVIL)
    assert r.returncode == 0, r.stderr
    cells = Cells()
    cells.feed(out.read_text())
    for t, d in score_rows(cells, "data-task").items():
        check_delta_cells(d, b, a, ref["scores"][b][t], ref["scores"][a][t])
    # a benchmark with tasks absent here: the page is still written, the missing ones are n/a
    r = mieb("report", outs[0], "-b", "MIEB(lite)", "--html", tmp_path / "lite.html")
    assert r.returncode == 0, r.stderr
    lite = svgs((tmp_path / "lite.html").read_text())
    assert any(t.get("class") == "na" for t in lite["type-means"].iter("text"))
    # errors: usage 2, nothing found 1, unwritable 4; no partial page in any case
    assert mieb("report", outs[0]).returncode == 2
    assert mieb("report", "--html", tmp_path / "x.html").returncode == 2
    assert mieb("report", outs[0], "--html", tmp_path / "x.html", "--baseline", "nobody").returncode == 2
    assert mieb("report", outs[0], "--html", tmp_path / "x.html", "-b", "nope").returncode == 2
    assert mieb("report", tmp_path / "missing", "--html", tmp_path / "x.html").returncode == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    assert mieb("report", empty, "--html", tmp_path / "x.html").returncode == 1
    assert mieb("report", outs[0], "--html", tmp_path / "no" / "dir" / "x.html").returncode == 4
    assert not (tmp_path / "x.html").exists() and not list(tmp_path.glob("*.tmp*"))


# ---- rendering in headless Chromium ----

def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def render(page_path: Path, png: Path, profile: Path):
    """Screenshot a page; returns Chromium's stderr, where --log-level=0 logs every console message."""
    r = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                        "--hide-scrollbars", "--enable-logging=stderr", "--log-level=0", f"--user-data-dir={profile}",
                        f"--screenshot={png}", "--window-size=1400,4000", page_path.resolve().as_uri()],
                       capture_output=True, text=True, timeout=180)
    assert png.exists(), r.stderr[-3000:]
    return r.stderr


def console_lines(log):
    return [ln for ln in log.splitlines() if ":CONSOLE" in ln]


@pytest.mark.skipif(chromium() is None, reason="chromium is not installed (scripts/install-deps.sh installs it)")
def test_chromium_renders_without_console_errors(suite, tmp_path):
    from PIL import Image

    root, outs, html = suite
    # negative control: a broken page must show up in the console log, or this method detects nothing
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><body><p>x</p><script>undefinedReportFunction();</script></body></html>")
    lines = console_lines(render(bad, tmp_path / "bad.png", tmp_path / "prof"))
    assert any("undefinedReportFunction" in ln for ln in lines), "console errors are not detected"
    # the report: no console message at all, and a picture with the models' colours in it
    png = tmp_path / "report.png"
    assert console_lines(render(html, png, tmp_path / "prof")) == []
    im = Image.open(png).convert("RGB")
    assert im.size == (1400, 4000)
    colors = im.getcolors(maxcolors=1 << 22)
    assert len(colors) > 100  # text, bars, lines: not a blank page
    counts = {c: n for n, c in colors}
    assert counts.get((0x4E, 0x79, 0xA7), 0) > 500 and counts.get((0xF2, 0x8E, 0x2B), 0) > 500
    background = max(colors)[0]
    assert background < 0.95 * im.size[0] * im.size[1]
    keep = os.environ.get("MIEB_REPORT_SCREENSHOT")
    if keep:
        shutil.copy(png, keep)


# ---- many models: heatmaps instead of grouped bars, and a layout that fits its cards ----

N_MANY = 20


@pytest.fixture(scope="module")
def many(suite):
    """20 model folders: the two scored models' results with every score scaled by a model's own
    factor (clipped to [0, 1]), each under its own name and revision."""
    root, outs, html = suite
    rng = np.random.default_rng(5)
    base = [model_dir(o) for o in outs]
    folder = root / "many"

    def scale(o, f):
        if isinstance(o, dict):
            return {k: (v if k in ("hf_subset", "languages", "mteb_version") else scale(v, f)) for k, v in o.items()}
        if isinstance(o, list):
            return [scale(x, f) for x in o]
        return min(1.0, max(0.0, o * f)) if isinstance(o, float) else o

    for i in range(N_MANY):
        src = base[i % 2]
        dst = folder / f"org__model-{i:02d}" / f"rev{i}"
        dst.mkdir(parents=True)
        f = float(rng.uniform(0.5, 1.5))
        for p in src.glob("*.json"):
            doc = json.loads(p.read_text())
            if p.name == "model_meta.json":
                doc.update(name=f"org/model-{i:02d}", revision=f"rev{i}")
            else:
                doc["scores"] = scale(doc["scores"], f)
            (dst / p.name).write_text(json.dumps(doc))
    out = root / "many.html"
    r = mieb("report", folder, "--html", out)
    assert r.returncode == 0, r.stderr
    return folder, out


def heat_cells(text, chart):
    m = re.search(rf'<table class="heat" data-heatmap="{re.escape(chart)}">(.*?)</table>', text, flags=re.S)
    assert m, chart
    cells = Cells()
    cells.feed(m.group(0))
    return {(c[0]["data-series"], c[0]["data-label"]): (float(c[0]["data-value"]), c[1], c[0])
            for r in cells.rows for c in r[1] if "heat" in c[0].get("class", "")}


def test_many_models_heatmaps(many):
    folder, out = many
    text = out.read_text(encoding="utf-8")
    models = {}
    for d in sorted(folder.glob("*/*")):
        models[json.loads((d / "model_meta.json").read_text())["name"]] = {
            p.stem: json.loads(p.read_text()) for p in d.glob("*.json") if p.name != "model_meta.json"}
    tasks = [t for t in TASKS if any(t in f for f in models.values())]
    cells = heat_cells(text, "tasks-heat")
    assert len(cells) == N_MANY * len(tasks)
    for m, files in models.items():
        for t in tasks:
            want = task_score(t, files.get(t))
            got, shown, attrs = cells[(m, t)]
            assert close(got, want), (m, t)
            assert shown == ("-" if math.isnan(want) else f"{round(want * 100, 1):.1f}")
    # the highest score of each row is marked, and only scores equal to it
    for t in tasks:
        row = {m: cells[(m, t)] for m in models}
        hi = max(v[0] for v in row.values() if not math.isnan(v[0]))
        lo = min(v[0] for v in row.values() if not math.isnan(v[0]))
        for m, (v, _, a) in row.items():
            assert ("best" in a["class"].split()) == (hi > lo and v == hi), (t, m)
    # type means as a heatmap; no grouped bars, radar or delta columns for 20 models
    types = heat_cells(text, "type-heat")
    assert {lab for _, lab in types} >= {"Mean(TaskType)", "Mean(Task)"}
    charts = svgs(text)
    assert "radar" not in charts and "type-means" not in charts
    assert not [k for k in charts if k.startswith("type-") or k.startswith("lang-")]
    assert 'class="delta' not in text
    assert heat_cells(text, "lang-WITT2IRetrieval")
    # 20 distinct colours in the legend swatches
    assert len(set(re.findall(r'<th class="vert"[^>]*><span><span class="sw" style="background:(#[0-9a-f]{6})', text))) == N_MANY


LAYOUT_PROBE = """<script>
window.addEventListener('load', function () {
  var out = [];
  document.querySelectorAll('svg.chart, table.heat').forEach(function (el) {
    var card = el.closest('.card');
    var w = el.tagName.toLowerCase() === 'svg' ? el.getBoundingClientRect().width : el.scrollWidth;
    out.push({kind: el.tagName.toLowerCase(), id: el.getAttribute('data-chart') || el.getAttribute('data-heatmap'),
              width: w, room: card.clientWidth - 28, fit: el.classList.contains('fit')});
  });
  var pre = document.createElement('pre');
  pre.id = 'layout';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def layout(html: Path, width: int, tmp: Path):
    probe = tmp / f"probe-{html.stem}-{width}.html"
    probe.write_text(html.read_text(encoding="utf-8").replace("</body>", LAYOUT_PROBE + "</body>"), encoding="utf-8")
    r = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                        f"--user-data-dir={tmp / 'prof'}", f"--window-size={width},3000", "--virtual-time-budget=10000",
                        "--dump-dom", probe.resolve().as_uri()], capture_output=True, text=True, timeout=180)
    m = re.search(r'<pre id="layout">(.*?)</pre>', r.stdout, flags=re.S)
    assert m, r.stderr[-2000:]
    return json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))


@pytest.mark.skipif(chromium() is None, reason="chromium is not installed (scripts/install-deps.sh installs it)")
@pytest.mark.parametrize("width", [1400, 800])
def test_layout_fits_cards(suite, many, tmp_path, width):
    """No chart is wider than its card at either width (recall@k charts once overflowed theirs), the
    charts marked to fill their card do (bar charts once filled half), and at 1400 px the 20 models'
    heatmaps fit without scrolling."""
    pages = {"2": suite[2], "20": many[1]}
    for n, html in pages.items():
        items = layout(html, width, tmp_path)
        assert any(i["kind"] == "svg" for i in items)
        for i in items:
            if i["kind"] == "svg":
                assert i["width"] <= i["room"] + 1.5, (n, width, i)
                if i["fit"]:
                    assert i["width"] >= i["room"] - 1.5, (n, width, i)
            elif width >= 1400:
                assert i["width"] <= i["room"] + 1.5, (n, width, i)


# ---- confidence intervals on the deltas (--per-query) ----

def test_per_query_intervals_match_compare(suite, tmp_path):
    """Each delta's interval and p-value are compare's for the same folders, tasks and seed, on task,
    task-type and mean rows; '*' marks exactly the rows with p < alpha."""
    root, outs, html = suite
    outs2, pq = [], []
    # the other model: the same task data (seed 7), embeddings made for a dot-product model
    dot = tmp_path / "suite7dot"
    r = mieb("synth", "--out", dot, "--seed", 7, "--scale", "0.01", "--dim", 32, "--model-sim", "dot",
             "--tasks", ",".join(RUN_TASKS))
    assert r.returncode == 0, r.stderr
    for emb, name in ((root / "suite7" / "embeddings", "org/base"), (dot / "embeddings", "org/other")):
        out, q = tmp_path / f"out-{name[4:]}", tmp_path / f"pq-{name[4:]}"
        r = mieb("run", "--task-data", root / "suite7" / "task-data", "--embeddings", emb, "-t", *RUN_TASKS,
                 "--output-folder", out, "--per-query", q, "-q")
        assert r.returncode == 0, r.stderr
        meta = model_dir(out) / "model_meta.json"
        meta.write_text(json.dumps(dict(json.loads(meta.read_text()), name=name)))
        outs2.append(out)
        pq.append(q)
    page_html = tmp_path / "ci.html"
    r = mieb("report", *outs2, "--html", page_html, "--per-query", f"org/base={pq[0]}",
             "--per-query", f"org/other={pq[1]}", "--resamples", 300, "--seed", 3, "--alpha", 0.1)
    assert r.returncode == 0, r.stderr
    text = page_html.read_text()
    cells = Cells()
    cells.feed(text)
    ref = reference(outs2)
    cmp_json = tmp_path / "cmp.json"
    r = mieb("compare", pq[1], pq[0], "-t", *ref["tasks"], "--resamples", 300, "--seed", 3, "--alpha", 0.1,
             "--json", cmp_json)
    assert r.returncode == 0, r.stderr
    cmp = json.loads(cmp_json.read_text())
    want = {("task", o["task"]): o for o in cmp["tasks"]}
    want.update({("type", o["type"]): o for o in cmp["task_types"]})
    want.update({("mean", o["name"]): o for o in cmp["means"]})
    seen = 0
    for attrs, cs in cells.rows:
        key = ("task", attrs["data-task"]) if "data-task" in attrs else \
              ("mean" if attrs.get("data-label", "").startswith("Mean(") else "type", attrs.get("data-label"))
        if key[1] is None:
            continue
        deltas = [a for a, t in cs if "delta" in a.get("class", "") and a.get("data-series") == "org/other"]
        if not deltas:
            continue
        (d,) = deltas
        w = want.get(key)
        if w is None or w["ci_low"] is None:
            assert "data-ci-low" not in d, key
            continue
        assert float(d["data-ci-low"]) == w["ci_low"] and float(d["data-ci-high"]) == w["ci_high"], key
        assert (float(d["data-p"]) == w["p_value"]) if w["p_value"] is not None else d["data-p"] == "nan"
        seen += 1
    assert seen >= len(cmp["tasks"]) + 2  # every compared task and both means
    # the marks: one per significant row shown
    n_sig = sum(1 for o in list(cmp["tasks"]) + list(cmp["task_types"]) + list(cmp["means"]) if o["significant"])
    assert text.count('<span class="sig">*</span>') == n_sig
    # bad uses: no folder for the baseline, an unknown model, a malformed spec
    assert mieb("report", *outs2, "--html", tmp_path / "x.html", "--per-query", f"org/other={pq[1]}").returncode == 2
    assert mieb("report", *outs2, "--html", tmp_path / "x.html", "--per-query", f"nobody={pq[1]}").returncode == 2
    assert mieb("report", *outs2, "--html", tmp_path / "x.html", "--per-query", str(pq[1])).returncode == 2
    assert not (tmp_path / "x.html").exists()
