"""Where the package's native parts are: the C library, the `mieb-eval` program and the task
registry (nothing is loaded here, so the exporter can ask without the library).

In order: the environment ($MIEB_EVAL_LIBRARY, $MIEB_EVAL_PROGRAM: a build's, for
development), the wheel's copies in this package (_native/), and, in a source checkout, its
build/ folder (scripts/build.sh).
"""
from __future__ import annotations

import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
NATIVE = HERE / "_native"
CHECKOUT_BUILD = HERE.parents[1] / "build"  # python/mieb_eval -> <checkout>/build


def library_path() -> Path:
    env = os.environ.get("MIEB_EVAL_LIBRARY")
    if env:
        return Path(env)
    for p in (NATIVE / "lib" / "libmieb.so.0", NATIVE / "lib" / "libmieb.so", CHECKOUT_BUILD / "libmieb.so"):
        if p.exists():
            return p
    raise ImportError(
        f"mieb_eval: the C library is missing (looked in {NATIVE / 'lib'}, {CHECKOUT_BUILD} and "
        "$MIEB_EVAL_LIBRARY); reinstall the package, or build it (scripts/build.sh)")


def program_path() -> Path:
    """The `mieb-eval` program: $MIEB_EVAL_PROGRAM, the wheel's, the one beside
    $MIEB_EVAL_LIBRARY, or the checkout's build/."""
    env = os.environ.get("MIEB_EVAL_PROGRAM")
    if env:
        return Path(env)
    lib = os.environ.get("MIEB_EVAL_LIBRARY")
    for p in (NATIVE / "bin" / "mieb-eval", Path(lib).parent / "mieb-eval" if lib else None,
              CHECKOUT_BUILD / "mieb-eval"):
        if p is not None and os.access(p, os.X_OK):
            return p
    raise FileNotFoundError(f"mieb_eval: the mieb-eval program is missing (looked in {NATIVE / 'bin'}, "
                            f"{CHECKOUT_BUILD}, $MIEB_EVAL_PROGRAM and beside $MIEB_EVAL_LIBRARY)")
