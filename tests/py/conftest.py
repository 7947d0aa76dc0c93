"""Shared by every test here: subprocess timeouts scaled for loaded machines.

MIEB_TEST_TIME_SCALE (default 1) multiplies the `timeout` of every subprocess.run call made by
the tests (a CI machine shared with other runs, a sanitizer build: the programs are slower, not
wrong), and a timeout that still expires says which limit it was: the command, the test's own
limit and the factor. Deadlines the tests compute themselves read the same variable
(test_slurm.py's waits)."""
import os
import subprocess

TIME_SCALE = float(os.environ.get("MIEB_TEST_TIME_SCALE", "1") or 1)
_run = subprocess.run


def _scaled_run(*args, timeout=None, **kw):
    limit = None if timeout is None else timeout * TIME_SCALE
    try:
        return _run(*args, timeout=limit, **kw)
    except subprocess.TimeoutExpired as e:
        e.add_note(f"the test's timeout: {timeout:g} s x MIEB_TEST_TIME_SCALE={TIME_SCALE:g} = {limit:g} s")
        raise


subprocess.run = _scaled_run
