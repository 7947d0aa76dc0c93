"""Inputs HDF5 would read without an error but with made-up values: storage never written (read
back as zeros), integers clamped by HDF5's conversion, NaN / Inf task data, embeddings whose
dot products overflow float32, a filter this HDF5 lacks, dimension 0. Each is refused by the
shared readers at open: `mieb-eval run` names the file and dataset, exits 1, writes nothing
for the broken task and still scores the good one beside it."""
from __future__ import annotations

import os

import h5py
import numpy as np
import pytest

from helpers import fmt_writer as fw
import test_bad_input as bi
import test_probe_e2e as probe
import test_sts as sts
from test_retrieval_e2e import result_path, run_mieb

U64_MAX = 2**64 - 1


def _replace(path, name, **create):
    """Replace dataset `name` of path by create_dataset(name, **create), keeping its attributes."""
    with h5py.File(path, "r+") as f:
        attrs = dict(f[name].attrs)
        del f[name]
        ds = f.create_dataset(name, **create)
        for k, v in attrs.items():
            ds.attrs[k] = v
        return ds.shape


def _task(td, task=bi.BAD):
    return os.path.join(td, f"{task}.h5")


# ---- retrieval: one good task, one broken (test_bad_input.make) ----

def emb_never_written(td, ed):
    """queries /embeddings created with its shape and no data: all zeros to HDF5."""
    with h5py.File(bi.emb(ed, "queries"), "r") as f:
        shape = f["embeddings"].shape
    _replace(bi.emb(ed, "queries"), "embeddings", shape=shape, dtype="f4")
    return ["queries.h5", "/embeddings", f"rows 0..{shape[0] - 1} were never written"]


def emb_missing_chunks(td, ed):
    """corpus shard 1 chunked by 5 rows, only its first 10 rows written (an exporter killed mid-write)."""
    p = bi.emb(ed, "corpus", 1)
    with h5py.File(p, "r+") as f:
        x = f["embeddings"][:]
        del f["embeddings"]
        ds = f.create_dataset("embeddings", shape=x.shape, dtype="f4", chunks=(5, x.shape[1]))
        ds[:10] = x[:10]
    return ["corpus-00001-of-00002.h5", "/embeddings", f"rows 10..{x.shape[0] - 1} were never written"]


def emb_missing_chunks_gzip(td, ed):
    """the same with gzip: the chunk index is the only witness."""
    p = bi.emb(ed, "queries")
    with h5py.File(p, "r+") as f:
        x = f["embeddings"][:]
        del f["embeddings"]
        ds = f.create_dataset("embeddings", shape=x.shape, dtype="f4", chunks=(4, x.shape[1]), compression="gzip")
        ds[:4] = x[:4]
        ds[8:] = x[8:]
    return ["queries.h5", "/embeddings", "rows 4..7 were never written"]


def taskdata_never_written(td, ed):
    shape = _replace(_task(td), "test/default/qrels_doc", shape=(_len(td, "qrels_doc"),), dtype="i8")
    return [f"{bi.BAD}.h5", "/test/default/qrels_doc", f"rows 0..{shape[0] - 1} were never written"]


def taskdata_missing_chunk(td, ed):
    """corpus_ids (strings) chunked by 16, the chunk of ids 16..31 never written."""
    with h5py.File(_task(td), "r+") as f:
        ids = f["test/default/corpus_ids"][:]
        del f["test/default/corpus_ids"]
        ds = f.create_dataset("test/default/corpus_ids", shape=ids.shape, dtype=h5py.string_dtype(), chunks=(16,))
        ds[:16] = ids[:16]
        ds[32:] = ids[32:]
    return [f"{bi.BAD}.h5", "/test/default/corpus_ids", "rows 16..31 were never written"]


def _len(td, name):
    with h5py.File(_task(td), "r") as f:
        return f[f"test/default/{name}"].shape[0]


def qrels_uint64(td, ed):
    """qrels_score as uint64 holding 2^64-1: HDF5 clamps it to INT64_MAX."""
    with h5py.File(_task(td), "r") as f:
        s = np.abs(f["test/default/qrels_score"][:]).astype(np.uint64)
    s[2] = U64_MAX
    _replace(_task(td), "test/default/qrels_score", data=s)
    return [f"{bi.BAD}.h5", f"/test/default/qrels_score[2] = {U64_MAX} does not fit int64"]


def emb_lzf(td, ed):
    p = bi.emb(ed, "queries")
    with h5py.File(p, "r") as f:
        x = f["embeddings"][:]
    _replace(p, "embeddings", data=x, compression="lzf")
    return ["queries.h5", "dataset /embeddings uses compression filter 32000 (lzf), which this HDF5 cannot decode"]


