"""mieb_eval.run: `mieb-eval run` on folders, from Python, returning the results and the summary.

It runs the package's `mieb-eval` program (the same engine as the library) as a child
process: its progress line and messages reach this process's terminal, Ctrl-C stops it as it
stops the program (finished results kept; rerun to resume), and a failure raises MiebError
with the program's message.
"""
from __future__ import annotations

import json
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from . import _lib
from .errors import MiebError


@dataclass
class RunResult:
    """What a run wrote: results_dir (<output>/results/<org>__<model>/<revision>), the result
    of each task there (parsed JSON, by task name), the leaderboard summary (`mieb-eval summary
    --json`) and the program's exit status (0, or 1 when some task failed)."""

    results_dir: Path
    results: dict = field(default_factory=dict)
    summary: dict = field(default_factory=dict)
    exit_status: int = 0


def _option(name: str, value) -> list[str]:
    flag = "--" + name.replace("_", "-")
    if value is None or value is False:
        return []
    if value is True:
        return [flag]
    if isinstance(value, (list, tuple)):
        return [flag, *map(str, value)] if value else []
    return [flag, str(value)]


def command(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run `mieb-eval ARGS...` (stdout captured, stderr to this terminal)."""
    proc = subprocess.run([str(_lib.program_path()), *args], stdout=subprocess.PIPE, text=True)
    if check and proc.returncode not in (0, 1):
        if proc.returncode == 130:
            raise KeyboardInterrupt("mieb-eval was interrupted")
        raise MiebError(f"mieb-eval {args[0] if args else ''} exited with status {proc.returncode} "
                        "(its message is above)", proc.returncode)
    return proc


def run(*, output_folder, task_data=None, embeddings=None, export=None, tasks=None, benchmarks=None,
        device: str = "auto", **options) -> RunResult:
    """`mieb-eval run` with these options (docs/CLI.md), e.g.

        run(export="out/export", benchmarks=["MIEB(lite)"], output_folder="out")
        run(task_data="td", embeddings="emb", tasks=["CIFAR10"], output_folder="out", mem_limit="8G")

    Any other `run` option passes as a keyword (underscores for hyphens; True for a flag).
    """
    args = ["run", *_option("task_data", task_data), *_option("embeddings", embeddings),
            *_option("export", export), *_option("tasks", tasks), *_option("benchmark", benchmarks),
            *_option("output_folder", output_folder), *_option("device", device)]
    for name, value in options.items():
        args += _option(name, value)
    proc = command(*args)
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    if not lines:
        raise MiebError("mieb-eval run printed no results folder", proc.returncode)
    results_dir = Path(lines[-1])
    results = {p.stem: json.loads(p.read_text()) for p in sorted(results_dir.glob("*.json"))
               if p.name != "model_meta.json"}
    with tempfile.TemporaryDirectory(prefix="mieb_eval-") as tmp:
        summary_file = Path(tmp) / "summary.json"
        bench = ["-b", benchmarks[0]] if benchmarks and len(benchmarks) == 1 else []
        command("summary", str(results_dir), *bench, "--json", str(summary_file), check=False)
        summary = json.loads(summary_file.read_text()) if summary_file.exists() else {}
    return RunResult(results_dir, results, summary, proc.returncode)
