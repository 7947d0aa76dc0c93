"""mieb_eval.mteb.SearchIndex as mteb's search index: mteb.evaluate itself, on mteb's own task
classes, with mteb's default search, FaissSearchIndex, SearchIndex and search_wrapper
(mteb_backend_driver.py, run in .venv-mteb: mteb with torch), and SearchIndex's own contract
without mteb.

What must hold (the driver's module comment says why): SearchIndex and search_wrapper give
every key and every query's result dict, in order, of mteb's search with torch.topk's equal
scores in index order (default-stable), on data full of ties (duplicate documents,
skip_first_result, reranking with repeated candidates, VisionCentricQA, float32, float16 and
bfloat16 embeddings), and of mteb's search as it is where scores are distinct. How FaissSearchIndex differs is printed (pytest -s).
"""
import json
import math
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import mieb_eval
from mieb_eval.mteb import SearchIndex

HERE = Path(__file__).resolve().parent
SRC = Path(os.environ.get("MIEB_SOURCE_DIR", HERE.parents[1]))
MTEB_PY = Path(os.environ.get("MIEB_MTEB_VENV", SRC / ".venv-mteb")) / "bin" / "python"


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def _key_diffs(ref: dict, got: dict) -> list[str]:
    out = []
    for split, subsets in ref.items():
        for r, g in zip(subsets, got.get(split, [])):
            out += [f"{split}/{k}: {r[k]!r} != {g.get(k)!r}" for k in r if not _same(r[k], g.get(k))]
        if len(subsets) != len(got.get(split, [])):
            out.append(f"{split}: {len(subsets)} subsets != {len(got.get(split, []))}")
    return out


def _dict_diffs(ref: list, got: list) -> int:
    """Queries whose result dict (items in order) differ, and a different query list counts all."""
    if [q for q, _ in ref] != [q for q, _ in got]:
        return len(ref)
    return sum(a != b for a, b in zip(ref, got))


def _mteb_env(tmp: Path) -> dict:
    """The environment of a .venv-mteb process: offline, this mieb_eval alone on its path."""
    if not MTEB_PY.exists():
        raise RuntimeError(f"{MTEB_PY} is missing: run scripts/setup-mteb-env.sh (scripts/test.sh does)")
    pkg = tmp / "pkg"
    pkg.mkdir()
    (pkg / "mieb_eval").symlink_to(Path(mieb_eval.__file__).resolve().parent)  # this mieb_eval, alone
    return dict(os.environ, HF_DATASETS_DISABLE_PROGRESS_BARS="1", HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1",
                TRANSFORMERS_OFFLINE="1", MTEB_CACHE=str(tmp / "mteb-cache"), TQDM_DISABLE="1",
                PYTHONPATH=os.pathsep.join(p for p in (str(pkg), os.environ.get("PYTHONPATH", "")) if p))


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    from conftest import TIME_SCALE

    tmp = tmp_path_factory.mktemp("mteb_backend")
    env = _mteb_env(tmp)
    out = tmp / "report.json"
    res = subprocess.run([str(MTEB_PY), str(HERE / "mteb_backend_driver.py"), str(out)], capture_output=True,
                         text=True, env=env, timeout=600 * TIME_SCALE)
    assert res.returncode == 0, res.stderr[-8000:]
    return json.loads(out.read_text())


def test_every_way_ran(report):
    assert len(report["cases"]) == 15
    for case, ways in report["cases"].items():
        for way in ("default", "default-stable", "mieb", "mieb-wrapper"):
            assert "error" not in ways[way], (case, way, ways[way].get("trace"))


def test_mieb_equals_mtebs_search_with_index_order_ties(report):
    """Every key and every result dict, in order, on every case."""
    for case, ways in report["cases"].items():
        for way in ("mieb", "mieb-wrapper"):
            ref, got = ways["default-stable"], ways[way]
            assert _key_diffs(ref["scores"], got["scores"]) == [], (case, way)
            assert got["results"] == ref["results"], (case, way, _dict_diffs(ref["results"][0], got["results"][0]))


