"""The task registry and benchmark definitions, through `mieb-eval list-tasks --json`:
132 tasks with the type, main score, splits and subsets of the spec's tasks.json; the four
MIEB benchmarks with the ordered task lists the installed mteb defines (read from mteb's
benchmarks.py with `ast`, independently of configs/benchmarks.json) and the task-type counts
of PROTOCOLS.md §1.1."""
import ast
import glob
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from helpers.mieb_tools import build_dir

SRC = Path(os.environ.get("MIEB_SOURCE_DIR", Path(__file__).resolve().parents[2]))
SPEC = SRC.parent / "shared" / "spec" / "tasks.json"
TASKS_JSON = SPEC if SPEC.exists() else SRC / "configs" / "tasks.json"
SPEC_TASKS = json.load(open(TASKS_JSON))
KEYS = {"MIEB(eng)": "eng", "MIEB(Multilingual)": "multilingual", "MIEB(lite)": "lite", "MIEB(Img)": "img"}
COUNTS = {"MIEB(eng)": 125, "MIEB(Multilingual)": 130, "MIEB(lite)": 51, "MIEB(Img)": 49}
TYPES = ["ImageClassification", "ImageClustering", "ZeroShotClassification", "VisionCentricQA", "Compositionality",
         "VisualSTS(eng)", "VisualSTS(multi)", "Any2AnyRetrieval", "Any2AnyMultilingualRetrieval",
         "DocumentUnderstanding"]
TYPE_TABLE = {  # PROTOCOLS.md §1.1, in TYPES order (0 for "–")
    "MIEB(eng)": [22, 5, 23, 6, 7, 7, 0, 45, 0, 10],
    "MIEB(Multilingual)": [22, 5, 23, 6, 7, 7, 2, 45, 3, 10],
    "MIEB(lite)": [8, 2, 7, 5, 6, 2, 2, 11, 2, 6],
    "MIEB(Img)": [22, 5, 0, 0, 0, 5, 2, 15, 0, 0],
}


def list_tasks(*args):
    r = subprocess.run([str(build_dir() / "mieb-eval"), "list-tasks", *args], capture_output=True, text=True,
                       timeout=60)
    return r.returncode, r.stdout, r.stderr


def mteb_benchmarks():
    """The MIEB task lists as the installed mteb's benchmarks.py spells them."""
    paths = glob.glob(os.path.join(sys.prefix, "lib", "python3*", "site-packages", "mteb", "benchmarks",
                                   "benchmarks", "benchmarks.py"))
    assert paths, "mteb is not installed in this Python"
    tree = ast.parse(open(paths[0]).read())
    env, out = {}, {}

    def ev(n):
        if isinstance(n, ast.List):
            return [ev(e) for e in n.elts]
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, ast.Name):
            return env[n.id]
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add):
            return ev(n.left) + ev(n.right)
        raise ValueError(ast.dump(n))

    for st in tree.body:
        if not (isinstance(st, ast.Assign) and isinstance(st.targets[0], ast.Name)):
            continue
        name = st.targets[0].id
        if name in ("MIEB_common_tasks", "_MIEB_LITE_TASKS"):
            env[name] = ev(st.value)
        elif name in ("MIEB_ENG", "MIEB_MULTILINGUAL", "MIEB_LITE", "MIEB_IMG"):
            kw = {k.arg: k.value for k in st.value.keywords}
            call = kw["tasks"]
            ckw = {k.arg: k.value for k in call.keywords}
            out[ev(kw["name"])] = ev(ckw["tasks"] if "tasks" in ckw else call.args[0])
    return out


@pytest.fixture(scope="module")
def all_tasks():
    rc, out, err = list_tasks("--json")
    assert rc == 0, err
    return json.loads(out)


def test_every_task_as_tasks_json(all_tasks):
    assert len(all_tasks) == 132 == len(SPEC_TASKS)
    assert [t["name"] for t in all_tasks] == [t["name"] for t in SPEC_TASKS]
    for got, want in zip(all_tasks, SPEC_TASKS):
        assert got["type"] == want["type"], got["name"]
        assert got["main_score"] == want["main_score"], got["name"]
        assert got["eval_splits"] == want["eval_splits"], got["name"]
        assert got["hf_subsets"] == want["hf_subsets"], got["name"]
        assert got["n_subsets"] == len(want["hf_subsets"])
    aggregates = {t["name"] for t in all_tasks if t["aggregate"]}
    assert aggregates == {"VisualSTS17Eng", "VisualSTS-b-Eng", "VisualSTS17Multilingual", "VisualSTS-b-Multilingual"}


@pytest.mark.parametrize("bench", list(KEYS))
def test_benchmarks_as_mteb_defines_them(bench, all_tasks):
    mteb = mteb_benchmarks()[bench]
    by_name = {t["name"]: t for t in all_tasks}
    for spelling in (bench, KEYS[bench], bench.lower(), bench[bench.index("("):]):
        rc, out, err = list_tasks("-b", spelling, "--json")
        assert rc == 0, err
        got = [t["name"] for t in json.loads(out)]
        assert got == mteb, spelling  # mteb's order
    assert len(got) == COUNTS[bench]
    # tasks.json's "benchmarks" membership agrees (its order is the registry's)
    assert set(got) == {t["name"] for t in SPEC_TASKS if KEYS[bench] in t["benchmarks"]}
    counts = Counter(by_name[n]["type"] for n in got)
    assert [counts.get(ty, 0) for ty in TYPES] == TYPE_TABLE[bench]
    assert sum(counts.values()) == COUNTS[bench]


def test_task_type_filter_and_text_output():
    rc, out, err = list_tasks("-b", "lite", "--task-types", "ImageClustering,VisualSTS(multi)")
    assert rc == 0, err
    lines = out.strip().splitlines()
    assert [ln.split()[0] for ln in lines] == ["ImageNetDog15Clustering", "TinyImageNetClustering",
                                              "VisualSTS17Multilingual", "VisualSTS-b-Multilingual"]
    assert all(ln.split()[2] in ("supported", "unsupported") for ln in lines)
    assert "(aggregate)" in lines[2]
    wit = [ln for ln in list_tasks()[1].splitlines() if ln.startswith("WITT2IRetrieval ")][0].split()
    assert wit[1:] == ["Any2AnyMultilingualRetrieval", "supported", "test", "11", "ndcg_at_10"]


def test_errors():
    rc, _, err = list_tasks("-b", "MIEB(nope)")
    assert rc == 2 and "MIEB(lite)" in err
    rc, _, err = list_tasks("--task-types", "Retrieval")
    assert rc == 2 and "Retrieval" in err
    assert list_tasks("--bogus")[0] == 2
