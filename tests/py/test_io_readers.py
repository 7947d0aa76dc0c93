"""Embedding-role reader (host/emb/emb_open.c, emb_rows.c, emb_read.c, emb_stream.c) on files written
by h5py: every encoding and layout FORMAT.md §2 allows, shards, multi-vector offsets,
row_index, the block streamer, and every kind of bad input (status + message)."""
from __future__ import annotations

import os

import h5py
import numpy as np
import pytest

from helpers.io_helpers import (BAD_DATA, HDF5, NOT_FOUND, OK, emb_dump, expected_f32, role_dir, write_role_file,
                                write_shards)


def rand_emb(n, d, seed=0):
    return np.random.default_rng(seed).standard_normal((n, d)).astype(np.float32)


def dump_role(ed, role="corpus", *extra):
    return emb_dump("role", ed, "T", "test", "default", role, *extra)


def assert_same(out, want):
    got = np.array(out["bits"], dtype=np.uint64).astype(np.uint32).reshape(want.shape)
    assert np.array_equal(got, np.ascontiguousarray(want, np.float32).view(np.uint32))
    vals = np.array(out["data"], dtype=np.float64).astype(np.float32).reshape(want.shape)
    assert np.array_equal(vals, want)


LAYOUTS = [dict(), dict(chunks=(7, 5)), dict(chunks=(4, 5), gzip=True, shuffle=True), dict(chunks=(16, 5), gzip=True)]


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16", ">f4", ">f2"])
@pytest.mark.parametrize("layout", range(len(LAYOUTS)), ids=["contiguous", "chunked", "gzip+shuffle", "gzip"])
def test_encodings_and_layouts(tmp_path, dtype, layout):
    ed = str(tmp_path)
    x = rand_emb(23, 5)
    stored = write_role_file(os.path.join(role_dir(ed), "corpus.h5"), x, dtype=dtype, **LAYOUTS[layout])
    rc, out = dump_role(ed)
    assert rc == OK, out
    info = out["info"]
    assert (info["n_items"], info["n_rows"], info["dim"], info["n_shards"]) == (23, 23, 5, 1)
    assert info["dtype"] == {"f32": "float32", ">f4": "float32", "f16": "float16", ">f2": "float16",
                             "bf16": "bfloat16"}[dtype]
    assert not info["multivector"] and not info["has_row_index"]
    assert_same(out, expected_f32(stored))
    # a sub-range and the streamer with a block size that does not divide n
    rc, sub = dump_role(ed, "corpus", 5, 11)
    assert rc == OK
    assert_same(sub, expected_f32(stored)[5:16])
    rc, st = dump_role(ed, "corpus", "--stream", 4)
    assert rc == OK and st["blocks"] == 6
    assert_same(st, expected_f32(stored))


def test_float16_special_values(tmp_path):
    """Every finite half, including subnormals and -0, widened exactly as numpy does."""
    ed = str(tmp_path)
    bits = np.arange(0, 65536, dtype=np.uint32)
    bits = bits[((bits >> 10) & 0x1F) != 0x1F].astype(np.uint16)  # drop inf/nan
    h = bits.view(np.float16)
    n = len(h) // 16
    data = h[: n * 16].reshape(n, 16)
    with h5py.File(os.path.join(role_dir(ed), "corpus.h5"), "w") as f:
        f.attrs.update(dict(format="mieb-emb", format_version=1, task_name="T", split="test",
                            hf_subset="default", role="corpus", dim=16))
        f["embeddings"] = data
    rc, out = dump_role(ed)
    assert rc == OK, out
    assert_same(out, data.astype(np.float32))


def test_bfloat16_attr_on_root(tmp_path):
    ed = str(tmp_path)
    stored = write_role_file(os.path.join(role_dir(ed), "corpus.h5"), rand_emb(9, 3), dtype="bf16",
                             bf16_attr="root")
    rc, out = dump_role(ed)
    assert rc == OK and out["info"]["dtype"] == "bfloat16"
    assert_same(out, expected_f32(stored))


def test_uint16_without_bfloat16_attr_is_bad(tmp_path):
    ed = str(tmp_path)
    p = os.path.join(role_dir(ed), "corpus.h5")
    with h5py.File(p, "w") as f:
        f.attrs.update(dict(format="mieb-emb", format_version=1, task_name="T", split="test",
                            hf_subset="default", role="corpus", dim=3))
        f["embeddings"] = np.zeros((4, 3), np.uint16)
    rc, out = dump_role(ed)
    assert rc == BAD_DATA and "corpus.h5" in out["error"] and "bfloat16" in out["error"]


