"""Bad input through the command line: every case names the file and the dataset at fault,
exits with status 1, writes no result for the broken task, and still scores the good one."""
from __future__ import annotations

import os
import shutil

import h5py
import numpy as np
import pytest

from helpers import fmt_writer as fw
from test_retrieval_e2e import build_task, result_path, run_mieb

GOOD, BAD = "CIRRIT2IRetrieval", "Flickr30kT2IRetrieval"


def make(tmp):
    rng = np.random.default_rng(3)
    td, ed, _ = build_task(tmp, rng, GOOD, 10, 50, 8)
    build_task(tmp, rng, BAD, 10, 50, 8, shards=2)
    return td, ed


def emb(ed, role, shard=None):
    d = os.path.join(ed, BAD, "test", "default")
    return os.path.join(d, f"{role}.h5" if shard is None else f"{role}-{shard:05d}-of-00002.h5")


def break_dim(td, ed):
    with h5py.File(emb(ed, "queries"), "r+") as f:
        x = f["embeddings"][:]
        del f["embeddings"]
        f.create_dataset("embeddings", data=np.zeros((x.shape[0], x.shape[1] + 1), np.float32))
        f.attrs["dim"] = x.shape[1] + 1
    return "queries.h5", "dimension"


def break_qrels(td, ed):
    with h5py.File(os.path.join(td, f"{BAD}.h5"), "r+") as f:
        f["test/default/qrels_doc"][0] = 10_000
    return f"{BAD}.h5", "qrels_doc"


def break_nan(td, ed):
    with h5py.File(emb(ed, "queries"), "r+") as f:
        f["embeddings"][3, 1] = np.nan
    return "queries.h5", "embeddings"


def break_inf(td, ed):
    with h5py.File(emb(ed, "corpus", 1), "r+") as f:
        f["embeddings"][0, 0] = np.inf
    return "corpus-00001-of-00002.h5", "embeddings"


def break_missing_role(td, ed):
    os.remove(emb(ed, "queries"))
    return "queries", "queries"


def break_overlap(td, ed):
    with h5py.File(emb(ed, "corpus", 1), "r+") as f:
        f.attrs["row_start"] = np.int64(f.attrs["row_start"] - 1)
    return "corpus-0000", "row_start"


def break_gap(td, ed):
    """Shard 1 claims to start one row later than shard 0 ends: row 25 is covered by no shard."""
    with h5py.File(emb(ed, "corpus", 1), "r+") as f:
        f.attrs["row_start"] = np.int64(f.attrs["row_start"] + 1)
    return "corpus-0000", "row"


def break_short_role(td, ed):
    """The shards cover fewer rows than the task has corpus ids."""
    with h5py.File(emb(ed, "corpus", 1), "r+") as f:
        x = f["embeddings"][:-1]
        del f["embeddings"]
        f.create_dataset("embeddings", data=x)
        f.attrs["n_rows"] = np.int64(x.shape[0])
    return "corpus-0000", "corpus_ids"


def break_format(td, ed):
    with h5py.File(os.path.join(td, f"{BAD}.h5"), "r+") as f:
        f.attrs["format"] = "something-else"
    return f"{BAD}.h5", "format"


