"""Limits: --mem-limit honoured on a corpus far larger than it (peak resident memory measured
with wait4), declared sizes a small file cannot hold refused before anything is allocated,
deep or enormous JSON refused cleanly, and ids holding any UTF-8 (quotes, backslashes,
control characters, emoji) carried exactly into run.trec, qrels.trec and per_query.tsv."""
from __future__ import annotations

import json
import os
import resource
import struct
import subprocess

import h5py
import numpy as np
import pytest

from helpers import fmt_writer as fw
from helpers.io_helpers import BAD_DATA, STR, emb_dump, role_attrs, write_role_file, write_task_file
from test_faults import sanitized
from test_control_chars import unescape as unescape_bytes
from test_io_taskdata import good_group

BUILD = os.environ.get("MIEB_BUILD_DIR", "")
BIN = os.path.join(BUILD, "mieb-eval")
MiB = 1 << 20


def env():
    return dict(os.environ, MIEB_BLAS_TUNE="0")


def run(td, ed, out, tasks, *extra, preexec=None, e=None):
    return subprocess.run([BIN, "run", "--task-data", td, "--embeddings", ed, "-t", *tasks, "--output-folder", out,
                           "--device", "cpu", "--progress", "off", *extra], capture_output=True, text=True,
                          timeout=600, env=e or env(), preexec_fn=preexec)


# ---- --mem-limit on a corpus much larger than it ----

TASK = "CIRRIT2IRetrieval"


def retrieval_suite(root, n_corpus, dim, n_q=16, seed=0):
    """A retrieval task whose corpus embeddings take n_corpus * dim * 4 bytes, written in slices."""
    rng = np.random.default_rng(seed)
    td, ed = os.path.join(root, "td"), os.path.join(root, "emb")
    fw.write_model_meta(ed, sim="cosine")
    f = fw.open_task_file(td, TASK)
    g = f.create_group("test/default")
    g.create_dataset("query_ids", data=np.array([f"q{i}" for i in range(n_q)], dtype=object), dtype=STR)
    g.create_dataset("corpus_ids", data=np.array([f"d{i}" for i in range(n_corpus)], dtype=object), dtype=STR)
    g["qrels_indptr"] = np.arange(n_q + 1, dtype=np.int64)
    g["qrels_doc"] = rng.choice(n_corpus, n_q, replace=False).astype(np.int64)
    g["qrels_score"] = np.ones(n_q, np.int64)
    f.close()
    d = os.path.join(ed, TASK, "test", "default")
    os.makedirs(d, exist_ok=True)
    for role, n in (("queries", n_q), ("corpus", n_corpus)):
        with h5py.File(os.path.join(d, f"{role}.h5"), "w") as h:
            for k, v in role_attrs(TASK, role=role, dim=dim).items():
                h.attrs[k] = v
            ds = h.create_dataset("embeddings", (n, dim), np.float32)
            for r0 in range(0, n, 8192):
                r1 = min(n, r0 + 8192)
                ds[r0:r1] = rng.standard_normal((r1 - r0, dim), dtype=np.float32)
    return td, ed


def peak_rss(args, tmp):
    """Run args under tests/programs/peak_rss (see there why not from Python): (status, stderr, bytes)."""
    f = os.path.join(tmp, "maxrss")
    p = subprocess.run([os.path.join(BUILD, "tests", "peak_rss"), f, *args], capture_output=True, text=True,
                       timeout=600, env=env())
    return p.returncode, p.stderr, int(open(f).read()) * 1024  # Linux: ru_maxrss in KiB


