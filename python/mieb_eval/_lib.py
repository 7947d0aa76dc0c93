"""The C library (include/mieb.h) through ctypes: found (_paths.py), loaded once, its
functions typed. ctypes releases the GIL for the whole of each call, so other Python threads
run while the engine works.
"""
from __future__ import annotations

import ctypes

from ._paths import NATIVE, library_path, program_path  # noqa: F401 (program_path: for callers)
from ._structs import Array, RoleArray, SearchRequest  # noqa: F401 (for callers)


LOG_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)
PROGRESS_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)


def _load() -> ctypes.CDLL:
    lib = ctypes.CDLL(str(library_path()))
    c = ctypes
    sigs = {
        "mieb_version": (c.c_char_p, []),
        "mieb_status_name": (c.c_char_p, [c.c_int]),
        "mieb_error_message": (c.c_char_p, []),
        "mieb_free": (None, [c.c_void_p]),
        "mieb_set_logger": (None, [LOG_CALLBACK, c.c_void_p, c.c_int]),
        "mieb_engine_new": (c.c_int, [c.c_char_p, c.c_int, c.c_int64, c.c_char_p, c.POINTER(c.c_void_p)]),
        "mieb_engine_free": (None, [c.c_void_p]),
        "mieb_engine_device": (c.c_char_p, [c.c_void_p]),
        "mieb_engine_set_progress": (None, [c.c_void_p, PROGRESS_CALLBACK, c.c_void_p]),
        "mieb_engine_stop": (None, [c.c_void_p]),
        "mieb_engine_stop_clear": (None, [c.c_void_p]),
        "mieb_search": (c.c_int, [c.c_void_p, c.POINTER(SearchRequest), c.c_void_p, c.c_void_p, c.c_void_p]),
        "mieb_score_task": (c.c_int, [c.c_void_p, c.c_char_p, c.c_char_p, c.POINTER(RoleArray), c.c_int,
                                      c.c_int32, c.c_char_p, c.POINTER(c.c_void_p)]),
        "mieb_run_request_new": (c.c_int, [c.POINTER(c.c_void_p)]),
        "mieb_run_request_set": (c.c_int, [c.c_void_p, c.c_char_p, c.c_char_p]),
        "mieb_run_request_free": (None, [c.c_void_p]),
        "mieb_run": (c.c_int, [c.c_void_p, c.c_void_p, c.POINTER(c.c_void_p), c.POINTER(c.c_void_p)]),
        "mieb_summary": (c.c_int, [c.c_void_p, c.POINTER(c.c_char_p), c.c_int, c.c_char_p, c.c_char_p, c.c_char_p,
                                   c.c_char_p, c.POINTER(c.c_void_p), c.POINTER(c.c_void_p), c.POINTER(c.c_int)]),
        "mieb_report": (c.c_int, [c.c_void_p, c.POINTER(c.c_char_p), c.c_int, c.c_char_p, c.c_char_p, c.c_char_p,
                                  c.c_int, c.c_char_p, c.POINTER(c.c_int)]),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args
    return lib


LIB = _load()
VERSION = LIB.mieb_version().decode()
