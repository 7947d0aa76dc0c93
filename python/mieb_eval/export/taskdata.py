"""Task-data files (FORMAT.md section 1) and registry entries for tasks mieb-eval does not know.

A task-data file is written whole to a hidden temporary name and renamed into place.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from .h5roles import write_json_atomic

# mteb task type -> the MIEB type mieb-eval's registry uses for the same scoring (family).
MIEB_TYPES = {
    "Any2AnyRetrieval",
    "Any2AnyMultilingualRetrieval",
    "DocumentUnderstanding",
    "VisionCentricQA",
    "ImageClassification",
    "ZeroShotClassification",
    "ImageClustering",
    "Compositionality",
    "VisualSTS(eng)",
    "VisualSTS(multi)",
}


class Group:
    """The ground truth of one (split, hf_subset): datasets and attributes."""

    def __init__(self) -> None:
        self.datasets: dict[str, np.ndarray] = {}
        self.strings: dict[str, list[str]] = {}
        self.attrs: dict[str, Any] = {}


def write_task_file(path: Path, task_name: str, revision: str, groups: dict[tuple[str, str], Group],
                    extra_attrs: dict[str, Any] | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        with h5py.File(tmp, "w") as f:
            f.attrs["format"] = "mieb-task"
            f.attrs["format_version"] = np.int64(1)
            f.attrs["task_name"] = task_name
            f.attrs["dataset_revision"] = revision or ""
            for k, v in (extra_attrs or {}).items():
                f.attrs[k] = v
            for (split, subset), g in groups.items():
                grp = f.require_group(split).require_group(subset)
                for name, arr in g.datasets.items():
                    grp.create_dataset(name, data=arr)
                for name, strs in g.strings.items():
                    grp.create_dataset(name, data=np.array(strs, dtype=object), dtype=h5py.string_dtype())
                for k, v in g.attrs.items():
                    grp.attrs[k] = v
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def csr(rows: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """(indptr int64 [n+1], flat int64) of a list of lists."""
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    if rows:
        indptr[1:] = np.cumsum([len(r) for r in rows])
    flat = np.array([x for r in rows for x in r], dtype=np.int64)
    return indptr, flat


def label_ids(*label_lists: list[Any]) -> dict[Any, int]:
    """int64 ids for class labels: integers keep their value; other labels (strings) are
    numbered in their sorted order, so the sorted id list is the sorted class list, as
    scikit-learn's classes_ would be."""
    values = {v for labels in label_lists for v in labels}
    if all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in values):
        return {v: int(v) for v in values}
    return {v: i for i, v in enumerate(sorted(values))}


def registry_entry(task: Any, mieb_type: str, params: dict[str, Any], columns: dict[str, Any]) -> dict[str, Any]:
    """A configs/tasks.json entry for a task, from its mteb metadata (used through MIEB_REGISTRY
    for tasks the built-in registry lacks, e.g. in-memory tasks)."""
    md = task.metadata
    eval_langs = md.eval_langs
    return {
        "name": md.name,
        "type": mieb_type,
        "mteb_type": md.type,
        "category": md.category,
        "modalities": list(md.modalities),
        "eval_splits": list(task.eval_splits),
        "main_score": md.main_score,
        "eval_langs": dict(eval_langs) if isinstance(eval_langs, dict) else list(eval_langs),
        "hf_subsets": list(task.hf_subsets),
        "hf_path": md.dataset.get("path"),
        "hf_revision": md.dataset.get("revision") or "",
        "params": params,
        "columns": columns,
        "exported_by": "mieb-export",
    }


def update_registry(path: Path, entries: list[dict[str, Any]]) -> None:
    """Merge entries into the registry file at path (by task name), atomically."""
    old: list[dict[str, Any]] = []
    if path.exists():
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            old = []
    names = {e["name"] for e in entries}
    merged = [e for e in old if e.get("name") not in names] + entries
    write_json_atomic(path, merged)