@pytest.mark.skipif(sanitized(), reason="ASan's shadow memory and quarantine make resident size meaningless")
def test_mem_limit_is_honoured(tmp_path):
    """A 400 MB corpus scored with --mem-limit 64M. The fixed overhead (program, libraries,
    HDF5 and BLAS state, ids, qrels) is measured, not guessed: the peak of the same task with
    a 4 MB corpus and the same limit. The big run may use at most the limit on top of it,
    plus the ids of the 99,000 extra documents (the task data is read whole; about 160 bytes
    each with their pointers, hash slots and heap copies)."""
    limit = 64 * MiB
    dim, n_big, n_small = 1000, 100_000, 1_000
    small = retrieval_suite(str(tmp_path / "small"), n_small, dim)
    big = retrieval_suite(str(tmp_path / "big"), n_big, dim)
    corpus = os.path.join(big[1], TASK, "test", "default", "corpus.h5")
    assert os.path.getsize(corpus) > 400 * 10**6
    args = lambda s, o: [BIN, "run", "--task-data", s[0], "--embeddings", s[1], "-t", TASK, "--output-folder", o,
                         "--device", "cpu", "--progress", "off", "--threads", "2", "--mem-limit", "64M"]
    rc, err, base = peak_rss(args(small, str(tmp_path / "o-small")), str(tmp_path))
    assert rc == 0, err
    rc, err, peak = peak_rss(args(big, str(tmp_path / "o-big")), str(tmp_path))
    assert rc == 0, err
    ids_allowance = (n_big - n_small) * 160
    print(f"\npeak RSS: {peak / MiB:.1f} MiB for a {os.path.getsize(corpus) / MiB:.0f} MiB corpus; "
          f"overhead (4 MB corpus) {base / MiB:.1f} MiB; limit {limit / MiB:.0f} MiB; "
          f"ids allowance {ids_allowance / MiB:.1f} MiB")
    assert peak <= base + limit + ids_allowance, (peak, base)
    assert peak < os.path.getsize(corpus) / 3  # it did stream


# ---- declared sizes a small file cannot hold ----

def as_limit(nbytes):
    """preexec_fn: cap the address space, so an allocation sized by a declared size would fail
    (out of memory) instead of the refusal the test expects. Not with ASan (it maps terabytes)."""
    def f():
        if not sanitized():
            resource.setrlimit(resource.RLIMIT_AS, (nbytes, nbytes))
    return f


def patch_dims(path, dset, new_dim0):
    """Rewrite the first dimension of dataset `dset`'s dataspace message in place."""
    with h5py.File(path, "r") as f:
        d = f[dset]
        n0 = d.shape[0]
        addr = d.id.get_offset()  # data address: the dataspace message is in the object header
        oh = h5py.h5o.get_info(d.id).addr
    b = bytearray(open(path, "rb").read())
    pat = struct.pack("<Q", n0)
    at = b.find(pat, oh)  # the first dimension in the header (rank 1 or 2, sizeof_size 8)
    assert 0 <= at < oh + 512 and addr is not None
    b[at:at + 8] = struct.pack("<Q", new_dim0)
    at2 = b.find(pat, at + 8, at + 8 + 16)  # maximum dims, when present, follow
    if at2 >= 0:
        b[at2:at2 + 8] = struct.pack("<Q", new_dim0)
    open(path, "wb").write(bytes(b))


@pytest.mark.parametrize("dset", ["query_ids", "corpus_ids", "qrels_indptr", "qrels_doc", "qrels_score"])
def test_taskdata_huge_declared_rows(tmp_path, dset):
    p = str(tmp_path / "Big.h5")
    write_task_file(p, {"test/default": good_group()})
    patch_dims(p, f"test/default/{dset}", 10**12)
    rc, out = emb_dump("retrieval", p, "test", "default")
    assert rc == BAD_DATA and "Big.h5" in out["error"] and dset in out["error"], out
    assert "cannot be held by this file" in out["error"] or "overflows" in out["error"], out


def test_unallocated_huge_dataset(tmp_path):
    """h5py can declare 10^12 rows without writing any (no storage allocated): refused too."""
    p = str(tmp_path / "Big.h5")
    write_task_file(p, {"test/default": good_group(qrels_doc=None)})
    with h5py.File(p, "r+") as f:
        f["test/default"].create_dataset("qrels_doc", shape=(10**12,), dtype=np.int64, chunks=(4096,))
    rc, out = emb_dump("retrieval", p, "test", "default")
    assert rc == BAD_DATA and "qrels_doc" in out["error"] and "cannot be held" in out["error"], out


