"""Role files (FORMAT.md section 2): a resumable, atomic writer and a reader.

A role is written into hidden staged files (`.<role>.h5.part`, or `.<role>-00000-of-00004.h5.part`
when it is sharded), preallocated once the first encode call tells the dimension. After each
encode call (one of mteb's calls: all queries, one 50,000-document corpus chunk, ...) the
rows written so far are recorded in `.<role>.state.json` (replaced atomically). A rerun reads
that state and encodes only the calls not yet recorded. When every row is in, the staged files
are renamed to their final names, so a reader never meets a half-written role file.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

import h5py
import numpy as np

from .keys import KEY_BYTES, keys_array

DTYPES = ("float32", "float16", "bfloat16")


def write_json_atomic(path: Path, obj: Any) -> None:
    """path holds obj, or (a failed write, a full disk) what it held before; no temporary is left."""
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(obj, f, indent=1, default=str, allow_nan=False)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


_write_failed = False  # an HDF5 write of this process failed (see end_process)


@contextlib.contextmanager
def _writing(path: Path, mode: str) -> Iterator[h5py.File]:
    """An HDF5 file open for writing, whose failures are OSError (HDF5 reports a write that
    failed at close, a full disk say, as RuntimeError)."""
    global _write_failed
    try:
        with h5py.File(path, mode) as f:
            yield f
    except (OSError, RuntimeError) as e:
        _write_failed = True
        raise OSError(f"{path}: {e}") from e


def end_process(status: int) -> NoReturn:
    """End a program with `status`. After a failed write HDF5 keeps the file open with state it
    cannot flush, and its own clean-up at exit can crash the process (SIGSEGV instead of the
    status): then the process ends without it (the kernel closes the files; the staged file it
    leaves is checked, and encoded again, by the next run)."""
    if _write_failed:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    sys.exit(status)


def to_bfloat16_bits(x: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bits (uint16), rounding to nearest even as torch does; NaN stays NaN."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = u + (np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1)))
    out = (rounded >> np.uint32(16)).astype(np.uint16)
    nan = np.isnan(x)
    if nan.any():
        out[nan] = ((u[nan] >> np.uint32(16)) | np.uint32(0x0040)).astype(np.uint16)
    return out


def from_bfloat16_bits(b: np.ndarray) -> np.ndarray:
    return (np.asarray(b, dtype=np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)


def final_names(role: str, n_shards: int) -> list[str]:
    if n_shards == 1:
        return [f"{role}.h5"]
    return [f"{role}-{k:05d}-of-{n_shards:05d}.h5" for k in range(n_shards)]


def _shard_re(role: str) -> re.Pattern[str]:
    return re.compile(rf"^{re.escape(role)}-(\d{{5,7}})-of-(\d{{5,7}})\.h5$")


class RoleWriter:
    """Writes one role of one (task, split, subset), resuming an interrupted write."""

    def __init__(
        self,
        emb_dir: Path,
        *,
        task: str,
        split: str,
        subset: str,
        role: str,
        n_rows: int,
        dtype: str,
        shard_bytes: int,
        attrs: dict[str, Any],
        row_index: np.ndarray | None,
        signature: dict[str, Any],
    ) -> None:
        if dtype not in DTYPES:
            raise ValueError(f"mieb-export: dtype must be one of {DTYPES}, not {dtype!r}")
        self.dir = Path(emb_dir) / task / split / subset
        self.task, self.split, self.subset, self.role = task, split, subset, role
        self.n_rows, self.dtype, self.shard_bytes = int(n_rows), dtype, int(shard_bytes)
        self.attrs = dict(attrs)
        self.row_index = None if row_index is None else np.asarray(row_index, dtype=np.int64)
        self.signature = dict(signature, n_rows=self.n_rows, dtype=dtype, shard_bytes=self.shard_bytes)
        self.state_path = self.dir / f".{role}.state.json"
        self.state: dict[str, Any] | None = None

    # ---- what is already there ----
    def _existing_finals(self) -> list[Path]:
        if not self.dir.is_dir():
            return []
        pat = _shard_re(self.role)
        return sorted(p for p in self.dir.iterdir() if p.name == f"{self.role}.h5" or pat.match(p.name))

    def _staged(self, k: int, n_shards: int) -> Path:
        return self.dir / f".{final_names(self.role, n_shards)[k]}.part"

    def is_done(self) -> bool:
        """True when the final files exist, no write is pending, and they were written for this signature."""
        if self.state_path.exists():
            return False
        finals = self._existing_finals()
        if not finals:
            return False
        try:
            total = 0
            for p in finals:
                with h5py.File(p, "r") as f:
                    sig = json.loads(f.attrs.get("mieb_export_signature", "{}"))
                    if sig != json.loads(json.dumps(self.signature, default=str)):
                        return False
                    total += f["embeddings"].shape[0]
            return total == self.n_rows and len({p.name for p in finals}) == len(finals)
        except (OSError, KeyError, ValueError):
            return False

    def kept_width(self) -> int | None:
        """The width of the rows this role holds already (finished, or recorded by an
        unfinished write), None when it holds none."""
        if self.is_done():
            with h5py.File(self._existing_finals()[0], "r") as f:
                return int(f["embeddings"].shape[1])
        st = self._load_state()
        return int(st["dim"]) if st and int(st["rows_done"]) > 0 else None

    def rows_done(self) -> int:
        """Rows recorded as written by an interrupted run (0 when starting afresh)."""
        st = self._load_state()
        return int(st["rows_done"]) if st else 0

    def _load_state(self) -> dict[str, Any] | None:
        if self.state is not None:
            return self.state
        if not self.state_path.exists():
            return None
        try:
            st = json.loads(self.state_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            st = None
        ok = st is not None and st.get("signature") == json.loads(json.dumps(self.signature, default=str))
        if ok:
            ok = all(self._staged_readable(k, int(st["n_shards"]), int(st["dim"])) for k in range(int(st["n_shards"])))
        if not ok:
            self._wipe(st)
            return None
        self.state = st
        return st

    def _staged_readable(self, k: int, n_shards: int, dim: int) -> bool:
        """Shard k of an unfinished write is there (staged, or renamed by a finish cut short) and
        opens as the file that was created (a write that failed, a full disk, can break it)."""
        p = self._staged(k, n_shards)
        if not p.exists():
            p = self.dir / final_names(self.role, n_shards)[k]
        try:
            with h5py.File(p, "r") as f:
                return f["embeddings"].ndim == 2 and f["embeddings"].shape[1] == dim and "item_key" in f
        except (OSError, KeyError, ValueError):
            return False

    def _wipe(self, st: dict[str, Any] | None) -> None:
        """Remove staged files and state of a write that cannot be resumed."""
        if self.dir.is_dir():
            for p in self.dir.iterdir():
                if p.name.startswith(f".{self.role}.") or p.name.startswith(f".{self.role}-"):
                    if p.name.endswith(".part") or p.name.endswith(".state.json") or ".tmp" in p.name:
                        p.unlink()
        self.state = None

    def discard(self) -> None:
        """Remove everything of this role: finished files, staged files and state."""
        self._wipe(None)
        for p in self._existing_finals():
            p.unlink()

    # ---- writing ----
    def _create(self, dim: int) -> dict[str, Any]:
        self.dir.mkdir(parents=True, exist_ok=True)
        self._wipe(None)
        for p in self._existing_finals():  # an older export of this role (another model or layout)
            p.unlink()
        itemsize = 4 if self.dtype == "float32" else 2
        total = self.n_rows * dim * itemsize
        n_shards = 1 if total <= self.shard_bytes else math.ceil(total / self.shard_bytes)
        per = math.ceil(self.n_rows / n_shards)
        n_shards = math.ceil(self.n_rows / per)
        for k in range(n_shards):
            r0, r1 = k * per, min(self.n_rows, (k + 1) * per)
            with _writing(self._staged(k, n_shards), "w") as f:
                if self.dtype == "bfloat16":
                    ds = f.create_dataset("embeddings", shape=(r1 - r0, dim), dtype=np.uint16)
                    ds.attrs["dtype"] = "bfloat16"
                else:
                    f.create_dataset("embeddings", shape=(r1 - r0, dim), dtype=np.dtype(self.dtype))
                f.create_dataset("item_key", shape=(r1 - r0, KEY_BYTES), dtype=np.uint8)
                if self.row_index is not None:
                    f.create_dataset("row_index", data=self.row_index[r0:r1])
                f.attrs["format"] = "mieb-emb"
                f.attrs["format_version"] = np.int64(1)
                f.attrs["task_name"] = self.task
                f.attrs["split"] = self.split
                f.attrs["hf_subset"] = self.subset
                f.attrs["role"] = self.role
                f.attrs["dim"] = np.int64(dim)
                if n_shards > 1:
                    f.attrs["row_start"] = np.int64(r0)
                    f.attrs["n_rows"] = np.int64(r1 - r0)
                for k2, v in self.attrs.items():
                    f.attrs[k2] = v
                f.attrs["mieb_export_signature"] = json.dumps(self.signature, default=str)
        st = {
            "signature": json.loads(json.dumps(self.signature, default=str)),
            "dim": dim,
            "n_shards": n_shards,
            "rows_per_shard": per,
            "rows_done": 0,
            "complete": False,
        }
        write_json_atomic(self.state_path, st)
        self.state = st
        return st

    def write(self, row_start: int, emb: Any, keys: Sequence[bytes]) -> None:
        """Rows [row_start, row_start + len(emb)) of the role, then record them as done."""
        x = _as_matrix(emb)
        if x.shape[0] != len(keys):
            raise ValueError(
                f"mieb-export: {self.task}/{self.split}/{self.subset}/{self.role}: the model returned "
                f"{x.shape[0]} embeddings for {len(keys)} inputs"
            )
        if row_start < 0 or row_start + x.shape[0] > self.n_rows:
            raise ValueError(f"mieb-export: rows {row_start}..{row_start + x.shape[0]} outside the {self.n_rows} rows")
        st = self._load_state() or self._create(x.shape[1])
        if x.shape[1] != st["dim"]:
            raise ValueError(
                f"mieb-export: {self.task}/{self.split}/{self.subset}/{self.role}: dimension {x.shape[1]} "
                f"differs from the {st['dim']} of the rows already written"
            )
        data = to_bfloat16_bits(x) if self.dtype == "bfloat16" else x.astype(np.dtype(self.dtype))
        karr = keys_array(list(keys))
        per, n_shards = st["rows_per_shard"], st["n_shards"]
        r, end = row_start, row_start + x.shape[0]
        while r < end:
            k = r // per
            s0, s1 = k * per, min(self.n_rows, (k + 1) * per)
            hi = min(end, s1)
            with _writing(self._staged(k, n_shards), "r+") as f:
                f["embeddings"][r - s0 : hi - s0] = data[r - row_start : hi - row_start]
                f["item_key"][r - s0 : hi - s0] = karr[r - row_start : hi - row_start]
            r = hi
        st["rows_done"] = max(int(st["rows_done"]), end)
        write_json_atomic(self.state_path, st)

    def finish(self) -> None:
        """Every row is in: rename the staged files to their final names."""
        st = self._load_state()
        if st is None:
            raise RuntimeError(f"mieb-export: {self.role}: finish() before any row was written")
        if int(st["rows_done"]) != self.n_rows:
            raise RuntimeError(f"mieb-export: {self.role}: {st['rows_done']} of {self.n_rows} rows written")
        st["complete"] = True
        write_json_atomic(self.state_path, st)
        n = int(st["n_shards"])
        for k, name in enumerate(final_names(self.role, n)):
            staged = self._staged(k, n)
            if staged.exists():
                os.replace(staged, self.dir / name)
        self.state_path.unlink()
        self.state = None


def _as_matrix(emb: Any) -> np.ndarray:
    """The model's output as a float32 [n, D] array (torch tensors of any float dtype included)."""
    if hasattr(emb, "detach"):
        emb = emb.detach().float().cpu().numpy()
    x = np.asarray(emb)
    if x.dtype == object or x.ndim != 2:
        raise ValueError(
            "mieb-export: the model must return one vector per input ([n, D]); multi-vector "
            f"(late-interaction) output of shape {getattr(x, 'shape', None)} is not supported"
        )
    return np.ascontiguousarray(x, dtype=np.float32)


