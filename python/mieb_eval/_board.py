"""mieb_eval.summary and mieb_eval.report: the leaderboard of result folders, in this process.

The library's board (include/mieb.h's mieb_summary and mieb_report), as `mieb-eval summary`
and `mieb-eval report` compute it: every model revision found under the folders, its
Mean(TaskType), Mean(Task), per-type means and Borda rank over a benchmark's tasks, as mteb's
leaderboard. A failure raises the MiebError of its status; a result file that cannot be read
is logged on the `mieb_eval` logger and left out, as the program leaves it out.
"""
from __future__ import annotations

import ctypes
import json
import logging
import os
from pathlib import Path
from typing import Iterable, Union

from . import _lib
from ._engine import Engine, engine_for
from .errors import NotFound

PathLike = Union[str, Path]
logger = logging.getLogger("mieb_eval")


def _folders(folders: PathLike | Iterable[PathLike]):
    names = [folders] if isinstance(folders, (str, Path)) else list(folders)
    if not names:
        raise ValueError("name at least one result folder")
    arr = (ctypes.c_char_p * len(names))(*[os.fsencode(str(p)) for p in names])
    return arr, len(names)


def _path(p: PathLike | None) -> bytes | None:
    return os.fsencode(str(p)) if p is not None else None


def _write_text(path: Path, text: str) -> None:
    """Written whole or not at all: a temporary beside it, renamed over it."""
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _unreadable(n: int) -> None:
    if n:
        logger.warning("%d result file(s) could not be read (each named above); the others are counted", n)


def summary(folders: PathLike | Iterable[PathLike], benchmark: str | None = None, *,
            published: PathLike | None = None, csv: PathLike | None = None, json_path: PathLike | None = None,
            text: PathLike | None = None, engine: Engine | None = None, missing_ok: bool = False) -> dict:
    """The leaderboard summary of result folders (`mieb-eval summary --json`'s document: the
    benchmark, its tasks and task types, and per model its rank, Mean(TaskType), Mean(Task),
    Borda rank, per-type means and task scores). benchmark: e.g. "MIEB(lite)" (None: every
    registry task found). published: a folder of published results (a clone of mteb's results
    repository) to rank the models among: the document's "placement" says where each stands
    (docs/RUNNING.md, "Where your model stands"). csv, json_path, text: also write the CSV, the
    JSON and the table the program prints there (each atomically). missing_ok: no result file found gives {} instead
    of raising NotFound."""
    eng = engine or engine_for("cpu")
    arr, n = _folders(folders)
    table, doc, bad = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_int()
    try:
        eng.call(_lib.LIB.mieb_summary, arr, n, benchmark.encode() if benchmark else None, _path(published), _path(csv),
                 _path(json_path), ctypes.byref(table), ctypes.byref(doc), ctypes.byref(bad))
        result = json.loads(ctypes.string_at(doc.value).decode())
        if text is not None:
            _write_text(Path(text), ctypes.string_at(table.value).decode())
    except NotFound:
        if missing_ok:
            return {}
        raise
    finally:
        _lib.LIB.mieb_free(table)
        _lib.LIB.mieb_free(doc)
    _unreadable(bad.value)
    return result


def report(folders: PathLike | Iterable[PathLike], html: PathLike, benchmark: str | None = None, *,
           baseline: str | None = None, published: PathLike | None = None, top: int = 15,
           engine: Engine | None = None) -> Path:
    """`mieb-eval report`: one self-contained HTML page over the result folders, written
    atomically to html (returned). baseline: the model the deltas are taken against (its name,
    or name@revision; None: the first model under the first folder). published: as summary's;
    the page then shows the own models among the `top` best published ones."""
    eng = engine or engine_for("cpu")
    arr, n = _folders(folders)
    bad = ctypes.c_int()
    eng.call(_lib.LIB.mieb_report, arr, n, benchmark.encode() if benchmark else None,
             baseline.encode() if baseline else None, _path(published), int(top), _path(html), ctypes.byref(bad))
    _unreadable(bad.value)
    return Path(html)
