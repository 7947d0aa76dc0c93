"""mieb_eval: MIEB scoring on arrays and embedding files, with mteb's numbers.

    import mieb_eval
    scores, indices = mieb_eval.search(queries, corpus, top_k=10)   # mteb's search, exactly
    result = mieb_eval.score("CIFAR10", {"train": ..., "eval": ...}, task_data="task-data/")
    mieb_eval.run(export="out/export", benchmarks=["MIEB(lite)"], output_folder="out")

The engine is the C library of the `mieb-eval` program (include/mieb.h); docs/PYTHON.md
describes the API, and mieb_eval.mteb.SearchIndex plugs it into mteb.evaluate.
"""
from ._engine import Engine
from ._lib import VERSION as __version__
from .errors import (BadData, ConfigError, DeviceError, InternalError, InvalidArgument, MiebError, NoDevice,
                     NotFound)
from .run import run
from .score import score
from .search import search

__all__ = ["Engine", "search", "score", "run", "MiebError", "InvalidArgument", "BadData", "NotFound", "NoDevice",
           "DeviceError", "ConfigError", "InternalError", "__version__"]
