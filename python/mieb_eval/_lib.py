"""The C library (include/mieb.h) through ctypes: found (_paths.py), loaded once, its
functions typed. ctypes releases the GIL for the whole of each call, so other Python threads
run while the engine works.
"""
from __future__ import annotations

import ctypes

from ._paths import NATIVE, library_path, program_path  # noqa: F401 (program_path: for callers)


class Array(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32), ("rows", ctypes.c_int64),
                ("dim", ctypes.c_int64)]


class SearchRequest(ctypes.Structure):
    _fields_ = [("queries", Array), ("corpus", Array), ("corpus_ids", ctypes.POINTER(ctypes.c_char_p)),
                ("similarity", ctypes.c_int32), ("top_k", ctypes.c_int64),
                ("cand_indptr", ctypes.c_void_p), ("cand_doc", ctypes.c_void_p), ("order", ctypes.c_int32)]


class RoleArray(ctypes.Structure):
    _fields_ = [("split", ctypes.c_char_p), ("subset", ctypes.c_char_p), ("role", ctypes.c_char_p),
                ("emb", Array), ("offsets", ctypes.c_void_p), ("row_index", ctypes.c_void_p)]


class RunRequest(ctypes.Structure):
    _fields_ = [("task_data", ctypes.c_char_p), ("embeddings", ctypes.c_char_p), ("output_folder", ctypes.c_char_p),
                ("tasks", ctypes.POINTER(ctypes.c_char_p)), ("n_tasks", ctypes.c_int32),
                ("benchmarks", ctypes.POINTER(ctypes.c_char_p)), ("n_benchmarks", ctypes.c_int32),
                ("task_types", ctypes.POINTER(ctypes.c_char_p)), ("n_task_types", ctypes.c_int32),
                ("eval_splits", ctypes.POINTER(ctypes.c_char_p)), ("n_eval_splits", ctypes.c_int32),
                ("languages", ctypes.POINTER(ctypes.c_char_p)), ("n_languages", ctypes.c_int32),
                ("shard_index", ctypes.c_int32), ("num_shards", ctypes.c_int32),
                ("model", ctypes.c_char_p), ("model_revision", ctypes.c_char_p),
                ("overwrite_strategy", ctypes.c_char_p), ("similarity", ctypes.c_int32),
                ("per_query_dir", ctypes.c_char_p), ("kmeans_full", ctypes.c_int32), ("probe_cpu", ctypes.c_int32)]


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
        "mieb_run": (c.c_int, [c.c_void_p, c.POINTER(RunRequest), c.POINTER(c.c_void_p), c.POINTER(c.c_void_p)]),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args
    return lib


LIB = _load()
VERSION = LIB.mieb_version().decode()
