"""Command line of mieb-export (tools/mieb-export, or python -m mieb_eval.export)."""

from __future__ import annotations

import argparse
import logging
import re
import sys
from pathlib import Path

# The exit statuses of tools/mieb-eval-model, with the same meaning (README "Score your model").
USAGE_EXIT, FAILED_EXIT, NO_DEVICE_EXIT, INTERRUPTED_EXIT = 2, 1, 3, 130


def _size(s: str) -> int:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([KMGT]?)i?B?", s.strip(), re.IGNORECASE)
    if not m:
        raise argparse.ArgumentTypeError(f"bad size {s!r} (examples: 512M, 2G)")
    mult = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[m.group(2).upper()]
    return int(float(m.group(1)) * mult)


def _tasks(mteb, names: list[str]) -> list:
    """mteb's tasks by name; MODULE:CLASS names a task class of your own (instantiated here)."""
    import importlib

    own = [n for n in names if ":" in n]
    found = list(mteb.get_tasks(tasks=[n for n in names if ":" not in n])) if len(own) < len(names) else []
    for n in own:
        mod, _, cls = n.partition(":")
        found.append(getattr(importlib.import_module(mod), cls)())
    return found


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mieb-export",
        description="Encode MIEB tasks with a model as mteb loads it and write mieb-eval's inputs: "
        "<out>/task-data/<Task>.h5 (ground truth), <out>/embeddings/<Task>/<split>/<subset>/<role>.h5 "
        "and model_meta.json. Every encode call's output is checked before it is written. A rerun "
        "resumes an interrupted or failed export.",
        epilog="exit status: 0 done; 1 some task not exported (named on stderr: the model's output "
        "refused, the model raised, or a write failed; rerun to encode what is missing); 2 bad command "
        "line, or the folder holds another model's export or another export is writing into it; "
        "3 --device cuda[:N] that torch cannot use; 130 interrupted (rerun to resume).",
    )
    m = p.add_mutually_exclusive_group(required=True)
    m.add_argument("--model", help="model name for mteb.get_model")
    m.add_argument("--sentence-transformer", metavar="NAME_OR_PATH", help="a sentence-transformers model")
    p.add_argument("--revision", help="model revision (with --model)")
    t = p.add_mutually_exclusive_group(required=True)
    t.add_argument("-t", "--tasks", nargs="+", help="task names (MODULE:CLASS for a task class of your own)")
    t.add_argument("-b", "--benchmark", help='a benchmark, e.g. "MIEB(lite)"')
    p.add_argument("--output-folder", required=True, help="writes task-data/ and embeddings/ here")
    p.add_argument("--task-data", help="task-data folder [OUTPUT/task-data]")
    p.add_argument("--embeddings", help="embeddings folder [OUTPUT/embeddings]")
    p.add_argument("--batch-size", type=int, default=32, help="encode batch size, as mteb's encode_kwargs [32]")
    p.add_argument("--dtype", choices=("float32", "float16", "bfloat16"), default="float32")
    p.add_argument("--shard-size", type=_size, default=_size("2G"),
                   help="a role larger than this is written as shards of at most this size [2G]")
    p.add_argument("--num-proc", type=int, default=None, help="dataloader worker processes")
    p.add_argument("--device", default=None, help="device for the model (mteb.get_model's device); cuda or "
                   "cuda:N is checked first and refused (exit 3) when torch cannot use it")
    p.add_argument("--progress", choices=("auto", "tty", "plain", "off"), default="auto",
                   help="per task and role: items done, items/s, ETA; a live line on a terminal, else "
                   "a plain line every --progress-interval seconds [auto]")
    p.add_argument("--progress-interval", type=float, default=30.0, help="seconds between plain progress lines [30]")
    p.add_argument("--overwrite", action="store_true", help="replace another model's export in the folder")
    p.add_argument("-q", "--quiet", action="store_true")
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as e:
        return USAGE_EXIT if e.code else 0
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO,
                        format="mieb-export: %(levelname)s: %(message)s")
    from .logs import one_line_per_warning

    one_line_per_warning()
    from .device import DeviceUnusable, check_device

    try:
        check_device(args.device)
    except ValueError as e:
        print(f"mieb-export: {e}", file=sys.stderr)
        return USAGE_EXIT
    except DeviceUnusable as e:
        print(f"mieb-export: refusing to start: {e}. Nothing was encoded.", file=sys.stderr)
        return NO_DEVICE_EXIT
    import mteb

    from .export import ExportRefused, export
    from .progress import Progress

    try:
        tasks = mteb.get_benchmark(args.benchmark).tasks if args.benchmark else _tasks(mteb, args.tasks)
    except (KeyError, ValueError, ImportError, AttributeError) as e:
        print(f"mieb-export: {e}", file=sys.stderr)
        return USAGE_EXIT
    if args.model:
        kw = {"device": args.device} if args.device else {}
        model = mteb.get_model(args.model, revision=args.revision, **kw)
    else:
        from sentence_transformers import SentenceTransformer

        from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper

        model = SentenceTransformerEncoderWrapper(SentenceTransformer(args.sentence_transformer, device=args.device))
    out = Path(args.output_folder)
    progress = None if args.quiet else Progress(args.progress, args.progress_interval)
    try:
        summary = export(
            model, tasks, Path(args.task_data or out / "task-data"), Path(args.embeddings or out / "embeddings"),
            encode_kwargs={"batch_size": args.batch_size}, dtype=args.dtype, shard_bytes=args.shard_size,
            num_proc=args.num_proc, overwrite=args.overwrite, progress=progress,
        )
    except ExportRefused as e:
        print(f"mieb-export: {e}", file=sys.stderr)
        return e.exit_status
    except KeyboardInterrupt:
        if progress is not None:
            progress.finish()
        print("mieb-export: interrupted; finished encode calls are kept: rerun the same command to resume",
              file=sys.stderr)
        return INTERRUPTED_EXIT
    if summary["failed"]:
        print(f"mieb-export: {len(summary['failed'])} task(s) not exported (said above): "
              f"{', '.join(summary['failed'])}; rerun the same command to encode what is missing", file=sys.stderr)
    print(out)
    return FAILED_EXIT if summary["failed"] else 0


if __name__ == "__main__":
    from .h5roles import end_process

    end_process(main())
