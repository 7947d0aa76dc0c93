"""Which model an export folder belongs to, and one writer at a time.

An export is resumed only by the model that began it: its name and revision (ModelMeta) and,
for a model of one's own (a class defined outside mteb and the libraries it wraps), a
fingerprint: of its weights when it holds torch modules (a fix of its code then keeps the
rows already encoded), else of the source of its classes. The identity is kept beside
model_meta.json in `.mieb-export-model.json`; a folder without one (an older export) is
judged by name and revision alone.

Two exports into one folder at once would write the same staged files: the embeddings folder
is locked (flock on the folder itself, released by the kernel when the process ends, however
it ends) for the whole export, and a second export is refused at once.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import inspect
import json
import os
import sys
from pathlib import Path
from typing import Any

IDENTITY_NAME = ".mieb-export-model.json"
# Classes from these packages are not "one's own": mteb's loaders, and what they wrap.
_LIBRARIES = {"mteb", "torch", "transformers", "sentence_transformers", "open_clip", "builtins", "abc", "typing"}


class ExportRefused(Exception):
    """The export cannot start in this folder; nothing was changed. exit_status: the programs'."""

    exit_status = 2


class ModelMismatch(ExportRefused):
    """The embeddings folder already holds another model's export (finished or partial)."""


class ExportBusy(ExportRefused):
    """Another export is writing into the same embeddings folder."""


def _own_classes(model: Any) -> list[type]:
    return [c for c in type(model).__mro__ if c.__module__.partition(".")[0] not in _LIBRARIES]


def _weights_digest(model: Any) -> str | None:
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    mods = [model] if isinstance(model, torch.nn.Module) else [
        v for v in vars(model).values() if isinstance(v, torch.nn.Module)]
    if not mods:
        return None
    h = hashlib.blake2b(digest_size=16)
    for m in mods:
        for k, t in m.state_dict().items():
            h.update(k.encode("utf-8"))
            h.update(str(tuple(t.shape)).encode() + str(t.dtype).encode())
            h.update(t.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
    return "weights:" + h.hexdigest()


def _code_digest(classes: list[type]) -> str | None:
    h = hashlib.blake2b(digest_size=16)
    found = False
    for c in classes:
        try:
            src = inspect.getsource(c)
        except (OSError, TypeError):  # defined interactively, or in a compiled module
            continue
        h.update(f"{c.__module__}.{c.__qualname__}\n".encode("utf-8") + src.encode("utf-8"))
        found = True
    return "code:" + h.hexdigest() if found else None


def model_identity(model: Any, meta: dict[str, Any]) -> dict[str, Any]:
    """name, revision and, for a model of one's own, its fingerprint (None where none can be had)."""
    own = _own_classes(model)
    fingerprint = (_weights_digest(model) or _code_digest(own)) if own else None
    return {"name": meta.get("name"), "revision": meta.get("revision"), "fingerprint": fingerprint}


def _says(ident: dict[str, Any]) -> str:
    fp = ident.get("fingerprint")
    return f"{ident.get('name')} @ {ident.get('revision')}" + (f" ({fp})" if fp else "")


def check_identity(emb_dir: Path, ident: dict[str, Any]) -> None:
    """ModelMismatch when emb_dir holds an export begun by another model."""
    meta_path = emb_dir / "model_meta.json"
    if not meta_path.exists():
        return
    id_path = emb_dir / IDENTITY_NAME
    if id_path.exists():
        old = json.loads(id_path.read_text(encoding="utf-8"))
    else:
        m = json.loads(meta_path.read_text(encoding="utf-8"))
        old = {"name": m.get("name"), "revision": m.get("revision"), "fingerprint": ident.get("fingerprint")}
    if any(old.get(k) != ident.get(k) for k in ("name", "revision", "fingerprint")):
        raise ModelMismatch(
            f"{emb_dir} holds an export of {_says(old)}, not of {_says(ident)}; nothing of it is resumed "
            f"or changed: use another output folder, or overwrite (mieb-export --overwrite) to replace it")


class FolderLock:
    """An exclusive lock on an export's embeddings folder, for as long as the export runs."""

    def __init__(self, emb_dir: Path) -> None:
        self.dir = emb_dir
        self.fd: int | None = None

    def __enter__(self) -> FolderLock:
        self.dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            os.close(fd)
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise ExportBusy(f"{self.dir}: another export is writing into this folder now; nothing was "
                                 "changed: wait for it to end (then run this command again), or use another "
                                 "output folder") from None
            raise
        self.fd = fd
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
