"""The replay model: an mteb encoder that answers every encode call with exported embeddings.

    model = ReplayEncoder("export/embeddings")
    mteb.evaluate(model, tasks, ...)

mteb then scores exactly the vectors mieb-eval scores. For each encode call the model hashes
the items of mteb's dataloader (keys.py), picks the exported role of that task and hf_subset
that mteb is asking for (the hf_split and prompt_type the exporter recorded, then the role
whose rows hold every key, preferring one whose rows are exactly the call's items in order),
and returns those rows. Repeated items (the same content twice) map to the role's repeated
rows in order. An item the export does not hold is an error that names the task and role.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from .h5roles import RoleReader
from .keys import batch_items, item_key

# <role>.h5 or <role>-NNNNN-of-MMMMM.h5 (FORMAT.md section 2)
_ROLE_FILE = re.compile(r"^([^.][^/]*?)(?:-\d{5,7}-of-\d{5,7})?\.h5$")


def _model_meta(d: dict[str, Any]) -> Any:
    """A ModelMeta from an exported model_meta.json (ModelMeta.to_dict output)."""
    from mteb.models.model_meta import ModelMeta

    fields = set(ModelMeta.model_fields)
    kept = {k: v for k, v in d.items() if k in fields and k != "loader"}
    try:
        return ModelMeta.model_validate({**kept, "loader": None})
    except Exception:  # an older or foreign model_meta.json: keep what scoring needs
        keep = {k: d.get(k) for k in ("name", "revision", "similarity_fn_name", "embed_dim", "modalities") if d.get(k)}
        return ModelMeta.create_empty(overwrites=keep)


class _Role:
    def __init__(self, reader: RoleReader) -> None:
        self.reader = reader
        self.role = reader.role
        self.hf_split = str(reader.attrs.get("mteb_hf_split", reader.attrs.get("split", "")))
        self.prompt_type = str(reader.attrs.get("prompt_type", ""))
        self.keys = reader.key_list()
        self.rows: dict[bytes, list[int]] = defaultdict(list)
        for i, k in enumerate(self.keys):
            self.rows[k].append(i)

    def rows_for(self, keys: list[bytes]) -> list[int] | None:
        """Row of each requested item (the j-th repeat of a key takes the key's j-th row), or None."""
        if keys == self.keys:
            return list(range(len(keys)))
        seen: dict[bytes, int] = defaultdict(int)
        out = []
        for k in keys:
            rows = self.rows.get(k)
            if not rows:
                return None
            out.append(rows[min(seen[k], len(rows) - 1)])
            seen[k] += 1
        return out


def _base_class() -> type:
    from mteb.models.abs_encoder import AbsEncoder

    return AbsEncoder


class ReplayEncoder(_base_class()):  # type: ignore[misc]
    """mteb EncoderProtocol over a mieb-export embeddings folder."""

    def __init__(self, embeddings_dir: str | Path, model_name: str | None = None, revision: str | None = None,
                 device: str | None = None, **kwargs: Any) -> None:
        self.root = Path(embeddings_dir)
        meta = json.loads((self.root / "model_meta.json").read_text(encoding="utf-8"))
        if model_name:
            meta["name"] = model_name
        if revision:
            meta["revision"] = revision
        self.mteb_model_meta = _model_meta(meta)
        self._roles: dict[tuple[str, str], list[_Role]] = {}
        self._uses: dict[int, int] = defaultdict(int)
        self.calls: list[dict[str, Any]] = []  # what was asked and answered, for tests and debugging

    def _roles_of(self, task: str, subset: str) -> list[_Role]:
        key = (task, subset)
        if key not in self._roles:
            roles = []
            tdir = self.root / task
            if tdir.is_dir():
                for split_dir in sorted(p for p in tdir.iterdir() if p.is_dir()):
                    sdir = split_dir / subset
                    if not sdir.is_dir():
                        continue
                    names = sorted({m.group(1) for p in sdir.glob("*.h5")
                                    if (m := _ROLE_FILE.match(p.name))})
                    for n in names:
                        roles.append(_Role(RoleReader(sdir, n)))
            self._roles[key] = roles
        return self._roles[key]

    def encode(self, inputs: Any, *, task_metadata: Any, hf_split: str, hf_subset: str, prompt_type: Any = None,
               **kwargs: Any) -> np.ndarray:
        keys = [item_key(it) for batch in inputs for it in batch_items(batch)]
        ptype = "" if prompt_type is None else str(getattr(prompt_type, "value", prompt_type))
        task = task_metadata.name
        roles = self._roles_of(task, hf_subset)
        cands = [r for r in roles if r.hf_split == hf_split and r.prompt_type == ptype]
        # exact order first, then any role holding every key; among equals, the role asked for
        # least so far (two roles with the same items, e.g. STS sentence1 and sentence2 showing
        # the same images, are then answered each in turn, as mteb asks for them)
        cands.sort(key=lambda r: self._uses[id(r)])
        chosen, rows = None, None
        for r in cands:
            if r.keys == keys:
                chosen, rows = r, list(range(len(keys)))
                break
        if chosen is None:
            for r in cands:
                rows = r.rows_for(keys)
                if rows is not None:
                    chosen = r
                    break
        if chosen is None:
            have = ", ".join(f"{r.role} (hf_split {r.hf_split}, prompt_type {r.prompt_type or 'none'})" for r in roles)
            raise KeyError(
                f"replay: {task} hf_split={hf_split} hf_subset={hf_subset} prompt_type={ptype or 'none'}: "
                f"no exported role holds all {len(keys)} requested items (roles: {have or 'none'})"
            )
        self._uses[id(chosen)] += 1
        self.calls.append({"task": task, "hf_split": hf_split, "hf_subset": hf_subset, "prompt_type": ptype,
                           "role": chosen.role, "n": len(keys)})
        emb = chosen.reader.embeddings()
        return emb[np.asarray(rows, dtype=np.int64)] if rows else np.zeros((0, emb.shape[1]), np.float32)
