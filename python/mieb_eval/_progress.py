"""Progress of a call: a tqdm bar on a terminal by default, a callable of the caller's, or none.

The engine reports (done, total) from the thread doing the work (mieb_engine_set_progress);
the bar is drawn from there too, which tqdm allows.
"""
from __future__ import annotations

import sys

from . import _lib


def _default_bar(desc: str, unit: str):
    if not sys.stderr.isatty():
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(desc=desc, unit=unit, unit_scale=True, leave=False)


class Progress:
    """progress: None (a bar on a terminal, when tqdm is installed), False (none), or a
    callable(done, total). Use as a context manager around the call; .callback is what the
    engine calls (None when nobody listens)."""

    def __init__(self, progress, desc: str, unit: str):
        self._bar = None
        self._fn = None
        if progress is None:
            self._bar = _default_bar(desc, unit)
            if self._bar is not None:
                self._fn = self._update_bar
        elif progress is not False:
            if not callable(progress):
                raise TypeError(f"progress must be None, False or a callable(done, total), not {progress!r}")
            self._fn = progress
        self.callback = _lib.PROGRESS_CALLBACK(self._report) if self._fn else None

    def _update_bar(self, done: int, total: int) -> None:
        if self._bar.total != total:
            self._bar.total = total
        self._bar.n = done
        self._bar.refresh()

    def _report(self, done, total, _user):
        try:
            self._fn(int(done), int(total))
        except Exception:  # a failing callback must not unwind through C
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.close()
