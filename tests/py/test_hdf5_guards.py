"""Guards in front of libhdf5 1.10's own bugs on corrupt files (host/hdf5/h5_guard_headers.c,
h5_guard_attrs.c, h5_guard_heaps.c, host/hdf5/h5_util.c). Each case rebuilds, in a file h5py wrote, the exact
corruption a fuzzer found (tests/fuzz/regressions/{taskdata,emb}/) and checks that the reader
refuses it with BAD_DATA and a message naming the file and the attribute or structure at
fault, instead of hanging (global heap walk), segfaulting (heap ID of a string attribute,
compact buffer) or reading past a buffer (attribute message sizes, datatype names, chunks).
Valid files in every layout h5py writes must still read: version 1 and 2 object headers,
continuation blocks, creation order, dense attribute storage (passed through unchecked).

The fuzz regression inputs themselves also go through `mieb-eval run`: exit 1, the task
named with its file, the other task scored. Byte offsets are found by searching the
file for known byte patterns, independently of the C parser."""
from __future__ import annotations

import os
import shutil
import struct
import subprocess

import h5py
import numpy as np
import pytest

from helpers.io_helpers import BAD_DATA, OK, emb_dump, role_dir, write_role_file, write_task_file
from test_io_taskdata import good_group

HERE = os.path.dirname(os.path.abspath(__file__))
REG = os.path.join(os.environ.get("MIEB_SOURCE_DIR", os.path.join(HERE, "..", "..")), "tests", "fuzz", "regressions")


def role_file(tmp_path, libver="earliest", track_order=False, extra_attrs=0):
    ed = str(tmp_path / "emb")
    p = os.path.join(role_dir(ed), "corpus.h5")
    write_role_file(p, np.arange(12, dtype=np.float32).reshape(3, 4))
    if libver != "earliest" or track_order or extra_attrs:  # rewrite in the other layout
        with h5py.File(p, "r") as f:
            attrs, data = dict(f.attrs), f["embeddings"][:]
        with h5py.File(p, "w", libver=libver, track_order=track_order) as f:
            for k, v in attrs.items():
                f.attrs[k] = v
            for i in range(extra_attrs):
                f.attrs[f"note_{i}"] = f"extra attribute {i} ü"
            f["embeddings"] = data
    return ed, p


def dump_role(ed):
    return emb_dump("role", ed, "T", "test", "default", "corpus")


def heap_id_of(b: bytes, value: str) -> int:
    """Offset of the heap ID (u32 length, u64 collection address, u32 index) of the string
    attribute holding `value`: the length followed by the address of a GCOL holding it."""
    enc = value.encode()
    gcols = [i for i in range(len(b)) if b.startswith(b"GCOL", i)]
    for g in gcols:
        pat = struct.pack("<IQ", len(enc), g)
        at = b.find(pat)
        while at >= 0:
            idx = struct.unpack_from("<I", b, at + 12)[0]
            # that object of the collection must hold the value (walk the objects)
            q, size = g + 16, struct.unpack_from("<Q", b, g + 8)[0]
            while q + 16 <= g + size:
                oi, osz = struct.unpack_from("<H", b, q)[0], struct.unpack_from("<Q", b, q + 8)[0]
                if oi == 0:
                    break
                if oi == idx and b[q + 16:q + 16 + osz] == enc:
                    return at
                q += 16 + ((osz + 7) & ~7)
            at = b.find(pat, at + 1)
    raise AssertionError(f"heap ID of {value!r} not found")


# ---- 1. string attribute whose heap ID points at nothing (was: segfault in H5HG_read) ----

@pytest.mark.parametrize("how", ["index", "length", "address"])
def test_attr_heap_id_corrupt(tmp_path, how):
    ed, p = role_file(tmp_path)
    b = bytearray(open(p, "rb").read())
    at = heap_id_of(bytes(b), "corpus")  # the 'role' attribute
    if how == "index":
        b[at + 12:at + 16] = struct.pack("<I", 4000)
    elif how == "length":
        b[at:at + 4] = struct.pack("<I", 10**6)
    else:
        b[at + 4:at + 12] = struct.pack("<Q", 512)  # not a collection
    open(p, "wb").write(bytes(b))
    rc, out = dump_role(ed)
    assert rc == BAD_DATA, out
    assert "corpus.h5" in out["error"] and "attribute 'role'" in out["error"], out
    assert ("missing global heap object" if how != "address" else "bad global heap") in out["error"]