def test_float64_embeddings_are_bad(tmp_path):
    ed = str(tmp_path)
    p = os.path.join(role_dir(ed), "corpus.h5")
    write_role_file(p, rand_emb(4, 3))
    with h5py.File(p, "r+") as f:
        del f["embeddings"]
        f["embeddings"] = np.zeros((4, 3), np.float64)
    rc, out = dump_role(ed)
    assert rc == BAD_DATA and "/embeddings" in out["error"] and "float64" in out["error"]


def test_shards_good(tmp_path):
    ed = str(tmp_path)
    x = rand_emb(30, 4)
    ri = np.arange(100, 130)
    # written out of order on purpose: the cover is by row_start, not by shard number
    write_shards(ed, "corpus", x, [(0, 7), (7, 1), (8, 0), (8, 22)], row_index=ri, dtype="f16", chunks=(3, 4),
                 gzip=True)
    rc, out = dump_role(ed, "corpus", "--some-rows")  # 100..129: rows of a larger split
    assert rc == OK, out
    assert out["info"]["n_shards"] == 4 and out["info"]["n_items"] == 30 and out["info"]["has_row_index"]
    assert out["path"].endswith("corpus-00000-of-00004.h5")
    want = x.astype(np.float16).astype(np.float32)
    assert_same(out, want)
    assert out["row_index"] == ri.tolist()
    rc, sub = dump_role(ed, "corpus", 5, 20, "--some-rows")  # crosses three shards, one of them empty
    assert rc == OK
    assert_same(sub, want[5:25])
    for block in (1, 3, 8, 100):
        rc, st = dump_role(ed, "corpus", "--stream", block, "--some-rows")
        assert rc == OK
        assert_same(st, want)


def test_multivector_offsets(tmp_path):
    ed = str(tmp_path)
    off = np.array([0, 2, 3, 3, 7, 9, 12])  # an item with no token rows too
    x = rand_emb(12, 4)
    write_role_file(os.path.join(role_dir(ed), "corpus.h5"), x, offsets=off)
    rc, out = dump_role(ed)
    assert rc == OK and out["info"]["multivector"] and out["info"]["n_items"] == 6 and out["info"]["n_rows"] == 12
    assert out["offsets"] == off.tolist()
    assert_same(out, x)
    rc, sub = dump_role(ed, "corpus", 2, 3)
    assert rc == OK and sub["offsets"] == [0, 0, 4, 6]
    assert_same(sub, x[3:9])
    rc, st = dump_role(ed, "corpus", "--stream", 4)
    assert rc == OK and st["offsets"] == off.tolist()
    assert_same(st, x)


def test_multivector_shards(tmp_path):
    ed = str(tmp_path)
    off = np.array([0, 1, 4, 6, 7, 11, 12, 15])
    x = rand_emb(15, 3)
    write_shards(ed, "queries", x, [(0, 3), (3, 4)], offsets=off, dtype="bf16", chunks=(2, 3), gzip=True,
                 shuffle=True)
    rc, out = dump_role(ed, "queries")
    assert rc == OK, out
    assert out["offsets"] == off.tolist()
    bits = ((x.view(np.uint32).astype(np.uint64) + 0x7FFF + ((x.view(np.uint32) >> 16) & 1)) >> 16)
    assert_same(out, expected_f32(bits.astype(np.uint16)))
    rc, st = dump_role(ed, "queries", "--stream", 2)
    assert rc == OK and st["offsets"] == off.tolist()


@pytest.mark.parametrize("off,msg", [([1, 2, 4], "start with 0"), ([0, 3, 2], "decreases"),
                                     ([0, 2, 3], "/offsets[2] = 3")])
def test_bad_offsets(tmp_path, off, msg):
    ed = str(tmp_path)
    write_role_file(os.path.join(role_dir(ed), "corpus.h5"), rand_emb(4, 3), offsets=off)
    rc, out = dump_role(ed)
    assert rc == BAD_DATA and msg in out["error"] and "corpus.h5" in out["error"]


def test_row_index_single(tmp_path):
    ed = str(tmp_path)
    write_role_file(os.path.join(role_dir(ed), "train.h5"), rand_emb(5, 2), role="train",
                    row_index=[4, 8, 15, 16, 23])
    rc, out = dump_role(ed, "train", "--some-rows")
    assert rc == OK and out["row_index"] == [4, 8, 15, 16, 23]


def test_row_index_wrong_length(tmp_path):
    ed = str(tmp_path)
    write_role_file(os.path.join(role_dir(ed), "train.h5"), rand_emb(5, 2), role="train", row_index=[1, 2])
    rc, out = dump_role(ed, "train")
    assert rc == BAD_DATA and "/row_index" in out["error"]


