"""mieb-eval-model: from a model to its MIEB scores, leaderboard summary and HTML report in one command.

    tools/mieb-eval-model -m MODEL [--model-revision R] (-b "MIEB(lite)" | -t TASK ...) --output-folder OUT
                          [--device cpu|cuda|cuda:N] [--batch-size N] [--dtype float32|float16|bfloat16]

A thin driver over the existing pieces, each resumable, so rerunning the same command after an
interruption continues where it stopped:
  1. the export (mieb_eval.export, as tools/mieb-export)       -> OUT/export/{task-data,embeddings}
  2. mieb-eval run --export OUT/export --overwrite-strategy only-missing -> OUT/results/...
  3. mieb-eval summary                                           -> OUT/summary.txt, .csv, .json
  4. mieb-eval report                                            -> OUT/report.html
and a line naming where each is; with a benchmark and the published results at hand (--published,
or mteb's downloaded copy), a last line placing the model among them (placement.py).
"""

from __future__ import annotations

import argparse
import inspect
import logging
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from .logs import one_line_per_warning
from .placement import placement_line
from .progress import MODES, Progress

PROG = "mieb-eval-model"
OK, FAILED, USAGE, NO_DEVICE, FATAL, INTERRUPTED = 0, 1, 2, 3, 4, 130
# Test hook: SIGKILL this process after that many encode calls were written (an interruption
# at an arbitrary point, with no chance to clean up).
KILL_AFTER_ENV = "MIEB_EVAL_MODEL_KILL_AFTER_CALLS"


def _say(msg: str) -> None:
    print(f"{PROG}: {msg}", file=sys.stderr, flush=True)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Encode MIEB tasks with a model (as mteb does), score them with mieb-eval, and write "
        "the leaderboard summary and an HTML report. Rerun the same command to resume.",
        epilog="exit status: 0 done; 1 some task could not be exported or scored (named on stderr: the "
        "model's output refused, the model raised, a write failed; rerun to encode and score what is missing); "
        "2 bad command line, no mieb-eval binary, a model that cannot be loaded (named, with why), "
        "OUT/export holds another model's export, or another export is writing into it; "
        "3 --device cuda[:N] asked for and torch cannot use it (nothing encoded); "
        "4 mieb-eval (run, summary or report) could not run; 130 interrupted (rerun to resume).",
    )
    p.add_argument("-m", "--model", required=True,
                   help="model name for mteb.get_model, or MODULE:CALLABLE returning an mteb encoder of your own")
    p.add_argument("--model-revision", help="model revision")
    t = p.add_mutually_exclusive_group(required=True)
    t.add_argument("-b", "--benchmark", help='a benchmark, e.g. "MIEB(lite)"')
    t.add_argument("-t", "--tasks", nargs="+", help="task names (MODULE:CLASS for a task class of your own)")
    p.add_argument("--output-folder", required=True, type=Path,
                   help="OUT: export/, results/, summary.{txt,csv,json} and report.html go here")
    p.add_argument("--device", default=None,
                   help="cpu, cuda or cuda:N for the model (default: the model loader's choice); a CUDA "
                   "device torch cannot use is refused before any encoding (exit 3)")
    p.add_argument("--batch-size", type=int, default=32, help="encode batch size [32]")
    p.add_argument("--dtype", choices=("float32", "float16", "bfloat16"), default="float32",
                   help="how the embeddings are stored [float32]")
    p.add_argument("--num-proc", type=int, default=None, help="dataloader worker processes")
    p.add_argument("--published", type=Path, default=None,
                   help="the published results to place the model among (a clone of "
                   "github.com/embeddings-benchmark/results; default: mteb's downloaded copy, "
                   "$MTEB_CACHE/remote or ~/.cache/mteb/remote, where it exists); with -b only")
    p.add_argument("--bin", help="the mieb-eval binary [build/mieb-eval of this checkout, else mieb-eval on PATH]")
    p.add_argument("--score-device", default="auto", help="mieb-eval run's --device [auto]")
    p.add_argument("--mem-limit", help="mieb-eval run's --mem-limit [its default]")
    p.add_argument("--progress", choices=MODES, default="auto",
                   help="auto (a live line on a terminal, else plain lines), tty, plain or off [auto]")
    p.add_argument("--progress-interval", type=float, default=30.0,
                   help="seconds between plain progress lines [30, or $MIEB_EVAL_MODEL_PROGRESS_INTERVAL]")
    return p