# ---- 2. global heap collection with junk in its reserved bytes (was: endless loop) ----

def test_heap_reserved_bytes_do_not_hide_a_corrupt_heap(tmp_path):
    p = str(tmp_path / "Heap.h5")
    write_task_file(p, {"test/default": good_group()})
    b = bytearray(open(p, "rb").read())
    g = b.find(b"GCOL")
    b[g + 7] = 0x40  # reserved byte: HDF5 ignores it, the old guard skipped the collection
    q, size = g + 16, struct.unpack_from("<Q", b, g + 8)[0]
    while struct.unpack_from("<H", b, q)[0] != 0:  # to the free-space object
        q += 16 + ((struct.unpack_from("<Q", b, q + 8)[0] + 7) & ~7)
        assert q < g + size
    b[q + 8:q + 16] = bytes(8)  # free space of size 0: HDF5's object walk never advances
    open(p, "wb").write(bytes(b))
    rc, out = emb_dump("retrieval", p, "test", "default")
    assert rc == BAD_DATA and "Heap.h5" in out["error"] and "global heap" in out["error"], out


def test_heap_reserved_bytes_alone_are_harmless(tmp_path):
    p = str(tmp_path / "Heap.h5")
    write_task_file(p, {"test/default": good_group()})
    b = bytearray(open(p, "rb").read())
    g = b.find(b"GCOL")
    b[g + 5:g + 8] = b"\x11\x22\x33"
    open(p, "wb").write(bytes(b))
    rc, out = emb_dump("retrieval", p, "test", "default")
    assert rc == OK, out


# ---- 3. attribute message whose parts run past it (was: heap over-read in H5O_attr_decode) ----

def attr_msg(b: bytes, name: str) -> int:
    """Offset of the body of the version 1 attribute message called `name`."""
    enc = name.encode() + b"\0"
    at = b.find(struct.pack("<BBH", 1, 0, len(enc)))
    while at >= 0:
        if b[at + 8:at + 8 + len(enc)] == enc:
            return at
        at = b.find(struct.pack("<BBH", 1, 0, len(enc)), at + 1)
    raise AssertionError(f"attribute message {name!r} not found")


@pytest.mark.parametrize("field,value,what", [
    ("ds", 2056, "dataspace runs past"),  # the fuzzer's input: dataspace size 8 -> 2056
    ("dt", 4000, "datatype runs past"),
    ("name", 900, "name runs past"),
    ("dims", 10**9, "value runs past"),  # a 1-element attribute claiming 10^9 elements
    ("dtsize", 9, "wrong size"),  # a string type recording 9 bytes for a 16-byte heap ID (fuzzer)
])
def test_attr_message_overrun(tmp_path, field, value, what):
    ed, p = role_file(tmp_path)
    b = bytearray(open(p, "rb").read())
    m = attr_msg(bytes(b), "role")
    if field == "dims":
        name_len, dt_len = struct.unpack_from("<HH", b, m + 2)
        ds = m + 8 + ((name_len + 7) & ~7) + ((dt_len + 7) & ~7)
        assert b[ds] in (1, 2)
        if b[ds + 1] == 0:  # scalar: make it a 1-D simple dataspace in place (v1 layout)
            pytest.skip("h5py wrote a scalar dataspace without room for dimensions")
        struct.pack_into("<Q", b, ds + (8 if b[ds] == 1 else 4), value)
    elif field == "dtsize":
        name_len = struct.unpack_from("<H", b, m + 2)[0]
        dt = m + 8 + ((name_len + 7) & ~7)
        assert b[dt] & 0x0F == 9 and struct.unpack_from("<I", b, dt + 4)[0] == 16  # vlen string, 16-byte IDs
        struct.pack_into("<I", b, dt + 4, value)
    else:
        off = {"name": 2, "dt": 4, "ds": 6}[field]
        struct.pack_into("<H", b, m + off, value)
    open(p, "wb").write(bytes(b))
    rc, out = dump_role(ed)
    assert rc == BAD_DATA, out
    assert "corpus.h5" in out["error"] and "corrupt object header" in out["error"] and what in out["error"], out