def test_row_index_in_some_shards_only(tmp_path):
    ed = str(tmp_path)
    x = rand_emb(6, 2)
    paths = write_shards(ed, "corpus", x, [(0, 3), (3, 3)], row_index=np.arange(6))
    with h5py.File(paths[1], "r+") as f:
        del f["row_index"]
    rc, out = dump_role(ed)
    assert rc == BAD_DATA and "row_index" in out["error"]


def permuted_items(x, off, perm):
    """The rows of items perm[0], perm[1], ... of x (with their token rows when off is given)
    and the offsets of that order."""
    if off is None:
        return x[perm], None
    rows = [x[off[i]:off[i + 1]] for i in perm]
    return np.concatenate(rows), np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(np.int64)


PERMUTED = [dict(dtype="f32"), dict(dtype="f16", chunks=(3, 4), gzip=True), dict(dtype="bf16", chunks=(5, 4))]


@pytest.mark.parametrize("mmap", ["on", "off"])
@pytest.mark.parametrize("multi", [False, True], ids=["single-vector", "multi-vector"])
@pytest.mark.parametrize("bounds", [[(0, 29)], [(0, 7), (7, 0), (7, 13), (20, 9)]], ids=["one-file", "shards"])
@pytest.mark.parametrize("layout", range(len(PERMUTED)), ids=["f32", "f16-gzip", "bf16-chunked"])
def test_row_index_permutation_reads_in_split_order(tmp_path, monkeypatch, multi, bounds, layout, mmap):
    """A full role stored in a random order with its /row_index reads, streams (any block
    size) and reads by range exactly as the same role stored in order: gathered from the
    file's mapping (plain float32, MIEB_STREAM_MMAP on) or by HDF5 reads."""
    monkeypatch.setenv("MIEB_STREAM_MMAP", mmap)
    ed, kw = str(tmp_path), PERMUTED[layout]
    n = 29
    rng = np.random.default_rng(11 + layout)
    off = np.concatenate([[0], np.cumsum(rng.integers(0, 4, n))]).astype(np.int64) if multi else None
    x = rand_emb(int(off[-1]) if multi else n, 4, seed=layout)
    perm = rng.permutation(n)
    stored, stored_off = permuted_items(x, off, perm)
    if len(bounds) == 1:
        write_role_file(os.path.join(role_dir(ed), "corpus.h5"), stored, offsets=stored_off, row_index=perm, **kw)
    else:
        write_shards(ed, "corpus", stored, bounds, offsets=stored_off, row_index=perm, **kw)
    want = expected_f32(write_role_file(os.path.join(str(tmp_path), "plain.h5"), x, **kw))
    rc, out = dump_role(ed)
    assert rc == OK, out
    assert out["info"]["reordered"] and out["row_index"] == perm.tolist()
    assert_same(out, want)
    if multi:
        assert out["offsets"] == off.tolist()
    for a, c in [(0, 1), (5, 17), (28, 1), (3, 0)]:
        rc, sub = dump_role(ed, "corpus", a, c)
        assert rc == OK, sub
        lo, hi = (off[a], off[a + c]) if multi else (a, a + c)
        assert_same(sub, want[lo:hi])
    for block in (1, 3, 8, 100):
        rc, st = dump_role(ed, "corpus", "--stream", block)
        assert rc == OK and st["mapped"] == 0, st
        assert_same(st, want)
        lo, hi = (off[4], off[24]) if multi else (4, 24)
        rc, st = dump_role(ed, "corpus", 4, 20, "--stream", block)
        assert rc == OK, st
        assert_same(st, want[lo:hi])


def test_row_index_permuted_stream_normalizes_like_unpermuted(tmp_path):
    """The streamer's prepare step (cosine retrieval's normalization) sees the gathered rows."""
    x = rand_emb(40, 6, seed=5)
    perm = np.random.default_rng(5).permutation(40)
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    write_role_file(os.path.join(role_dir(a), "corpus.h5"), x)
    write_role_file(os.path.join(role_dir(b), "corpus.h5"), x[perm], row_index=perm)
    for block in (1, 7, 64):
        rc, want = dump_role(a, "corpus", 3, 30, "--stream", block, "--normalize")
        rc2, got = dump_role(b, "corpus", 3, 30, "--stream", block, "--normalize")
        assert rc == rc2 == OK and got["bits"] == want["bits"] and got["mapped"] == 0 and want["mapped"] > 0


def test_row_index_identity_keeps_fast_paths(tmp_path):
    """/row_index = 0..n-1 changes nothing: blocks are still mapped from the file."""
    ed = str(tmp_path)
    x = rand_emb(30, 4)
    write_shards(ed, "corpus", x, [(0, 12), (12, 18)], row_index=np.arange(30))
    rc, out = dump_role(ed, "corpus", "--stream", 6)
    assert rc == OK and not out["info"]["reordered"] and out["info"]["has_row_index"] and out["mapped"] == 5
    assert_same(out, x)


