"""mieb_eval: MIEB scoring on arrays and embedding files, with mteb's numbers.

    import mieb_eval
    scores, indices = mieb_eval.search(queries, corpus, top_k=10)   # mteb's search, exactly
    result = mieb_eval.score("CIFAR10", {"train": ..., "eval": ...}, task_data="task-data/")
    mieb_eval.run(export="out/export", benchmarks=["MIEB(lite)"], output_folder="out")
    mieb_eval.summary("out/results", "MIEB(lite)")                   # the leaderboard rows

The engine is the C library of the `mieb-eval` program (include/mieb.h); docs/PYTHON.md
describes the API, and mieb_eval.mteb.SearchIndex plugs it into mteb.evaluate.
"""
__all__ = ["Engine", "search", "score", "run", "summary", "report", "evaluate", "MiebError", "InvalidArgument",
           "BadData", "NotFound", "NoDevice", "DeviceError", "ConfigError", "InternalError", "TasksFailed",
           "__version__"]

# Loaded on first use, so that mieb_eval.export (the exporter, which needs mteb but not the C
# library) imports where the library is not built.
_WHERE = {"Engine": "._engine", "search": "._search", "score": "._score", "run": "._run", "summary": "._board",
          "report": "._board", "evaluate": "._evaluate",
          "MiebError": ".errors", "InvalidArgument": ".errors", "BadData": ".errors", "NotFound": ".errors",
          "NoDevice": ".errors", "DeviceError": ".errors", "ConfigError": ".errors", "InternalError": ".errors",
          "TasksFailed": ".errors"}


# Submodules reached as attributes (mieb_eval.mteb), imported on first use: `import mieb_eval`
# imports neither mteb nor torch, and mieb_eval.mteb imports mteb only when search_wrapper runs.
_SUBMODULES = ("mteb", "export", "errors")


def __getattr__(name: str) -> object:
    import importlib

    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)  # the import binds it here too
    if name == "__version__":
        from ._lib import VERSION

        return VERSION
    if name in _WHERE:
        obj = getattr(importlib.import_module(_WHERE[name], __name__), name)
        globals()[name] = obj  # found directly from now on
        return obj
    raise AttributeError(f"module 'mieb_eval' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*__all__, *_SUBMODULES])