@pytest.mark.parametrize("flags_byte", [0, 0x21])
def test_attr_message_array_overrun(tmp_path, flags_byte):
    """A 1-D attribute (not scalar) whose dimension is inflated: the value would be read past.
    Version 1 attribute messages have no flags (HDF5 skips the byte), so a 0x21 there must
    not make the check treat the datatype as shared and skip the value (found by fuzzing:
    memcpy past the header chunk)."""
    ed, p = role_file(tmp_path)
    with h5py.File(p, "r+") as f:
        f.attrs["shape_note"] = np.arange(3, dtype=np.int64)
    b = bytearray(open(p, "rb").read())
    m = attr_msg(bytes(b), "shape_note")
    name_len, dt_len = struct.unpack_from("<HH", b, m + 2)
    ds = m + 8 + ((name_len + 7) & ~7) + ((dt_len + 7) & ~7)
    assert b[ds + 1] == 1  # rank 1
    b[m + 1] = flags_byte
    struct.pack_into("<Q", b, ds + (8 if b[ds] == 1 else 4), 10**9)
    open(p, "wb").write(bytes(b))
    rc, out = dump_role(ed)
    assert rc == BAD_DATA and "corpus.h5" in out["error"] and "value runs past" in out["error"], out


# ---- valid files in every header layout still read ----

@pytest.mark.parametrize("libver,track,extra", [
    ("earliest", False, 0), ("latest", False, 0), ("latest", True, 0),
    ("earliest", False, 40),  # many attributes: continuation blocks (version 1 headers)
    ("latest", False, 12),    # dense attribute storage (fractal heap): not parsed, passed through
    ("latest", True, 40),
])
def test_valid_layouts_read(tmp_path, libver, track, extra):
    ed, _ = role_file(tmp_path, libver=libver, track_order=track, extra_attrs=extra)
    rc, out = dump_role(ed)
    assert rc == OK, out
    assert out["n_items"] == 3 if "n_items" in out else True


def test_valid_task_file_latest_format(tmp_path):
    p = str(tmp_path / "Foo.h5")
    write_task_file(p, {"test/default": good_group()})
    q = str(tmp_path / "Bar.h5")
    with h5py.File(p, "r") as src, h5py.File(q, "w", libver="latest", track_order=True) as dst:
        for k, v in src.attrs.items():
            dst.attrs[k] = v
        src.copy(src["test"], dst, "test")
    rc, out = emb_dump("retrieval", q, "test", "default")
    assert rc == OK and out["query_ids"] == good_group()["query_ids"], out


def test_v2_header_attr_overrun(tmp_path):
    """The same check on a version 2 (OHDR) object header."""
    ed, p = role_file(tmp_path, libver="latest")
    b = bytearray(open(p, "rb").read())
    assert b.find(b"OHDR") >= 0
    enc = b"role\0"
    # version 3 attribute message: ver, flags, name_len, dt_len, ds_len, encoding, name
    at = b.find(struct.pack("<BBH", 3, 0, len(enc)))
    while at >= 0 and b[at + 9:at + 9 + len(enc)] != enc:
        at = b.find(struct.pack("<BBH", 3, 0, len(enc)), at + 1)
    assert at >= 0
    struct.pack_into("<H", b, at + 6, 3000)
    open(p, "wb").write(bytes(b))
    rc, out = dump_role(ed)
    # HDF5 verifies version 2 header checksums itself and may refuse the chunk first
    assert rc in (BAD_DATA, 5) and "corpus.h5" in out["error"], out


# ---- the fuzz regression inputs, end to end through `mieb-eval run` ----