def break_truncated(td, ed):
    p = emb(ed, "corpus", 0)
    size = os.path.getsize(p)
    with open(p, "r+b") as f:
        f.truncate(size // 2)
    return "corpus-00000-of-00002.h5", ""


CASES = [break_dim, break_qrels, break_nan, break_inf, break_missing_role, break_overlap, break_gap,
         break_short_role, break_format, break_truncated]


@pytest.mark.parametrize("breaker", CASES, ids=[c.__name__ for c in CASES])
def test_bad_input(tmp_path, breaker):
    td, ed = make(str(tmp_path))
    fname, dataset = breaker(td, ed)
    out = str(tmp_path / "out")
    p = run_mieb(td, ed, out, [GOOD, BAD], check=False)
    assert p.returncode == 1, p.stderr
    assert fname in p.stderr, p.stderr
    assert dataset.lower() in p.stderr.lower(), p.stderr
    assert BAD in p.stderr
    assert not os.path.exists(result_path(out, BAD))
    assert os.path.exists(result_path(out, GOOD))
    leftovers = [f for f in os.listdir(os.path.dirname(result_path(out, GOOD))) if ".tmp" in f]
    assert not leftovers


def test_unknown_task_is_usage_error(tmp_path):
    td, ed = make(str(tmp_path))
    p = run_mieb(td, ed, str(tmp_path / "o"), ["NoSuchTask"], check=False)
    assert p.returncode == 2 and "NoSuchTask" in p.stderr


def test_values_past_an_options_capacity_are_refused(tmp_path):
    """run -b holds 16 benchmarks and summary 256 result folders: one more is a usage error
    naming the option, never a value silently dropped (a run that scores less than asked)."""
    import subprocess
    from test_retrieval_e2e import BIN
    td, ed = make(str(tmp_path))
    bench = [w for _ in range(17) for w in ("-b", "MIEB(lite)")]
    p = subprocess.run([BIN, "run", "--task-data", td, "--embeddings", ed, "--output-folder", str(tmp_path / "o"),
                        *bench], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "too many values for -b (at most 16)" in p.stderr, p.stderr
    p = subprocess.run([BIN, "summary", *[str(tmp_path / f"r{i}") for i in range(257)]], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 2 and "at most 256 result folders" in p.stderr, p.stderr


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="a GPU is present")
def test_cuda_without_gpu_is_clear_error(tmp_path):
    td, ed = make(str(tmp_path))
    import subprocess
    from test_retrieval_e2e import BIN
    p = subprocess.run([BIN, "run", "--task-data", td, "--embeddings", ed, "-t", GOOD, "--output-folder",
                        str(tmp_path / "o"), "--device", "cuda"], capture_output=True, text=True)
    assert p.returncode == 3, p.stderr
    assert "cuda" in p.stderr.lower()


# ---- command-line values: every command refuses a bad value with exit 2, naming the option ----

def _suite(tmp):
    td, ed = make(str(tmp))
    (tmp / "a-file").write_text("x")
    return td, ed


# (command, arguments, option the message names); {td} {ed} {tmp} are filled in per test.
RUN = ["run", "--task-data", "{td}", "--embeddings", "{ed}", "-t", GOOD, "--output-folder", "{tmp}/o"]
MERGE = ["merge", "--partials-dir", "{tmp}", "--task-data", "{td}", "--embeddings", "{ed}", "--output-folder",
         "{tmp}/m", "-t", GOOD]
BAD_VALUES = [
    # --mem-limit: nan and 1e30 were undefined behaviour (a float cast to an integer it does not
    # fit), 0.4 became 0 bytes and so silently half of RAM
    (RUN + ["--mem-limit", "nan"], "--mem-limit"),
    (RUN + ["--mem-limit", "1e30"], "--mem-limit"),
    (RUN + ["--mem-limit", "0.4"], "--mem-limit"),
    (RUN + ["--mem-limit", "inf"], "--mem-limit"),
    (RUN + ["--mem-limit", "0x1p40"], "--mem-limit"),
    (RUN + ["--mem-limit", "100"], "--mem-limit"),
    (RUN + ["--mem-limit", "16777216T"], "--mem-limit"),
    (RUN[:-1] + [""], "--output-folder"),
    (RUN[:-1] + ["{tmp}/a-file"], "--output-folder"),
    (["run", "--task-data", "", "--embeddings", "{ed}", "-t", GOOD, "--output-folder", "{tmp}/o"], "--task-data"),
    (["run", "--task-data", "{td}", "--embeddings", "{tmp}/absent", "-t", GOOD, "--output-folder", "{tmp}/o"],
     "--embeddings"),
    (RUN + ["--per-query", ""], "--per-query"),
    (RUN + ["--corpus-parts", "2", "--corpus-part", "0", "--partials-dir", ""], "--partials-dir"),
    (RUN + ["--similarity", ""], "--similarity"),
    (RUN + ["--task-types", ""], "--task-types"),
    (RUN + ["--task-types", "NoSuchType"], "--task-types"),
    (RUN + ["--eval-splits", ""], "--eval-splits"),
    (RUN + ["--device", "cuda:x"], "--device"),
    (RUN + ["--device", "cuda:99999999999"], "--device"),
    (MERGE[:1] + ["--partials-dir", "{tmp}/a-file"] + MERGE[3:], "--partials-dir"),
    (["merge", "--partials-dir", "{tmp}", "--task-data", "{tmp}/absent", "--embeddings", "{ed}",
      "--output-folder", "{tmp}/m", "-t", GOOD], "--task-data"),
    (MERGE[:7] + ["--output-folder", ""] + MERGE[9:], "--output-folder"),
    (MERGE + ["--per-query", ""], "--per-query"),
    (["synth", "--out", "", "--tasks", GOOD], "--out"),
    (["synth", "--out", "{tmp}/s", "--tasks", ""], "--tasks"),
    (["synth", "--out", "{tmp}/s", "--tasks", GOOD, "--registry", ""], "--registry"),
    (["summary", "{tmp}", "--csv", ""], "--csv"),
    (["summary", ""], "result folder"),
    (["report", "{tmp}", "--html", ""], "--html"),
    (["compare", "{tmp}", "{tmp}", "--resamples", "1e3"], "--resamples"),
    (["compare", "{tmp}", "{tmp}", "--json", ""], "--json"),
    (["parity", "--reference", "", "--candidate", "{tmp}"], "--reference"),
    (["parity", "--reference", "{tmp}", "--candidate", "{tmp}", "--tolerance", "probe=0x1p-3"], "--tolerance"),
    (["inspect", "--task-data", "{td}", "--embeddings", "", "-t", GOOD], "--embeddings"),
    (["inspect", "--task-data", "{tmp}/a-file", "--embeddings", "{ed}", "-t", GOOD], "--task-data"),
    (["list-tasks", "--registry", ""], "--registry"),
    (["list-tasks", "--task-types", ""], "--task-types"),
]


def _case_id(case):
    args, opt = case
    value = args[args.index(opt) + 1] if opt in args else args[1]
    return f"{args[0]}{opt}={value.replace('{tmp}/', '') or 'empty'}"


@pytest.mark.parametrize("case", BAD_VALUES, ids=[_case_id(c) for c in BAD_VALUES])
def test_bad_option_value_is_usage_error(tmp_path, case):
    """Exit 2 with one line naming the option and the value; nothing is written (run in
    tmp_path: an empty --output-folder used to resolve to /results)."""
    import subprocess
    from test_retrieval_e2e import BIN
    args, opt = case
    td, ed = _suite(tmp_path)
    before = sorted(os.listdir(tmp_path))
    argv = [a.format(td=td, ed=ed, tmp=tmp_path) for a in args]
    root_results = os.path.exists("/results")
    p = subprocess.run([BIN, *argv], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert p.returncode == 2, (argv, p.returncode, p.stderr[-2000:])
    line = next((ln for ln in p.stderr.splitlines() if "bad " in ln), "")
    assert opt in line, p.stderr[-2000:]
    assert sorted(os.listdir(tmp_path)) == before
    assert os.path.exists("/results") == root_results


# ---- resuming (--overwrite-strategy only-missing / never) trusts only a whole result ----

def _aside(path):
    d, base = os.path.dirname(path), os.path.basename(path)
    return sorted(os.path.join(d, n) for n in os.listdir(d) if n.startswith(base + ".bad-"))


def _broken_empty(good):
    return b""


def _broken_truncated(good):
    return good[: len(good) // 2]


def _broken_other_task(good):
    import json
    r = json.loads(good)
    r["task_name"] = BAD
    return json.dumps(r, indent=2).encode()


def _broken_array(good):
    return b"[" + good + b"]"


def _broken_no_split(good):
    import json
    r = json.loads(good)
    r["scores"] = {"validation": r["scores"]["test"]}
    return json.dumps(r, indent=2).encode()


BROKEN = [_broken_empty, _broken_truncated, _broken_other_task, _broken_array, _broken_no_split]


@pytest.mark.parametrize("strategy", ["only-missing", "never"])
@pytest.mark.parametrize("breaker", BROKEN, ids=[b.__name__[8:] for b in BROKEN])
def test_resume_rescores_a_broken_result(tmp_path, breaker, strategy):
    """A result file that is not a whole result of the task (empty, cut short, another task's,
    a JSON array, without the split the run writes) used to count as present: the task was
    skipped for good. Now the task is scored again, the file kept aside byte for byte as
    <Task>.json.bad-<UTC time> and named in a warning."""
    import json
    td, ed = make(str(tmp_path))
    out = str(tmp_path / "out")
    run_mieb(td, ed, out, [GOOD])
    path = result_path(out, GOOD)
    good = open(path, "rb").read()
    bad = breaker(good)
    open(path, "wb").write(bad)
    p = run_mieb(td, ed, out, [GOOD], "--overwrite-strategy", strategy)
    aside = _aside(path)
    assert len(aside) == 1 and open(aside[0], "rb").read() == bad, (aside, p.stderr)
    assert os.path.basename(aside[0]) in p.stderr and "scoring the task again" in p.stderr, p.stderr
    assert json.loads(open(path, "rb").read())["scores"] == json.loads(good)["scores"]


def test_resume_skips_a_whole_result(tmp_path):
    """The control: a whole result (mteb's or ours) is still skipped, untouched, nothing set aside."""
    td, ed = make(str(tmp_path))
    out = str(tmp_path / "out")
    run_mieb(td, ed, out, [GOOD])
    path = result_path(out, GOOD)
    before = open(path, "rb").read(), os.stat(path).st_mtime_ns
    p = run_mieb(td, ed, out, [GOOD], "--overwrite-strategy", "only-missing")
    assert "result exists, skipped" in p.stderr
    assert (open(path, "rb").read(), os.stat(path).st_mtime_ns) == before
    assert not _aside(path)


def test_resume_sets_a_broken_corpus_part_aside(tmp_path):
    """The same rule for corpus parts: a cut-short part is scored again and kept aside."""
    td, ed = make(str(tmp_path))
    pd = str(tmp_path / "parts")
    part = ["--corpus-parts", "2", "--corpus-part", "1", "--partials-dir", pd]
    run_mieb(td, ed, str(tmp_path / "out"), [GOOD], *part)
    path = os.path.join(pd, GOOD, "test", "default", "part-00001-of-00002.h5")
    good = open(path, "rb").read()
    open(path, "r+b").truncate(100)
    p = run_mieb(td, ed, str(tmp_path / "out"), [GOOD], *part, "--overwrite-strategy", "only-missing")
    aside = _aside(path)
    assert len(aside) == 1 and open(aside[0], "rb").read() == good[:100], (aside, p.stderr)
    assert os.path.basename(aside[0]) in p.stderr
    assert os.path.getsize(path) == len(good)


def test_catalogue_runs_the_build_under_test():
    """Every bad-input test drives the binaries of MIEB_BUILD_DIR (mieb-eval here, in
    test_limits and test_faults; tests/emb_dump through helpers/io_helpers.py), so under
    scripts/sanitize.sh (MIEB_BUILD_DIR = its ASan + UBSan build) each case is also a
    sanitizer check: --mem-limit nan and 1e30 stopped the old parser with a UBSan report."""
    import test_faults
    import test_limits
    from test_retrieval_e2e import BIN
    build = os.path.realpath(os.environ["MIEB_BUILD_DIR"])
    for exe in (BIN, test_limits.BIN, test_faults.BIN):
        assert os.path.realpath(exe) == os.path.join(build, "mieb-eval"), exe
    if test_faults.sanitized():
        data = open(BIN, "rb").read()
        assert b"__asan_init" in data and b"__ubsan_handle" in data, "the sanitized build's mieb-eval has no ASan/UBSan"