@pytest.mark.parametrize("case", ["offsets_dims", "offsets_values", "n_rows_attr", "embeddings_dims"])
def test_emb_huge_declared_sizes_end_to_end(tmp_path, case):
    """Through `mieb-eval run` with the address space capped at 2 GiB: exit 1, the file named."""
    rng = np.random.default_rng(1)
    td, ed = str(tmp_path / "td"), str(tmp_path / "emb")
    fw.write_model_meta(ed, sim="MaxSim" if case.startswith("offsets") else "cosine")
    f = fw.open_task_file(td, TASK)
    qrels = [[(int(rng.integers(0, 30)), 1)] for _ in range(5)]
    fw.write_retrieval_group(f, "test", "default", [f"q{i}" for i in range(5)], [f"d{i}" for i in range(30)],
                             qrels, None)
    f.close()
    multi = case.startswith("offsets")
    for role, n in (("queries", 5), ("corpus", 30)):
        off = np.arange(n + 1, dtype=np.int64) if multi else None
        fw.write_role(ed, TASK, "test", "default", role, rng.standard_normal((n, 8)).astype(np.float32),
                      offsets=off, shards=1)
    corpus = os.path.join(ed, TASK, "test", "default", "corpus.h5")
    if case == "offsets_dims":
        patch_dims(corpus, "offsets", 10**12)
    elif case == "offsets_values":
        with h5py.File(corpus, "r+") as h:
            h["offsets"][-1] = 10**12
    elif case == "n_rows_attr":
        with h5py.File(corpus, "r+") as h:
            h.attrs["row_start"] = np.int64(0)
            h.attrs["n_rows"] = np.int64(10**12)
    else:
        patch_dims(corpus, "embeddings", 10**12)
    p = run(td, ed, str(tmp_path / "o"), [TASK], preexec=as_limit(2 << 30))
    assert p.returncode == 1, p.stderr
    assert "corpus.h5" in p.stderr and "out of memory" not in p.stderr, p.stderr


# ---- deep or enormous JSON ----

def suite(tmp_path):
    bin_ = BIN
    out = str(tmp_path / "suite")
    subprocess.run([bin_, "synth", "--out", out, "--scale", "0.001", "--dim", "4", "--tasks", TASK], check=True,
                   capture_output=True, timeout=300, env=env())
    return os.path.join(out, "task-data"), os.path.join(out, "embeddings")


@pytest.mark.parametrize("case", ["deep_array", "deep_object", "huge", "deep_but_legal"])
def test_model_meta_json_limits(tmp_path, case):
    td, ed = suite(tmp_path)
    mm = os.path.join(ed, "model_meta.json")
    meta = json.load(open(mm))
    if case == "deep_array":
        text = "[" * 100_000 + "]" * 100_000
    elif case == "deep_object":
        text = '{"a":' * 100_000 + "1" + "}" * 100_000
    elif case == "deep_but_legal":  # 900 levels under an extra key: parsed, ignored
        text = json.dumps(meta)[:-1] + ', "extra": ' + "[" * 900 + "]" * 900 + "}"
    if case == "huge":  # sparse: 17 MiB of nothing, refused by its size before it is read
        with open(mm, "r+b") as f:
            f.truncate(17 * MiB)
    else:
        open(mm, "w").write(text)
    p = run(td, ed, str(tmp_path / "o"), [TASK])
    if case == "deep_but_legal":
        assert p.returncode == 0, p.stderr
        return
    assert p.returncode == 4 and "model_meta.json" in p.stderr, p.stderr
    assert ("more than the 16777216 allowed" if case == "huge" else "nested more than 1000 levels") in p.stderr


