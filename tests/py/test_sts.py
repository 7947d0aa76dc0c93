"""Visual STS (host/families/sts.c, sts_aggregate.c, host/cpu/cpu_pairwise.c,
host/metrics/correlation.c) against mteb's own code (tests/py/helpers/mteb_pair_ref.py):

* per-pair cosine / Manhattan / Euclidean values equal sklearn's paired distances to the
  bit, in float32 and float64 (fp16 / bf16 inputs), zero and tiny vectors included; the
  model similarity (torch) within 2 float32 ulps;
* `mieb-eval run` on STS tasks (one subset; 11 language subsets; two splits) and on all
  four aggregate tasks: the whole result file equals what mteb's _calculate_scores,
  task_results_to_scores and TaskResult.to_disk produce for the same embeddings, byte for
  byte as json.dump writes it (embeddings with exact float arithmetic, so every value is
  determined; gold scores on mteb's 0.2 grid, so ties are frequent);
* inputs mteb cannot score fail with the reason; constant gold scores give NaN, as in mteb.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import zlib

import h5py
import numpy as np
import pytest

from helpers import fmt_writer as fw
from helpers import mteb_pair_ref as ref
from helpers.mieb_tools import run_tool

BUILD = os.environ.get("MIEB_BUILD_DIR", "")
BIN = os.path.join(BUILD, "mieb-eval")
REPO = os.environ.get("MIEB_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
REG = {t["name"]: t for t in json.load(open(os.path.join(REPO, "configs", "tasks.json")))}


def _hx(a):
    return " ".join(float(v).hex() for v in np.asarray(a, dtype=np.float64).ravel())


def _tool_pairs(a, b, prec, sim):
    n, d = a.shape
    out = run_tool("pairwise_tool", f"sts {prec} {sim} {n} {d} {_hx(a)} {_hx(b)}\n").splitlines()
    return np.array([[float.fromhex(t) for t in line.split()] for line in out]).reshape(n, 4)


def _vectors(rng, n, d, kind):
    if kind == "normal":
        return rng.standard_normal((n, d)).astype(np.float32)
    if kind == "wide":
        return (rng.standard_normal((n, d)) * 10.0 ** rng.uniform(-3, 3, (n, 1))).astype(np.float32)
    x = rng.standard_normal((n, d)).astype(np.float32)
    x[0] = 0.0  # a zero vector: sklearn keeps it (norm -> 1), torch divides by eps
    x[1] = 1e-8  # below sklearn's 10*eps norm threshold in float32
    return x


@pytest.mark.parametrize("d", [1, 3, 4, 15, 16, 17, 33, 100, 768])
@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_pair_scores_match_sklearn(d, dtype):
    rng = np.random.default_rng(zlib.crc32(f"{d}{dtype}".encode()))
    for kind in ("normal", "zero") if dtype == "f16" else ("normal", "wide", "zero"):
        a, b = _vectors(rng, 12, d, kind), _vectors(rng, 12, d, kind)
        if dtype != "f32":  # what the reader returns for fp16 / bf16 files, and what numpy holds then
            a, b = ref._round16(a, dtype), ref._round16(b, dtype)
        # sklearn runs in float64 unless both inputs are float32 (fp16 arrays -> float64)
        e1, e2 = (a, b) if dtype == "f32" else (a.astype(np.float16 if dtype == "f16" else np.float64),
                                                b.astype(np.float16 if dtype == "f16" else np.float64))
        want = ref.sts_pair_scores(e1, e2)
        got = _tool_pairs(a, b, "f32" if dtype == "f32" else "f64", "cosine")
        for col, key in enumerate(["cosine_scores", "manhattan_distances", "euclidean_distances"]):
            w = np.array(want[key])
            assert np.array_equal(got[:, col], w), (kind, key, got[:, col] - w)
        m = np.array(want["similarity_scores"], dtype=np.float32)
        assert np.all(np.abs(got[:, 3].astype(np.float32) - m) <= 2 * np.spacing(np.abs(m) + 1e-30)), kind


def test_pair_scores_dot_model():
    rng = np.random.default_rng(4)
    a, b = _vectors(rng, 20, 24, "normal"), _vectors(rng, 20, 24, "normal")
    got = _tool_pairs(a, b, "f32", "dot")
    want = np.array(ref.sts_pair_scores(a, b, "dot")["similarity_scores"], dtype=np.float32)
    assert np.all(np.abs(got[:, 3].astype(np.float32) - want) <= 2 * np.spacing(np.abs(want)))


# ---- end to end ----

def exact_vectors(rng, n, dim):
    """4 nonzero entries of +-1 (norm exactly 2), times a power of two: every similarity is exact."""
    v = np.zeros((n, dim), dtype=np.float32)
    for i in range(n):
        idx = rng.choice(dim, 4, replace=False)
        v[i, idx] = rng.choice([-1.0, 1.0], 4)
    return v * (2.0 ** rng.integers(-2, 3, size=(n, 1))).astype(np.float32)


def make_pairs(rng, n, dim, const_gold=False):
    a = exact_vectors(rng, n, dim)
    b = exact_vectors(rng, n, dim)
    gold = rng.integers(0, 26, n) / 5  # mteb's 0..5 in steps of 0.2
    close = gold >= 3  # planted: high-gold pairs share more entries
    b[close] = a[close] * (2.0 ** rng.integers(-1, 2, size=(int(close.sum()), 1))).astype(np.float32)
    rep = rng.choice(n, max(1, n // 10), replace=False)
    a[rep[1:]], b[rep[1:]], gold[rep[1:]] = a[rep[0]], b[rep[0]], gold[rep[0]]  # repeated pairs
    if const_gold:
        gold[:] = 2.4
    return a, b, gold


def write_sts_task(td, ed, task, rng, n=60, dim=16, dtype="f32", splits=None, subsets=None, shards=1,
                   const_gold=False, min_score=0, max_score=5):
    t = REG[task]
    splits = splits or t["eval_splits"]
    subsets = subsets or t["hf_subsets"]
    f = fw.open_task_file(td, task)
    truth = {}
    for split in splits:
        for subset in subsets:
            a, b, gold = make_pairs(rng, n, dim, const_gold)
            g = f.require_group(f"{split}/{subset}")
            g.create_dataset("gold", data=np.asarray(gold, dtype=np.float64))
            g.attrs["min_score"] = min_score
            g.attrs["max_score"] = max_score
            sa = fw.write_role(ed, task, split, subset, "sentence1", a, dtype=dtype, shards=shards)
            sb = fw.write_role(ed, task, split, subset, "sentence2", b, dtype=dtype)
            truth[(split, subset)] = (sa, sb, gold)
    f.close()
    return truth


def result_path(out, task):
    return os.path.join(out, "results", "test-org__test-model", "rev0", f"{task}.json")


def run_mieb(td, ed, out, tasks, *extra, check=True):
    p = subprocess.run([BIN, "run", "--task-data", td, "--embeddings", ed, "-t", *tasks, "--output-folder", out,
                        "--device", "cpu", *extra], capture_output=True, text=True, timeout=600)
    if check and p.returncode != 0:
        raise AssertionError(f"mieb-eval failed ({p.returncode}):\n{p.stderr}")
    return p


def result(out, task):
    path = result_path(out, task)
    text = open(path, encoding="utf-8").read()
    data = json.loads(text)
    assert json.dumps(data, indent=2) == text  # Python's json.dump(indent=2), byte for byte
    assert list(data) == ["dataset_revision", "task_name", "mteb_version", "scores", "evaluation_time",
                          "kg_co2_emissions", "date", "evaluation_phases"]
    return data


def ref_task_scores(task, truth, dtype, sim="cosine"):
    """{split: [subset dict]} as mteb builds and rounds it (unrounded copy returned too)."""
    t = REG[task]
    raw, scores = {}, {}
    for (split, subset), (a, b, gold) in truth.items():
        # sklearn keeps float32 only for float32 input; fp16 arrays (and bf16 values) go to float64
        cast = {"f32": np.float32, "f16": np.float16, "bf16": np.float64}[dtype]
        e1, e2 = a.astype(cast), b.astype(cast)
        m = ref.sts_subset_scores(e1, e2, gold, model_sim=sim)
        langs = t["eval_langs"][subset] if isinstance(t["eval_langs"], dict) else t["eval_langs"]
        d = dict(m, main_score=m[t["main_score"]], hf_subset=subset, languages=langs, mteb_version="2.26.24")
        raw.setdefault(split, []).append(dict(d))
        scores.setdefault(split, []).append(d)
    return raw, ref.round_scores(scores)


def same(a, b):
    """Deep equality where NaN == NaN, keys in the same order."""
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a == b and type(a) is type(b)


CASES = [
    ("STS12VisualSTS", "f32", "cosine", 1),
    ("STS13VisualSTS", "f16", "cosine", 2),
    ("STS15VisualSTS", "bf16", "dot", 1),
    ("STS17MultilingualVisualSTS", "f32", "cosine", 1),
    ("STSBenchmarkMultilingualVisualSTS", "f32", "dot", 3),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[1]}-{c[2]}" for c in CASES])
def test_sts_matches_mteb(tmp_path, case):
    task, dtype, sim, shards = case
    rng = np.random.default_rng(zlib.crc32(repr(case).encode()))
    td, ed, out = str(tmp_path / "td"), str(tmp_path / "emb"), str(tmp_path / "out")
    fw.write_model_meta(ed, sim=sim)
    truth = write_sts_task(td, ed, task, rng, dtype=dtype, shards=shards)
    run_mieb(td, ed, out, [task])
    data = result(out, task)
    _, want = ref_task_scores(task, truth, dtype, sim)
    assert same(data["scores"], want), (data["scores"], want)
    assert [s["hf_subset"] for s in data["scores"][REG[task]["eval_splits"][0]]] == REG[task]["hf_subsets"]
    assert data["dataset_revision"] == "datarev" and data["task_name"] == task and data["kg_co2_emissions"] is None


AGGREGATES = {  # mteb 2.26: tasks/aggregated_tasks/
    "VisualSTS17Eng": "STS17MultilingualVisualSTS",
    "VisualSTS17Multilingual": "STS17MultilingualVisualSTS",
    "VisualSTS-b-Eng": "STSBenchmarkMultilingualVisualSTS",
    "VisualSTS-b-Multilingual": "STSBenchmarkMultilingualVisualSTS",
}


def test_aggregates_match_mteb(tmp_path):
    rng = np.random.default_rng(77)
    td, ed, out = str(tmp_path / "td"), str(tmp_path / "emb"), str(tmp_path / "out")
    fw.write_model_meta(ed)
    truth = {sub: write_sts_task(td, ed, sub, rng, n=40) for sub in set(AGGREGATES.values())}
    run_mieb(td, ed, out, list(AGGREGATES))
    for agg, sub in AGGREGATES.items():
        a, t = REG[agg], REG[sub]
        # a fresh mteb run evaluates the filtered sub-task: the aggregate's subsets, in order, all splits
        kept = {k: v for k, v in truth[sub].items() if k[1] in a["hf_subsets"]}
        kept = dict(sorted(kept.items(), key=lambda kv: (t["eval_splits"].index(kv[0][0]),
                                                          t["hf_subsets"].index(kv[0][1]))))
        raw, _ = ref_task_scores(sub, kept, "f32")
        # AggregateTaskMetadata.eval_langs = list(set(sub-task bcp47 codes)); we write them sorted
        langs = sorted({x for v in t["eval_langs"].values() for x in v})
        agg_scores = ref.aggregate_scores(a["main_score"], a["eval_splits"], langs, sub, raw)
        # TaskResult.from_task_results: {split: [{..., hf_subset, languages, mteb_version}]}, then to_disk
        want = {split: [dict(d["default"], hf_subset="default", languages=langs, mteb_version="2.26.24")]
                for split, d in agg_scores.items()}
        assert isinstance(want["test"][0]["main_score"], np.float64)  # numpy's round applies
        want = json.loads(json.dumps(ref.round_scores(want)))
        data = result(out, agg)
        assert same(data["scores"], want), (agg, data["scores"], want)
        assert data["dataset_revision"] == "1" and data["task_name"] == agg
        assert isinstance(data["kg_co2_emissions"], float) and math.isnan(data["kg_co2_emissions"])
        assert data["evaluation_phases"] is None
    # the sub-tasks themselves were not requested: no partial sub-task files are written
    assert not os.path.exists(result_path(out, "STS17MultilingualVisualSTS"))


def test_aggregate_in_benchmark_and_with_subtask(tmp_path):
    """-b MIEB(lite) picks the aggregates up through their sub-task's file; scoring the
    sub-task in the same run gives the same aggregate."""
    rng = np.random.default_rng(5)
    td, ed = str(tmp_path / "td"), str(tmp_path / "emb")
    fw.write_model_meta(ed)
    write_sts_task(td, ed, "STS17MultilingualVisualSTS", rng, n=30)
    o1, o2 = str(tmp_path / "o1"), str(tmp_path / "o2")
    run_mieb(td, ed, o1, ["VisualSTS17Multilingual"])
    p = run_mieb(td, ed, o2, ["STS17MultilingualVisualSTS"], "-b", "MIEB(lite)", check=False)
    assert os.path.exists(result_path(o2, "VisualSTS17Multilingual")), p.stderr
    assert not os.path.exists(result_path(o2, "VisualSTS-b-Multilingual"))  # no STS-b data: skipped
    a = result(o1, "VisualSTS17Multilingual")["scores"]
    b = result(o2, "VisualSTS17Multilingual")["scores"]
    assert a == b
    full = result(o2, "STS17MultilingualVisualSTS")["scores"]["test"]
    vals = [s["cosine_spearman"] for s in full if s["hf_subset"] != "en-en"]
    assert abs(a["test"][0]["cosine_spearman"] - sum(vals) / len(vals)) < 2e-6


# ---- inputs mteb cannot score, and values mteb writes as NaN ----

def test_constant_gold_gives_nan(tmp_path):
    rng = np.random.default_rng(9)
    td, ed, out = str(tmp_path / "td"), str(tmp_path / "emb"), str(tmp_path / "out")
    fw.write_model_meta(ed)
    truth = write_sts_task(td, ed, "STS12VisualSTS", rng, const_gold=True)
    run_mieb(td, ed, out, ["STS12VisualSTS"])
    s = result(out, "STS12VisualSTS")["scores"]["test"][0]
    keys = ["pearson", "spearman", "cosine_pearson", "cosine_spearman", "manhattan_pearson", "manhattan_spearman",
            "euclidean_pearson", "euclidean_spearman", "main_score"]
    assert all(math.isnan(s[k]) for k in keys)
    _, want = ref_task_scores("STS12VisualSTS", truth, "f32")
    assert same(s, want["test"][0])
    assert "NaN" in open(result_path(out, "STS12VisualSTS")).read()


def _broken(tmp_path, breaker):
    rng = np.random.default_rng(1)
    td, ed, out = str(tmp_path / "td"), str(tmp_path / "emb"), str(tmp_path / "out")
    fw.write_model_meta(ed)
    write_sts_task(td, ed, "STS12VisualSTS", rng, n=20)
    write_sts_task(td, ed, "STS13VisualSTS", rng, n=20)
    what = breaker(td, ed)
    p = run_mieb(td, ed, out, ["STS12VisualSTS", "STS13VisualSTS"], check=False)
    assert p.returncode == 1, p.stderr
    assert not os.path.exists(result_path(out, "STS12VisualSTS"))
    assert os.path.exists(result_path(out, "STS13VisualSTS"))  # the good task is still scored
    for w in what:
        assert w in p.stderr, (w, p.stderr)
    return p.stderr


def _emb(ed, role):
    return os.path.join(ed, "STS12VisualSTS", "test", "default", f"{role}.h5")


def test_bad_row_count(tmp_path):
    def brk(td, ed):
        with h5py.File(_emb(ed, "sentence2"), "r+") as f:
            x = f["embeddings"][:-1]
            del f["embeddings"]
            f.create_dataset("embeddings", data=x)
        return ["sentence2.h5", "19 rows", "20 gold"]
    _broken(tmp_path, brk)


def test_nan_embedding(tmp_path):
    def brk(td, ed):
        with h5py.File(_emb(ed, "sentence1"), "r+") as f:
            f["embeddings"][4, 2] = np.nan
        return ["sentence1.h5", "embeddings"]
    _broken(tmp_path, brk)


def test_single_pair(tmp_path):
    def brk(td, ed):
        with h5py.File(os.path.join(td, "STS12VisualSTS.h5"), "r+") as f:
            del f["test/default/gold"]
            f["test/default/gold"] = np.array([3.0])
        for role in ("sentence1", "sentence2"):
            with h5py.File(_emb(ed, role), "r+") as f:
                x = f["embeddings"][:1]
                del f["embeddings"]
                f.create_dataset("embeddings", data=x)
        return ["STS12VisualSTS.h5", "pearsonr needs at least 2"]
    _broken(tmp_path, brk)


def test_missing_min_score_and_equal_bounds(tmp_path):
    def brk(td, ed):
        with h5py.File(os.path.join(td, "STS12VisualSTS.h5"), "r+") as f:
            del f["test/default"].attrs["min_score"]
        return ["STS12VisualSTS.h5", "min_score"]
    _broken(tmp_path / "a", brk)

    def brk2(td, ed):
        with h5py.File(os.path.join(td, "STS12VisualSTS.h5"), "r+") as f:
            f["test/default"].attrs["min_score"] = 5
        return ["STS12VisualSTS.h5", "max_score"]
    _broken(tmp_path / "b", brk2)


def test_multivector_and_maxsim_refused(tmp_path):
    def brk(td, ed):
        with h5py.File(_emb(ed, "sentence1"), "r+") as f:
            f["offsets"] = np.arange(21, dtype=np.int64)
        return ["sentence1.h5", "multi-vector"]
    _broken(tmp_path / "a", brk)
    rng = np.random.default_rng(2)
    td, ed, out = str(tmp_path / "td"), str(tmp_path / "emb"), str(tmp_path / "out")
    fw.write_model_meta(ed, sim="MaxSim")
    write_sts_task(td, ed, "STS12VisualSTS", rng, n=10)
    p = run_mieb(td, ed, out, ["STS12VisualSTS"], check=False)
    assert p.returncode == 1 and "MaxSim" in p.stderr


def test_aggregate_missing_subtask_data(tmp_path):
    rng = np.random.default_rng(3)
    td, ed, out = str(tmp_path / "td"), str(tmp_path / "emb"), str(tmp_path / "out")
    fw.write_model_meta(ed)
    write_sts_task(td, ed, "STS17MultilingualVisualSTS", rng, n=10, subsets=["en-en"])
    p = run_mieb(td, ed, out, ["VisualSTS17Eng", "VisualSTS17Multilingual", "VisualSTS-b-Eng"], check=False)
    assert p.returncode == 1
    assert os.path.exists(result_path(out, "VisualSTS17Eng"))
    assert not os.path.exists(result_path(out, "VisualSTS17Multilingual"))
    assert "ko-ko" in p.stderr and "STS17MultilingualVisualSTS.h5" in p.stderr
    assert "STSBenchmarkMultilingualVisualSTS.h5" in p.stderr
