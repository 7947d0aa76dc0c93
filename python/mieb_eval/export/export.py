"""The export: task data, role files and model_meta.json for a model and a list of tasks."""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .families import CORPUS_CHUNK, Unsupported, plan_task
from .h5roles import RoleWriter, write_json_atomic
from .keys import batch_items, item_key
from .taskdata import registry_entry, update_registry, write_task_file

logger = logging.getLogger("mieb_eval.export")

REGISTRY_NAME = "mieb-registry.json"
DEFAULT_SHARD_BYTES = 2 << 30


class ModelMismatch(Exception):
    """The embeddings folder already holds another model's export."""


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
    """Export `tasks` encoded by `model` (an mteb encoder). Returns {"exported", "skipped", "failed"}.

    Interrupted exports resume: finished role files are kept, a role in progress continues
    after its last finished encode call. Task-data files are rewritten (they are cheap).
    `progress`: a progress.Progress told of every task, role and batch (None: log lines only).
    """
    task_data_dir, emb_dir = Path(task_data_dir), Path(emb_dir)
    enc = dict(encode_kwargs or {})
    enc.setdefault("batch_size", 32)
    enc.setdefault("show_progress_bar", False)
    meta = _meta_dict(model)
    meta_path = emb_dir / "model_meta.json"
    if meta_path.exists() and not overwrite:
        old = json.loads(meta_path.read_text(encoding="utf-8"))
        if (old.get("name"), old.get("revision")) != (meta.get("name"), meta.get("revision")):
            raise ModelMismatch(
                f"{meta_path} belongs to {old.get('name')} @ {old.get('revision')}, not "
                f"{meta.get('name')} @ {meta.get('revision')}: use another folder or overwrite=True"
            )
    emb_dir.mkdir(parents=True, exist_ok=True)
    task_data_dir.mkdir(parents=True, exist_ok=True)
    write_json_atomic(meta_path, meta)
    signature = {
        "model": meta.get("name"),
        "revision": meta.get("revision"),
        "batch_size": enc["batch_size"],
        "corpus_chunk": corpus_chunk,
    }
    summary: dict[str, Any] = {"exported": [], "skipped": [], "failed": {}}
    entries = []
    todo = _expand(tasks)
    if progress is not None:
        from .device import describe_model

        progress.start(len(todo), describe_model(model), dtype)
    for task in todo:
        name = task.metadata.name
        if progress is not None:
            progress.task_start(name)
        loaded_here = not task.data_loaded
        try:
            if loaded_here:
                task.load_data(num_proc=num_proc)
            plan = plan_task(task, enc, num_proc, corpus_chunk)
        except Unsupported as e:
            logger.error("%s: not exported: %s", name, e)
            if progress is not None:
                progress.finish()
            summary["failed"][name] = str(e)
            continue
        sig = dict(signature, dataset_revision=task.metadata.dataset.get("revision"))
        write_task_file(task_data_dir / f"{name}.h5", name, task.metadata.dataset.get("revision") or "", plan.groups)
        entries.append(registry_entry(task, plan.mieb_type, plan.params, plan.columns))
        n_encoded = 0
        for rp in plan.roles:
            w = RoleWriter(
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
            if w.is_done():
                continue
            if rp.n_rows == 0:
                raise ValueError(f"mieb-export: {name} {rp.split}/{rp.subset}: role {rp.role} has no rows")
            done = w.rows_done()
            if progress is not None:
                progress.role_start(rp.split, rp.subset, rp.role, done, rp.n_rows)
            for seg in rp.segments:
                if seg.start + seg.n <= done:
                    continue
                loader = seg.make_loader()
                box = _record_keys(loader, None if progress is None else progress.advance)
                emb = model.encode(
                    loader,
                    task_metadata=task.metadata,
                    hf_split=rp.hf_split,
                    hf_subset=rp.subset,
                    prompt_type=rp.prompt_type,
                    **enc,
                )
                if not box:  # the model did not read the loader through: read it for the keys
                    for _ in loader:
                        pass
                w.write(seg.start, emb, box[0])
                n_encoded += seg.n
                if progress is not None:
                    progress.segment_done()
            w.finish()
            if progress is not None:
                progress.role_end()
        if loaded_here:
            task.unload_data()
        (summary["exported"] if n_encoded else summary["skipped"]).append(name)
        if progress is not None:
            progress.task_end(name, n_encoded, not n_encoded)
        else:
            logger.info("%s: %s", name, f"{n_encoded} items encoded" if n_encoded else "already exported")
    if progress is not None:
        progress.finish()
    if entries:
        update_registry(task_data_dir / REGISTRY_NAME, entries)
    return summary
