"""Task-data reader (host/io/task_data.c, host/hdf5/h5_read.c) on files written by h5py: string
encodings, integer types, candidates, the generic typed readers, and bad inputs that must
give the right status and a message naming the file and dataset."""
from __future__ import annotations

import os

import h5py
import numpy as np
import pytest

from helpers.io_helpers import BAD_DATA, NOT_FOUND, OK, STR, emb_dump, write_task_file

QIDS = ["q1", "q-ü", "запрос", "查询-7", "😀", ""]
CIDS = [f"d{i}" for i in range(50)]


def good_group(**over):
    g = {
        "query_ids": QIDS,
        "corpus_ids": CIDS,
        "qrels_indptr": np.array([0, 2, 2, 5, 6, 20, 20], np.int64),
        "qrels_doc": np.arange(20, dtype=np.int64),
        "qrels_score": (np.arange(20) % 5 - 1).astype(np.int32),
    }
    g.update(over)
    return {k: v for k, v in g.items() if v is not None}


def dump(path, split="test", subset="default", task=None):
    args = ["retrieval", path, split, subset] + ([task] if task else [])
    return emb_dump(*args)


def test_good_file(tmp_path):
    p = str(tmp_path / "Foo.h5")
    cand_ip = np.array([0, 1, 1, 3, 3, 3, 4])
    write_task_file(p, {"test/default": good_group(candidates_indptr=cand_ip,
                                                   candidates_doc=np.array([4, 9, 2, 0]))},
                    task="Foo", revision="abc123")
    rc, out = dump(p, task="Foo")
    assert rc == OK, out
    assert out["revision"] == "abc123"
    assert out["query_ids"] == QIDS and out["corpus_ids"] == CIDS
    assert out["qrels_indptr"] == [0, 2, 2, 5, 6, 20, 20]
    assert out["qrels_doc"] == list(range(20))
    assert out["qrels_score"] == [i % 5 - 1 for i in range(20)]
    assert out["candidates_indptr"] == cand_ip.tolist() and out["candidates_doc"] == [4, 9, 2, 0]


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int16, np.int64, ">i4"])
def test_score_integer_types(tmp_path, dt):
    p = str(tmp_path / "Foo.h5")
    sc = (np.arange(20) % 4).astype(dt)
    write_task_file(p, {"test/default": good_group(qrels_score=sc, qrels_doc=np.arange(20, dtype=np.int32),
                                                   qrels_indptr=np.array([0, 2, 2, 5, 6, 20, 20], np.uint32))})
    rc, out = dump(p)
    assert rc == OK and out["qrels_score"] == [i % 4 for i in range(20)]


def test_fixed_length_strings(tmp_path):
    p = str(tmp_path / "Foo.h5")
    write_task_file(p, {"test/default": good_group()})
    with h5py.File(p, "r+") as f:
        g = f["test/default"]
        del g["corpus_ids"]
        g["corpus_ids"] = np.array([c.encode() for c in CIDS])  # numpy 'S' = fixed-length, null-padded
        del g["query_ids"]
        t = h5py.string_dtype("utf-8", 16)  # fixed-length UTF-8
        g.create_dataset("query_ids", data=np.array([q.encode() for q in QIDS], dtype=t))
    rc, out = dump(p)
    assert rc == OK, out
    assert out["corpus_ids"] == CIDS and out["query_ids"] == QIDS


def test_multiple_groups(tmp_path):
    p = str(tmp_path / "Foo.h5")
    write_task_file(p, {"test/en": good_group(), "test/de": good_group(query_ids=[f"x{i}" for i in range(6)])})
    assert dump(p, "test", "de")[1]["query_ids"][0] == "x0"
    assert dump(p, "test", "en")[1]["query_ids"] == QIDS
    rc, out = dump(p, "test", "fr")
    assert rc == NOT_FOUND and "/test/fr" in out["error"] and "Foo.h5" in out["error"]


