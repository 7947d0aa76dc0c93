"""The package as a Python user meets it: submodules reached as attributes without importing
mteb or torch up front, type hints on the public functions, and the py.typed marker that
tells type checkers to read them."""
import inspect
import subprocess
import sys
from pathlib import Path

import mieb_eval

from conftest import python_env


def test_submodules_are_attributes_imported_on_first_use():
    code = ("import sys, mieb_eval\n"
            "assert not {'mteb', 'torch', 'mieb_eval.mteb'} & set(sys.modules), sorted(sys.modules)\n"
            "m = mieb_eval.mteb\n"
            "assert m is sys.modules['mieb_eval.mteb'] and callable(m.search_wrapper) and m.SearchIndex\n"
            "assert not {'mteb', 'torch'} & set(sys.modules)\n"
            "assert mieb_eval.errors.BadData is mieb_eval.BadData\n"
            "assert 'mteb' in dir(mieb_eval)\n"
            "try:\n    mieb_eval.nonexistent\nexcept AttributeError as e:\n    print(e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=python_env())
    assert r.returncode == 0, r.stderr
    assert "has no attribute 'nonexistent'" in r.stdout


def test_py_typed_marker_ships_with_the_package():
    assert (Path(mieb_eval.__file__).parent / "py.typed").is_file()


def _public_callables():
    from mieb_eval import mteb as backend

    yield mieb_eval.search
    yield mieb_eval.score
    yield mieb_eval.Engine.__init__
    yield backend.search_wrapper
    for name in ("__init__", "add_documents", "search", "clear"):
        yield getattr(backend.SearchIndex, name)


def test_public_functions_are_annotated():
    missing = []
    for fn in _public_callables():
        sig = inspect.signature(fn)
        missing += [f"{fn.__qualname__}({p})" for p in sig.parameters.values()
                    if p.name != "self" and p.annotation is inspect.Parameter.empty]
        if sig.return_annotation is inspect.Signature.empty:
            missing.append(f"{fn.__qualname__} -> ?")
    assert not missing, missing
    sig = inspect.signature(mieb_eval.search)
    for name in ("queries", "corpus", "similarity", "corpus_ids"):
        assert sig.parameters[name].annotation != inspect.Parameter.empty