ROW_INDEX_NOT_PERMUTATION = {
    "duplicate": ([3, 0, 1, 3, 2], 29, "/row_index[3] = 3 repeats /row_index[0]"),
    "out_of_range": ([0, 1, 5, 3, 4], 29, "/row_index[2] = 5 is outside 0..4"),
    "negative": ([0, 1, 2, -1, 4], 29, "/row_index[3] = -1 is negative"),
    "subset": ([0, 2, 4, 6, 8], 29, "/row_index[3] = 6 is outside 0..4"),
}


@pytest.mark.parametrize("case", list(ROW_INDEX_NOT_PERMUTATION))
def test_row_index_not_a_permutation(tmp_path, case):
    """On a role that holds every row, a /row_index that is not a permutation of 0..n-1 is
    refused at open, naming the file, /row_index, the position and the value; the same file
    opened as a subset role (few-shot train) is read."""
    ri, _, msg = ROW_INDEX_NOT_PERMUTATION[case]
    ed = str(tmp_path)
    write_role_file(os.path.join(role_dir(ed), "corpus.h5"), rand_emb(5, 2), row_index=ri)
    rc, out = dump_role(ed)
    assert rc == BAD_DATA and "corpus.h5" in out["error"] and msg in out["error"], out
    if case != "negative":
        rc, out = dump_role(ed, "corpus", "--some-rows")
        assert rc == OK and out["row_index"] == ri and not out["info"]["reordered"]


def test_row_index_duplicate_across_shards(tmp_path):
    """Positions are the file's own, and a repeat names the shard of the first occurrence."""
    ed = str(tmp_path)
    paths = write_shards(ed, "corpus", rand_emb(6, 2), [(0, 3), (3, 3)], row_index=np.array([2, 0, 1, 5, 1, 3]))
    rc, out = dump_role(ed)
    assert rc == BAD_DATA, out
    assert out["error"].startswith(paths[1]) and "/row_index[1] = 1 repeats /row_index[2] of " + paths[0] in out["error"]


@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_row_index_permuted_nan_names_split_item(tmp_path, dtype):
    """A NaN in a role stored in another order is named by its file row and its split item;
    split items before it still read."""
    ed = str(tmp_path)
    x = rand_emb(20, 4)
    x[13, 2] = np.nan
    perm = np.random.default_rng(2).permutation(20)
    write_role_file(os.path.join(role_dir(ed), "corpus.h5"), x[perm], row_index=perm, dtype=dtype)
    row = int(np.flatnonzero(perm == 13)[0])
    rc, out = dump_role(ed, "corpus", "--stream", 6)
    assert rc == BAD_DATA, out
    assert f"corpus.h5: /embeddings row {row} (item 13 of the role, by /row_index), column 2 holds NaN" in out["error"]
    rc, out = dump_role(ed, "corpus", 0, 13)
    assert rc == OK


# ---- bad inputs: status and a message naming file and dataset ----

@pytest.mark.parametrize("bad,dtype", [(np.nan, "f32"), (np.inf, "f32"), (-np.inf, "f16"), (np.nan, "bf16")])
def test_non_finite(tmp_path, bad, dtype):
    ed = str(tmp_path)
    x = rand_emb(20, 4)
    x[13, 2] = bad
    write_shards(ed, "corpus", x, [(0, 10), (10, 10)], dtype=dtype)
    rc, out = dump_role(ed)
    assert rc == BAD_DATA
    e = out["error"]
    assert "corpus-00001-of-00002.h5" in e and "/embeddings" in e and "row 3 (item 13" in e
    assert ("NaN" if np.isnan(bad) else "Inf") in e
    rc, out = dump_role(ed, "corpus", "--stream", 3)  # same error through the reader thread
    assert rc == BAD_DATA and "row 3 (item 13" in out["error"]
    rc, out = dump_role(ed, "corpus", 0, 10)  # rows before the bad one read fine
    assert rc == OK


def test_missing_role(tmp_path):
    ed = str(tmp_path)
    role_dir(ed)
    rc, out = dump_role(ed, "queries")
    assert rc == NOT_FOUND and "queries.h5" in out["error"]
    rc, out = emb_dump("role", ed, "NoTask", "test", "default", "queries")
    assert rc == NOT_FOUND and "NoTask/test/default/queries.h5" in out["error"]