def test_generic_readers(tmp_path):
    p = str(tmp_path / "Foo.h5")
    idx = np.array([[3, 1, -1], [0, 2, 4]], np.int64)
    write_task_file(p, {"train/default": {"train_labels": np.array([5, 3, 5], np.int32), "train_idx": idx,
                                          "gold": np.array([0.5, 1.25, 4.0])}})
    with h5py.File(p, "r+") as f:
        f["train/default"].attrs["n_samples"] = 7
        f["train/default"].attrs["max_score"] = 5.0
    rc, out = emb_dump("i64", p, "train", "default", "train_labels")
    assert rc == OK and out["values"] == [5, 3, 5] and out["has_dataset"] and out["has_group"]
    rc, out = emb_dump("i64", p, "train", "default", "train_idx", "2d")
    assert rc == OK and out["values"] == idx.ravel().tolist() and (out["nrows"], out["ncols"]) == (2, 3)
    rc, out = emb_dump("i64", p, "train", "default", "train_idx")  # 1-D reader on a 2-D dataset
    assert rc == BAD_DATA and "train_idx" in out["error"] and "dimensions" in out["error"]
    rc, out = emb_dump("f64", p, "train", "default", "gold")
    assert rc == OK and out["values"] == [0.5, 1.25, 4.0]
    rc, out = emb_dump("i64", p, "train", "default", "gold")
    assert rc == BAD_DATA and "float64" in out["error"] and "/train/default/gold" in out["error"]
    rc, out = emb_dump("attr", p, "train", "default", "n_samples")
    assert rc == OK and out["i64"] == 7 and out["f64"] == 7.0
    rc, out = emb_dump("attr", p, "train", "default", "max_score")
    assert rc == OK and out["f64"] == 5.0 and "i64" not in out
    rc, out = emb_dump("i64", p, "train", "default", "nothing")
    assert rc == NOT_FOUND and not out.get("has_dataset")
    rc, out = emb_dump("attr", p, "train", "default", "nothing")
    assert rc == BAD_DATA and "nothing" in out["error"]


# ---- bad inputs ----

def case(**over):
    return over


BAD_GROUPS = {
    "doc_out_of_range": (case(qrels_doc=np.where(np.arange(20) == 17, 99, np.arange(20))),
                         "/test/default/qrels_doc[17] = 99 is outside corpus_ids (n=50)"),
    "doc_negative": (case(qrels_doc=np.where(np.arange(20) == 3, -1, np.arange(20))),
                     "/test/default/qrels_doc[3] = -1 is outside corpus_ids"),
    "indptr_start": (case(qrels_indptr=np.array([1, 2, 2, 5, 6, 20, 20])), "qrels_indptr[0] = 1, expected 0"),
    "indptr_decreasing": (case(qrels_indptr=np.array([0, 2, 1, 5, 6, 20, 20])), "qrels_indptr decreases at [2]"),
    "indptr_end": (case(qrels_indptr=np.array([0, 2, 2, 5, 6, 19, 19])), "qrels_indptr[6] = 19, but qrels_doc has 20"),
    "indptr_length": (case(qrels_indptr=np.array([0, 2, 2, 5, 20])), "qrels_indptr has 5 entries, expected n_queries+1 = 7"),
    "score_length": (case(qrels_score=np.zeros(19, np.int32)), "qrels_score has 19 entries, qrels_doc has 20"),
    "score_float": (case(qrels_score=np.zeros(20, np.float32)), "/test/default/qrels_score: has type float32"),
    "score_too_big": (case(qrels_score=np.full(20, 2**40, np.int64)), "qrels_score[0] = 1099511627776 does not fit int32"),
    "doc_float": (case(qrels_doc=np.arange(20, dtype=np.float64)), "/test/default/qrels_doc: has type float64"),
    "ids_not_strings": (case(query_ids=np.arange(6)), "/test/default/query_ids: has type int64, expected strings"),
    "ids_2d": (case(corpus_ids=np.array([[b"a", b"b"], [b"c", b"d"]])), "/test/default/corpus_ids: has 2 dimensions"),
    "duplicate_corpus_id": (case(corpus_ids=CIDS[:49] + ["d3"]), "corpus_ids[49] = 'd3' repeats"),
    "duplicate_query_id": (case(query_ids=QIDS[:5] + ["q1"]), "query_ids[5] = 'q1' repeats"),
    "duplicate_qrels_doc": (case(qrels_doc=np.where(np.arange(20) == 1, 0, np.arange(20))),
                            "query 0 lists document 0 twice"),
    "missing_qrels_doc": (case(qrels_doc=None), "/test/default/qrels_doc: dataset is missing"),
    "candidates_alone": (case(candidates_indptr=np.zeros(7, np.int64)), "candidates_indptr is present without"),
    "candidates_range": (case(candidates_indptr=np.array([0, 1, 1, 1, 1, 1, 1]), candidates_doc=np.array([50])),
                         "candidates_doc[0] = 50 is outside corpus_ids (n=50)"),
}