def emb_dim0(td, ed):
    p = bi.emb(ed, "queries")
    with h5py.File(p, "r+") as f:
        n = f["embeddings"].shape[0]
        del f["embeddings"]
        f.create_dataset("embeddings", data=np.zeros((n, 0), np.float32))
        f.attrs["dim"] = 0
    return ["queries.h5", "an embedding of dimension 0 is refused"]


def emb_huge_finite(td, ed):
    """1e30 in every column of corpus row 3: finite, but its dot products overflow float32."""
    with h5py.File(bi.emb(ed, "corpus", 0), "r+") as f:
        f["embeddings"][3, :] = np.float32(1e30)
    return ["corpus-00000-of-00002.h5", "/embeddings row 3", "overflow float32"]


def emb_huge_finite_bf16(td, ed):
    """the same stored as bfloat16 bits in the queries file."""
    p = bi.emb(ed, "queries")
    with h5py.File(p, "r") as f:
        x = f["embeddings"][:]
    x[5, :] = np.float32(1e30)
    ds_shape = _replace(p, "embeddings", data=fw.to_bf16_bits(x))
    with h5py.File(p, "r+") as f:
        f["embeddings"].attrs["dtype"] = "bfloat16"
    assert ds_shape == x.shape
    return ["queries.h5", "/embeddings row 5", "overflow float32"]


CASES = [emb_never_written, emb_missing_chunks, emb_missing_chunks_gzip, taskdata_never_written,
         taskdata_missing_chunk, qrels_uint64, emb_lzf, emb_dim0, emb_huge_finite, emb_huge_finite_bf16]


@pytest.mark.parametrize("mmap", ["on", "off"])
@pytest.mark.parametrize("breaker", CASES, ids=[c.__name__ for c in CASES])
def test_retrieval_bad_values(tmp_path, breaker, mmap, monkeypatch):
    if mmap == "off" and breaker not in (emb_huge_finite, emb_missing_chunks):
        pytest.skip("the streamer's copy path matters for corpus blocks only")
    monkeypatch.setenv("MIEB_STREAM_MMAP", mmap)
    td, ed = bi.make(str(tmp_path))
    what = breaker(td, ed)
    out = str(tmp_path / "out")
    p = run_mieb(td, ed, out, [bi.GOOD, bi.BAD], check=False)
    assert p.returncode == 1, p.stderr
    for w in what:
        assert w in p.stderr, (w, p.stderr)
    assert not os.path.exists(result_path(out, bi.BAD))
    assert os.path.exists(result_path(out, bi.GOOD))


# ---- clustering: labels that HDF5 would merge ----

def _clustering(tmp, task, seed, labels_dtype=np.int64, y_override=None):
    rng = np.random.default_rng(seed)
    n, d, k = 200, 8, 4
    centres = rng.standard_normal((k, d)) * 4
    cls = rng.integers(0, k, n)
    x = (centres[cls] + rng.standard_normal((n, d))).astype(np.float32)
    y = np.asarray(cls, dtype=labels_dtype) if y_override is None else y_override[cls]
    td, ed = os.path.join(tmp, "td"), os.path.join(tmp, "emb")
    fw.write_model_meta(ed)
    with fw.open_task_file(td, task) as f:
        f.require_group("test/default").create_dataset("eval_labels", data=y)
    fw.write_role(ed, task, "test", "default", "eval", x)
    return td, ed


def test_clustering_uint64_labels_do_not_merge(tmp_path):
    """Classes 0 and 1 stored as 2^64-1 and 2^64-2: HDF5 would clamp both to INT64_MAX."""
    ids = np.array([U64_MAX, U64_MAX - 1, 7, 9], dtype=np.uint64)
    td, ed = _clustering(str(tmp_path), "CIFAR10Clustering", 1, y_override=ids)
    _clustering(str(tmp_path), "CIFAR100Clustering", 2)
    out = str(tmp_path / "out")
    p = run_mieb(td, ed, out, ["CIFAR10Clustering", "CIFAR100Clustering"], check=False)
    assert p.returncode == 1, p.stderr
    assert "CIFAR10Clustering.h5" in p.stderr and "/test/default/eval_labels[" in p.stderr, p.stderr
    assert "does not fit int64" in p.stderr and (str(U64_MAX) in p.stderr or str(U64_MAX - 1) in p.stderr)
    assert not os.path.exists(result_path(out, "CIFAR10Clustering"))
    assert os.path.exists(result_path(out, "CIFAR100Clustering"))


# ---- classification (linear probe) ----

