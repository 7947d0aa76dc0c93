"""The package's tests run against whichever mieb_eval is importable: the source tree's
(ctest sets PYTHONPATH and MIEB_EVAL_LIBRARY to the build's library) or an installed wheel
(scripts/test-wheel.sh, in a fresh virtual environment in a bare chroot)."""
import os

import pytest

TIME_SCALE = float(os.environ.get("MIEB_TEST_TIME_SCALE", "1") or 1)

# A sanitized build's library is loaded with the sanitizer's runtime preloaded (tests/CMakeLists.txt);
# the programs the tests start carry their own runtime, and a second one would refuse to start.
if "asan" in os.environ.get("LD_PRELOAD", ""):
    del os.environ["LD_PRELOAD"]


@pytest.fixture(scope="session")
def engine():
    import mieb_eval

    with mieb_eval.Engine("cpu", threads=2) as e:
        yield e