def find_bin(given: str | None) -> str | None:
    """--bin, else the installed package's program, else this checkout's build/, else PATH's."""
    if given:
        return given if os.access(given, os.X_OK) else None
    from .._paths import program_path

    try:
        return str(program_path())
    except FileNotFoundError:
        return shutil.which("mieb-eval")


def load_model(name: str, revision: str | None, device: str | None) -> Any:
    if ":" in name:  # MODULE:CALLABLE, an encoder of your own
        import importlib

        mod, _, attr = name.partition(":")
        factory = getattr(importlib.import_module(mod), attr)
        kw: dict[str, Any] = {}
        try:
            params = inspect.signature(factory).parameters
        except (TypeError, ValueError):
            params = {}
        if device and "device" in params:
            kw["device"] = device
        if revision and "revision" in params:
            kw["revision"] = revision
        return factory(**kw)
    import mteb

    kw = {"device": device} if device else {}
    return mteb.get_model(name, revision=revision, **kw)


class _Progress(Progress):
    def __init__(self, *a: Any, kill_after: int | None = None, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.calls, self.kill_after = 0, kill_after

    def segment_done(self) -> None:
        self.calls += 1
        if self.kill_after is not None and self.calls >= self.kill_after:
            os.kill(os.getpid(), signal.SIGKILL)


def _mieb(bin_: str, args: list[str], env: dict[str, str], capture: bool = False) -> subprocess.CompletedProcess:
    return subprocess.run([bin_, *args], env=env, text=True,
                          stdout=subprocess.PIPE if capture else None)


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as e:
        return USAGE if e.code else OK
    if args.batch_size < 1:
        _say("--batch-size must be at least 1")
        return USAGE
    try:
        return _main(args)
    except KeyboardInterrupt:
        _say("interrupted; rerun the same command to resume")
        return INTERRUPTED


def score_export(bin_: str, exp: Path, out: Path, sel: list[str], *, own_registry: bool = False,
                 device: str = "auto", progress: str = "auto", mem_limit: str | None = None):
    """Steps 2-4 on an export: `mieb-eval run --export EXP` into OUT (resuming: only missing
    results), then OUT/summary.{txt,csv,json} and OUT/report.html. sel: -b BENCHMARK or -t TASK...
    Returns (results folder, whether run failed a task, summary's exit status and stdout,
    report's exit status: see summarize), or an exit status (INTERRUPTED, FATAL, USAGE,
    NO_DEVICE) when a step could not run."""
    env = dict(os.environ)
    if own_registry:
        from .export import REGISTRY_NAME

        env["MIEB_REGISTRY"] = str(exp / "task-data" / REGISTRY_NAME)
    bsel = sel if sel[:1] == ["-b"] else []
    run_args = ["run", "--export", str(exp), *sel, "--output-folder", str(out), "--overwrite-strategy",
                "only-missing", "--device", device, "--progress", progress]
    if mem_limit:
        run_args += ["--mem-limit", mem_limit]
    _say(f"[2/4] mieb-eval {' '.join(run_args)}")
    r = _mieb(bin_, run_args, env, capture=True)
    results = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
    if r.returncode in (75, 130):
        _say("mieb-eval was interrupted; rerun the same command to resume")
        return INTERRUPTED
    if r.returncode not in (0, 1) or not results:
        _say(f"mieb-eval run failed (exit {r.returncode})")
        return FATAL if r.returncode not in (USAGE, NO_DEVICE) else r.returncode
    written = summarize(bin_, out, bsel, env)
    return written if isinstance(written, int) else (results, r.returncode == 1, *written)


def _step(bin_: str, args: list[str], env: dict, files: dict[Path, Path],
          stdout_to: Path | None = None) -> tuple[int, str]:
    """Run one program step that writes `files` (temporary -> final path) and, with stdout_to
    (one of the temporaries), its stdout. The files are renamed into place only when the step
    ran (exit 0, or 1: some result files could not be read, said on stderr) and wrote every one
    of them, none empty; else the temporaries are removed and what was there stays. Returns
    the exit status (-1: it ran and wrote nothing) and stdout."""
    r = _mieb(bin_, args, env, capture=True)
    out = r.stdout or ""
    if stdout_to is not None:
        stdout_to.write_text(out, encoding="utf-8")
    whole = r.returncode in (0, 1) and all(t.is_file() and t.stat().st_size > 0 for t in files)
    for tmp, final in files.items():
        if whole:
            os.replace(tmp, final)
        else:
            tmp.unlink(missing_ok=True)
    return (r.returncode if whole or r.returncode not in (0, 1) else -1), out


def summarize(bin_: str, out: Path, bsel: list[str], env: dict):
    """Steps 3-4 on OUT/results: OUT/summary.{txt,csv,json} and OUT/report.html, each written
    whole or not at all. Returns (summary's exit status, its stdout, report's exit status), -1
    for a step that ran and wrote nothing (no result could be read), or FATAL when a step could
    not run (a crash, a signal, an unwritable folder)."""
    txt, csv, js, html = out / "summary.txt", out / "summary.csv", out / "summary.json", out / "report.html"
    tmp = {f: f.with_name(f".{f.name}.tmp{os.getpid()}") for f in (txt, csv, js, html)}
    _say("[3/4] mieb-eval summary")
    s_rc, s_out = _step(bin_, ["summary", str(out / "results"), *bsel, "--csv", str(tmp[csv]), "--json",
                               str(tmp[js])], env, {tmp[txt]: txt, tmp[csv]: csv, tmp[js]: js}, stdout_to=tmp[txt])
    if s_rc not in (0, 1, -1):
        _say(f"mieb-eval summary could not run (exit {s_rc}); no summary written")
        return FATAL
    _say("[4/4] mieb-eval report")
    h_rc, _ = _step(bin_, ["report", str(out / "results"), "--html", str(tmp[html]), *bsel], env, {tmp[html]: html})
    if h_rc not in (0, 1, -1):
        _say(f"mieb-eval report could not run (exit {h_rc}); no report written")
        return FATAL
    return s_rc, s_out, h_rc


def closing_line(results: str, out: Path, exp: Path, s_rc: int, h_rc: int) -> str:
    """The last line: where each output is, naming only files this run wrote (or found, for
    the results folder and the export)."""
    parts = [f"results {results}" if results and Path(results).is_dir() else "no results"]
    txt, csv, js, html = (out / n for n in ("summary.txt", "summary.csv", "summary.json", "report.html"))
    parts.append(f"summary {txt} ({csv.name}, {js.name})" if s_rc != -1 else "no summary (see above)")
    parts.append(f"report {html}" if h_rc != -1 else "no report (see above)")
    if exp.is_dir():
        parts.append(f"export {exp}")
    return f"{PROG}: " + "; ".join(parts)


def _main(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.WARNING, format=f"{PROG}: %(levelname)s: %(message)s")
    logging.getLogger("mieb_eval.export").setLevel(logging.INFO)
    one_line_per_warning()
    out: Path = args.output_folder
    bin_ = find_bin(args.bin)
    if not bin_:
        _say(f"no mieb-eval binary ({'--bin ' + args.bin + ' is not executable' if args.bin else 'build/mieb-eval of this checkout is missing and none is on PATH'}): "
             "build it with scripts/build.sh or pass --bin")
        return USAGE

    # 1. the device, before anything is loaded or encoded
    from .device import DeviceUnusable, check_device, describe_model

    try:
        device = check_device(args.device)
    except ValueError as e:
        _say(str(e))
        return USAGE
    except DeviceUnusable as e:
        _say(f"refusing to start: {e}. Nothing was encoded; use --device cpu to encode on the CPU.")
        return NO_DEVICE

    import mteb

    from .__main__ import _tasks
    from .export import ExportRefused, export

    try:
        tasks = mteb.get_benchmark(args.benchmark).tasks if args.benchmark else _tasks(mteb, args.tasks)
    except (KeyError, ValueError, ImportError, AttributeError) as e:
        _say(str(e))
        return USAGE
    try:
        model = load_model(args.model, args.model_revision, args.device)
    except ImportError as e:
        # mteb's advice names plain pip; the packages must go into the environment running this
        _say(f"cannot load model {args.model}: {e}\nThis environment is {sys.prefix}: install there with "
             f"{sys.executable} -m pip install PACKAGE")
        return USAGE
    except (OSError, ValueError, AttributeError, KeyError) as e:
        _say(f"cannot load model {args.model}: {e}")
        return USAGE
    where = describe_model(model)
    if args.device and args.device.startswith("cuda") and where.startswith("cpu"):
        _say(f"refusing to start: --device {args.device} was asked for but the model's weights are on {where}")
        return NO_DEVICE

    exp = out / "export"
    interval = float(os.environ.get("MIEB_EVAL_MODEL_PROGRESS_INTERVAL", args.progress_interval))
    kill_after = os.environ.get(KILL_AFTER_ENV)
    progress = _Progress(args.progress, interval, kill_after=int(kill_after) if kill_after else None)
    _say(f"[1/4] export into {exp} (resumes an interrupted one)")
    try:
        summary = export(model, tasks, exp / "task-data", exp / "embeddings",
                         encode_kwargs={"batch_size": args.batch_size}, dtype=args.dtype,
                         num_proc=args.num_proc, progress=progress)
    except ExportRefused as e:
        _say(str(e))
        return e.exit_status
    except KeyboardInterrupt:
        progress.finish()
        raise
    failed = dict(summary["failed"])
    if failed:
        _say(f"{len(failed)} task(s) not exported (said above): {', '.join(failed)}; they are not scored; "
             "rerun the same command to encode what is missing")

    # 2-4. mieb-eval: scores, summary, report. Tasks of one's own (MODULE:CLASS) are described
    # by the export's registry; mteb's tasks are in mieb-eval's own.
    # A task not exported is not given to mieb-eval by name: it may have no registry entry.
    own = bool(args.tasks) and any(":" in t for t in args.tasks)
    names = [t.metadata.name for t in tasks if t.metadata.name not in failed]
    if not args.benchmark and not names:
        print(closing_line("", out, exp, -1, -1), flush=True)
        return FAILED
    sel = ["-b", args.benchmark] if args.benchmark else ["-t", *names]
    scored = score_export(bin_, exp, out, sel, own_registry=own, device=args.score_device,
                          progress=args.progress, mem_limit=args.mem_limit)
    if isinstance(scored, int):
        return scored
    results, run_failed, s_rc, s_out, h_rc = scored
    sys.stdout.write(s_out)
    status = FAILED if (failed or run_failed or s_rc or h_rc) else OK
    if status:
        _say("some tasks were not exported or scored (see above)" +
             ("; the summary leaves their aggregates empty" if s_rc != -1 else ""))
    print(closing_line(results, out, exp, s_rc, h_rc), flush=True)
    placed = placement_line(bin_, out / "results", args.benchmark, args.published) if s_rc != -1 else None
    if placed:
        print("\n".join(f"{PROG}: {line}" for line in placed.splitlines()), flush=True)
    return status

if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from .h5roles import end_process

    end_process(main())
