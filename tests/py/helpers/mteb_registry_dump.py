"""Runs in .venv-mteb (the pinned mteb with its whole stack): prints, as JSON, what the installed
mteb itself says about each task named in a registry file, for test_registry_mteb.py to hold
configs/tasks.json to. Only metadata is read (task objects, their class attributes and the
descriptive-statistics files mteb ships); no dataset is loaded and nothing is downloaded.

    python tests/py/helpers/mteb_registry_dump.py configs/tasks.json > mteb_tasks.json
"""
from __future__ import annotations

import glob
import json
import os
import sys

import mteb

# Class attributes that decide how a task is scored (PROTOCOLS.md §2-§8); each is dumped when
# the task object has it.
SCORING_ATTRS = ("samples_per_label", "n_experiments", "train_split", "k_values", "skip_first_result",
                 "ignore_identical_ids", "min_score", "max_score", "input_column_name", "label_column_name")


def plain(v):
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return repr(v)


def own_methods(task) -> list[str]:
    """What the task's classes define above mteb's AbsTask* bases (their overrides)."""
    own = set()
    for c in type(task).__mro__:
        if c.__name__.startswith("AbsTask") or c is object:
            break
        own |= {k for k, v in vars(c).items() if callable(v) or isinstance(v, (staticmethod, classmethod, property))}
    return sorted(own)


def stats_files() -> dict[str, str]:
    root = os.path.join(os.path.dirname(mteb.__file__), "descriptive_stats")
    return {os.path.basename(p)[:-5]: p for p in glob.glob(os.path.join(root, "**", "*.json"), recursive=True)}


def sizes(stats: dict, split: str, train_split: str | None) -> dict:
    """The sizes a stats file states outright (older files lack some: those stay absent)."""
    s = stats.get(split) or {}
    out = {}
    for key, name in (("num_queries", "n_queries"), ("num_documents", "n_corpus")):
        if isinstance(s.get(key), int):
            out[name] = s[key]
    if isinstance(s.get("num_samples"), int):
        out["num_samples"] = s["num_samples"]
    labels = s.get("labels_statistics") or s.get("label_statistics")
    if isinstance(labels, dict) and isinstance(labels.get("unique_labels"), int):
        out["unique_labels"] = labels["unique_labels"]
    if train_split and isinstance((stats.get(train_split) or {}).get("num_samples"), int):
        out["train_samples"] = stats[train_split]["num_samples"]
    return out


def main() -> None:
    names = [t["name"] for t in json.load(open(sys.argv[1]))]
    files = stats_files()
    out = {"mteb_version": mteb.__version__, "tasks": []}
    for name in names:
        try:
            task = mteb.get_task(name)
        except Exception as e:  # a task the pinned mteb no longer has: the test reports it
            out["tasks"].append({"name": name, "error": repr(e)})
            continue
        m = task.metadata
        d = {"name": name, "class": type(task).__name__,
             "abstask": [b.__name__ for b in type(task).__mro__ if b.__name__.startswith("AbsTask")][:1],
             "type": m.type, "main_score": m.main_score, "eval_splits": list(m.eval_splits),
             "eval_langs": plain(m.eval_langs), "hf_subsets": list(task.hf_subsets), "category": m.category,
             "modalities": list(m.modalities), "hf_path": m.dataset.get("path"),
             "hf_revision": m.dataset.get("revision"), "overrides": own_methods(task)}
        for a in SCORING_ATTRS:
            if hasattr(task, a):
                d[a] = plain(getattr(task, a))
        ev = getattr(task, "evaluator_model", None)
        if ev is not None and hasattr(ev, "get_params"):
            d["evaluator_model"] = {"class": type(ev).__name__, "params": plain(ev.get_params())}
        if hasattr(m, "tasks") and m.tasks:  # an aggregate: the sub-tasks and the subsets each keeps
            d["aggregate_of"] = [{"name": s.metadata.name, "hf_subsets": list(s.hf_subsets),
                                  "hf_path": s.metadata.dataset.get("path"),
                                  "hf_revision": s.metadata.dataset.get("revision")} for s in m.tasks]
        if name in files:
            d["stats"] = sizes(json.load(open(files[name])), m.eval_splits[0], d.get("train_split"))
        out["tasks"].append(d)
    json.dump(out, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
