"""The engine: a device and its limits (mieb_engine_new), and how every call into it runs.

A call runs on a worker thread while the calling thread waits in short steps, so that Ctrl-C
(KeyboardInterrupt in the calling thread) reaches the engine: mieb_engine_stop asks the
running call to stop, it returns within about a second with nothing half written, and the
KeyboardInterrupt goes on. The engine's log lines go to the `mieb_eval` logger.
"""
from __future__ import annotations

import ctypes
import logging
import threading

from . import _lib
from .errors import from_status

logger = logging.getLogger("mieb_eval")
_LEVELS = {0: logging.DEBUG, 1: logging.INFO, 2: logging.WARNING, 3: logging.ERROR}


@_lib.LOG_CALLBACK
def _log_line(level, message, _user):
    logger.log(_LEVELS.get(level, logging.INFO), "%s", message.decode("utf-8", "replace"))


# Lines below the level the `mieb_eval` logger takes when the package is imported are not
# even formatted (DEBUG: all of them).
_lib.LIB.mieb_set_logger(_log_line, None, 0 if logger.isEnabledFor(logging.DEBUG) else 1)


def _check(status: int) -> None:
    """Raise the exception for a failed call; the message is read in the thread that failed."""
    if status != 0:
        raise from_status(status, _lib.LIB.mieb_error_message().decode("utf-8", "replace"))


class Engine:
    """A device ("auto", "cpu", "cuda", "cuda:N") with its thread count and memory limit in bytes.

    One call runs at a time per engine (a lock keeps that); make one engine per thread to run
    calls side by side. `close()` (or the `with` block's end) releases the device.
    """

    def __init__(self, device: str = "auto", threads: int = 0, mem_limit: int = 0,
                 registry: str | None = None) -> None:
        handle = ctypes.c_void_p()
        status = _lib.LIB.mieb_engine_new(device.encode(), int(threads), int(mem_limit),
                                          registry.encode() if registry else None, ctypes.byref(handle))
        _check(status)
        self._free = _lib.LIB.mieb_engine_free  # kept: at interpreter exit, module globals may be gone
        self._handle = handle
        self._lock = threading.Lock()
        self.device = _lib.LIB.mieb_engine_device(handle).decode()

    def close(self) -> None:
        """Release the device; waits for a call running on another thread to return."""
        if getattr(self, "_handle", None):
            with self._lock:
                self._free(self._handle)
                self._handle = None

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self):
        self.close()

    def __repr__(self) -> str:
        return f"Engine(device={self.device!r})"

    def call(self, fn, *args, progress=None) -> None:
        """fn(handle, *args) on a worker thread; Ctrl-C in this thread stops it (see the module).
        progress: a _progress.Progress's callback for this call, or None."""
        if not self._handle:
            raise ValueError("the engine is closed")
        result = {}
        began, done = threading.Event(), threading.Event()

        def work():
            began.set()
            try:
                status = fn(self._handle, *args)
                result["status"] = status
                if status != 0:
                    result["message"] = _lib.LIB.mieb_error_message().decode("utf-8", "replace")
            finally:
                done.set()

        # The wait is on an Event, not Thread.join: a KeyboardInterrupt inside join() can mark a
        # running thread stopped (CPython's _wait_for_tstate_lock), and the arrays the call reads
        # must outlive it.
        with self._lock:
            _lib.LIB.mieb_engine_set_progress(self._handle, progress or _lib.PROGRESS_CALLBACK(), None)
            worker = threading.Thread(target=work, name="mieb_eval-call", daemon=True)
            try:
                worker.start()
                while not done.wait(0.05):
                    pass
            except KeyboardInterrupt:
                # a stop before the call began stops it at its start; one after it returned is
                # withdrawn, so that the next call does not take it
                _lib.LIB.mieb_engine_stop(self._handle)
                # a Ctrl-C inside start() may come before the thread runs: give it a moment
                while (began.is_set() or began.wait(1.0)) and not done.is_set():
                    try:
                        done.wait()
                    except KeyboardInterrupt:
                        pass  # the stop is on its way: the call returns within about a second
                _lib.LIB.mieb_engine_stop_clear(self._handle)
                raise
            finally:
                if done.is_set():
                    _lib.LIB.mieb_engine_set_progress(self._handle, _lib.PROGRESS_CALLBACK(), None)
        if result.get("status", 0) != 0:
            raise from_status(result["status"], result["message"])


_default: dict[tuple, Engine] = {}


def engine_for(device: str = "auto", threads: int = 0, mem_limit: int = 0) -> Engine:
    """A shared engine per (device, threads, mem_limit), made on first use."""
    key = (device, threads, mem_limit)
    if key not in _default:
        _default[key] = Engine(device, threads, mem_limit)
    return _default[key]