def split_emb_input(path, ed, task, role):
    """Unpack a fuzz_emb input (selector byte, then one file or two shards) as fuzz_emb.c does."""
    d = open(path, "rb").read()
    sel, d = d[0], d[1:]
    out = os.path.join(ed, task, "test", "default")
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        if f.startswith(role):
            os.remove(os.path.join(out, f))
    if sel & 0x80:
        n = min(struct.unpack_from("<I", d, 0)[0], len(d) - 4)
        d = d[4:]
        open(os.path.join(out, f"{role}-00000-of-00002.h5"), "wb").write(d[:n])
        open(os.path.join(out, f"{role}-00001-of-00002.h5"), "wb").write(d[n:])
        return f"{role}-00000-of-00002.h5"
    open(os.path.join(out, f"{role}.h5"), "wb").write(d)
    return f"{role}.h5"


ROLES = [("CIRRIT2IRetrieval", "queries"), ("CIRRIT2IRetrieval", "corpus"), ("Country211", "train"),
         ("CIFAR10ZeroShot", "candidate_labels"), ("STS12VisualSTS", "sentence1"), ("AROCocoOrder", "texts")]


def synth_suite(tmp_path, tasks):
    bin_ = os.path.join(os.environ["MIEB_BUILD_DIR"], "mieb-eval")
    out = str(tmp_path / "suite")
    subprocess.run([bin_, "synth", "--out", out, "--scale", "0.001", "--dim", "4", "--tasks", ",".join(tasks)],
                   check=True, capture_output=True, timeout=300)
    return bin_, os.path.join(out, "task-data"), os.path.join(out, "embeddings")


