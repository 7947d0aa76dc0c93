"""Helpers for the reader tests: write FORMAT.md files with h5py (independently of our C
writer) and read them back through the C readers with build/tests/emb_dump."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import h5py
import numpy as np

# mieb_status codes (host/core/status.h)
OK, INVALID_ARG, HDF5, BAD_DATA, NOT_FOUND = 0, 1, 5, 6, 13
STR = h5py.string_dtype()  # variable-length UTF-8


def emb_dump(*args: str) -> tuple[int, dict]:
    build = os.environ.get("MIEB_BUILD_DIR")
    if not build:
        raise RuntimeError("MIEB_BUILD_DIR is not set (ctest sets it to the build directory)")
    exe = Path(build) / "tests" / "emb_dump"
    if not exe.exists():
        raise RuntimeError(f"{exe} is missing: build the 'emb_dump' target first")
    p = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=120)
    assert p.stdout.strip(), f"emb_dump printed nothing (rc={p.returncode}): {p.stderr}"
    out = json.loads(p.stdout)
    return p.returncode, out


def role_attrs(task="T", split="test", subset="default", role="corpus", dim=None, **extra):
    a = dict(format="mieb-emb", format_version=1, task_name=task, split=split, hf_subset=subset, role=role)
    if dim is not None:
        a["dim"] = dim
    a.update(extra)
    return a


def role_dir(ed, task="T", split="test", subset="default") -> str:
    d = os.path.join(ed, task, split, subset)
    os.makedirs(d, exist_ok=True)
    return d


def write_role_file(path, emb, *, role="corpus", task="T", split="test", subset="default", dtype="f32",
                    chunks=None, gzip=False, shuffle=False, offsets=None, row_index=None, bf16_attr="dataset",
                    attrs=None, dim=None, userblock=0):
    """emb: float32 array [rows, D]. dtype f32 | f16 | bf16 | '>f4' | '>f2' (big-endian).
    userblock: bytes of HDF5 user block before the file's own data (0: none)."""
    emb = np.asarray(emb, dtype=np.float32)
    if dtype == "f32":
        data = emb
    elif dtype == "f16":
        data = emb.astype(np.float16)
    elif dtype in (">f4", ">f2"):
        data = emb.astype(dtype)
    elif dtype == "bf16":
        u = emb.view(np.uint32).astype(np.uint64)
        data = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)  # round to nearest even
    else:
        raise ValueError(dtype)
    with h5py.File(path, "w", userblock_size=userblock or None) as f:
        a = role_attrs(task, split, subset, role, dim=emb.shape[1] if dim is None else dim)
        a.update(attrs or {})
        for k, v in a.items():
            if v is None:
                continue
            f.attrs[k] = v
        kw = {}
        if chunks and data.shape[0] > 0:  # h5py refuses chunks larger than the data
            kw["chunks"] = (min(chunks[0], data.shape[0]), chunks[1])
        if gzip and data.shape[0] > 0:
            kw["compression"] = "gzip"
        if shuffle and data.shape[0] > 0:
            kw["shuffle"] = True
        ds = f.create_dataset("embeddings", data=data, **kw)
        if dtype == "bf16":
            (ds if bf16_attr == "dataset" else f).attrs["dtype"] = "bfloat16"
        if offsets is not None:
            f["offsets"] = np.asarray(offsets, dtype=np.int64)
        if row_index is not None:
            f["row_index"] = np.asarray(row_index, dtype=np.int64)
    return data


def expected_f32(data) -> np.ndarray:
    """What the reader must return for the stored array `data` (as numpy sees it)."""
    if data.dtype == np.uint16:
        return (data.astype(np.uint32) << 16).view(np.float32)
    return data.astype(np.float32)


def write_shards(ed, role, emb, bounds, *, offsets=None, m=None, row_index=None, **kw):
    """bounds: list of (item_start, n_items) per shard, written in that order as shard k of m."""
    d = role_dir(ed)
    m = len(bounds) if m is None else m
    paths = []
    for k, (s, n) in enumerate(bounds):
        p = os.path.join(d, f"{role}-{k:05d}-of-{m:05d}.h5")
        if offsets is not None:
            r0, r1 = offsets[s], offsets[s + n]
            part, off = emb[r0:r1], np.asarray(offsets[s:s + n + 1]) - r0
        else:
            part, off = emb[s:s + n], None
        ri = None if row_index is None else row_index[s:s + n]
        write_role_file(p, part, role=role, offsets=off, row_index=ri,
                        attrs=dict(row_start=np.int64(s), n_rows=np.int64(n)), **kw)
        paths.append(p)
    return paths


def write_task_file(path, groups: dict, *, task="T", revision="rev0", attrs=None):
    """groups: {"test/default": {name: array}}; str arrays are written as vlen UTF-8."""
    with h5py.File(path, "w") as f:
        a = dict(format="mieb-task", format_version=1, task_name=task, dataset_revision=revision)
        a.update(attrs or {})
        for k, v in a.items():
            if v is not None:
                f.attrs[k] = v
        for gname, dsets in groups.items():
            g = f.require_group(gname)
            for name, val in dsets.items():
                if isinstance(val, list) and val and isinstance(val[0], str):
                    g.create_dataset(name, data=np.array(val, dtype=object), dtype=STR)
                else:
                    g.create_dataset(name, data=val)