@pytest.mark.parametrize("case", ["deep", "huge"])
def test_registry_json_limits(tmp_path, case):
    td, ed = suite(tmp_path)
    reg = str(tmp_path / "tasks.json")
    if case == "deep":
        open(reg, "w").write("[" * 50_000 + "]" * 50_000)
    else:
        with open(reg, "wb") as f:
            f.truncate(65 * MiB)
    p = run(td, ed, str(tmp_path / "o"), [TASK], e=dict(env(), MIEB_REGISTRY=reg))
    assert p.returncode == 4 and "tasks.json" in p.stderr, p.stderr
    assert ("more than the" if case == "huge" else "nested more than 1000 levels") in p.stderr, p.stderr


def test_summary_skips_deep_and_huge_result_files(tmp_path):
    td, ed = suite(tmp_path)
    p = run(td, ed, str(tmp_path / "o"), [TASK])
    assert p.returncode == 0, p.stderr
    res = p.stdout.strip()
    good = json.load(open(os.path.join(res, f"{TASK}.json")))
    # a deep file, a huge (sparse) one, and a legal 900-level value inside a good one
    open(os.path.join(res, "STS12VisualSTS.json"), "w").write('{"a":' * 100_000 + "1" + "}" * 100_000)
    with open(os.path.join(res, "WITT2IRetrieval.json"), "wb") as f:
        f.truncate(257 * MiB)
    good["scores"]["test"][0]["extra"] = json.loads("[" * 900 + "]" * 900)
    json.dump(good, open(os.path.join(res, f"{TASK}.json"), "w"))
    s = subprocess.run([BIN, "summary", str(tmp_path / "o")], capture_output=True, text=True, timeout=120, env=env())
    assert s.returncode == 1, s.stderr  # unreadable files are named and counted, the rest summarised
    assert "STS12VisualSTS.json" in s.stderr and "nested more than 1000 levels" in s.stderr, s.stderr
    assert "WITT2IRetrieval.json" in s.stderr and "more than the" in s.stderr, s.stderr
    assert "2 result file(s) could not be read" in s.stderr and "1 model revisions" in s.stdout, s.stderr


# ---- ids holding any UTF-8 ----

WEIRD = ['q"1', "q\\2", "q\t3", "q 4", "q\n5", "q\x016", "Ω-7", "😀8", "q'\"9", "\\x20", "é\u3000é", "q\x7f"]
WEIRD_DOCS = ["d \"quoted\"", "d\\back", "d\ttab", "d\nnl", "d\x1funit", "doc😀", "文档", "d'sq", "d\r", "d%20",
              "\\\\", "d{}[]"]


def unescape(tok: str) -> str:
    """Inverse of core/escape.c's rule for ids (test_control_chars.unescape), as text."""
    return unescape_bytes(tok.encode()).decode()


