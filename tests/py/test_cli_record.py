"""Every recorded command line (tests/cli_record/cases.txt: each command's help, usage errors,
bad values of every kind, mteb's spellings and valid runs on a tiny synthetic suite) prints
and returns what the recording (expected.txt) says, up to clock times and the scratch path:
the option tables that parse the command line must not change what a command line does.
After a deliberate change, `python tests/cli_record/runner.py BUILD_DIR --record` rewrites
the recording, and its diff shows what changed."""
import sys
from pathlib import Path

from helpers.mieb_tools import build_dir

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli_record"))
import runner  # noqa: E402  (tests/cli_record/runner.py)


def test_recorded_command_lines():
    diffs = runner.compare(build_dir() / "mieb-eval")
    assert not diffs, f"{len(diffs)} command line(s) differ from tests/cli_record/expected.txt:\n" + "\n".join(diffs)