def test_shard_overlap(tmp_path):
    ed = str(tmp_path)
    write_shards(ed, "corpus", rand_emb(10, 2), [(0, 6), (5, 5)])
    rc, out = dump_role(ed)
    e = out["error"]
    assert rc == BAD_DATA and "overlap" in e and "corpus-00000-of-00002.h5" in e and "corpus-00001-of-00002.h5" in e
    assert "row_start" in e and "rows 5..5" in e


def test_shard_gap(tmp_path):
    ed = str(tmp_path)
    write_shards(ed, "corpus", rand_emb(10, 2), [(0, 4), (5, 5)])
    rc, out = dump_role(ed)
    e = out["error"]
    assert rc == BAD_DATA and "no shard" in e and "rows 4..4" in e and "corpus-00001-of-00002.h5" in e
    assert "n_rows" in e


def test_shard_gap_at_start(tmp_path):
    ed = str(tmp_path)
    write_shards(ed, "corpus", rand_emb(10, 2), [(2, 8)])
    rc, out = dump_role(ed)
    assert rc == BAD_DATA and "rows 0..1 are in no shard" in out["error"]


def test_shard_missing(tmp_path):
    ed = str(tmp_path)
    paths = write_shards(ed, "corpus", rand_emb(9, 2), [(0, 3), (3, 3), (6, 3)])
    os.remove(paths[1])
    rc, out = dump_role(ed)
    assert rc == NOT_FOUND and "corpus-00001-of-00003.h5" in out["error"] and "missing" in out["error"]


def test_mixed_single_and_shards(tmp_path):
    ed = str(tmp_path)
    write_shards(ed, "corpus", rand_emb(6, 2), [(0, 3), (3, 3)])
    write_role_file(os.path.join(role_dir(ed), "corpus.h5"), rand_emb(6, 2))
    rc, out = dump_role(ed)
    assert rc == BAD_DATA and "corpus.h5" in out["error"] and "-of-00002.h5" in out["error"]


def test_shard_count_disagrees(tmp_path):
    ed = str(tmp_path)
    write_shards(ed, "corpus", rand_emb(6, 2), [(0, 3)], m=2)
    d = role_dir(ed)
    write_role_file(os.path.join(d, "corpus-00001-of-00003.h5"), rand_emb(3, 2),
                    attrs=dict(row_start=np.int64(3), n_rows=np.int64(3)))
    rc, out = dump_role(ed)
    assert rc == BAD_DATA and "number of shards" in out["error"]


def test_shard_without_row_start(tmp_path):
    ed = str(tmp_path)
    paths = write_shards(ed, "corpus", rand_emb(6, 2), [(0, 3), (3, 3)])
    with h5py.File(paths[1], "r+") as f:
        del f.attrs["row_start"]
    rc, out = dump_role(ed)
    assert rc == BAD_DATA and "row_start" in out["error"] and "corpus-00001-of-00002.h5" in out["error"]


def test_shard_n_rows_mismatch(tmp_path):
    ed = str(tmp_path)
    paths = write_shards(ed, "corpus", rand_emb(6, 2), [(0, 3), (3, 3)])
    with h5py.File(paths[0], "r+") as f:
        f.attrs["n_rows"] = np.int64(4)
    rc, out = dump_role(ed)
    assert rc == BAD_DATA and "n_rows = 4" in out["error"]


def test_shard_dims_disagree(tmp_path):
    ed = str(tmp_path)
    d = role_dir(ed)
    write_role_file(os.path.join(d, "corpus-00000-of-00002.h5"), rand_emb(3, 2),
                    attrs=dict(row_start=np.int64(0), n_rows=np.int64(3)))
    write_role_file(os.path.join(d, "corpus-00001-of-00002.h5"), rand_emb(3, 5),
                    attrs=dict(row_start=np.int64(3), n_rows=np.int64(3)))
    rc, out = dump_role(ed)
    assert rc == BAD_DATA and "dimension" in out["error"]


@pytest.mark.parametrize("attr,value,msg", [
    ("format", "mieb-task", "attribute format is 'mieb-task'"),
    ("format", None, "missing attribute 'format'"),
    ("format_version", 2, "format_version is 2"),
    ("format_version", "1", "format_version' has type string"),
    ("task_name", "Other", "task_name is 'Other', expected 'T'"),
    ("split", "dev", "split is 'dev'"),
    ("hf_subset", "en", "hf_subset is 'en'"),
    ("role", "queries", "role is 'queries', expected 'corpus'"),
    ("dim", 7, "dimension mismatch"),
    ("dim", None, "missing attribute 'dim'"),
])
def test_bad_root_attributes(tmp_path, attr, value, msg):
    ed = str(tmp_path)
    p = os.path.join(role_dir(ed), "corpus.h5")
    write_role_file(p, rand_emb(4, 3))
    with h5py.File(p, "r+") as f:
        if value is None:
            del f.attrs[attr]
        else:
            f.attrs[attr] = value
    rc, out = dump_role(ed)
    assert rc == BAD_DATA and msg in out["error"] and "corpus.h5" in out["error"], out