@pytest.mark.parametrize("name", list(BAD_GROUPS))
def test_bad_group(tmp_path, name):
    over, msg = BAD_GROUPS[name]
    p = str(tmp_path / "Bad.h5")
    g = good_group()
    for k, v in over.items():
        if v is None:
            g.pop(k)
        else:
            g[k] = v
    write_task_file(p, {"test/default": g})
    rc, out = dump(p)
    want = NOT_FOUND if name.startswith("missing") else BAD_DATA
    assert rc == want, out
    assert "Bad.h5" in out["error"] and msg in out["error"], out["error"]


def test_invalid_utf8_id(tmp_path):
    p = str(tmp_path / "Bad.h5")
    write_task_file(p, {"test/default": good_group()})
    with h5py.File(p, "r+") as f:
        g = f["test/default"]
        del g["corpus_ids"]
        g["corpus_ids"] = np.array([c.encode() for c in CIDS[:3]] + [b"\xff\xfe"] + [c.encode() for c in CIDS[4:]])
    rc, out = dump(p)
    assert rc == BAD_DATA and "/test/default/corpus_ids[3] is not valid UTF-8" in out["error"]


@pytest.mark.parametrize("attr,value,msg", [
    ("format", "mieb-emb", "attribute format is 'mieb-emb', expected 'mieb-task'"),
    ("format", None, "missing attribute 'format'"),
    ("format_version", 3, "format_version is 3"),
    ("format_version", 1.0, "format_version' has type float64"),
    ("task_name", "Other", "task_name is 'Other', expected 'T'"),
    ("dataset_revision", None, "missing attribute 'dataset_revision'"),
])
def test_bad_root(tmp_path, attr, value, msg):
    p = str(tmp_path / "Bad.h5")
    write_task_file(p, {"test/default": good_group()}, attrs={attr: value})  # None: attribute left out
    rc, out = dump(p, task="T")
    assert rc == BAD_DATA and msg in out["error"] and "Bad.h5" in out["error"], out


def test_missing_file(tmp_path):
    rc, out = dump(str(tmp_path / "Nope.h5"))
    assert rc == NOT_FOUND and "Nope.h5" in out["error"]


@pytest.mark.parametrize("frac", [0.3, 0.7, 0.95])
def test_truncated(tmp_path, frac):
    p = str(tmp_path / "Trunc.h5")
    big = [f"doc-{i:06d}-é" for i in range(5000)]
    write_task_file(p, {"test/default": good_group(corpus_ids=big)})
    size = os.path.getsize(p)
    with open(p, "r+b") as f:
        f.truncate(int(size * frac))
    rc, out = dump(p)
    assert rc in (BAD_DATA, 5) and "Trunc.h5" in out["error"], out


def test_group_is_a_dataset(tmp_path):
    p = str(tmp_path / "Odd.h5")
    with h5py.File(p, "w") as f:
        f.attrs.update(dict(format="mieb-task", format_version=1, task_name="T", dataset_revision="r"))
        f.create_group("test")["default"] = np.zeros(3)
    rc, out = dump(p)
    assert rc == NOT_FOUND and "/test/default" in out["error"]


