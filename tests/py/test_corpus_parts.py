"""Corpus-sharded retrieval: `mieb-eval run --corpus-parts K --corpus-part I
--partials-dir DIR` for every part, then `mieb-eval merge`, must write the results file a
single process writes (the same bytes apart from evaluation_time, date and
evaluation_phases), for any K, including K larger than the number of mteb's 50,000-document
chunks (empty parts) and corpora smaller than one chunk.

Inputs are written with h5py. Embeddings have coordinates in {-1, 0, 1}, so dot products are
small integers and exact ties are everywhere (mteb's heap breaks them on the id string, and
the ids are shuffled against the rows). Corpora of 120,000 rows give three chunks (50k, 50k,
20k). The single-process run is itself checked against mteb's search + metric code
(helpers/mteb_ref.py) on one case, so the comparison has an independent anchor.

Also: merge refuses a set with a missing part or with a part computed from other inputs
(exit 1, nothing written, the file named); rerunning a part is idempotent; a part stopped by
SIGTERM leaves no partial file; non-retrieval tasks are scored by part 0 only.
"""
from __future__ import annotations

import glob
import json
import re
import math
import os
import signal
import subprocess
import time

import h5py
import numpy as np
import pytest

from helpers import fmt_writer as fw
from helpers import mteb_ref as ref

BIN = os.path.join(ref.BUILD, "mieb-eval")
REG = {t["name"]: t for t in json.load(open(os.path.join(ref.REPO, "configs", "tasks.json")))}
RETRIEVAL_TYPES = ("Any2AnyRetrieval", "Any2AnyMultilingualRetrieval", "DocumentUnderstanding", "VisionCentricQA")


def mieb(*args, check=None):
    p = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=900)
    if check is not None:
        assert p.returncode == check, f"exit {p.returncode}, expected {check}:\n{p.stderr[-4000:]}"
    return p


def ternary(rng, n, dim):
    """Rows in {-1, 0, 1}^dim, none all-zero (cosine needs a norm)."""
    v = rng.integers(-1, 2, size=(n, dim)).astype(np.float32)
    zero = ~v.any(axis=1)
    v[zero, 0] = 1.0
    return v