def test_fixed_length_string_attributes(tmp_path):
    """numpy bytes attributes (fixed-length ASCII) are accepted like h5py's str ones."""
    ed = str(tmp_path)
    p = os.path.join(role_dir(ed), "corpus.h5")
    write_role_file(p, rand_emb(4, 3))
    with h5py.File(p, "r+") as f:
        for k in ("format", "task_name", "split", "hf_subset", "role"):
            f.attrs[k] = np.bytes_(f.attrs[k].encode())
    rc, out = dump_role(ed)
    assert rc == OK, out


def test_embeddings_wrong_rank(tmp_path):
    ed = str(tmp_path)
    p = os.path.join(role_dir(ed), "corpus.h5")
    write_role_file(p, rand_emb(4, 3))
    with h5py.File(p, "r+") as f:
        del f["embeddings"]
        f["embeddings"] = np.zeros(12, np.float32)
    rc, out = dump_role(ed)
    assert rc == BAD_DATA and "/embeddings" in out["error"] and "dimensions" in out["error"]


def test_missing_embeddings_dataset(tmp_path):
    ed = str(tmp_path)
    p = os.path.join(role_dir(ed), "corpus.h5")
    write_role_file(p, rand_emb(4, 3))
    with h5py.File(p, "r+") as f:
        del f["embeddings"]
    rc, out = dump_role(ed)
    assert rc == NOT_FOUND and "/embeddings" in out["error"] and "corpus.h5" in out["error"]


@pytest.mark.parametrize("frac", [0.5, 0.9, 0.1])
def test_truncated_file(tmp_path, frac):
    ed = str(tmp_path)
    p = os.path.join(role_dir(ed), "corpus.h5")
    write_role_file(p, rand_emb(200, 16))
    size = os.path.getsize(p)
    with open(p, "r+b") as f:
        f.truncate(int(size * frac))
    rc, out = dump_role(ed)
    assert rc in (BAD_DATA, HDF5) and "corpus.h5" in out["error"], out


def test_not_hdf5(tmp_path):
    ed = str(tmp_path)
    with open(os.path.join(role_dir(ed), "corpus.h5"), "wb") as f:
        f.write(b"this is not an HDF5 file\n" * 10)
    rc, out = dump_role(ed)
    assert rc == BAD_DATA and "corpus.h5" in out["error"]


def test_corrupt_bytes_never_crash(tmp_path):
    """Overwrite stretches of a chunked+compressed file with garbage: always a clean status."""
    ed = str(tmp_path)
    p = os.path.join(role_dir(ed), "corpus.h5")
    write_role_file(p, rand_emb(300, 8), chunks=(16, 8), gzip=True, shuffle=True)
    clean = open(p, "rb").read()
    rng = np.random.default_rng(5)
    for trial in range(12):
        b = bytearray(clean)
        at = int(rng.integers(0, len(b) - 64))
        b[at:at + 64] = rng.integers(0, 256, 64, dtype=np.uint8).tobytes()
        open(p, "wb").write(bytes(b))
        rc, out = dump_role(ed)
        assert rc in (OK, BAD_DATA, HDF5, NOT_FOUND), (trial, at, rc, out)
        if rc != OK:
            assert "corpus.h5" in out["error"]


def test_huge_declared_size_refused(tmp_path):
    """A dataset declaring far more data than the file holds is refused before any allocation."""
    ed = str(tmp_path)
    p = os.path.join(role_dir(ed), "corpus.h5")
    with h5py.File(p, "w") as f:
        f.attrs.update(dict(format="mieb-emb", format_version=1, task_name="T", split="test",
                            hf_subset="default", role="corpus", dim=1000))
        f.create_dataset("embeddings", shape=(10**9, 1000), dtype=np.float32, chunks=(1, 1000),
                         compression="gzip")
    rc, out = dump_role(ed)
    assert rc == BAD_DATA and "declared size" in out["error"] and "/embeddings" in out["error"]
    with h5py.File(p, "w") as f:
        f.attrs.update(dict(format="mieb-emb", format_version=1, task_name="T", split="test",
                            hf_subset="default", role="corpus", dim=100))
        f.create_dataset("embeddings", shape=(10**6, 100), dtype=np.float32)  # contiguous, never written
    rc, out = dump_role(ed)
    assert rc == BAD_DATA and "declared size" in out["error"]


