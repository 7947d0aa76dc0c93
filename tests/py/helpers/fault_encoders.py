"""Encoders that misbehave as a real model can, for tests/py/test_encode_faults.py.

Runs in .venv-mteb. FaultyEncoder is helpers.mteb_inmem's HashEncoder (the same name,
revision and vectors) with one fault chosen by the environment, so that the same command run
again without it is the same model, fixed:

    MIEB_TEST_ENCODER_FAULT=KIND@K   the Kth encode call of the process (1-based) misbehaves
    MIEB_TEST_ENCODER_MARK=DIR       each call, as it starts, creates DIR/call-<K> (a test waits
                                     for it before it signals or starts a second export)
    MIEB_TEST_ENCODER_SLOW=S         each call first sleeps S seconds

KIND: nan, inf (one cell of one row), overflow16 (a finite 1e6 that float16 cannot hold),
short, long (one row too few or too many), width (one column fewer), dim3, dim1 (a 3-D or
1-D array), strings, none (what is returned), raise (a RuntimeError), and the outputs that are
right in another form: list (lists of floats), float64, tensor (a torch tensor).
OtherEncoder has the same ModelMeta as HashEncoder and other code: another model of one's own;
WideEncoder declares another embed_dim than it returns, UndeclaredEncoder none.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from helpers.mteb_inmem import HashEncoder

BAD_ROW, BAD_COL = 5, 3


def _fault() -> tuple[str, int]:
    spec = os.environ.get("MIEB_TEST_ENCODER_FAULT", "")
    if not spec:
        return "", 0
    kind, _, at = spec.partition("@")
    return kind, int(at or 1)


def _misbehave(x: np.ndarray, kind: str) -> Any:
    r = min(BAD_ROW, x.shape[0] - 1)
    if kind in ("nan", "inf", "overflow16"):
        x = x.copy()
        x[r, BAD_COL] = {"nan": np.nan, "inf": np.inf, "overflow16": 1e6}[kind]
        return x
    if kind == "short":
        return x[:-1]
    if kind == "long":
        return np.concatenate([x, x[:1]])
    if kind == "width":
        return x[:, :-1]
    if kind == "dim3":
        return x[:, None, :]
    if kind == "dim1":
        return x.reshape(-1)
    if kind == "strings":
        return x.astype(str)
    if kind == "none":
        return None
    if kind == "list":
        return x.tolist()
    if kind == "float64":
        return x.astype(np.float64)
    if kind == "tensor":
        import torch

        return torch.from_numpy(x)
    raise ValueError(f"unknown MIEB_TEST_ENCODER_FAULT kind {kind!r}")


class FaultyEncoder(HashEncoder):
    """HashEncoder, with the fault of MIEB_TEST_ENCODER_FAULT at its call."""

    def encode(self, inputs: Any, **kw: Any) -> Any:
        k = self.n_calls + 1
        mark = os.environ.get("MIEB_TEST_ENCODER_MARK")
        if mark:
            Path(mark, f"call-{k}").touch()
        time.sleep(float(os.environ.get("MIEB_TEST_ENCODER_SLOW", "0")))
        kind, at = _fault()
        if kind == "raise" and k == at:
            self.n_calls = k
            raise RuntimeError("FaultyEncoder: the model broke in this call")
        x = super().encode(inputs, **kw)
        return _misbehave(x, kind) if kind and k == at else x


class OtherEncoder(HashEncoder):
    """Another model of one's own under HashEncoder's name and revision: its vectors are
    HashEncoder's, shifted, and its code differs (the export's fingerprint tells them apart)."""

    def encode(self, inputs: Any, **kw: Any) -> Any:
        return super().encode(inputs, **kw) + np.float32(0.5)


class WideEncoder(HashEncoder):
    """HashEncoder that declares embed_dim 64 and returns its 48-wide vectors (mteb keeps them)."""

    def __init__(self) -> None:
        super().__init__()
        self.mteb_model_meta = self.mteb_model_meta.model_copy(update={"embed_dim": 64})


class UndeclaredEncoder(FaultyEncoder):
    """FaultyEncoder whose ModelMeta declares no embed_dim."""

    def __init__(self) -> None:
        super().__init__()
        self.mteb_model_meta = self.mteb_model_meta.model_copy(update={"embed_dim": None})
