"""mieb_eval.evaluate: mteb encodes, mieb-eval scores, in one call from Python.

The model is encoded in this process by the exporter (mieb_eval.export, the code of
tools/mieb-export: every task's roles encoded as mteb's own evaluation would encode them), then
scored in this process as mieb_eval.run scores (the library's mieb_run), and the leaderboard
summary and report are written by the library too (mieb_eval.summary, mieb_eval.report): no
program is started. The files are those tools/mieb-eval-model writes, and an interrupted call
resumes where it stopped when called again with the same output folder.
"""
from __future__ import annotations

import logging
from pathlib import Path


logger = logging.getLogger("mieb_eval")


def _task_objects(mteb, tasks, benchmark):
    from .export.__main__ import _tasks

    if (tasks is None) == (benchmark is None):
        raise ValueError("evaluate needs tasks or a benchmark (one of them)")
    if benchmark is not None:
        return list(mteb.get_benchmark(benchmark).tasks), False
    names = [t for t in tasks if isinstance(t, str)]
    objects = [t for t in tasks if not isinstance(t, str)]
    return objects + (_tasks(mteb, names) if names else []), any(":" in n for n in names)


def evaluate(model, tasks=None, benchmark: str | None = None, *, output_folder, device: str = "auto",
             score_device: str | None = None, revision: str | None = None, batch_size: int = 32,
             dtype: str = "float32", num_proc: int | None = None, mem_limit: str | None = None,
             published: str | Path | None = None):
    """Encode `model` on `tasks` (names, MODULE:CLASS names or mteb task objects) or `benchmark`
    (e.g. "MIEB(lite)") and score them with mieb-eval.

    model: an mteb encoder, or a name for mteb.get_model (with revision). device: where the
    model encodes ("auto": where mteb puts it; "cpu", "cuda", "cuda:N" are checked first);
    score_device: where mieb-eval scores (default: device). Writes into output_folder:
    export/ (task data and embeddings), results/<org>__<model>/<revision>/<Task>.json,
    summary.txt, .csv, .json and report.html.

    With a benchmark and the published results at hand (published: a clone of mteb's results
    repository; default: mteb's downloaded copy where it exists), the last line logged on the
    `mieb_eval` logger (INFO) says where the model stands among them.

    Returns the mteb.TaskResult of each task scored. When a task could not be exported or scored
    (the tools' exit status 1), the others are scored and summarised all the same, each failure is
    named in a warning on the `mieb_eval` logger, and TasksFailed is raised at the end, carrying
    the reasons (.failed) and the scored tasks' results (.results); the same call run again once
    the cause is fixed encodes and scores what is missing. A summary or report that cannot be
    written raises (MiebError), leaving no file half written.
    """
    import mteb

    from ._board import report, summary
    from .errors import TasksFailed
    from ._engine import Engine
    from ._run import _run_library, _size
    from .export.device import check_device
    from .export.eval_model import load_model
    from .export.export import REGISTRY_NAME, export
    from .export.placement import default_published, describe

    encode_device = None if device == "auto" else check_device(device)
    if isinstance(model, str):
        model = load_model(model, revision, encode_device)
    task_objs, own = _task_objects(mteb, tasks, benchmark)
    out = Path(output_folder)
    exp = out / "export"
    exported = export(model, task_objs, exp / "task-data", exp / "embeddings",
                     encode_kwargs={"batch_size": batch_size}, dtype=dtype, num_proc=num_proc)
    failed = {name: f"not exported: {why}" for name, why in dict(exported["failed"]).items()}
    for name, why in failed.items():
        logger.warning("%s: %s", name, why)
    names = [t.metadata.name for t in task_objs]
    to_score = [n for n in names if n not in failed]  # a task that failed to export may have no registry entry
    registry = str(exp / "task-data" / REGISTRY_NAME) if own else None  # MODULE:CLASS tasks: the export's
    with Engine(score_device or device, mem_limit=_size(mem_limit or 0), registry=registry) as eng:
        if benchmark or to_score:
            res = _run_library(exp / "task-data", exp / "embeddings", out, None if benchmark else to_score,
                               [benchmark] if benchmark else None, device,
                               {"overwrite_strategy": "only-missing", "engine": eng})
            for t in res.outcomes.get("tasks", []):
                if t.get("outcome") == "failed":
                    failed.setdefault(t["task"], f"not scored: {t.get('error', '')}")
                    logger.warning("%s: not scored: %s", t["task"], t.get("error", ""))
        # the leaderboard summary and the report of every model under results/, as the program's;
        # with no result at all there is no leaderboard, and no file is written
        if summary(out / "results", benchmark, csv=out / "summary.csv", json_path=out / "summary.json",
                   text=out / "summary.txt", engine=eng, missing_ok=True):
            report(out / "results", out / "report.html", benchmark, engine=eng)
        else:
            logger.warning("no result was scored: no summary or report written")
        results_dir = res.results_dir if benchmark or to_score else None
        published = published or default_published()
        if benchmark and published and results_dir and results_dir.is_dir():
            placed = summary(results_dir, benchmark, published=published, engine=eng, missing_ok=True)
            line = describe(placed.get("placement") or [], benchmark, published)
            if line:
                logger.info("%s", line)
    results = [mteb.TaskResult.from_disk(results_dir / f"{n}.json") for n in names
               if results_dir and (results_dir / f"{n}.json").exists()]
    if failed:
        raise TasksFailed(failed, results)
    return results