def test_mieb_equals_mtebs_default_search_on_distinct_scores(report):
    distinct = [c for c in report["cases"] if "/distinct/" in c]
    assert len(distinct) == 3
    for case in distinct:
        for way in ("mieb", "mieb-wrapper"):
            ref, got = report["cases"][case]["default"], report["cases"][case][way]
            assert _key_diffs(ref["scores"], got["scores"]) == [], (case, way)
            assert got["results"] == ref["results"], (case, way)


def test_the_ties_matter(report):
    """The tie data are no formality: torch.topk's own tie order changes mteb's result dicts in
    every tied case and keys in some, skip_first_result's task among them."""
    tied = {c: w for c, w in report["cases"].items() if "/ties/" in c}
    assert all(_dict_diffs(w["default"]["results"][0], w["default-stable"]["results"][0]) for w in tied.values())
    changed = [c for c, w in tied.items() if _key_diffs(w["default"]["scores"], w["default-stable"]["scores"])]
    assert any(c.startswith("BackendI2ISkip/") for c in changed), changed
    assert any(c.startswith("BackendRerank/") for c in changed), changed


def test_a_query_without_candidates_warns_as_faiss(report):
    for case, ways in report["cases"].items():
        want = ["No top-ranked documents for query q4"] if case.startswith("BackendRerank/") else []
        assert ways["mieb"]["warnings"] == want and ways["mieb-wrapper"]["warnings"] == want, case
        if "faiss" in ways and "error" not in ways["faiss"]:
            assert ways["faiss"]["warnings"] == want, case


def test_how_faiss_differs(report):
    """Printed, not asserted: FaissSearchIndex against mteb's default search."""
    if "faiss" not in report["ways"]:
        pytest.skip("faiss is not installed in .venv-mteb")
    print("\ncase: FaissSearchIndex against default (keys differing / result dicts differing)")
    for case, ways in report["cases"].items():
        f = ways["faiss"]
        if "error" in f:
            print(f"  {case}: {f['error'][:80]}")
            continue
        d = ways["default"]
        print(f"  {case}: keys {len(_key_diffs(d['scores'], f['scores']))}, "
              f"dicts {_dict_diffs(d['results'][0], f['results'][0])}/{len(d['results'][0])}")


# ------------------------------------------------------------------ SearchIndex without mteb
def _model(sim="cosine"):
    return SimpleNamespace(mteb_model_meta=SimpleNamespace(similarity_fn_name=sim))


def test_package_imports_without_mteb():
    code = "import sys; sys.modules['mteb'] = None; import mieb_eval.mteb; print('ok')"
    env = dict(os.environ, PYTHONPATH=str(Path(mieb_eval.__file__).resolve().parents[1]))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr


@pytest.mark.parametrize("sim", ["euclidean", "MaxSim", None])
def test_other_similarities_are_refused(sim):
    with pytest.raises(ValueError, match="does not support similarity function.*Available: cosine, dot"):
        SearchIndex(_model(sim))


def test_documents_added_in_parts_search_as_one(engine):
    rng = np.random.default_rng(1)
    c = rng.integers(-2, 3, (90, 8)).astype(np.float32)
    q = rng.integers(-2, 3, (7, 8)).astype(np.float32)
    ids = [f"x{i}" for i in range(90)]
    whole, parts = SearchIndex(_model("dot"), engine=engine), SearchIndex(_model("dot"), engine=engine)
    whole.add_documents(c, ids)
    parts.add_documents(c[:30], ids[:30])
    parts.add_documents(c[30:].astype(np.float16), ids[30:])  # mixed dtypes meet in float32
    assert parts.search(q, 10) == whole.search(q, 10)
    s, i = mieb_eval.search(q, c, top_k=10, similarity="dot", corpus_ids=ids, order="heap", engine=engine)
    assert whole.search(q, 10) == (s.tolist(), i.tolist())
    parts.clear()
    assert parts.idxs == []
    with pytest.raises(ValueError, match="No index built"):
        parts.search(q, 10)
    with pytest.raises(ValueError, match="3 embeddings for 2 ids"):
        parts.add_documents(c[:3], ids[:2])
    with pytest.raises(ValueError, match="dimension 4, the index holds 8"):
        whole.add_documents(np.ones((2, 4), np.float32), ["y0", "y1"])