# ---- zero-copy blocks (emb_map.c): the stream maps plain float32 files instead of reading ----

def stream(ed, monkeypatch, mmap, *extra, role="corpus"):
    monkeypatch.setenv("MIEB_STREAM_MMAP", "on" if mmap else "off")
    return dump_role(ed, role, *extra)


@pytest.mark.parametrize("dtype", ["f32", ">f4", "f16", "bf16"])
@pytest.mark.parametrize("layout", range(len(LAYOUTS)), ids=["contiguous", "chunked", "gzip+shuffle", "gzip"])
def test_stream_mapped_only_where_plain(tmp_path, monkeypatch, dtype, layout):
    """Only a contiguous little-endian float32 array is mapped; every layout streams the same
    bits with the mapping on and off."""
    ed = str(tmp_path)
    stored = write_role_file(os.path.join(role_dir(ed), "corpus.h5"), rand_emb(23, 5), dtype=dtype,
                             **LAYOUTS[layout])
    rc, on = stream(ed, monkeypatch, True, "--stream", 4)
    assert rc == OK, on
    assert on["blocks"] == 6
    assert on["mapped"] == (6 if dtype == "f32" and layout == 0 else 0)
    rc, off = stream(ed, monkeypatch, False, "--stream", 4)
    assert rc == OK and off["mapped"] == 0
    assert_same(on, expected_f32(stored))
    assert_same(off, expected_f32(stored))


@pytest.mark.parametrize("userblock", [512, 4096])
def test_stream_mapped_with_user_block(tmp_path, monkeypatch, userblock):
    """A user block shifts every HDF5 address: the mapping must still land on the rows."""
    ed = str(tmp_path)
    x = rand_emb(40, 6, seed=3)
    write_role_file(os.path.join(role_dir(ed), "corpus.h5"), x, userblock=userblock)
    with open(os.path.join(role_dir(ed), "corpus.h5"), "r+b") as f:
        f.write(b"\xff" * 64)  # a user block holds anything: garbage must not be taken for rows
    for block in (1, 7, 40):
        rc, on = stream(ed, monkeypatch, True, "--stream", block)
        assert rc == OK, on
        assert on["mapped"] == on["blocks"] > 0
        assert_same(on, x)


def test_stream_mapped_blocks_within_shards(tmp_path, monkeypatch):
    """A block inside one shard is mapped, one over a shard edge is read; the rows agree."""
    ed = str(tmp_path)
    x = rand_emb(30, 4, seed=5)
    write_shards(ed, "corpus", x, [(0, 10), (10, 0), (10, 20)])
    rc, on = stream(ed, monkeypatch, True, "--stream", 5)  # [0,5) [5,10) [10,15) ... all inside one shard
    assert rc == OK and on["blocks"] == 6 and on["mapped"] == 6
    assert_same(on, x)
    rc, on = stream(ed, monkeypatch, True, "--stream", 4)  # [8,12) crosses the edge at 10
    assert rc == OK and on["blocks"] == 8 and on["mapped"] == 7
    assert_same(on, x)
    rc, sub = stream(ed, monkeypatch, True, 3, 21, "--stream", 6)  # a sub-range: [3,9) [9,15) [15,21) [21,24)
    assert rc == OK and sub["blocks"] == 4 and sub["mapped"] == 3
    assert_same(sub, x[3:24])


def test_stream_mapped_multivector(tmp_path, monkeypatch):
    ed = str(tmp_path)
    off = np.array([0, 2, 3, 3, 7, 9, 12, 12])  # items with no token rows, the last one too
    x = rand_emb(12, 4, seed=7)
    write_role_file(os.path.join(role_dir(ed), "corpus.h5"), x, offsets=off)
    for block in (1, 2, 3, 7):
        rc, on = stream(ed, monkeypatch, True, "--stream", block)
        assert rc == OK, on
        assert on["offsets"] == off.tolist()
        assert_same(on, x)
        # blocks whose items hold no rows are read (nothing to map)
        assert 0 < on["mapped"] <= on["blocks"]


@pytest.mark.parametrize("mmap", [True, False])
def test_stream_mapped_non_finite_same_error(tmp_path, monkeypatch, mmap):
    ed = str(tmp_path)
    x = rand_emb(20, 4)
    x[13, 2] = np.nan
    x[17, 0] = np.inf
    write_role_file(os.path.join(role_dir(ed), "corpus.h5"), x)
    rc, out = stream(ed, monkeypatch, mmap, "--stream", 5)
    assert rc == BAD_DATA
    assert "corpus.h5" in out["error"] and "/embeddings row 13 (item 13 of the role), column 2 holds NaN" in out["error"]
    rc, out = stream(ed, monkeypatch, mmap, 0, 10, "--stream", 5)  # the blocks before it are fine
    assert rc == OK and out["mapped"] == (2 if mmap else 0)


