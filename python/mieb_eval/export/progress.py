"""Progress of an export on stderr: per task and role, items done, items/s and ETA.

On a terminal one line is redrawn in place; otherwise (batch logs) a plain line is printed
every `interval` seconds and when a role ends. A task ends with a closing line: items
encoded and seconds. The counts come from the batches the model reads from mteb's
DataLoader (export._record_keys), so nothing about what is encoded changes.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

MODES = ("auto", "tty", "plain", "off")


def _fmt_secs(s: float) -> str:
    s = int(round(s))
    if s >= 3600:
        return f"{s // 3600}h{(s % 3600) // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


class Progress:
    """Receives the export's events (export.export(progress=...)). Subclass to observe them."""

    def __init__(self, mode: str = "auto", interval: float = 30.0, stream: TextIO | None = None,
                 clock: Any = time.monotonic) -> None:
        if mode not in MODES:
            raise ValueError(f"progress mode must be one of {MODES}, not {mode!r}")
        self.stream = stream or sys.stderr
        if mode == "auto":
            mode = "tty" if getattr(self.stream, "isatty", lambda: False)() else "plain"
        self.mode, self.interval, self.clock = mode, float(interval), clock
        self.n_tasks = 0
        self.task_i = 0
        self.task = ""
        self._live = False  # a redrawn line is on screen

    # ---- output ----
    def _line(self, text: str) -> None:
        if self.mode == "off":
            return
        if self._live:
            self.stream.write("\r\x1b[K")
            self._live = False
        self.stream.write(text + "\n")
        self.stream.flush()

    def message(self, text: str) -> None:
        """A line of its own (start, task end), also in 'off' mode's absence of progress lines."""
        if self.mode == "off":
            return
        self._line(f"mieb-export: {text}")

    # ---- events ----
    def start(self, n_tasks: int, device: str, dtype: str) -> None:
        self.n_tasks = n_tasks
        self.message(f"encoding {n_tasks} task(s) on {device}; embeddings stored as {dtype}")

    def task_start(self, name: str) -> None:
        self.task_i += 1
        self.task = name
        self.t_task = self.clock()
        self.task_items = 0

    def role_start(self, split: str, subset: str, role: str, done: int, total: int) -> None:
        self.role = f"{split}/{subset}/{role}" if subset != "default" else f"{split}/{role}"
        self.done, self.total, self.start_done = done, total, done
        self.t_role = self.clock()
        self.t_last = self.t_role
        self.drawn = -1  # the count on the last plain line

    def advance(self, n: int) -> None:
        """n more items were read by the model."""
        self.done += n
        self.task_items += n
        now = self.clock()
        if self.mode == "tty" and now - self.t_last >= 0.2:
            self._draw(now, live=True)
            self.t_last = now
        elif self.mode == "plain" and now - self.t_last >= self.interval:
            self._draw(now, live=False)
            self.t_last = now

    def segment_done(self) -> None:
        """One of mteb's encode calls was written and recorded (a resume starts after it)."""

    def role_end(self) -> None:
        if self.mode != "off" and self.done > self.start_done and (self.mode == "tty" or self.drawn != self.done):
            self._draw(self.clock(), live=False)

    def task_end(self, name: str, items: int, skipped: bool) -> None:
        secs = self.clock() - self.t_task
        if skipped:
            self.message(f"[{self.task_i}/{self.n_tasks}] {name}: already exported")
        else:
            rate = f", {items / secs:.1f} items/s" if secs > 0 else ""
            self.message(f"[{self.task_i}/{self.n_tasks}] {name}: {items} items encoded in {secs:.1f} s{rate}")

    def finish(self) -> None:
        if self._live:
            self.stream.write("\n")
            self.stream.flush()
            self._live = False

    def _draw(self, now: float, live: bool) -> None:
        secs = now - self.t_role
        new = self.done - self.start_done
        rate = new / secs if secs > 0 else 0.0
        left = self.total - self.done
        eta = _fmt_secs(left / rate) if rate > 0 else "?"
        pct = 100.0 * self.done / self.total if self.total else 100.0
        text = (f"mieb-export: [{self.task_i}/{self.n_tasks}] {self.task} {self.role}: "
                f"{self.done}/{self.total} items ({pct:.0f}%), {rate:.1f} items/s, ETA {eta}")
        if live:
            self.stream.write("\r\x1b[K" + text)
            self.stream.flush()
            self._live = True
        else:
            self._line(text)
            self.drawn = self.done