def write_subset(f, ed, rng, task, subset, n_q, n_c, dim, *, candidates=False, multivector=False, split="test"):
    """One (split, subset): planted relevant documents, graded / zero / negative qrels, ~10% of
    queries without qrels (mteb drops them), duplicated documents (exact ties)."""
    qoff = coff = None
    if multivector:
        qoff = np.concatenate([[0], np.cumsum(rng.integers(1, 4, n_q))])
        coff = np.concatenate([[0], np.cumsum(rng.integers(1, 3, n_c))])
        q, c = ternary(rng, int(qoff[-1]), dim), ternary(rng, int(coff[-1]), dim)
    else:
        q, c = ternary(rng, n_q, dim), ternary(rng, n_c, dim)
        dup = rng.choice(n_c, max(2, n_c // 50), replace=False)
        c[dup[1:]] = c[dup[0]]
    qrels = []
    for i in range(n_q):
        if rng.random() < 0.1:
            qrels.append([])
            continue
        docs = rng.choice(n_c, int(rng.integers(1, 5)), replace=False)
        if not multivector:
            c[docs[0]] = q[i]  # a planted exact match
        qrels.append([(int(d), int(rng.choice([0, 1, 1, 2, -1]))) for d in sorted(docs)])
    query_ids = [f"q{i}-{subset}" for i in range(n_q)]
    perm = rng.permutation(n_c)
    corpus_ids = [f"d{p:06d}" if p % 11 else f"dé{p}" for p in perm]  # id order != row order
    cands = None
    if candidates:  # each query's judged documents, then a few others (no repeats)
        cands = [list(dict.fromkeys([d for d, _ in ql] + [int(x) for x in rng.choice(n_c, 3, replace=False)]))
                 for ql in qrels]
    fw.write_retrieval_group(f, split, subset, query_ids, corpus_ids, qrels, cands)
    fw.write_role(ed, task, split, subset, "queries", q, offsets=qoff)
    fw.write_role(ed, task, split, subset, "corpus", c, offsets=coff, shards=2)
    return dict(q=q, c=c, qoff=qoff, coff=coff, query_ids=query_ids, corpus_ids=corpus_ids, qrels=qrels,
                cands=cands)


def write_task(td, ed, rng, task, n_q, n_c, dim, **kw):
    f = fw.open_task_file(td, task)
    truth = {s: write_subset(f, ed, rng, task, s, n_q, n_c, dim, **kw) for s in REG[task]["hf_subsets"]}
    f.close()
    return truth


def result_file(out, task):
    files = glob.glob(os.path.join(out, "results", "*", "*", f"{task}.json"))
    assert len(files) == 1, (out, task, files)
    return files[0]


def scores_text(path):
    """The file's bytes up to "evaluation_time": dataset_revision, task_name, mteb_version and
    scores (what follows, evaluation_time, kg_co2_emissions, date and evaluation_phases, may differ)."""
    text = open(path, encoding="utf-8").read()
    return text[:text.index('"evaluation_time"')]


def run_args(td, ed, out, tasks):
    return ["run", "--task-data", td, "--embeddings", ed, "--output-folder", out, "--device", "cpu",
            "--progress", "off", "-t", *tasks]


def run_parts(td, ed, out, tasks, k, pd, *extra):
    for i in range(k):
        mieb(*run_args(td, ed, out, tasks), "--corpus-parts", k, "--corpus-part", i, "--partials-dir", pd, *extra,
             check=0)


def merge(td, ed, out, tasks, pd, *extra, check=0):
    return mieb("merge", "--partials-dir", pd, "--task-data", td, "--embeddings", ed, "--output-folder", out,
                "-t", *tasks, *extra, check=check)


def assert_merged_equal(single_out, merged_out, tasks):
    for t in tasks:
        a, b = scores_text(result_file(single_out, t)), scores_text(result_file(merged_out, t))
        assert a == b, t
    assert glob.glob(os.path.join(merged_out, "results", "*", "*", "model_meta.json"))


def part_attrs(pd, task, k, split="test", subset="default"):
    out = []
    for i in range(k):
        with h5py.File(os.path.join(pd, task, split, subset, f"part-{i:05d}-of-{k:05d}.h5")) as f:
            out.append({a: (v.decode() if isinstance(v, bytes) else v) for a, v in f.attrs.items()})
    return out


# ---------------------------------------------------------------- equality with a single run


@pytest.fixture(scope="module")
def dot3(tmp_path_factory):
    """dot similarity, three chunks (120,000 rows), plus a skip_first_result task (60,000 rows)."""
    tmp = tmp_path_factory.mktemp("dot3")
    td, ed = str(tmp / "td"), str(tmp / "emb")
    fw.write_model_meta(ed, sim="dot")
    rng = np.random.default_rng(20260601)
    truth = write_task(td, ed, rng, "CIRRIT2IRetrieval", 40, 120_000, 8)
    write_task(td, ed, rng, "CUB200I2IRetrieval", 30, 60_000, 8)
    tasks = ["CIRRIT2IRetrieval", "CUB200I2IRetrieval"]
    single = str(tmp / "single")
    mieb(*run_args(td, ed, single, tasks), "--per-query", tmp / "pq-single", check=0)
    return tmp, td, ed, tasks, single, truth


def test_single_run_matches_mteb(dot3):
    """The anchor: the single-process result equals mteb's search + metrics (chunked top-1001, heapq)."""
    _, _, _, _, single, truth = dot3
    t = truth["default"]
    kept = [i for i, ql in enumerate(t["qrels"]) if ql]
    ids = [t["query_ids"][i] for i in kept]
    results = ref.search_full(t["q"][kept], t["c"], ids, t["corpus_ids"])
    qrels = {t["query_ids"][i]: {t["corpus_ids"][d]: s for d, s in t["qrels"][i]} for i in kept}
    expected = ref.round_scores(dict(ref.score_dict(results, qrels)))
    ours = json.load(open(result_file(single, "CIRRIT2IRetrieval")))["scores"]["test"][0]
    for k, v in expected.items():
        assert ours[k] == v or (math.isnan(v) and math.isnan(ours[k])), k


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_parts_merge_equals_single_run(dot3, k):
    tmp, td, ed, tasks, single, _ = dot3
    pd, out = str(tmp / f"pd{k}"), str(tmp / f"merged{k}")
    run_parts(td, ed, out, tasks, k, pd)
    # run writes no result for retrieval tasks in part mode
    assert not glob.glob(os.path.join(out, "results", "*", "*", "CIRRIT2IRetrieval.json"))
    pq = str(tmp / f"pq{k}")
    merge(td, ed, out, tasks, pd, "--per-query", pq)
    assert_merged_equal(single, out, tasks)
    # --per-query from merge: the same files as the single run's
    for t in tasks:
        for name in ("run.trec", "per_query.tsv", "qrels.trec"):
            a = open(os.path.join(tmp, "pq-single", t, "test", "default", name), "rb").read()
            assert a == open(os.path.join(pq, t, "test", "default", name), "rb").read(), (t, name)
    # the deterministic split: contiguous chunk ranges covering the 3 chunks once; K=5 has empty parts
    at = part_attrs(pd, "CIRRIT2IRetrieval", k)
    ranges = [(a["chunk_start"], a["chunk_end"]) for a in at]
    assert ranges[0][0] == 0 and ranges[-1][1] == 3
    assert all(ranges[i][1] == ranges[i + 1][0] for i in range(k - 1))
    assert sum(a["n_entries"] == 0 for a in at) == max(0, k - 3)
    assert len({a["fingerprint"] for a in at}) == 1
    assert all(a["kind"] == "search" and a["n_parts"] == k and a["part"] == i for i, a in enumerate(at))


def test_small_corpus_and_subsets_cosine(tmp_path):
    """A corpus smaller than one chunk (parts beyond the first are empty) and a multilingual
    task (every subset has its own part files), cosine similarity."""
    td, ed = str(tmp_path / "td"), str(tmp_path / "emb")
    fw.write_model_meta(ed, sim="cosine")
    rng = np.random.default_rng(7)
    write_task(td, ed, rng, "CIRRIT2IRetrieval", 30, 30_000, 8)
    write_task(td, ed, rng, "WITT2IRetrieval", 8, 300, 6)
    tasks = ["CIRRIT2IRetrieval", "WITT2IRetrieval"]
    single = str(tmp_path / "single")
    # the same --mem-limit as the parts: cosine scores are not exact in fp32, and the BLAS may
    # round the last bit differently for other query-tile / block shapes
    mieb(*run_args(td, ed, single, tasks), "--mem-limit", "3M", check=0)
    for k in (1, 2, 3):
        pd, out = str(tmp_path / f"pd{k}"), str(tmp_path / f"m{k}")
        run_parts(td, ed, out, tasks, k, pd, "--mem-limit", "3M")
        merge(td, ed, out, tasks, pd)
        assert_merged_equal(single, out, tasks)
        for sub in REG["WITT2IRetrieval"]["hf_subsets"]:
            assert len(glob.glob(os.path.join(pd, "WITT2IRetrieval", "test", sub, "part-*.h5"))) == k


def test_maxsim_two_chunks(tmp_path):
    """Multi-vector (MaxSim) corpus of 60,000 items: two chunks."""
    td, ed = str(tmp_path / "td"), str(tmp_path / "emb")
    fw.write_model_meta(ed, sim="MaxSim")
    write_task(td, ed, np.random.default_rng(3), "VidoreArxivQARetrieval", 12, 60_000, 4, multivector=True)
    tasks = ["VidoreArxivQARetrieval"]
    single = str(tmp_path / "single")
    mieb(*run_args(td, ed, single, tasks), check=0)
    for k in (2, 3):
        pd, out = str(tmp_path / f"pd{k}"), str(tmp_path / f"m{k}")
        run_parts(td, ed, out, tasks, k, pd)
        merge(td, ed, out, tasks, pd)
        assert_merged_equal(single, out, tasks)


def test_candidates_scored_whole_by_part0(tmp_path):
    """Candidate lists (mteb's top_ranked) cannot be split by corpus: part 0 holds every query's
    result, the other parts hold none; the merge is still exact."""
    td, ed = str(tmp_path / "td"), str(tmp_path / "emb")
    fw.write_model_meta(ed, sim="cosine")
    write_task(td, ed, np.random.default_rng(9), "BLINKIT2IMultiChoice", 50, 200, 8, candidates=True)
    tasks = ["BLINKIT2IMultiChoice"]
    single, pd, out = str(tmp_path / "single"), str(tmp_path / "pd"), str(tmp_path / "m")
    mieb(*run_args(td, ed, single, tasks), check=0)
    run_parts(td, ed, out, tasks, 3, pd)
    merge(td, ed, out, tasks, pd)
    assert_merged_equal(single, out, tasks)
    at = part_attrs(pd, tasks[0], 3)
    assert [a["kind"] for a in at] == ["candidates"] * 3
    assert at[0]["n_entries"] > 0 and at[1]["n_entries"] == 0 and at[2]["n_entries"] == 0


def test_with_task_shards_and_other_families(tmp_path):
    """--corpus-parts combined with --shard-index/--num-shards on a synthetic suite that mixes
    families: non-retrieval tasks are scored by part 0 only (the others log the skip), and the
    union of the 2 x 2 processes plus merge equals a single run."""
    s = tmp_path / "s"
    mieb("synth", "--out", s, "--tasks", "CIRRIT2IRetrieval,DTD,BLINKIT2IMultiChoice,DTDZeroShot", "--scale", 0.02,
         check=0)
    td, ed = str(s / "task-data"), str(s / "embeddings")
    tasks = ["CIRRIT2IRetrieval", "BLINKIT2IMultiChoice", "DTD", "DTDZeroShot"]
    single, out, pd = str(tmp_path / "single"), str(tmp_path / "out"), str(tmp_path / "pd")
    mieb(*run_args(td, ed, single, tasks), check=0)
    skipped = []  # the shards split the list by cost; whichever holds a non-retrieval task, its part 1 skips it
    for shard in range(2):
        for part in range(2):
            p = mieb(*run_args(td, ed, out, tasks), "--shard-index", shard, "--num-shards", 2, "--corpus-parts", 2,
                     "--corpus-part", part, "--partials-dir", pd, "-v", check=0)
            if part == 1:
                skipped += re.findall(r"(\w+): not a retrieval task, scored by corpus part 0 only: skipped", p.stderr)
    assert sorted(skipped) == sorted(t for t in tasks if REG[t]["type"] not in RETRIEVAL_TYPES)
    for t in ("DTD", "DTDZeroShot"):
        assert result_file(out, t)
    merge(td, ed, out, tasks, pd)
    assert_merged_equal(single, out, tasks)


# ---------------------------------------------------------------- refusals


@pytest.fixture()
def small(tmp_path):
    td, ed = str(tmp_path / "td"), str(tmp_path / "emb")
    fw.write_model_meta(ed, sim="dot")
    write_task(td, ed, np.random.default_rng(1), "CIRRIT2IRetrieval", 20, 110_000, 4)
    write_task(td, ed, np.random.default_rng(2), "CUB200I2IRetrieval", 10, 500, 4)
    return tmp_path, td, ed


def test_merge_refuses_missing_part(small):
    tmp, td, ed = small
    tasks = ["CIRRIT2IRetrieval", "CUB200I2IRetrieval"]
    pd, out = str(tmp / "pd"), str(tmp / "out")
    run_parts(td, ed, out, tasks, 3, pd)
    gone = os.path.join(pd, "CIRRIT2IRetrieval", "test", "default", "part-00001-of-00003.h5")
    os.remove(gone)
    p = merge(td, ed, out, tasks, pd, check=1)
    assert gone in p.stderr and "missing part file" in p.stderr
    assert not glob.glob(os.path.join(out, "results", "*", "*", "CIRRIT2IRetrieval.json"))
    assert result_file(out, "CUB200I2IRetrieval")  # the complete task is still merged
    # no part at all
    p = merge(td, ed, out, ["CIRRIT2IRetrieval"], str(tmp / "nowhere"), check=1)
    assert "no partial files" in p.stderr


def test_merge_refuses_parts_from_other_inputs(small):
    tmp, td, ed = small
    task = ["CIRRIT2IRetrieval"]
    # the same task written again with other corpus values (same shapes, ids and qrels)
    ed2 = str(tmp / "emb2")
    fw.write_model_meta(ed2, sim="dot")
    with h5py.File(os.path.join(td, "CIRRIT2IRetrieval.h5")) as f:
        n_c = f["test/default/corpus_ids"].shape[0]
    src = os.path.join(ed, "CIRRIT2IRetrieval", "test", "default")
    with h5py.File(os.path.join(src, "queries.h5")) as f:
        q = f["embeddings"][:]
    fw.write_role(ed2, "CIRRIT2IRetrieval", "test", "default", "queries", q)
    fw.write_role(ed2, "CIRRIT2IRetrieval", "test", "default", "corpus", ternary(np.random.default_rng(99), n_c, 4),
                  shards=2)
    pd, out = str(tmp / "pd"), str(tmp / "out")
    mieb(*run_args(td, ed, out, task), "--corpus-parts", 3, "--corpus-part", 0, "--partials-dir", pd, check=0)
    mieb(*run_args(td, ed2, out, task), "--corpus-parts", 3, "--corpus-part", 1, "--partials-dir", pd, check=0)
    mieb(*run_args(td, ed, out, task), "--corpus-parts", 3, "--corpus-part", 2, "--partials-dir", pd, check=0)
    p = merge(td, ed, out, task, pd, check=1)
    assert "part-00001-of-00003.h5: input fingerprint" in p.stderr
    assert not glob.glob(os.path.join(out, "results", "*", "*", "CIRRIT2IRetrieval.json"))
    # all parts from emb2, merged against emb: refused as well
    pd2 = str(tmp / "pd2")
    run_parts(td, ed2, out, task, 2, pd2)
    p = merge(td, ed, out, task, pd2, check=1)
    assert "computed from other inputs" in p.stderr
    # parts of two different K in one folder
    run_parts(td, ed, out, task, 2, pd)
    p = merge(td, ed, out, task, pd, check=1)
    assert "parts of different splits" in p.stderr


def test_rerun_is_idempotent(small):
    tmp, td, ed = small
    task = ["CIRRIT2IRetrieval"]
    pd, out = str(tmp / "pd"), str(tmp / "out")
    args = [*run_args(td, ed, out, task), "--corpus-parts", 2, "--corpus-part", 1, "--partials-dir", pd]
    mieb(*args, check=0)
    path = os.path.join(pd, "CIRRIT2IRetrieval", "test", "default", "part-00001-of-00002.h5")

    def content():
        with h5py.File(path) as f:
            return {k: f[k][:].tobytes() for k in f}, dict(f.attrs)

    first, st = content(), os.stat(path)
    p = mieb(*args, "--overwrite-strategy", "only-missing", check=0)
    assert "partial exists, skipped" in p.stderr
    assert os.stat(path).st_mtime_ns == st.st_mtime_ns
    # and the run says it skipped the task, not that it scored it
    assert "0 scored, 1 skipped, 0 failed" in p.stderr, p.stderr
    mieb(*args, check=0)  # always: scored again, same content
    assert content()[0] == first[0]
    # a damaged partial is not "complete": only-missing scores it again
    with open(path, "r+b") as f:
        f.truncate(100)
    p = mieb(*args, "--overwrite-strategy", "only-missing", check=0)
    assert "not a readable partial" in p.stderr
    assert content()[0] == first[0]
    assert not [n for n in os.listdir(os.path.dirname(path)) if ".tmp" in n]


def test_sigterm_leaves_no_partial(tmp_path):
    """SIGTERM while the part is being searched (its temporary file exists): exit 130 and no
    file at all is left in the partials folder."""
    td, ed = str(tmp_path / "td"), str(tmp_path / "emb")
    fw.write_model_meta(ed, sim="dot")
    rng = np.random.default_rng(5)
    f = fw.open_task_file(td, "CIRRIT2IRetrieval")
    n_q, n_c, dim = 2000, 300_000, 32
    qrels = [[(int(rng.integers(n_c)), 1)] for _ in range(n_q)]
    fw.write_retrieval_group(f, "test", "default", [f"q{i}" for i in range(n_q)], [f"d{i}" for i in range(n_c)], qrels)
    f.close()
    fw.write_role(ed, "CIRRIT2IRetrieval", "test", "default", "queries", rng.standard_normal((n_q, dim)))
    fw.write_role(ed, "CIRRIT2IRetrieval", "test", "default", "corpus", rng.standard_normal((n_c, dim)))
    pd = str(tmp_path / "pd")
    sub = os.path.join(pd, "CIRRIT2IRetrieval", "test", "default")
    p = subprocess.Popen([BIN, *run_args(td, ed, str(tmp_path / "out"), ["CIRRIT2IRetrieval"]), "--corpus-parts", "2",
                          "--corpus-part", "0", "--partials-dir", pd, "--mem-limit", "16M", "--threads", "1"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seen = None
    deadline = time.monotonic() + 300
    while seen is None and p.poll() is None and time.monotonic() < deadline:
        names = os.listdir(sub) if os.path.isdir(sub) else []
        seen = next((n for n in names if ".tmp." in n), None)
        time.sleep(0.002)
    p.send_signal(signal.SIGTERM)
    err = p.stderr.read()
    assert p.wait() == 130, err
    assert seen and seen.startswith("part-00000-of-00002.h5.tmp."), (seen, err)
    left = [os.path.join(d, n) for d, _, names in os.walk(pd) for n in names]
    assert left == [], left


def test_usage_errors(small):
    tmp, td, ed = small
    base = run_args(td, ed, str(tmp / "o"), ["CIRRIT2IRetrieval"])
    mieb(*base, "--corpus-parts", 2, "--corpus-part", 0, check=2)            # no --partials-dir
    mieb(*base, "--corpus-parts", 2, "--corpus-part", 2, "--partials-dir", tmp, check=2)
    mieb(*base, "--corpus-parts", 0, "--corpus-part", 0, "--partials-dir", tmp, check=2)
    mieb("merge", "--partials-dir", tmp, "--task-data", td, "--embeddings", ed, "--output-folder", tmp, check=2)
    mieb("merge", "--partials-dir", tmp, "--task-data", td, "--embeddings", ed, "--output-folder", tmp, "-t",
         "NoSuchTask", check=2)