def run(bin_, td, ed, out, *tasks):
    return subprocess.run([bin_, "run", "--task-data", td, "--embeddings", ed, "-t", *tasks, "--output-folder", out,
                           "--device", "cpu", "--progress", "off"], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("name", sorted(os.listdir(os.path.join(REG, "emb"))) if os.path.isdir(
    os.path.join(REG, "emb")) else [])
def test_fuzz_emb_regression_end_to_end(tmp_path, name):
    path = os.path.join(REG, "emb", name)
    task, role = ROLES[(open(path, "rb").read(1)[0] & 0x7F) % len(ROLES)]
    good = "STS12VisualSTS" if task != "STS12VisualSTS" else "CIRRIT2IRetrieval"
    bin_, td, ed = synth_suite(tmp_path, [task, good])
    fname = split_emb_input(path, ed, task, role)
    out = str(tmp_path / "out")
    p = run(bin_, td, ed, out, task, good)
    assert p.returncode == 1, p.stderr
    assert f"task {task} not scored" in p.stderr and fname in p.stderr, p.stderr
    res = os.path.join(p.stdout.strip())
    assert os.path.exists(os.path.join(res, f"{good}.json")) and not os.path.exists(os.path.join(res, f"{task}.json"))


@pytest.mark.parametrize("name", sorted(os.listdir(os.path.join(REG, "taskdata"))) if os.path.isdir(
    os.path.join(REG, "taskdata")) else [])
def test_fuzz_taskdata_regression_end_to_end(tmp_path, name):
    task, good = "CIRRIT2IRetrieval", "STS12VisualSTS"
    bin_, td, ed = synth_suite(tmp_path, [task, good])
    shutil.copyfile(os.path.join(REG, "taskdata", name), os.path.join(td, f"{task}.h5"))
    out = str(tmp_path / "out")
    p = run(bin_, td, ed, out, task, good)
    assert p.returncode == 1, p.stderr
    assert f"task {task} not scored" in p.stderr and f"{task}.h5" in p.stderr, p.stderr
    assert os.path.exists(os.path.join(p.stdout.strip(), f"{good}.json"))


# ---- compact datasets whose buffer does not match their shape (was: memcpy from NULL) ----

STR_DT = h5py.string_dtype()


def compact_file(tmp_path):
    """A task file whose query_ids (vlen strings) and qrels_doc (int64) use compact storage."""
    p = str(tmp_path / "Compact.h5")
    g = good_group()
    write_task_file(p, {"test/default": {k: v for k, v in g.items() if k not in ("query_ids", "qrels_doc")}})
    with h5py.File(p, "r+") as f:
        grp = f["test/default"]
        for name, data, tid in (("query_ids", np.array(g["query_ids"], dtype=object), h5py.h5t.py_create(STR_DT, logical=True)),
                                ("qrels_doc", np.asarray(g["qrels_doc"], np.int64), h5py.h5t.STD_I64LE)):
            dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
            dcpl.set_layout(h5py.h5d.COMPACT)
            sp = h5py.h5s.create_simple((len(data),))
            ds = h5py.h5d.create(grp.id, name.encode(), tid, sp, dcpl=dcpl)
            h5py.Dataset(ds)[...] = data
    return p, g


def test_compact_datasets_read(tmp_path):
    p, g = compact_file(tmp_path)
    rc, out = emb_dump("retrieval", p, "test", "default")
    assert rc == OK and out["query_ids"] == g["query_ids"], out


def test_compact_buffer_size_mismatch(tmp_path):
    p, g = compact_file(tmp_path)
    b = bytearray(open(p, "rb").read())
    data = np.asarray(g["qrels_doc"], "<i8").tobytes()
    at = b.find(struct.pack("<BBH", 3, 0, len(data)) + data[:16])  # layout message v3, compact, size
    assert at >= 0
    struct.pack_into("<H", b, at + 2, 8)
    open(p, "wb").write(bytes(b))
    rc, out = emb_dump("retrieval", p, "test", "default")
    assert rc == BAD_DATA and "qrels_doc" in out["error"] and "compact storage holds 8 bytes" in out["error"], out


# ---- datatypes HDF5 decodes without bounds (was: strdup past a member name) ----

def test_attr_compound_name_without_nul(tmp_path):
    ed, p = role_file(tmp_path)
    with h5py.File(p, "r+") as f:
        f.attrs["note"] = np.array((1, 2.0), dtype=[("alpha", "<i4"), ("beta", "<f8")])
    b = bytearray(open(p, "rb").read())
    m = attr_msg(bytes(b), "note")
    name_len, dt_len = struct.unpack_from("<HH", b, m + 2)
    dt = m + 8 + ((name_len + 7) & ~7)
    assert b[dt] & 0x0F == 6  # compound
    at = b.find(b"beta\0", dt, dt + dt_len)
    b[at:dt + dt_len] = b"x" * (dt + dt_len - at)  # the last member name never ends
    open(p, "wb").write(bytes(b))
    rc, out = dump_role(ed)
    assert rc == BAD_DATA and "attribute datatype is malformed" in out["error"], out


def test_valid_attribute_types_pass(tmp_path):
    """Compound, enum (h5py's bool), array, opaque and fixed-string attributes next to ours."""
    ed, p = role_file(tmp_path)
    with h5py.File(p, "r+") as f:
        f.attrs["c"] = np.array((1, 2.0), dtype=[("alpha", "<i4"), ("beta", "<f8")])
        f.attrs["flag"] = np.bool_(True)
        f.attrs.create("arr", np.zeros((1,), dtype=np.dtype(("<f4", (3,)))))
        f.attrs["raw"] = np.void(b"\x01\x02\x03")
        f.attrs["fixed"] = np.bytes_(b"abc")
    rc, out = dump_role(ed)
    assert rc == OK, out


# ---- chunked storage that does not match its dataset (was: reads past a chunk buffer) ----

def test_chunk_longer_than_dimension(tmp_path):
    ed, p = role_file(tmp_path)
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    with h5py.File(p, "r+") as f:
        del f["embeddings"]
        f.create_dataset("embeddings", data=data, chunks=(3, 4), compression="gzip")
    b = bytearray(open(p, "rb").read())
    # layout message v3, chunked: version 3, class 2, rank+1, B-tree address, dims (4 bytes each)
    at = b.find(struct.pack("<BBB", 3, 2, 3))
    while at >= 0 and struct.unpack_from("<III", b, at + 11) != (3, 4, 4):
        at = b.find(struct.pack("<BBB", 3, 2, 3), at + 1)
    assert at >= 0
    struct.pack_into("<I", b, at + 15, 218)  # chunk columns 4 -> 218
    open(p, "wb").write(bytes(b))
    rc, out = dump_role(ed)
    assert rc == BAD_DATA and "chunk dimension 1 (218) exceeds" in out["error"], out


def test_unfiltered_chunk_size_mismatch(tmp_path):
    ed, p = role_file(tmp_path)
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    with h5py.File(p, "r+") as f:
        del f["embeddings"]
        ds = f.create_dataset("embeddings", data=data, chunks=(3, 4))
        addr = ds.id.get_chunk_info(0).byte_offset
    b = bytearray(open(p, "rb").read())
    key = struct.pack("<II", 48, 0) + bytes(24) + struct.pack("<Q", addr)  # B-tree key: size, mask, offsets, child
    at = b.find(key)
    assert at >= 0
    struct.pack_into("<I", b, at, 20)
    open(p, "wb").write(bytes(b))
    rc, out = dump_role(ed)
    assert rc == BAD_DATA and "holds 20 bytes" in out["error"] and "a chunk is 48 bytes" in out["error"], out


def test_valid_chunked_layouts_pass(tmp_path):
    ed, p = role_file(tmp_path)
    data = np.arange(40, dtype=np.float32).reshape(10, 4)
    for kw in (dict(chunks=(3, 4)), dict(chunks=(3, 2), compression="gzip"), dict(chunks=(4, 4), maxshape=(None, 4))):
        with h5py.File(p, "r+") as f:
            del f["embeddings"]
            f.create_dataset("embeddings", data=data, **kw)
            f.attrs["dim"] = 4
        rc, out = emb_dump("role", ed, "T", "test", "default", "corpus")
        assert rc == OK and out["info"]["n_items"] == 10, (kw, out)


# ---- object header chunks larger than the file (was: an 8 GiB allocation for a 12 KB file) ----

@pytest.mark.parametrize("which", ["root", "dataset"])
def test_header_chunk_past_end_of_file(tmp_path, which):
    p = str(tmp_path / "Big.h5")
    write_task_file(p, {"test/default": good_group()})
    with h5py.File(p, "r") as f:
        addr = h5py.h5o.get_info(f.id if which == "root" else f["test/default/qrels_doc"].id).addr
    b = bytearray(open(p, "rb").read())
    assert b[addr] == 1  # version 1 object header: its first chunk's size at +8
    struct.pack_into("<I", b, addr + 8, 0x7FFFFFF0)
    open(p, "wb").write(bytes(b))
    rc, out = emb_dump("retrieval", p, "test", "default")
    assert rc == BAD_DATA and "Big.h5" in out["error"] and "lies outside the file" in out["error"], out
    if which == "dataset":
        assert "qrels_doc" in out["error"], out


# ---- a group's local heap whose free list returns to itself (was: allocation until out of memory) ----

def root_local_heap(p) -> int:
    """File offset of the root group's local heap (old-style group: symbol table message)."""
    b = open(p, "rb").read()
    at = b.find(b"HEAP")
    assert at >= 0 and b[at + 4] == 0, "no version 0 local heap"
    return at


@pytest.mark.parametrize("how", ["cycle", "past-end", "size"])
def test_local_heap_free_list_corrupt(tmp_path, how):
    ed, p = role_file(tmp_path)
    b = bytearray(open(p, "rb").read())
    h = root_local_heap(p)
    size, head, data = struct.unpack_from("<QQQ", b, h + 8)
    assert size >= 32
    if how == "cycle":  # one free block whose "next" is itself: H5HL__fl_deserialize never ends
        struct.pack_into("<Q", b, h + 16, 16)
        struct.pack_into("<QQ", b, data + 16, 16, 16)
    elif how == "past-end":  # a block starting 8 bytes before the end: its sizes are read past the heap
        struct.pack_into("<Q", b, h + 16, size - 8)
    else:  # a block longer than the heap
        struct.pack_into("<Q", b, h + 16, 16)
        struct.pack_into("<QQ", b, data + 16, 1, size)
    open(p, "wb").write(bytes(b))
    rc, out = dump_role(ed)
    assert rc == BAD_DATA and "corpus.h5" in out["error"] and "local heap has a corrupt free list" in out["error"], out


def test_local_heap_valid_free_list_passes(tmp_path):
    """A heap with free blocks (links written and deleted) still reads."""
    ed, p = role_file(tmp_path)
    with h5py.File(p, "r+") as f:
        for i in range(6):
            f[f"scratch_{i}"] = np.zeros(2)
        for i in range(0, 6, 2):
            del f[f"scratch_{i}"]
    b = open(p, "rb").read()
    h = root_local_heap(p)
    assert struct.unpack_from("<Q", b, h + 16)[0] != 1, "the heap should have a free list"
    rc, out = dump_role(ed)
    assert rc == OK, out


# ---- a filter pipeline whose filter name has no end (was: strlen past the header in H5O__pline_decode) ----

@pytest.mark.parametrize("how", ["no-nul", "name-past-message", "values-past-message"])
def test_filter_pipeline_name_corrupt(tmp_path, how):
    ed, p = role_file(tmp_path)
    data = np.arange(40, dtype=np.float32).reshape(10, 4)
    with h5py.File(p, "r+") as f:  # libver earliest: a version 1 pipeline, the filter named
        del f["embeddings"]
        f.create_dataset("embeddings", data=data, chunks=(5, 4), compression="gzip")
        f.attrs["dim"] = 4
    b = bytearray(open(p, "rb").read())
    name = b.find(b"deflate\0")
    assert name >= 0
    msg = name - 16  # version, count, 6 reserved; id, name length, flags, value count
    assert b[msg] == 1 and struct.unpack_from("<HH", b, msg + 8) == (1, 8)
    if how == "no-nul":
        b[name + 7] = ord("X")
    elif how == "name-past-message":
        struct.pack_into("<H", b, msg + 10, 4000)
    else:
        struct.pack_into("<H", b, msg + 14, 3000)
    open(p, "wb").write(bytes(b))
    rc, out = dump_role(ed)
    assert rc == BAD_DATA and "corpus.h5" in out["error"] and "filter pipeline message is malformed" in out[
        "error"], out


# ---- attribute flags: version 1 has none; shared datatypes are refused ----

def test_attr_v1_flags_byte_alone_is_harmless(tmp_path):
    ed, p = role_file(tmp_path)
    b = bytearray(open(p, "rb").read())
    b[attr_msg(bytes(b), "role") + 1] = 0x21
    open(p, "wb").write(bytes(b))
    rc, out = dump_role(ed)
    assert rc == OK, out


def v1_attr_as_v3(b: bytearray, m: int, flags: int) -> None:
    """Rewrite the version 1 attribute message at m in place as version 3 (no padding, an
    encoding byte) with the given flags; the message keeps its size, the tail is unused."""
    name_len, dt_len, ds_len = struct.unpack_from("<HHH", b, m + 2)
    q = m + 8
    name = bytes(b[q:q + name_len]); q += (name_len + 7) & ~7
    dt = bytes(b[q:q + dt_len]); q += (dt_len + 7) & ~7
    ds = bytes(b[q:q + ds_len]); q += (ds_len + 7) & ~7
    value = bytes(b[q:q + 16])
    body = struct.pack("<BBHHHB", 3, flags, name_len, dt_len, ds_len, 0) + name + dt + ds + value
    b[m:m + len(body)] = body


@pytest.mark.parametrize("flags,ok", [(0, True), (1, False), (2, False)])
def test_attr_shared_datatype_refused(tmp_path, flags, ok):
    """A version 3 attribute flagged as sharing its datatype (1) or dataspace (2): the value's
    size lives in another object that HDF5 would load and trust; no writer of these files
    shares them. Unflagged, the same message reads."""
    ed, p = role_file(tmp_path)
    b = bytearray(open(p, "rb").read())
    v1_attr_as_v3(b, attr_msg(bytes(b), "role"), flags)
    open(p, "wb").write(bytes(b))
    rc, out = dump_role(ed)
    if ok:
        assert rc == OK, out
    else:
        assert rc == BAD_DATA and "corpus.h5" in out["error"] and "shared datatype" in out["error"], out