def test_vlen_strings_written_as_bytes_type(tmp_path):
    """h5py vlen bytes (ASCII charset) ids are accepted as well as vlen str (UTF-8)."""
    p = str(tmp_path / "Foo.h5")
    write_task_file(p, {"test/default": good_group()})
    with h5py.File(p, "r+") as f:
        g = f["test/default"]
        del g["corpus_ids"]
        g.create_dataset("corpus_ids", data=np.array([c.encode() for c in CIDS], dtype=object),
                         dtype=h5py.vlen_dtype(bytes))
    rc, out = dump(p)
    assert rc == OK and out["corpus_ids"] == CIDS


def test_str_dtype_is_utf8(tmp_path):
    """Sanity check of the fixture: h5py.string_dtype() is variable-length UTF-8."""
    p = str(tmp_path / "Foo.h5")
    write_task_file(p, {"test/default": good_group()})
    with h5py.File(p, "r") as f:
        t = f["test/default/query_ids"].dtype
        assert h5py.check_string_dtype(t).encoding == "utf-8" and h5py.check_string_dtype(t).length is None
    assert STR == h5py.string_dtype()


# ---- corrupted global heaps (libhdf5 1.10 can hang or crash there; our reader must not) ----

def heap_file(tmp_path):
    p = str(tmp_path / "Heap.h5")
    write_task_file(p, {"test/default": good_group(corpus_ids=[f"doc-{i}-é" for i in range(50)])})
    return p, bytearray(open(p, "rb").read())


def test_global_heap_bad_signature(tmp_path):
    p, b = heap_file(tmp_path)
    at = b.find(b"GCOL")
    assert at > 0
    b[at:at + 4] = b"XXXX"
    open(p, "wb").write(bytes(b))
    rc, out = dump(p)  # HDF5 checks the signature itself and fails cleanly
    assert rc in (BAD_DATA, 5) and "Heap.h5" in out["error"] and "heap" in out["error"]


def test_global_heap_impossible_size(tmp_path):
    p, b = heap_file(tmp_path)
    at = b.find(b"GCOL")
    b[at + 8:at + 16] = (2**62).to_bytes(8, "little")
    open(p, "wb").write(bytes(b))
    rc, out = dump(p)
    assert rc == BAD_DATA and "corrupt global heap collection at byte" in out["error"] and "Heap.h5" in out["error"]


def test_global_heap_object_overrun(tmp_path):
    p, b = heap_file(tmp_path)
    at = b.find(b"GCOL")
    first_obj = at + 16  # collection header: signature, version, 3 reserved, 8-byte size
    b[first_obj + 8:first_obj + 16] = (10**6).to_bytes(8, "little")
    open(p, "wb").write(bytes(b))
    rc, out = dump(p)
    assert rc == BAD_DATA and "corrupt global heap collection" in out["error"]


def test_global_heap_zero_size_free_space(tmp_path):
    """A free-space object of size 0 makes libhdf5 1.10 loop forever: refused up front."""
    p, b = heap_file(tmp_path)
    at = b.find(b"GCOL")
    size = int.from_bytes(b[at + 8:at + 16], "little")
    q = at + 16
    while True:  # walk to the free-space object (index 0)
        idx, osz = int.from_bytes(b[q:q + 2], "little"), int.from_bytes(b[q + 8:q + 16], "little")
        if idx == 0:
            break
        q += 16 + ((osz + 7) & ~7)
        assert q < at + size
    b[q + 8:q + 16] = (0).to_bytes(8, "little")
    open(p, "wb").write(bytes(b))
    rc, out = dump(p)
    assert rc == BAD_DATA and "corrupt global heap collection" in out["error"]


def test_global_heap_random_damage(tmp_path):
    """Random bytes over the heap and the heap references: always a clean status, quickly."""
    p, clean = heap_file(tmp_path)
    at = clean.find(b"GCOL")
    rng = np.random.default_rng(9)
    for trial in range(25):
        b = bytearray(clean)
        lo = at if trial % 2 else 0
        pos = int(rng.integers(lo, len(b) - 16))
        b[pos:pos + 16] = rng.integers(0, 256, 16, dtype=np.uint8).tobytes()
        open(p, "wb").write(bytes(b))
        rc, out = dump(p)
        assert rc in (OK, BAD_DATA, NOT_FOUND, 5), (trial, pos, out)