def test_classification_uint64_labels(tmp_path):
    rng = np.random.default_rng(5)
    td, ed, split, tr, tl, ev, el = probe.build(str(tmp_path), rng, "CIFAR10", 120, 40, 10, 8, list(range(10)))
    probe.build(str(tmp_path), rng, "STL10", 120, 40, 10, 8, list(range(10)))
    big = {0: U64_MAX, 1: U64_MAX - 1}
    to_u64 = np.vectorize(lambda v: big.get(int(v), int(v)), otypes=[np.uint64])
    with h5py.File(os.path.join(td, "CIFAR10.h5"), "r+") as f:
        for name, v in (("train_labels", tl), ("eval_labels", el)):
            del f[f"{split}/default/{name}"]
            f[f"{split}/default/{name}"] = to_u64(v)
    out = str(tmp_path / "out")
    p = run_mieb(td, ed, out, ["CIFAR10", "STL10"], check=False)
    assert p.returncode == 1, p.stderr
    assert "CIFAR10.h5" in p.stderr and "_labels[" in p.stderr and "does not fit int64" in p.stderr, p.stderr
    assert not os.path.exists(result_path(out, "CIFAR10"))
    assert os.path.exists(result_path(out, "STL10"))


# ---- STS: gold and its bounds (test_sts._broken: STS12 broken, STS13 scored) ----

def _gold(value, at=3):
    def brk(td, ed):
        p = os.path.join(td, "STS12VisualSTS.h5")
        with h5py.File(p, "r+") as f:
            g = f["test/default/gold"][:]
            g[at] = value
            del f["test/default/gold"]
            f["test/default/gold"] = g
        return ["STS12VisualSTS.h5", f"/test/default/gold[{at}] = {'NaN' if np.isnan(value) else 'Inf'}",
                "not a finite number"]
    return brk


def _bound(name, value):
    def brk(td, ed):
        with h5py.File(os.path.join(td, "STS12VisualSTS.h5"), "r+") as f:
            f["test/default"].attrs[name] = value
        return ["STS12VisualSTS.h5", f"attribute '{name}' = {'NaN' if np.isnan(value) else 'Inf'}"]
    return brk


@pytest.mark.parametrize("case", ["gold_nan", "gold_inf", "min_score_nan", "max_score_inf"])
def test_sts_non_finite(tmp_path, case):
    brk = {"gold_nan": _gold(np.nan), "gold_inf": _gold(np.inf), "min_score_nan": _bound("min_score", np.nan),
           "max_score_inf": _bound("max_score", np.inf)}[case]
    sts._broken(tmp_path, brk)


# ---- reader level (tests/programs/emb_dump) ----

def test_reader_integers_above_int64(tmp_path):
    """uint64 values above INT64_MAX, in a dataset or an attribute, are refused with their position."""
    from helpers.io_helpers import BAD_DATA, emb_dump, role_dir, write_shards
    p = str(tmp_path / "Foo.h5")
    with fw.open_task_file(str(tmp_path), "Foo") as f:
        g = f.require_group("test/default")
        g.attrs["n_samples"] = np.uint64(U64_MAX)
        g.attrs["n_images"] = np.uint64(5)
        g["eval_labels"] = np.array([1, 2, 3], np.uint64)
        g["big"] = np.array([1, 2, U64_MAX], np.uint64)
        g["big2d"] = np.array([[1, 2], [U64_MAX - 1, 3]], np.uint64)
    rc, out = emb_dump("attr", p, "test", "default", "n_images")
    assert rc == 0 and out["i64"] == 5
    rc, out = emb_dump("attr", p, "test", "default", "n_samples")
    assert rc == 0 and "i64" not in out, out  # as int64 it is refused (as float64 it is what it is)
    rc, out = emb_dump("i64", p, "test", "default", "eval_labels")
    assert rc == 0 and out["values"] == [1, 2, 3]
    rc, out = emb_dump("i64", p, "test", "default", "big")
    assert rc == BAD_DATA and f"/test/default/big[2] = {U64_MAX} does not fit int64" in out["error"], out
    rc, out = emb_dump("i64", p, "test", "default", "big2d", "2d")
    assert rc == BAD_DATA and f"/test/default/big2d[1, 0] = {U64_MAX - 1} does not fit int64" in out["error"], out
    # an embedding shard's row_start attribute
    ed = str(tmp_path / "emb")
    write_shards(ed, "corpus", np.ones((10, 4), np.float32), [(0, 5), (5, 5)])
    shard = os.path.join(role_dir(ed), "corpus-00001-of-00002.h5")
    with h5py.File(shard, "r+") as f:
        f.attrs["row_start"] = np.uint64(U64_MAX)
    rc, out = emb_dump("role", ed, "T", "test", "default", "corpus")
    assert rc == BAD_DATA and f"attribute 'row_start' = {U64_MAX} does not fit int64" in out["error"], out
    assert "corpus-00001-of-00002.h5" in out["error"]


