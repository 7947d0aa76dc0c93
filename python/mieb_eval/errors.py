"""Exceptions: one per status of the C library (include/mieb.h), each carrying its message."""
from __future__ import annotations


class MiebError(Exception):
    """A call into the engine failed; str(e) is the engine's message (file, array, what is wrong)."""

    status = -1

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        if status is not None:
            self.status = status


class InvalidArgument(MiebError, ValueError):
    status = 1


class OutOfMemory(MiebError, MemoryError):
    status = 2


class TooLarge(MiebError):
    status = 3


class IOFailure(MiebError, OSError):
    status = 4


class HDF5Error(MiebError):
    status = 5


class BadData(MiebError, ValueError):
    """The data breaks the contract: NaN or Inf rows, task data that does not fit its embeddings."""

    status = 6


class ConfigError(MiebError):
    status = 7


class DeviceError(MiebError):
    """CUDA or cuBLAS failed (statuses 8 and 9)."""

    status = 8


class Unsupported(MiebError):
    status = 10


class NoDevice(MiebError):
    """device="cuda" asked for, and no usable GPU (or a build without CUDA)."""

    status = 11


class NotFound(MiebError, FileNotFoundError):
    status = 13


class InternalError(MiebError):
    status = 14


class TasksFailed(MiebError):
    """mieb_eval.evaluate: some task was not exported or scored (the tools' exit status 1); the
    others were, and their files, summary and report are written. failed: why, by task name;
    results: the mteb.TaskResult of each task that was scored."""

    def __init__(self, failed: dict, results: list):
        names = ", ".join(sorted(failed))
        super().__init__(f"{len(failed)} task(s) not exported or scored: {names} (each one's reason is in .failed; "
                         "the others' results are in .results); run the same call again once the cause is fixed")
        self.failed = dict(failed)
        self.results = list(results)


_BY_STATUS = {c.status: c for c in (InvalidArgument, OutOfMemory, TooLarge, IOFailure, HDF5Error, BadData,
                                    ConfigError, DeviceError, Unsupported, NoDevice, NotFound, InternalError)}
_BY_STATUS[9] = DeviceError


def from_status(status: int, message: str) -> BaseException:
    """The exception for a failed call; an interrupted one (12) is Python's KeyboardInterrupt."""
    if status == 12:
        return KeyboardInterrupt(message)
    return _BY_STATUS.get(status, MiebError)(message, status)
