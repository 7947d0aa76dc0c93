"""Item keys: a 16-byte digest of what the model reads of one item.

The exporter stores, beside each role's embeddings, the key of every row (`/item_key`,
uint8 [n, 16]); the replay model computes the same key for each item mteb hands it and
looks the row up. Both sides hash the batches that mteb's own dataloaders produce, so the key
covers exactly the model's input after mteb's preprocessing (RGB conversion, title + text
joining, instructions). Only content fields enter the key; ids, labels and scores do not.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np

KEY_BYTES = 16

# Fields of a batch that the model may read as input. Everything else (id, label, score,
# ...) is bookkeeping that mteb carries along and that does not change an embedding.
CONTENT_FIELDS = ("text", "image", "audio", "video", "title", "body", "query", "instruction", "conversation")


def _feed(h: Any, value: Any) -> None:
    """Feed one value into the hash with a type tag, so different types never collide."""
    if value is None:
        h.update(b"N")
    elif isinstance(value, str):
        b = value.encode("utf-8")
        h.update(b"S" + struct.pack("<Q", len(b)) + b)
    elif isinstance(value, bytes | bytearray | memoryview):
        b = bytes(value)
        h.update(b"B" + struct.pack("<Q", len(b)) + b)
    elif isinstance(value, bool | int | float):
        h.update(b"F" + repr(value).encode())
    elif hasattr(value, "tobytes") and hasattr(value, "mode") and hasattr(value, "size"):
        # a PIL image: its mode, size and pixels (what any image processor starts from)
        h.update(b"I" + value.mode.encode() + struct.pack("<QQ", *value.size))
        b = value.tobytes()
        h.update(struct.pack("<Q", len(b)) + b)
    elif hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor
        _feed(h, value.detach().cpu().numpy())
    elif isinstance(value, np.ndarray):
        a = np.ascontiguousarray(value)
        h.update(b"A" + a.dtype.str.encode() + struct.pack("<Q", a.ndim) + struct.pack(f"<{a.ndim}Q", *a.shape))
        h.update(a.tobytes())
    elif isinstance(value, Mapping):
        h.update(b"D" + struct.pack("<Q", len(value)))
        for k in sorted(value, key=str):
            _feed(h, str(k))
            _feed(h, value[k])
    elif isinstance(value, list | tuple):
        h.update(b"L" + struct.pack("<Q", len(value)))
        for v in value:
            _feed(h, v)
    else:
        raise TypeError(f"mieb-export: cannot key an input of type {type(value).__name__}")


def item_key(item: Mapping[str, Any]) -> bytes:
    """The key of one item (a mapping of field -> value, as one row of a batch)."""
    h = hashlib.blake2b(digest_size=KEY_BYTES)
    for field in CONTENT_FIELDS:
        if field in item:
            _feed(h, field)
            _feed(h, item[field])
    return h.digest()


def batch_items(batch: Any) -> Iterator[dict[str, Any]]:
    """Split one collated batch (a dict of equally long lists or tensors) into items."""
    if not isinstance(batch, Mapping):
        raise TypeError(f"mieb-export: expected a dict batch from mteb's dataloader, got {type(batch).__name__}")
    fields = [f for f in CONTENT_FIELDS if f in batch]
    if not fields:
        raise ValueError(f"mieb-export: a batch without any input field (fields: {sorted(batch)})")
    n = len(batch[fields[0]])
    for f in fields:
        if len(batch[f]) != n:
            raise ValueError(f"mieb-export: batch field {f!r} has {len(batch[f])} items, {fields[0]!r} has {n}")
    for i in range(n):
        yield {f: batch[f][i] for f in fields}


def keys_of_batches(batches: Iterable[Any]) -> list[bytes]:
    """Keys of every item of every batch, in order."""
    return [item_key(it) for b in batches for it in batch_items(b)]


def keys_array(keys: list[bytes]) -> np.ndarray:
    """Keys as the uint8 [n, 16] array stored in /item_key."""
    if not keys:
        return np.zeros((0, KEY_BYTES), dtype=np.uint8)
    return np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), KEY_BYTES).copy()
