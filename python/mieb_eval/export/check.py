"""The check of one encode call's output before anything of it is written.

A model's output is kept only when it is a two-dimensional array of numbers with one row per
item the call was given, the width of every other call of the task's roles, and a finite
value in every cell once stored in the export's dtype. A call that fails is refused as a
whole (EncodeRefused): the role keeps only the calls before it, which passed this check, so
running the same command again encodes the role from the refused call on. mteb itself does
not compare the output with the model's declared embed_dim; a disagreement is warned about
once and the vectors are kept as returned, as mteb scores them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

logger = logging.getLogger("mieb_eval.export")

# The largest finite value of each stored dtype: a float32 value beyond it is stored as Inf.
_DTYPE_MAX = {"float32": float(np.finfo(np.float32).max), "float16": 65504.0,
              "bfloat16": float(np.finfo(np.float32).max)}


class EncodeRefused(Exception):
    """A model's encode call, or its output, cannot be kept; the role is left unfinished."""


class WidthConflict(EncodeRefused):
    """The call's vectors have another width than the task's rows kept so far. Which of the two
    is wrong is for the caller to judge (the declared embed_dim can tell)."""

    def __init__(self, call: Call, got: int, kept: int) -> None:
        super().__init__(f"{call.where()}: the model returned vectors of width {got}, the task's rows kept so "
                         f"far have width {kept}")
        self.call, self.got, self.kept = call, got, kept


@dataclass
class Call:
    """Where an encode call belongs: the model, the task, the role and the call's rows."""

    model: str
    task: str
    role: str  # split/subset/role
    index: int  # 1-based, among the role's calls
    n_calls: int
    row_start: int  # the call's first row in the role
    n_items: int

    def where(self) -> str:
        return (f"model {self.model}, task {self.task}, role {self.role}, encode call {self.index} of "
                f"{self.n_calls} (rows {self.row_start}..{self.row_start + self.n_items - 1} of the role)")

    def refuse(self, what: str, rerun: str = "re-encodes this role from this call on (its earlier calls "
               "passed this check and are kept)") -> EncodeRefused:
        return EncodeRefused(f"{self.where()}: {what}; nothing of this call was kept. Rerunning the same command "
                             f"{rerun}")

    def at(self, r: int, c: int) -> str:
        return f"row {self.row_start + r} (item {r} of this call), column {c}"


def _as_array(emb: Any, call: Call) -> np.ndarray:
    """The output as a numpy array of numbers (torch tensors of any float dtype included)."""
    if emb is None:
        raise call.refuse("the model returned None")
    if hasattr(emb, "detach") and hasattr(emb, "cpu"):  # a torch tensor: bfloat16 has no numpy type
        t = emb.detach().cpu()
        emb = t.float().numpy() if t.is_floating_point() else t.numpy()
    try:
        x = np.asarray(emb)
    except (ValueError, TypeError) as e:  # ragged lists
        raise call.refuse(f"the model returned a {type(emb).__name__} that is not an array ({e})") from None
    if x.dtype.kind not in "fiu":
        raise call.refuse(f"the model returned a {type(emb).__name__} of {x.dtype} values, not numbers"
                          f" (shape {x.shape})")
    return x


def check_call(emb: Any, call: Call, width: int | None, dtype: str) -> np.ndarray:
    """The call's output as float32 [n_items, width], or EncodeRefused naming what is wrong.

    width: the width of the task's rows kept so far (None: this is its first call)."""
    x = _as_array(emb, call)
    if x.ndim != 2:
        kind = ("multi-vector (late-interaction) output is not supported" if x.ndim == 3
                else "one vector per item ([n, D]) is expected")
        raise call.refuse(f"the model returned a {x.ndim}-D array of shape {x.shape}: {kind}")
    if x.shape[0] != call.n_items:
        raise call.refuse(f"the model returned {x.shape[0]} rows for the {call.n_items} items it was given")
    if x.shape[1] < 1:
        raise call.refuse("the model returned vectors of width 0")
    if width is not None and x.shape[1] != width:
        raise WidthConflict(call, int(x.shape[1]), width)
    with np.errstate(over="ignore", invalid="ignore"):
        f32 = np.ascontiguousarray(x, dtype=np.float32)
    bad = ~np.isfinite(f32)
    if bad.any():
        r, c = (int(v) for v in np.argwhere(bad)[0])
        was = x[r, c]
        what = ("NaN" if np.isnan(was) else f"{float(was)!r}" if np.isfinite(was) else "Inf" if was > 0 else "-Inf")
        extra = " (beyond float32's range)" if np.isfinite(was) else ""
        raise call.refuse(f"{call.at(r, c)} holds {what}{extra}, and {int(bad.any(axis=1).sum())} row(s) of "
                          f"the call hold a value that is not finite")
    big = np.abs(f32) > _DTYPE_MAX[dtype]
    if big.any():
        r, c = (int(v) for v in np.argwhere(big)[0])
        raise call.refuse(f"{call.at(r, c)} holds {float(f32[r, c])!r}, beyond {dtype}'s largest value "
                          f"{_DTYPE_MAX[dtype]:g}: stored as {dtype} it would be Inf (store as float32)")
    return f32


def declared_widths(d: Any) -> tuple[int, ...]:
    """The widths a ModelMeta's embed_dim declares: one, several (Matryoshka), or none."""
    if isinstance(d, int) and not isinstance(d, bool):
        return (d,)
    if isinstance(d, Sequence) and not isinstance(d, str):
        return tuple(v for v in d if isinstance(v, int) and not isinstance(v, bool))
    return ()


class DeclaredWidth:
    """Warns once when the output disagrees with the declared embed_dim (mteb keeps it as is)."""

    def __init__(self, embed_dim: Any) -> None:
        self.widths = declared_widths(embed_dim)
        self.warned = False

    def see(self, width: int, call: Call) -> None:
        if self.widths and width not in self.widths and not self.warned:
            self.warned = True
            said = self.widths[0] if len(self.widths) == 1 else list(self.widths)
            logger.warning("model %s declares embed_dim %s but returns vectors of width %d (task %s, role %s); "
                           "they are kept as returned, as mteb scores them", call.model, said, width, call.task,
                           call.role)
