"""Arrays in: numpy arrays or torch tensors as the C library's struct mieb_array.

float32 and float16 arrays pass as they are (C-contiguous, or copied to be); bfloat16 has no
numpy dtype, so it comes as a torch.bfloat16 tensor, or as uint16 bit patterns with
bfloat16=True (the layout FORMAT.md stores). Any other dtype is converted to float32.
"""
from __future__ import annotations

import numpy as np

from . import _lib

FLOAT32, FLOAT16, BFLOAT16 = 0, 1, 2


def _from_torch(x):
    import torch

    x = x.detach().cpu()
    if x.dtype == torch.bfloat16:
        return x.contiguous().view(torch.int16).numpy().view(np.uint16), True
    return x.numpy(), False


def as_matrix(x, name: str, bfloat16: bool = False):
    """(array kept alive, dtype code) for a 2-D input; ValueError naming `name` otherwise."""
    if type(x).__module__.startswith("torch"):
        x, bfloat16 = _from_torch(x)
    x = np.asarray(x)
    if x.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D array (rows, dim), got shape {x.shape}")
    if bfloat16:
        if x.dtype != np.uint16:
            raise ValueError(f"{name}: bfloat16=True needs the uint16 bit patterns, got {x.dtype}")
        return np.ascontiguousarray(x), BFLOAT16
    if x.dtype == np.float16:
        return np.ascontiguousarray(x), FLOAT16
    if x.dtype != np.float32:
        x = x.astype(np.float32)
    return np.ascontiguousarray(x), FLOAT32


def c_array(x: np.ndarray, code: int) -> _lib.Array:
    return _lib.Array(x.ctypes.data, code, x.shape[0], x.shape[1])
