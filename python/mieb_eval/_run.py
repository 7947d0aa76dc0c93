"""mieb_eval.run: `mieb-eval run` on folders, from Python, returning the results and the summary.

It runs in this process through the library's mieb_run, the same run session the program
runs (include/mieb.h), for every option the program has: the engine's messages reach
`logging`, progress is a tqdm bar on a terminal (or a callable), Ctrl-C stops it within about
a second with the finished results kept (call again to resume), and a failure raises the
MiebError of its status with the engine's message. The leaderboard summary of the results
comes from the library too (mieb_eval.summary).
"""
from __future__ import annotations

import ctypes
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Union

from . import _lib
from ._engine import Engine, engine_for
from ._progress import Progress

PathLike = Union[str, Path]

# What the engine takes, not the run request: every other keyword is a run option, passed to
# the library by its name (underscores for the program's hyphens), which refuses a name it lacks
_ENGINE_OPTIONS = ("threads", "mem_limit", "engine", "progress")
# mteb's similarity names as the program's --similarity spells them
_SIMILARITY_NAMES = {"cos_sim": "cosine", "dot_product": "dot", "max_sim": "MaxSim"}


@dataclass
class RunResult:
    """What a run wrote: results_dir (<output>/results/<org>__<model>/<revision>), the result
    of each task there (parsed JSON, by task name), the leaderboard summary (`mieb-eval summary
    --json`'s), the exit status (0, or 1 when some task failed) and the run's closing summary
    (outcomes: scored, skipped and failed counts, and per task its outcome, main score, seconds
    and first error)."""

    results_dir: Path
    results: dict = field(default_factory=dict)
    summary: dict = field(default_factory=dict)
    exit_status: int = 0
    outcomes: dict = field(default_factory=dict)  # run's closing summary: counts, each task's outcome


def _size(value: int | str) -> int:
    """--mem-limit's SIZE (a number with an optional K, M, G or T suffix, powers of 1024) or bytes;
    0 is the default (half of RAM, of the cgroup's limit or of Slurm's allocation), as Engine's."""
    if isinstance(value, int):
        n = value
    else:
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([KMGT]?)B?\s*", str(value), re.I)
        if not m:
            raise ValueError(f"mem_limit {value!r}: a number of bytes, or with a K, M, G or T suffix")
        n = int(float(m.group(1)) * 1024 ** " KMGT".index(m.group(2).upper() or " "))
    if 0 < n < 4096 or n < 0:
        raise ValueError(f"mem_limit {value!r}: at least 4K")
    return n


def _words(values: str | Path | Iterable | None) -> list[str]:
    return [str(values)] if isinstance(values, (str, Path)) else [str(v) for v in (values or [])]


def _text(name: str, value: Any) -> str:
    """A value as the program's command line writes it."""
    if name == "similarity":
        value = getattr(value, "value", value)  # mteb's ScoringFunction
        return _SIMILARITY_NAMES.get(str(value), str(value))
    if isinstance(value, bool) or value is None:
        raise TypeError(f"run option {name}={value!r}: a value, not {type(value).__name__}")
    return str(value)


class _Request:
    """mieb_run_request: the run's options, set one by one (include/mieb.h)."""

    def __init__(self) -> None:
        handle = ctypes.c_void_p()
        if _lib.LIB.mieb_run_request_new(ctypes.byref(handle)) != 0:
            raise MemoryError("mieb_run_request_new")
        self.handle = handle

    def set(self, name: str, value: str) -> None:
        from ._engine import _check

        _check(_lib.LIB.mieb_run_request_set(self.handle, name.replace("_", "-").encode(), value.encode()))

    def close(self) -> None:
        if self.handle:
            _lib.LIB.mieb_run_request_free(self.handle)
            self.handle = None

    def __enter__(self) -> "_Request":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _fill(rq: _Request, task_data: PathLike, embeddings: PathLike, output_folder: PathLike, tasks, benchmarks,
          options: dict) -> None:
    for name, value in (("task_data", task_data), ("embeddings", embeddings), ("output_folder", output_folder)):
        if value is not None:
            rq.set(name, str(value))
    for name, values in (("tasks", tasks), ("benchmark", benchmarks)):
        for word in _words(values):
            rq.set(name, word)
    for name, value in options.items():
        if name in _ENGINE_OPTIONS or value is None:
            continue
        for v in value if isinstance(value, (list, tuple)) else [value]:  # a list: one word at a time
            rq.set(name, _text(name, v))