def test_utf8_ids_round_trip(tmp_path):
    """Distinct scores (no ties), so every (query, document, rank, score) is determined: the
    run file read back and unescaped must name exactly the documents numpy ranks first, and
    the results must equal those of the same task with plain ids."""
    rng = np.random.default_rng(5)
    n_q, n_c, dim = len(WEIRD), len(WEIRD_DOCS) * 5, 16
    q = rng.standard_normal((n_q, dim)).astype(np.float32)
    c = rng.standard_normal((n_c, dim)).astype(np.float32)
    cids = [f"{WEIRD_DOCS[i % len(WEIRD_DOCS)]}#{i}" for i in range(n_c)]
    qrels = [[(int(d), int(rng.integers(1, 3))) for d in rng.choice(n_c, 3, replace=False)] for _ in range(n_q)]
    outs = {}
    for name, qi, ci in (("weird", WEIRD, cids), ("plain", [f"q{i}" for i in range(n_q)],
                                                   [f"d{i:03d}" for i in range(n_c)])):
        td, ed = str(tmp_path / name / "td"), str(tmp_path / name / "emb")
        fw.write_model_meta(ed, sim="cosine")
        f = fw.open_task_file(td, TASK)
        fw.write_retrieval_group(f, "test", "default", qi, ci, qrels, None)
        f.close()
        fw.write_role(ed, TASK, "test", "default", "queries", q, shards=1)
        fw.write_role(ed, TASK, "test", "default", "corpus", c, shards=1)
        pq = str(tmp_path / name / "pq")
        p = run(td, ed, str(tmp_path / name / "o"), [TASK], "--per-query", pq)
        assert p.returncode == 0, p.stderr
        res = json.load(open(os.path.join(p.stdout.strip(), f"{TASK}.json")))
        outs[name] = (res, os.path.join(pq, TASK, "test", "default"), qi, ci)
    (rw, dw, qi, ci), (rp, _, _, _) = outs["weird"], outs["plain"]
    assert rw["scores"] == rp["scores"]  # ids change nothing in the scores

    qn = q / np.linalg.norm(q, axis=1, keepdims=True)
    cn = c / np.linalg.norm(c, axis=1, keepdims=True)
    sim = qn @ cn.T
    run_lines = open(os.path.join(dw, "run.trec"), "rb").read().decode().split("\n")
    got = {}
    for line in filter(None, run_lines):
        f6 = line.split(" ")
        assert len(f6) == 6 and f6[1] == "Q0" and f6[5] == "mieb-eval", line
        got.setdefault(unescape(f6[0]), []).append((int(f6[3]), unescape(f6[2])))
    assert set(got) == set(qi)
    for i, qid in enumerate(qi):
        want = [ci[j] for j in np.argsort(-sim[i], kind="stable")]
        assert [d for _, d in sorted(got[qid])] == want, qid
    qrel_lines = [l.split(" ") for l in open(os.path.join(dw, "qrels.trec"), "rb").read().decode().split("\n") if l]
    assert sorted((unescape(a), unescape(c_), int(r)) for a, _, c_, r in qrel_lines) == sorted(
        (qi[i], ci[d], s) for i, ql in enumerate(qrels) for d, s in ql)
    tsv = [l.split("\t") for l in open(os.path.join(dw, "per_query.tsv"), "rb").read().decode().split("\n") if l]
    assert all(len(t) == 3 for t in tsv)
    assert {unescape(t[1]) for t in tsv} - {"all"} == set(qi)


@pytest.mark.parametrize("meta,says", [
    ([1, 2], "not a JSON object"),
    ({"revision": "r"}, '"name" must be a non-empty string'),
    ({"name": 7}, '"name" must be a non-empty string'),
    ({"name": "a/b", "revision": 3}, '"revision" must be a string or null'),
    ({"name": "a/b", "similarity_fn_name": "euclid"}, "euclid"),
    ({"name": "a/b", "revision": "../../escape"}, "cannot name a folder"),
    ({"name": "..", "revision": "r"}, "cannot be '..'"),
])
def test_model_meta_bad_content(tmp_path, meta, says):
    """Exit 4, the file named, and nothing written anywhere (a revision like ../.. would put
    the results outside --output-folder)."""
    td, ed = suite(tmp_path)
    json.dump(meta, open(os.path.join(ed, "model_meta.json"), "w"))
    out = str(tmp_path / "deep" / "o")
    p = run(td, ed, out, [TASK])
    assert p.returncode == 4 and "model_meta.json" in p.stderr and says in p.stderr, p.stderr
    assert not os.path.exists(str(tmp_path / "deep")), os.listdir(str(tmp_path / "deep"))


def test_registry_bad_content(tmp_path):
    td, ed = suite(tmp_path)
    reg = str(tmp_path / "tasks.json")
    json.dump({"tasks": []}, open(reg, "w"))
    p = run(td, ed, str(tmp_path / "o"), [TASK], e=dict(env(), MIEB_REGISTRY=reg))
    assert p.returncode == 4 and "tasks.json: not a JSON list of tasks" in p.stderr, p.stderr
