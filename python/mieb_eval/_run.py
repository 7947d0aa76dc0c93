"""mieb_eval.run: `mieb-eval run` on folders, from Python, returning the results and the summary.

It runs in this process through the library's mieb_run (include/mieb.h: the program's task
selection, scoring loop, result files and run manifest): the engine's messages reach
`logging`, progress is a tqdm bar on a terminal (or a callable), Ctrl-C stops it within about
a second with the finished results kept (call again to resume), and a failure raises the
MiebError of its status with the engine's message. An option only the program has (corpus
parts, --precision, --similarity MaxSim, its own --progress and logging flags) runs the
package's `mieb-eval` program as a child process instead, with the same files: its progress
line and messages reach the terminal, and Ctrl-C stops it as it stops the program.
"""
from __future__ import annotations

import json
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import ctypes
import re

from . import _lib
from ._engine import Engine, engine_for
from ._progress import Progress
from ._search import _SIMILARITY
from .errors import MiebError

# run's options that mieb_run carries (the request's fields have their names); any other runs the program
_LISTS = ("task_types", "eval_splits", "languages")
_SCALARS = {"shard_index", "num_shards", "model", "model_revision", "overwrite_strategy", "similarity", "per_query",
            "kmeans", "probe_device", "mem_limit", "threads", "progress"}


@dataclass
class RunResult:
    """What a run wrote: results_dir (<output>/results/<org>__<model>/<revision>), the result
    of each task there (parsed JSON, by task name), the leaderboard summary (`mieb-eval summary
    --json`), the exit status (0, or 1 when some task failed) and the run's closing summary
    (outcomes: scored, skipped and failed counts, and per task its outcome, main score, seconds
    and first error)."""

    results_dir: Path
    results: dict = field(default_factory=dict)
    summary: dict = field(default_factory=dict)
    exit_status: int = 0
    outcomes: dict = field(default_factory=dict)  # run's closing summary: counts, each task's outcome


def _option(name: str, value) -> list[str]:
    flag = "--" + name.replace("_", "-")
    if value is None or value is False:
        return []
    if value is True:
        return [flag]
    if isinstance(value, (list, tuple)):
        return [flag, *map(str, value)] if value else []
    return [flag, str(value)]


def command(*args: str, check: bool = True, quiet: bool = False) -> subprocess.CompletedProcess:
    """Run `mieb-eval ARGS...` (stdout captured, stderr to this terminal unless quiet)."""
    proc = subprocess.run([str(_lib.program_path()), *args], stdout=subprocess.PIPE, text=True,
                          stderr=subprocess.DEVNULL if quiet else None)
    if check and proc.returncode not in (0, 1):
        if proc.returncode == 130:
            raise KeyboardInterrupt("mieb-eval was interrupted")
        raise MiebError(f"mieb-eval {args[0] if args else ''} exited with status {proc.returncode} "
                        "(its message is above)", proc.returncode)
    return proc


def _size(value) -> int:
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


def _in_library(options: dict) -> bool:
    """Whether mieb_run carries every option given (else the program runs)."""
    for name, value in options.items():
        if name not in _LISTS and name not in _SCALARS:
            return False
    sim = options.get("similarity")
    prog = options.get("progress")
    return ((sim is None or getattr(sim, "value", sim) in _SIMILARITY) and not isinstance(prog, str)
            and options.get("kmeans") in (None, "minibatch", "full")
            and options.get("probe_device") in (None, "auto", "cpu"))


def _strings(values) -> tuple:
    values = [values] if isinstance(values, (str, Path)) else list(values or [])
    arr = (ctypes.c_char_p * max(len(values), 1))(*[str(v).encode() for v in values])
    return arr, len(values)


