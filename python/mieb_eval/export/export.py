"""The export: task data, role files and model_meta.json for a model and a list of tasks."""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .check import Call, DeclaredWidth, EncodeRefused, WidthConflict, check_call
from .families import CORPUS_CHUNK, Unsupported, plan_task
from .h5roles import RoleWriter, write_json_atomic
from .identity import (IDENTITY_NAME, ExportBusy, ExportRefused, FolderLock, ModelMismatch, check_identity,
                       model_identity)
from .keys import batch_items, item_key
from .taskdata import registry_entry, update_registry, write_task_file

logger = logging.getLogger("mieb_eval.export")

REGISTRY_NAME = "mieb-registry.json"
DEFAULT_SHARD_BYTES = 2 << 30


__all__ = ["REGISTRY_NAME", "EncodeRefused", "ExportBusy", "ExportRefused", "ModelMismatch", "export"]


def _record_keys(loader: Any, on_batch: Any = None) -> list[list[bytes]]:
    """Make `loader` record the key of every item the first time it is iterated to the end.

    The model receives mteb's own DataLoader object (only its class is swapped for a subclass
    whose iterator hashes each batch on its way to the model), so it sees exactly what
    mteb.evaluate would hand it. `on_batch(n)` is told the size of each batch of that pass.
    """
    box: list[list[bytes]] = []
    base = type(loader)

    class Recording(base):  # type: ignore[misc, valid-type]
        def __iter__(self):  # noqa: ANN204
            keys: list[bytes] = []
            for batch in base.__iter__(self):
                if not box:
                    n0 = len(keys)
                    keys.extend(item_key(it) for it in batch_items(batch))
                    if on_batch is not None:
                        on_batch(len(keys) - n0)
                yield batch
            if not box:
                box.append(keys)

    loader.__class__ = Recording
    return box


def _meta_dict(model: Any) -> dict[str, Any]:
    meta = getattr(model, "mteb_model_meta", None)
    if meta is None:
        raise ValueError("mieb-export: the model has no mteb_model_meta (load it with mteb.get_model or wrap it)")
    d = json.loads(json.dumps(meta.to_dict(), default=str))
    return _finite(d)


