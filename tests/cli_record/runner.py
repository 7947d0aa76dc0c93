"""The recorded command lines (cases.txt) and what mieb-eval printed for them (expected.txt).

Each line of cases.txt is one command line of mieb-eval, words as a POSIX shell splits them,
run in order in one scratch folder T ({T} in a line stands for it: later lines read what
earlier ones wrote, e.g. the synthetic suite). For each, the exit status, stdout and stderr
are kept, with what differs from one run to the next replaced by a mark: the scratch
folder's path ({T}), clock times, durations and rates. The command line is the contract:
expected.txt was written by the binary before its option parsing was rebuilt on one table,
and any change in what a command line prints or returns shows here.

    python tests/cli_record/runner.py BUILD_DIR            compare (exit 1 on a difference)
    python tests/cli_record/runner.py BUILD_DIR --record   write expected.txt from BUILD_DIR
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
END = "=== end of case\n"  # closes each case in expected.txt
NO_ARGS = "(no arguments)"  # a line of cases.txt that runs mieb-eval alone

# What varies between two runs of the same command line: (pattern, mark), applied in order.
VARYING = [
    (re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?Z?"), "<TIME>"),  # log and file times
    (re.compile(r"\d+(\.\d+)? (subsets|items|tasks)/s"), r"<N> \2/s"),     # progress rates
    (re.compile(r"(elapsed|ETA) \d+:\d\d(:\d\d)?"), r"\1 <T>"),           # progress clocks
    (re.compile(r"\b\d+\.\d+ ?(s|ms)\b"), r"<N> \1"),                     # durations
    (re.compile(r"\d{8}T\d{6}Z?(-\d+)?"), "<TIME>"),                      # manifests, kept bad files
    (re.compile(r"\.tmp\.[^./]+\.\d+"), ".tmp.<HOST>.<PID>"),              # atomic writes' temp files
    (re.compile(r"(mieb-eval \d+\.\d+\.\d+) \([0-9a-f]{7,40}[^)]*\)"), r"\1 (<COMMIT>)"),  # the build's commit
    (re.compile(r'"(seconds|evaluation_time)":\s*[0-9.e+-]+'), r'"\1":<N>'),  # times in JSON records
]


def cases():
    """The command lines of cases.txt: (line number, words), comments and blank lines left out."""
    out = []
    for no, line in enumerate((HERE / "cases.txt").read_text().splitlines(), 1):
        if line.strip() and not line.lstrip().startswith("#"):
            out.append((no, line.strip()))
    return out


def normalise(text, scratch):
    text = text.replace(str(scratch), "{T}")
    for pat, mark in VARYING:
        text = pat.sub(mark, text)
    return text


def env():
    """The environment of every run: no MIEB_* setting of the caller's, no terminal, C locale."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("MIEB_") or k == "MIEB_TEST_TIME_SCALE"}
    e.update(LC_ALL="C", TERM="dumb", COLUMNS="80")
    return e


def run_all(binary, timeout=120.0):
    """Every case run by `binary` in a fresh scratch folder: the text expected.txt holds."""
    blocks = []
    with tempfile.TemporaryDirectory(prefix="mieb-cli-record-") as tmp:
        scratch = Path(tmp).resolve()
        for no, line in cases():
            words = [] if line == NO_ARGS else shlex.split(line.replace("{T}", str(scratch)))
            r = subprocess.run([str(binary), *words], cwd=scratch, env=env(), capture_output=True,
                               stdin=subprocess.DEVNULL, timeout=timeout)
            out = normalise(r.stdout.decode("utf-8", "backslashreplace"), scratch)
            err = normalise(r.stderr.decode("utf-8", "backslashreplace"), scratch)
            blocks.append(f"$ mieb-eval {line}\n[exit {r.returncode}]\n--- stdout\n{out}--- stderr\n{err}")
    return blocks


def compare(binary):
    """The cases whose output differs from expected.txt, each with its first differing lines."""
    want = (HERE / "expected.txt").read_text().split(END)[:-1]
    got = run_all(binary)
    diffs = []
    if len(want) != len(got):
        diffs.append(f"{len(got)} cases run, {len(want)} recorded: rerun with --record after changing cases.txt")
    for w, g in zip(want, got):
        if w != g:
            wl, gl = w.splitlines(), g.splitlines()
            k = next((i for i in range(min(len(wl), len(gl))) if wl[i] != gl[i]), min(len(wl), len(gl)))
            diffs.append(f"{gl[0]}\n  recorded: {wl[k] if k < len(wl) else '<end>'}\n"
                         f"  now:      {gl[k] if k < len(gl) else '<end>'}")
    return diffs


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2
    binary = (Path(argv[1]) / "mieb-eval").resolve()
    if "--record" in argv[2:]:
        (HERE / "expected.txt").write_text("".join(b + END for b in run_all(binary)))
        print(f"{HERE / 'expected.txt'}: {len(cases())} cases recorded")
        return 0
    diffs = compare(binary)
    print("\n".join(diffs) if diffs else f"{len(cases())} cases as recorded")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