def _run_library(task_data, embeddings, output_folder, tasks, benchmarks, device, options) -> RunResult:
    o = dict(options)
    threads, mem = int(o.pop("threads", 0) or 0), o.pop("mem_limit", None)
    eng = o.pop("engine", None) or engine_for(device, threads, _size(mem) if mem is not None else 0)
    keep = {k: _strings(v) for k, v in (("tasks", tasks), ("benchmarks", benchmarks),
                                         *((k, o.pop(k, None)) for k in _LISTS))}
    sim = o.pop("similarity", None)
    text = lambda v: str(v).encode() if v is not None else None  # noqa: E731
    rq = _lib.RunRequest(
        task_data=text(task_data), embeddings=text(embeddings), output_folder=text(output_folder),
        **{name: arr for name, (arr, _) in keep.items()}, **{f"n_{name}": n for name, (_, n) in keep.items()},
        shard_index=int(o.pop("shard_index", 0) or 0), num_shards=int(o.pop("num_shards", 0) or 0),
        model=text(o.pop("model", None)), model_revision=text(o.pop("model_revision", None)),
        overwrite_strategy=text(o.pop("overwrite_strategy", None)),
        similarity=-1 if sim is None else _SIMILARITY[getattr(sim, "value", sim)],
        per_query_dir=text(o.pop("per_query", None)), kmeans_full=int(o.pop("kmeans", None) == "full"),
        probe_cpu=int(o.pop("probe_device", None) == "cpu"))
    folder, summary = ctypes.c_void_p(), ctypes.c_void_p()
    try:
        with Progress(o.pop("progress", None), "mieb-eval run", "subsets") as bar:
            eng.call(_lib.LIB.mieb_run, ctypes.byref(rq), ctypes.byref(folder), ctypes.byref(summary),
                     progress=bar.callback)
        results_dir = Path(ctypes.string_at(folder.value).decode())
        outcomes = json.loads(ctypes.string_at(summary.value).decode())
    finally:
        _lib.LIB.mieb_free(folder)
        _lib.LIB.mieb_free(summary)
    return RunResult(results_dir, outcomes=outcomes, exit_status=1 if outcomes.get("failed") else 0)


def _run_program(args: list[str]) -> RunResult:
    proc = command(*args)
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    if not lines:
        raise MiebError("mieb-eval run printed no results folder", proc.returncode)
    results_dir = Path(lines[-1])
    manifests = sorted((results_dir / ".mieb-eval").glob("run-*.json"), key=lambda p: p.stat().st_mtime)
    outcomes = json.loads(manifests[-1].read_text()).get("summary", {}) if manifests else {}
    return RunResult(results_dir, outcomes=outcomes, exit_status=proc.returncode)


def run(*, output_folder, task_data=None, embeddings=None, export=None, tasks=None, benchmarks=None,
        device: str = "auto", engine: Engine | None = None, **options) -> RunResult:
    """`mieb-eval run` with these options (docs/CLI.md), e.g.

        run(export="out/export", benchmarks=["MIEB(lite)"], output_folder="out")
        run(task_data="td", embeddings="emb", tasks=["CIFAR10"], output_folder="out", mem_limit="8G")

    Any other `run` option passes as a keyword (underscores for hyphens; True for a flag).
    In this process through the library (see the module) unless an option only the program has
    is given. progress: None (a bar on a terminal, with tqdm), False or a callable(done, total)
    of (split, subset) pairs; a string is the program's --progress mode. engine: an Engine to
    run on (device, threads and mem_limit are then the engine's).
    """
    if export is not None:
        if task_data is not None or embeddings is not None:
            raise ValueError("run: export or task_data and embeddings, not both")
        task_data, embeddings = Path(export) / "task-data", Path(export) / "embeddings"
    if _in_library(options):
        res = _run_library(task_data, embeddings, output_folder, tasks, benchmarks, device,
                           dict(options, engine=engine))
    else:
        args = ["run", *_option("task_data", task_data), *_option("embeddings", embeddings),
                *_option("tasks", tasks), *_option("benchmark", benchmarks),
                *_option("output_folder", output_folder), *_option("device", device)]
        for name, value in options.items():
            args += _option(name, value)
        res = _run_program(args)
    res.results = {p.stem: json.loads(p.read_text()) for p in sorted(res.results_dir.glob("*.json"))
                   if p.name != "model_meta.json"}
    with tempfile.TemporaryDirectory(prefix="mieb_eval-") as tmp:
        summary_file = Path(tmp) / "summary.json"
        bench = ["-b", benchmarks[0]] if benchmarks and len(benchmarks) == 1 else []
        # quiet: a run that scored nothing has no leaderboard, and its summary is {}
        command("summary", str(res.results_dir), *bench, "--json", str(summary_file), check=False, quiet=True)
        res.summary = json.loads(summary_file.read_text()) if summary_file.exists() else {}
    return res
