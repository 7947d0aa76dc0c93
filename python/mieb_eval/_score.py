"""mieb_eval.score: one task scored from its task data and in-memory embeddings
(include/mieb.h, mieb_score_task), exactly as `mieb-eval run -t TASK` scores files."""
from __future__ import annotations

import ctypes
import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Optional, Union

import numpy as np

from . import _lib, _registry
from ._arrays import as_matrix, c_array
from ._engine import Engine, engine_for
from ._progress import Progress
from ._search import ProgressArg, similarity_code

if TYPE_CHECKING:
    import mteb

# {role: array}, {(split, subset, role): array} or {split: {subset: {role: array}}}; an array is
# a numpy array or torch tensor, (rows, offsets) or {"embeddings": rows, "row_index": rows}
Embeddings = Mapping[Any, Any]


def _role_entries(task: str, embeddings: Embeddings) -> list[tuple[str, str, str, object]]:
    """(split, subset, role, value) from the three accepted forms (see score)."""
    items = list(embeddings.items())
    if items and all(isinstance(k, tuple) and len(k) == 3 for k, _ in items):
        return [(k[0], k[1], k[2], v) for k, v in items]
    if items and all(isinstance(v, dict) and "embeddings" not in v for _, v in items):
        return [(split, subset, role, v) for split, subsets in items for subset, roles in subsets.items()
                for role, v in roles.items()]
    t = _registry.task(task)
    pairs = [(s, sub) for s in t["eval_splits"] for sub in t["hf_subsets"]]
    if len(pairs) != 1:
        raise ValueError(f"{task} scores {len(pairs)} (split, subset) pairs {pairs}: key the embeddings by "
                         "(split, subset, role) or nest them {split: {subset: {role: array}}}")
    return [(pairs[0][0], pairs[0][1], role, v) for role, v in items]


def _load_result(path: Path, text: str, as_mteb: bool) -> Union[mteb.TaskResult, dict]:
    """The result the call returned as text: mteb's TaskResult read from its file where mteb is
    importable and wanted, else the JSON itself."""
    if as_mteb:
        try:
            import mteb
        except ImportError:
            pass
        else:
            return mteb.TaskResult.from_disk(path)
    return json.loads(text)


def score(task: str, embeddings: Embeddings, task_data: Union[str, os.PathLike], similarity: str = "cosine",
          device: str = "auto", *, output_folder: Union[str, os.PathLike, None] = None, bfloat16: bool = False,
          as_mteb: bool = True, progress: ProgressArg = None, engine: Optional[Engine] = None
          ) -> Union[mteb.TaskResult, dict]:
    """Score `task` as `mieb-eval run` would, from in-memory embeddings.

    embeddings: the task's roles as FORMAT.md names them (queries and corpus, train and eval,
    ...): {role: array} for a task of one split and subset, {(split, subset, role): array},
    or {split: {subset: {role: array}}}. A multi-vector role's value is (rows, offsets); a
    few-shot train role that holds some rows of its split is {"embeddings": rows, "row_index":
    split rows} (FORMAT.md's /row_index). Every other role lists its split's rows in order.
    task_data: the folder holding <task>.h5 (mieb-export writes it; FORMAT.md §1).
    output_folder: where <task>.json is written (default: a temporary folder, removed after).
    progress: None draws a bar on a terminal (with tqdm), False none, a callable(done, total)
    gets the (split, subset) pairs scored.

    Returns the result as the file holds it: an mteb.TaskResult when mteb is importable and
    as_mteb, else the parsed JSON dict.
    """
    keep, roles = [], []
    for split, subset, role, value in _role_entries(task, embeddings):
        if isinstance(value, tuple):
            value = {"embeddings": value[0], "offsets": value[1]}
        if not isinstance(value, dict):
            value = {"embeddings": value}
        extra = {}
        for name in ("offsets", "row_index"):
            if value.get(name) is not None:
                extra[name] = np.ascontiguousarray(value[name], dtype=np.int64)
                keep.append(extra[name])
        arr, code = as_matrix(value["embeddings"], f"{task} {split}/{subset}/{role}", bfloat16)
        keep.append(arr)
        names = [s.encode() for s in (split, subset, role)]
        keep += names
        roles.append(_lib.RoleArray(names[0], names[1], names[2], c_array(arr, code),
                                    *(extra[n].ctypes.data if n in extra else None for n in ("offsets", "row_index"))))
    role_array = (_lib.RoleArray * max(len(roles), 1))(*roles)
    eng = engine or engine_for(device)
    with tempfile.TemporaryDirectory(prefix="mieb_eval-") as tmp:
        out = Path(output_folder) if output_folder else Path(tmp)
        text = ctypes.c_void_p()
        with Progress(progress, task, "subsets") as bar:
            eng.call(_lib.LIB.mieb_score_task, task.encode(), str(task_data).encode(), role_array, len(roles),
                     similarity_code(similarity), str(out).encode(), ctypes.byref(text), progress=bar.callback)
        try:
            doc = ctypes.string_at(text).decode("utf-8")
        finally:
            _lib.LIB.mieb_free(text)
        return _load_result(out / f"{task}.json", doc, as_mteb)
