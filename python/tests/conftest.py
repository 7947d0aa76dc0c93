"""The package's tests run against whichever mieb_eval is importable: the source tree's
(ctest sets PYTHONPATH and MIEB_EVAL_LIBRARY to the build's library) or an installed wheel
(scripts/test-wheel.sh, in a fresh virtual environment in a bare chroot)."""
import json
import os
import subprocess
from pathlib import Path

import pytest

TIME_SCALE = float(os.environ.get("MIEB_TEST_TIME_SCALE", "1") or 1)

# A sanitized build's library is loaded with the sanitizer's runtime preloaded (tests/CMakeLists.txt);
# the programs the tests start carry their own runtime, and a second one would refuse to start.
if "asan" in os.environ.get("LD_PRELOAD", ""):
    os.environ["MIEB_SANITIZER_RUNTIME"] = os.environ.pop("LD_PRELOAD")


def python_env() -> dict:
    """The environment of another Python that loads the library: this one's, with the sanitizer's
    runtime preloaded again where the library is a sanitized build's."""
    env = dict(os.environ)
    if env.get("MIEB_SANITIZER_RUNTIME"):
        env["LD_PRELOAD"] = env["MIEB_SANITIZER_RUNTIME"]
    return env


@pytest.fixture(scope="session")
def engine():
    import mieb_eval

    with mieb_eval.Engine("cpu", threads=2) as e:
        yield e


# A small synthetic suite of one retrieval, one probe and one STS task, for the run tests
# (test_run.py, test_run_api.py), and their result files less what changes from run to run.
RUN_TASKS = ["BLINKIT2IRetrieval", "CIFAR10", "STS13VisualSTS"]
RESULT_TIMES = ("evaluation_time", "date", "evaluation_phases")


@pytest.fixture(scope="session")
def run_suite(tmp_path_factory):
    from mieb_eval import _lib

    root = tmp_path_factory.mktemp("suite")
    subprocess.run([str(_lib.program_path()), "synth", "--out", str(root), "--tasks", *RUN_TASKS, "--scale", "0.02"],
                   check=True, capture_output=True)
    return root


def untimed_results(folder) -> dict:
    """A results folder's JSON files by name, each without its times."""
    return {p.name: {k: v for k, v in json.loads(p.read_text()).items() if k not in RESULT_TIMES}
            for p in sorted(Path(folder).glob("*.json"))}