def _finite(x: Any) -> Any:
    """Non-finite numbers (max_tokens = inf is common) as null: mteb's cache writes them as
    Python's Infinity literal, which is not JSON and which mieb-eval's model_meta.json reader
    rejects; nothing that scoring reads is a number."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_finite(v) for v in x]
    return x


def _expand(tasks: Iterable[Any]) -> list[Any]:
    """Aggregate tasks (VisualSTS17Eng, ...) have no data of their own: export their sub-tasks.

    A sub-task met several times (MIEB(Multilingual) aggregates STS17MultilingualVisualSTS once
    over its English subset and once over the others) is exported once, over the union of the
    splits and subsets its appearances evaluate, in the task's own order.
    """
    from mteb.abstasks.aggregated_task import AbsTaskAggregate

    first: dict[str, Any] = {}
    splits: dict[str, set[str]] = {}
    subsets: dict[str, set[str]] = {}
    for t in tasks:
        for s in list(t.metadata.tasks) if isinstance(t, AbsTaskAggregate) else [t]:
            name = s.metadata.name
            first.setdefault(name, s)
            splits.setdefault(name, set()).update(s.eval_splits)
            subsets.setdefault(name, set()).update(s.hf_subsets)
    for name, s in first.items():
        if set(s.eval_splits) != splits[name]:
            s.filter_eval_splits([x for x in s.metadata.eval_splits if x in splits[name]])
        if set(s.hf_subsets) != subsets[name]:
            s.hf_subsets = [x for x in s.metadata.hf_subsets if x in subsets[name]]
    return list(first.values())


def _role_writer(emb_dir: Path, name: str, rp: Any, dtype: str, shard_bytes: int, sig: dict[str, Any]) -> RoleWriter:
    return RoleWriter(
        emb_dir,
        task=name,
        split=rp.split,
        subset=rp.subset,
        role=rp.role,
        n_rows=rp.n_rows,
        dtype=dtype,
        shard_bytes=shard_bytes,
        attrs={
            "prompt_type": "" if rp.prompt_type is None else str(getattr(rp.prompt_type, "value", rp.prompt_type)),
            "mteb_hf_split": rp.hf_split,
            "exporter": "mieb-export",
        },
        row_index=rp.row_index,
        signature=sig,
    )


def _encode_call(model: Any, task: Any, rp: Any, seg: Any, call: Call, enc: dict[str, Any],
                 progress: Any) -> tuple[Any, list[bytes]]:
    """One of mteb's encode calls: the model's output and the key of every item it was given.
    Whatever the model raises fails the call (EncodeRefused); an interruption goes through."""
    loader = seg.make_loader()
    box = _record_keys(loader, None if progress is None else progress.advance)
    try:
        emb = model.encode(loader, task_metadata=task.metadata, hf_split=rp.hf_split, hf_subset=rp.subset,
                           prompt_type=rp.prompt_type, **enc)
    except Exception as e:  # noqa: BLE001 - any failure of the model's code fails this call alone
        logger.debug("the model raised", exc_info=True)
        raise call.refuse(f"the model raised {type(e).__name__}: {e}") from e
    if not box:  # the model did not read the loader through: read it for the keys
        for _ in loader:
            pass
    return emb, box[0]


def _encode_role(model: Any, task: Any, rp: Any, w: RoleWriter, width: int | None, ctx: dict[str, Any]) -> int:
    """Encode the role's calls not yet recorded, each checked before it is written. Returns the
    items encoded; EncodeRefused leaves the role unfinished, with the calls before it kept."""
    done = w.rows_done()
    if done == 0:  # files of this role from another export (another batch size, dtype, ...): a
        w.discard()  # refused first call must not leave them to be scored
    progress = ctx["progress"]
    if progress is not None:
        progress.role_start(rp.split, rp.subset, rp.role, done, rp.n_rows)
    n = 0
    for i, seg in enumerate(rp.segments):
        if seg.start + seg.n <= done:
            continue
        call = Call(ctx["model_name"], task.metadata.name, f"{rp.split}/{rp.subset}/{rp.role}", i + 1,
                    len(rp.segments), seg.start, seg.n)
        emb, keys = _encode_call(model, task, rp, seg, call, ctx["enc"], progress)
        x = check_call(emb, call, width, ctx["dtype"])
        if len(keys) != seg.n:  # mteb's loader, not the model: a change in mteb this exporter does not know
            raise RuntimeError(f"{call.where()}: the dataloader gave {len(keys)} items, mteb's plan says {seg.n}")
        ctx["declared"].see(x.shape[1], call)
        width = x.shape[1]
        w.write(seg.start, x, keys)
        n += seg.n
        if progress is not None:
            progress.segment_done()
    w.finish()
    if progress is not None:
        progress.role_end()
    return n


def _width_conflict(e: WidthConflict, writers: list[RoleWriter], declared: DeclaredWidth) -> str:
    """One width must hold for all the task's roles. When the model's declared embed_dim says
    the kept rows are right, the call alone is refused; otherwise it cannot be told which width
    is wrong, and the task's kept rows are removed too, so that a rerun encodes the whole task
    again with one width."""
    what = f"the model returned vectors of width {e.got}, the task's rows kept so far have width {e.kept}"
    if e.kept in declared.widths and e.got not in declared.widths:
        return str(e.call.refuse(f"{what} (the width the model declares)"))
    for w in writers:
        w.discard()
    why = ("the model declares that width" if e.got in declared.widths else
           "it cannot be told which width is right")
    return str(e.call.refuse(f"{what}; {why}, so the task's kept rows were removed too",
                             "encodes the whole task again"))


def _export_task(model: Any, task: Any, ctx: dict[str, Any], summary: dict[str, Any], entries: list) -> None:
    name = task.metadata.name
    progress = ctx["progress"]
    if progress is not None:
        progress.task_start(name)
    loaded_here = not task.data_loaded
    try:
        if loaded_here:
            task.load_data(num_proc=ctx["num_proc"])
        plan = plan_task(task, ctx["enc"], ctx["num_proc"], ctx["corpus_chunk"])
    except Unsupported as e:
        logger.error("%s: not exported: %s", name, e)
        if progress is not None:
            progress.finish()
        summary["failed"][name] = str(e)
        return
    sig = dict(ctx["signature"], dataset_revision=task.metadata.dataset.get("revision"))
    write_task_file(ctx["task_data_dir"] / f"{name}.h5", name, task.metadata.dataset.get("revision") or "",
                    plan.groups)
    entries.append(registry_entry(task, plan.mieb_type, plan.params, plan.columns))
    writers = [_role_writer(ctx["emb_dir"], name, rp, ctx["dtype"], ctx["shard_bytes"], sig) for rp in plan.roles]
    width = next((d for w in writers if (d := w.kept_width()) is not None), None)
    n_encoded = 0
    try:
        for rp, w in zip(plan.roles, writers):
            if w.is_done():
                continue
            if rp.n_rows == 0:
                raise ValueError(f"mieb-export: {name} {rp.split}/{rp.subset}: role {rp.role} has no rows")
            n_encoded += _encode_role(model, task, rp, w, width, ctx)
            width = w.kept_width() if width is None else width
    except (EncodeRefused, OSError) as e:
        if progress is not None:
            progress.finish()
        if isinstance(e, WidthConflict):
            why = _width_conflict(e, writers, ctx["declared"])
        elif isinstance(e, EncodeRefused):
            why = str(e)
        else:
            why = (f"writing its embeddings failed ({e}); the encode calls written before are kept, and "
                   "rerunning the same command encodes the rest")
            ctx["stopped_at"] = name
        logger.error("%s: not exported: %s", name, why)
        summary["failed"][name] = why
        return
    finally:
        if loaded_here:
            task.unload_data()
    (summary["exported"] if n_encoded else summary["skipped"]).append(name)
    if progress is not None:
        progress.task_end(name, n_encoded, not n_encoded)
    else:
        logger.info("%s: %s", name, f"{n_encoded} items encoded" if n_encoded else "already exported")


def export(
    model: Any,
    tasks: Iterable[Any],
    task_data_dir: str | Path,
    emb_dir: str | Path,
    *,
    encode_kwargs: dict[str, Any] | None = None,
    dtype: str = "float32",
    shard_bytes: int = DEFAULT_SHARD_BYTES,
    num_proc: int | None = None,
    corpus_chunk: int = CORPUS_CHUNK,
    overwrite: bool = False,
    progress: Any = None,
) -> dict[str, Any]:
    """Export `tasks` encoded by `model` (an mteb encoder). Returns {"exported", "skipped", "failed"}:
    task names, and for each failed task the message saying why (its model, role and call).

    Every encode call's output is checked before it is written (check.check_call); a call the
    check refuses, or one in which the model raises, fails its task, leaving the role
    unfinished with the calls before it kept, and the export goes on with the next task.
    Interrupted or failed exports resume: finished role files are kept, a role in progress
    continues after its last finished encode call. Task-data files are rewritten (they are cheap).
    Raises ModelMismatch (another model's export is in the folder) and ExportBusy (another
    export is writing into it), both ExportRefused, before anything is changed.
    `progress`: a progress.Progress told of every task, role and batch (None: log lines only).
    """
    task_data_dir, emb_dir = Path(task_data_dir), Path(emb_dir)
    enc = dict(encode_kwargs or {})
    enc.setdefault("batch_size", 32)
    enc.setdefault("show_progress_bar", False)
    meta = _meta_dict(model)
    ident = model_identity(model, meta)
    with FolderLock(emb_dir):
        if not overwrite:
            check_identity(emb_dir, ident)
        task_data_dir.mkdir(parents=True, exist_ok=True)
        write_json_atomic(emb_dir / "model_meta.json", meta)
        write_json_atomic(emb_dir / IDENTITY_NAME, ident)
        ctx = {
            "enc": enc, "dtype": dtype, "shard_bytes": shard_bytes, "num_proc": num_proc,
            "corpus_chunk": corpus_chunk, "progress": progress, "emb_dir": emb_dir, "task_data_dir": task_data_dir,
            "model_name": f"{meta.get('name')} @ {meta.get('revision')}",
            "declared": DeclaredWidth(getattr(getattr(model, "mteb_model_meta", None), "embed_dim", None)),
            "signature": {"model": meta.get("name"), "revision": meta.get("revision"),
                          "fingerprint": ident["fingerprint"], "batch_size": enc["batch_size"],
                          "corpus_chunk": corpus_chunk},
        }
        summary: dict[str, Any] = {"exported": [], "skipped": [], "failed": {}}
        entries: list = []
        todo = _expand(tasks)
        if progress is not None:
            from .device import describe_model

            progress.start(len(todo), describe_model(model), dtype)
        for task in todo:
            if "stopped_at" in ctx:
                # HDF5 can be left broken by a write that failed (a later close can crash the
                # process): nothing more is written by this process
                why = (f"not encoded: the export stopped when writing {ctx['stopped_at']} failed; rerunning the "
                       "same command encodes it")
                logger.error("%s: not exported: %s", task.metadata.name, why)
                summary["failed"][task.metadata.name] = why
                continue
            _export_task(model, task, ctx, summary, entries)
        if progress is not None:
            progress.finish()
        if entries:
            update_registry(task_data_dir / REGISTRY_NAME, entries)
    return summary