class RoleReader:
    """Every file of one exported role, in row order: item keys, attributes, embeddings on demand."""

    def __init__(self, role_dir: Path, role: str) -> None:
        self.dir, self.role = Path(role_dir), role
        single = self.dir / f"{role}.h5"
        pat = _shard_re(role)
        if single.exists():
            self.files = [single]
        else:
            shards = sorted((int(m.group(1)), p) for p in self.dir.iterdir() if (m := pat.match(p.name)))
            self.files = [p for _, p in shards]
        if not self.files:
            raise FileNotFoundError(f"{self.dir}/{role}.h5: no such role file (nor shards)")
        keys, self.bounds = [], [0]
        with h5py.File(self.files[0], "r") as f:
            self.attrs = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}
            self.bf16 = f["embeddings"].attrs.get("dtype", "") in ("bfloat16", b"bfloat16")
        for p in self.files:
            with h5py.File(p, "r") as f:
                if "item_key" not in f:
                    raise ValueError(f"{p}: no /item_key (not written by mieb-export): the replay model needs it")
                keys.append(f["item_key"][...])
                self.bounds.append(self.bounds[-1] + f["embeddings"].shape[0])
        self.keys = np.concatenate(keys) if keys else np.zeros((0, KEY_BYTES), np.uint8)
        self.n_rows = self.bounds[-1]
        self._cache: np.ndarray | None = None

    def key_list(self) -> list[bytes]:
        return [bytes(r) for r in self.keys]

    def embeddings(self) -> np.ndarray:
        """All rows as float32 (read once, kept)."""
        if self._cache is None:
            parts = []
            for p in self.files:
                with h5py.File(p, "r") as f:
                    a = f["embeddings"][...]
                parts.append(from_bfloat16_bits(a) if self.bf16 else a.astype(np.float32))
            self._cache = np.concatenate(parts) if parts else np.zeros((0, 0), np.float32)
        return self._cache