def _run_library(task_data: PathLike, embeddings: PathLike, output_folder: PathLike, tasks, benchmarks,
                 device: str, options: dict) -> RunResult:
    """One mieb_run call: the files, the results folder and the closing summary (no leaderboard)."""
    o = dict(options)
    threads, mem = int(o.pop("threads", 0) or 0), o.pop("mem_limit", None)
    eng = o.pop("engine", None) or engine_for(device, threads, _size(mem) if mem is not None else 0)
    folder, summary = ctypes.c_void_p(), ctypes.c_void_p()
    with _Request() as rq:
        _fill(rq, task_data, embeddings, output_folder, tasks, benchmarks, o)
        try:
            with Progress(o.get("progress"), "mieb-eval run", "subsets") as bar:
                eng.call(_lib.LIB.mieb_run, rq.handle, ctypes.byref(folder), ctypes.byref(summary),
                         progress=bar.callback)
            results_dir = Path(ctypes.string_at(folder.value).decode())
            outcomes = json.loads(ctypes.string_at(summary.value).decode())
        finally:
            _lib.LIB.mieb_free(folder)
            _lib.LIB.mieb_free(summary)
    return RunResult(results_dir, outcomes=outcomes, exit_status=1 if outcomes.get("failed") else 0)


def run(*, output_folder: PathLike, task_data: PathLike | None = None, embeddings: PathLike | None = None,
        export: PathLike | None = None, tasks: Iterable[str] | None = None, benchmarks: Iterable[str] | None = None,
        device: str = "auto", engine: Engine | None = None,
        progress: bool | Callable[[int, int], Any] | None = None, **options: Any) -> RunResult:
    """`mieb-eval run` with these options (docs/CLI.md), e.g.

        run(export="out/export", benchmarks=["MIEB(lite)"], output_folder="out")
        run(task_data="td", embeddings="emb", tasks=["CIFAR10"], output_folder="out", mem_limit="8G")

    Every other `run` option passes as a keyword with underscores for hyphens (task_types,
    eval_splits, languages, shard_index, num_shards, model, model_revision, similarity,
    overwrite_strategy, precision, per_query, kmeans, probe_device, corpus_parts, corpus_part,
    partials_dir; a list for a list option), with mem_limit and threads; one the library lacks
    raises InvalidArgument naming it. progress: None
    (a bar on a terminal, with tqdm), False or a callable(done, total) of (split, subset)
    pairs. engine: an Engine to run on (device, threads and mem_limit are then the engine's).
    """
    from ._board import summary as board_summary

    if export is not None:
        if task_data is not None or embeddings is not None:
            raise ValueError("run: export or task_data and embeddings, not both")
        task_data, embeddings = Path(export) / "task-data", Path(export) / "embeddings"
    res = _run_library(task_data, embeddings, output_folder, tasks, benchmarks, device,
                       dict(options, engine=engine, progress=progress))
    res.results = {p.stem: json.loads(p.read_text()) for p in sorted(res.results_dir.glob("*.json"))
                   if p.name != "model_meta.json"}
    bench = list(_words(benchmarks))
    # a run that scored nothing has no leaderboard, and its summary is {}
    res.summary = board_summary([res.results_dir], benchmark=bench[0] if len(bench) == 1 else None,
                                engine=engine, missing_ok=True)
    return res