def l2_normalize_reference(x):
    """mieb-eval's cosine normalisation, independently: the squares added in double in row
    order (Python floats), the norm rounded to float32, sqrt in float32, floor 1e-12,
    then each value divided in float32."""
    out = np.empty_like(x)
    for r, row in enumerate(x):
        ss = 0.0
        for v in row.tolist():
            ss += v * v
        nrm = np.sqrt(np.float32(ss))
        nrm = max(nrm, np.float32(1e-12))
        out[r] = row / nrm
    return out


@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_stream_normalize_prepare(tmp_path, monkeypatch, dtype):
    """The stream's prepare step (cosine retrieval's normalisation) gives the reference's bits
    from a mapping and from a read buffer, rows of zeros, tiny and huge values included, for
    row counts that are and are not multiples of the four rows done together."""
    ed = str(tmp_path)
    x = rand_emb(203, 77, seed=11)
    x[3] = 0.0
    # float16 holds 6e-8 .. 65504; float32 rows stay below a norm of 2^62 (larger ones are refused:
    # their dot products could overflow float32, emb_rows.c EMB_MAX_NORM2)
    tiny, huge = (1e-20, 1e17) if dtype == "f32" else (1e-7, 1e3)
    x[4] *= np.float32(tiny)  # float32: the squares underflow and the 1e-12 floor is the norm
    x[5] *= np.float32(huge)
    x[6, :] = np.float32(1.0)
    stored = write_role_file(os.path.join(role_dir(ed), "corpus.h5"), x, dtype=dtype)
    want = l2_normalize_reference(expected_f32(stored))
    for mmap in (True, False):
        for block in (1, 4, 5, 203):
            rc, out = stream(ed, monkeypatch, mmap, "--stream", block, "--normalize")
            assert rc == OK, out
            assert out["mapped"] == (out["blocks"] if mmap and dtype == "f32" else 0)
            assert_same(out, want)


def rewrite_chunked(path, chunks):
    """The file's /embeddings again, chunked (so not mappable), attributes kept."""
    with h5py.File(path, "r+") as f:
        data, attrs = f["embeddings"][...], dict(f["embeddings"].attrs)
        del f["embeddings"]
        ds = f.create_dataset("embeddings", data=data, chunks=(min(chunks, len(data)), data.shape[1]))
        ds.attrs.update(attrs)


@pytest.mark.parametrize("window_rows", [1, 2, 3, 7, 1000])
def test_stream_normalize_windows(tmp_path, monkeypatch, window_rows):
    """The prepare step maps a block window by window (MIEB_STREAM_WINDOW_BYTES, here a few
    rows): windows end at shard edges, a shard that cannot be mapped is read in place, and
    multi-vector items larger than a window are one window. Every combination gives the
    reference's bits."""
    dim = 6
    monkeypatch.setenv("MIEB_STREAM_WINDOW_BYTES", str(window_rows * dim * 4))
    ed = str(tmp_path / "single")
    x = rand_emb(40, dim, seed=13)
    paths = write_shards(ed, "corpus", x, [(0, 9), (9, 0), (9, 14), (23, 17)])
    rewrite_chunked(paths[2], 5)  # the middle shard is read, its neighbours mapped
    want = l2_normalize_reference(x)
    for block in (1, 4, 11, 40):
        for mmap in (True, False):
            rc, out = stream(ed, monkeypatch, mmap, "--stream", block, "--normalize")
            assert rc == OK, out
            assert_same(out, want)
            if not mmap:
                assert out["mapped"] == 0
        # blocks with an item of a mappable shard come (partly) from a mapping; the others not
        n_map = sum(any(not 9 <= i < 23 for i in range(b0, min(b0 + block, 40))) for b0 in range(0, 40, block))
        assert out["mapped"] == 0 and (stream(ed, monkeypatch, True, "--stream", block, "--normalize")[1]["mapped"]
                                       == n_map)

    ed = str(tmp_path / "multi")
    off = np.array([0, 5, 5, 6, 14, 15, 15, 20, 21])  # items of 0 to 8 rows
    x = rand_emb(21, dim, seed=17)
    write_role_file(os.path.join(role_dir(ed), "corpus.h5"), x, offsets=off)
    want = l2_normalize_reference(x)
    for block in (1, 3, 8):
        rc, out = stream(ed, monkeypatch, True, "--stream", block, "--normalize")
        assert rc == OK, out
        assert out["offsets"] == off.tolist()
        assert_same(out, want)