def test_reader_emb_never_written_and_streamed(tmp_path):
    """The streamer and the mmap path see the same refusals as a direct read."""
    from helpers.io_helpers import BAD_DATA, emb_dump, role_dir, write_role_file
    ed = str(tmp_path)
    x = np.random.default_rng(0).standard_normal((40, 6)).astype(np.float32)
    p = os.path.join(role_dir(ed), "corpus.h5")
    write_role_file(p, x)
    _replace(p, "embeddings", shape=x.shape, dtype="f4", fillvalue=0.5)
    rc, out = emb_dump("role", ed, "T", "test", "default", "corpus")
    assert rc == BAD_DATA and "rows 0..39 were never written" in out["error"], out
    for dtype in ("f32", "f16", "bf16"):
        y = x.copy()
        y[17] = 1e30 if dtype != "f16" else 6e4
        write_role_file(p, y, dtype=dtype)
        for extra in ((), ("--stream", "8")):
            rc, out = emb_dump("role", ed, "T", "test", "default", "corpus", *extra)
            if dtype == "f16":  # float16 cannot hold a norm that large: accepted
                assert rc == 0, out
                continue
            assert rc == BAD_DATA and "row 17" in out["error"] and "overflow float32" in out["error"], (dtype, out)


def test_reader_fill_value_all_chunks_written_is_fine(tmp_path):
    """An explicit fill value with every chunk written, and a compact dataset, read as usual."""
    from helpers.io_helpers import emb_dump, role_dir, write_role_file
    ed = str(tmp_path)
    x = np.random.default_rng(1).standard_normal((20, 4)).astype(np.float32)
    p = os.path.join(role_dir(ed), "corpus.h5")
    write_role_file(p, x)
    with h5py.File(p, "r+") as f:
        del f["embeddings"]
        ds = f.create_dataset("embeddings", shape=x.shape, dtype="f4", chunks=(6, 4), fillvalue=7.0)
        ds[:] = x
    rc, out = emb_dump("role", ed, "T", "test", "default", "corpus")
    assert rc == 0, out
    assert np.array_equal(np.array(out["data"], np.float32).reshape(x.shape), x)


@pytest.mark.parametrize("libver", ["earliest", "latest"])
@pytest.mark.parametrize("index", ["fixed", "extensible", "single"])
def test_reader_missing_chunks_every_chunk_index(tmp_path, libver, index):
    """Every chunk index HDF5 1.10 writes (v1 B-tree; with libver="latest" fixed array,
    extensible array, single chunk): chunks never stored are found, a whole one reads."""
    from helpers.io_helpers import BAD_DATA, emb_dump, role_dir, role_attrs
    ed = str(tmp_path)
    x = np.random.default_rng(2).standard_normal((30, 4)).astype(np.float32)
    p = os.path.join(role_dir(ed), "corpus.h5")
    kw = dict(chunks=(30, 4)) if index == "single" else dict(chunks=(8, 4))
    if index == "extensible":
        kw["maxshape"] = (None, 4)
    for written in ("all", "part"):
        with h5py.File(p, "w", libver=libver) as f:
            for k, v in role_attrs(dim=4).items():
                f.attrs[k] = v
            ds = f.create_dataset("embeddings", shape=x.shape, dtype="f4", **kw)
            if written == "all":
                ds[:] = x
            elif index != "single":
                ds[:16] = x[:16]
        rc, out = emb_dump("role", ed, "T", "test", "default", "corpus")
        if written == "all":
            assert rc == 0, out
        else:
            want = "rows 0..29" if index == "single" else "rows 16..29"
            assert rc == BAD_DATA and f"{want} were never written" in out["error"], out


@pytest.mark.parametrize("name", ["offsets", "row_index"])
def test_reader_offsets_and_row_index_never_written(tmp_path, name):
    """The role's other datasets go through the same check as /embeddings."""
    from helpers.io_helpers import BAD_DATA, emb_dump, role_dir, write_role_file
    ed = str(tmp_path)
    x = np.random.default_rng(3).standard_normal((6, 4)).astype(np.float32)
    p = os.path.join(role_dir(ed), "corpus.h5")
    if name == "offsets":
        write_role_file(p, x, offsets=[0, 2, 3, 6])
        _replace(p, "offsets", shape=(4,), dtype="i8")
    else:
        write_role_file(p, x, row_index=np.arange(6))
        _replace(p, "row_index", shape=(6,), dtype="i8", chunks=(2,))
    rc, out = emb_dump("role", ed, "T", "test", "default", "corpus")
    assert rc == BAD_DATA and f"/{name}: rows 0.." in out["error"] and "never written" in out["error"], out
