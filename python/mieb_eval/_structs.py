"""The structs of include/mieb.h as ctypes sees them, apart from the library so that they can be
checked without loading it: tests/py/test_api.py compiles each C struct's offsets and sizes from
the header and holds every mirror here to them, field by field (MIRRORS: the C name of each).
"""
from __future__ import annotations

import ctypes


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


# struct name in include/mieb.h -> its mirror; every struct the header defines is here
MIRRORS = {"mieb_array": Array, "mieb_search_request": SearchRequest, "mieb_role_array": RoleArray}
