"""The task registry (tasks.json) the package carries: which splits and subsets a task scores."""
from __future__ import annotations

import functools
import json
from pathlib import Path

from . import _lib


def registry_path() -> Path:
    """tasks.json beside the library: the wheel's _native/share/mieb-eval/, else the source tree's configs/."""
    for p in (_lib.NATIVE / "share" / "mieb-eval" / "tasks.json",
              Path(__file__).resolve().parents[2] / "configs" / "tasks.json"):
        if p.exists():
            return p
    raise FileNotFoundError(f"mieb_eval: tasks.json is missing from {_lib.NATIVE / 'share' / 'mieb-eval'}")


@functools.lru_cache(maxsize=1)
def tasks() -> dict:
    return {t["name"]: t for t in json.loads(registry_path().read_text())}


def task(name: str) -> dict:
    all_tasks = tasks()
    if name not in all_tasks:
        raise KeyError(f"{name!r} is not a MIEB task of the registry ({registry_path()})")
    return all_tasks[name]