def test_reranking_returns_positions_in_the_candidate_list(engine):
    c = np.array([[1, 0], [3, 0], [2, 0], [3, 0]], np.float32)  # rows 1 and 3 tie
    index = SearchIndex(_model("dot"), engine=engine)
    index.add_documents(c, ["a", "b", "c", "d"])
    q = np.array([[1, 0], [1, 0], [1, 0]], np.float32)
    top = {"q0": ["c", "d", "a", "b"], "q1": [], "q2": ["a"]}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scores, pos = index.search(q, 3, top_ranked=top, query_idx_to_id={0: "q0", 1: "q1", 2: "q2"})
    assert [str(w.message) for w in caught] == ["No top-ranked documents for query q1"]
    # q0's top 3, equal scores by position: d (1), b (3), c; pushed in that order, mteb's heap
    # holds (2.0, "c"), (3.0, "d"), (3.0, "b")
    assert [[top["q0"][p] for p in pos[0]], scores[0]] == [["c", "d", "b"], [2.0, 3.0, 3.0]]
    assert (scores[1], pos[1]) == ([], [])
    assert (scores[2], pos[2]) == ([1.0], [0])
    with pytest.raises(ValueError, match="query_idx_to_id"):
        index.search(q, 3, top_ranked=top)


# What the test adds to docs/PYTHON.md's first example: its results against mteb's own search
# and a numpy ranking, and no file written under the mteb cache.
_EXAMPLE_CHECK = """
import json, os
default = mteb.evaluate(model, Fruit(), cache=None)
untimed = lambda r: {s: [{k: v for k, v in x.items() if "time" not in k} for x in subs] for s, subs in r.scores.items()}
assert untimed(results.task_results[0]) == untimed(default.task_results[0])
q, d = model.embed(queries.values()), model.embed(docs.values())
cos = (q / np.linalg.norm(q, axis=1, keepdims=True)) @ (d / np.linalg.norm(d, axis=1, keepdims=True)).T
assert rows.tolist() == np.argsort(-cos, axis=1, kind="stable")[:, :2].tolist()
assert not [f for _, _, fs in os.walk(os.environ["MTEB_CACHE"]) for f in fs]  # cache=None: no files
print("EXAMPLE-CHECKED", json.dumps(results.task_results[0].get_score()))
"""


def test_python_doc_example_runs_offline(tmp_path):
    """docs/PYTHON.md opens with a runnable example (an in-memory task, a small encoder, no
    hub): it runs as written, offline, and mieb_eval's search inside mteb.evaluate gives mteb's
    own scores."""
    from conftest import TIME_SCALE

    text = (SRC / "docs" / "PYTHON.md").read_text()
    example = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    assert "mieb_eval.mteb.search_wrapper" in example and "mieb_eval.search(" in example
    script = tmp_path / "example.py"
    script.write_text(example + _EXAMPLE_CHECK)
    res = subprocess.run([str(MTEB_PY), str(script)], capture_output=True, text=True, cwd=tmp_path,
                         env=_mteb_env(tmp_path), timeout=300 * TIME_SCALE)
    assert res.returncode == 0, res.stderr[-6000:]
    assert "EXAMPLE-CHECKED" in res.stdout
    printed = "[['d1', 'd3'], ['d3', 'd1'], ['d4', 'd1']]"
    assert printed in res.stdout and f"(`{printed}`)" in text  # what the page says it prints
