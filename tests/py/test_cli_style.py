"""The conventions every command shares: --opt=value, mteb's underscore spellings, one line of
usage and a pointer to --help on a usage error, "did you mean" for a mistyped task, benchmark or option,
and the exit statuses in every command's help."""
import json
import subprocess

import pytest

from helpers.mieb_tools import build_dir

COMMANDS = ["run", "synth", "list-tasks", "inspect", "summary", "merge", "report", "compare", "parity"]


def mieb(*args, **kw):
    return subprocess.run([str(build_dir() / "mieb-eval"), *map(str, args)], capture_output=True, text=True,
                          timeout=600, **kw)


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    d = tmp_path_factory.mktemp("style")
    r = mieb("synth", f"--out={d / 's'}", "--tasks=DTD,CIRRIT2IRetrieval", "--scale=0.01", "--dim=16")
    assert r.returncode == 0, r.stderr
    return d


def scores(out):
    files = sorted(p for p in out.glob("results/*/*/*.json") if p.name != "model_meta.json")
    return {p.stem: json.loads(p.read_text())["scores"] for p in files}


def test_equals_and_mteb_spellings_mean_the_same(suite):
    s = suite / "s"
    plain = mieb("run", "--task-data", s / "task-data", "--embeddings", s / "embeddings", "-t", "DTD",
                 "CIRRIT2IRetrieval", "--output-folder", suite / "a", "--eval-splits", "test", "-q")
    assert plain.returncode == 0, plain.stderr
    styled = mieb("run", f"--task-data={s / 'task-data'}", f"--embeddings={s / 'embeddings'}", "-t", "DTD",
                  "CIRRIT2IRetrieval", f"--output_folder={suite / 'b'}", "--eval_splits", "test",
                  "--overwrite_strategy=always", "-q")
    assert styled.returncode == 0, styled.stderr
    assert scores(suite / "a") == scores(suite / "b") and len(scores(suite / "a")) == 2
    # a value that itself holds '=' keeps it
    r = mieb("list-tasks", "--task_types=ImageClustering", "--json")
    assert r.returncode == 0 and {t["type"] for t in json.loads(r.stdout)} == {"ImageClustering"}


@pytest.mark.parametrize("cmd", COMMANDS)
def test_usage_error_is_short(cmd):
    r = mieb(cmd, "--no-such-option")
    assert r.returncode == 2, (cmd, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert sum(ln.startswith("usage: mieb-eval") for ln in lines) == 1, r.stderr
    assert lines[-1] == f"Try 'mieb-eval {cmd} --help' for the options and exit statuses."
    assert len(lines) <= 3 and "xit status" not in r.stderr.replace("exit statuses.", ""), r.stderr


@pytest.mark.parametrize("cmd", COMMANDS + [None])
def test_help_lists_exit_statuses(cmd):
    r = mieb(*([cmd] if cmd else []), "--help")
    assert r.returncode == 0
    assert "xit status" in r.stdout and " 2 " in r.stdout.replace("\n", " "), (cmd, r.stdout[-400:])


def test_did_you_mean(suite):
    s = suite / "s"
    common = ["--task-data", s / "task-data", "--embeddings", s / "embeddings", "--output-folder", suite / "c"]
    r = mieb("run", *common, "-t", "CIRRIT2IRetreival")  # two letters swapped
    assert r.returncode == 2 and "did you mean 'CIRRIT2IRetrieval'?" in r.stderr, r.stderr
    r = mieb("inspect", "--task-data", s / "task-data", "--embeddings", s / "embeddings", "-t", "dtd")  # case
    assert r.returncode == 2 and "did you mean 'DTD'?" in r.stderr, r.stderr
    r = mieb("synth", "--out", suite / "x", "--tasks", "EuroSA")  # a letter left out
    assert r.returncode == 2 and "did you mean 'EuroSAT'?" in r.stderr, r.stderr
    r = mieb("list-tasks", "-b", "MIEB(lit)")
    assert r.returncode == 2 and "did you mean 'MIEB(lite)'?" in r.stderr, r.stderr
    r = mieb("run", *common, "-t", "SomethingElseEntirely")  # nothing close: no guess
    assert r.returncode == 2 and "did you mean" not in r.stderr and "SomethingElseEntirely" in r.stderr


@pytest.mark.parametrize("cmd, typo, meant", [
    ("run", "--output-foldr", "--output-folder"), ("run", "--eval_split", "--eval-splits"),
    ("run", "--benchmrks", "--benchmarks"), ("synth", "--dimm", "--dim"), ("list-tasks", "--jsn", "--json"),
    ("inspect", "--embedings", "--embeddings"), ("summary", "--registy", "--registry"),
    ("merge", "--treads", "--threads"), ("report", "--htm", "--html"), ("compare", "--resample", "--resamples"),
    ("parity", "--referenc", "--reference"),
])
def test_mistyped_option_gets_did_you_mean(cmd, typo, meant):
    """A mistyped long option of any command is answered with the closest one of its table."""
    r = mieb(cmd, typo, "x")
    assert r.returncode == 2 and f"'{typo.replace('_', '-')}' (did you mean '{meant}'?)" in r.stderr, r.stderr


def test_no_guess_for_short_or_far_options():
    r = mieb("run", "-x")
    assert r.returncode == 2 and "unknown option '-x'" in r.stderr and "did you mean" not in r.stderr
    r = mieb("run", "--frobnicate", "x")
    assert r.returncode == 2 and "did you mean" not in r.stderr, r.stderr


def test_lists_take_words_commas_or_both(suite):
    """-t, --task-types, --eval-splits and -l take names as words, as a comma-separated list, or a
    mix, in every command, with the same result."""
    s = suite / "s"
    outs = []
    for i, tasks in enumerate((["DTD", "CIRRIT2IRetrieval"], ["DTD,CIRRIT2IRetrieval"], ["DTD,", "CIRRIT2IRetrieval"])):
        out = suite / f"list{i}"
        r = mieb("run", "--task-data", s / "task-data", "--embeddings", s / "embeddings", "-t", *tasks,
                 "--output-folder", out, "--eval-splits=test", "-q")
        assert r.returncode == 0, (tasks, r.stderr)
        outs.append(scores(out))
    assert outs[0] == outs[1] == outs[2] and len(outs[0]) == 2
    for form in (["--tasks", "DTD", "CIRRIT2IRetrieval"], ["--tasks=DTD,CIRRIT2IRetrieval"]):
        r = mieb("synth", "--out", suite / f"syn{len(form)}", *form, "--scale", "0.01", "--dim", "8")
        assert r.returncode == 0, (form, r.stderr)
        assert sorted(p.stem for p in (suite / f"syn{len(form)}" / "task-data").glob("*.h5")) == \
            ["CIRRIT2IRetrieval", "DTD"]
    a = mieb("list-tasks", "--task-types", "ImageClustering", "Compositionality", "--json")
    b = mieb("list-tasks", "--task-types=ImageClustering,Compositionality", "--json")
    assert a.returncode == b.returncode == 0 and a.stdout == b.stdout
    assert {t["type"] for t in json.loads(a.stdout)} == {"ImageClustering", "Compositionality"}
    r = mieb("inspect", "--task-data", s / "task-data", "--embeddings", s / "embeddings", "-t", "DTD,CIRRIT2IRetrieval")
    assert r.returncode == 0 and "2 task(s) inspected" in r.stdout, r.stdout + r.stderr
    # an empty list is still refused as one
    r = mieb("run", "--task-data", s / "task-data", "--embeddings", s / "embeddings", "-t", "DTD",
             "--output-folder", suite / "e", "--eval-splits", "")
    assert r.returncode == 2


# An option of each command that takes a value, given without one.
NEEDS_VALUE = {"run": "--task-data", "synth": "--out", "list-tasks": "-b", "inspect": "--task-data",
               "summary": "--csv", "merge": "--partials-dir", "report": "--html", "compare": "--seed",
               "parity": "--reference"}


@pytest.mark.parametrize("cmd", COMMANDS)
def test_short_help_missing_value_and_nothing_given(cmd):
    short, long = mieb(cmd, "-h"), mieb(cmd, "--help")
    assert short.returncode == long.returncode == 0 and not short.stderr and not long.stderr
    assert short.stdout == long.stdout and long.stdout.startswith(f"usage: mieb-eval {cmd} ")
    assert mieb(cmd, "--no-such-option", "--help").returncode == 2  # read in order: the error first
    opt = NEEDS_VALUE[cmd]
    r = mieb(cmd, opt)
    assert r.returncode == 2 and not r.stdout, (cmd, r.stderr)
    assert r.stderr.splitlines()[0] == f"mieb-eval {cmd}: {opt} needs a value", r.stderr
    if cmd != "list-tasks":  # which lists every task
        r = mieb(cmd)
        assert r.returncode == 2 and not r.stdout, (cmd, r.stderr)
        lines = r.stderr.splitlines()
        assert len(lines) == 3 and lines[0].startswith(f"mieb-eval {cmd}: ") and \
            lines[1].startswith(f"usage: mieb-eval {cmd} ") and \
            lines[2] == f"Try 'mieb-eval {cmd} --help' for the options and exit statuses.", r.stderr


@pytest.mark.parametrize("cmd", ["run", "merge"])
def test_log_options(cmd, suite):
    """-v and -q exclude each other (said once the rest of the line is read), --log-format takes text
    or json, and the commands without logs refuse -v as any unknown option."""
    s = suite / "s"
    line = [cmd, "--task-data", s / "task-data", "--embeddings", s / "embeddings", "-t", "DTD",
            "--output-folder", suite / f"log-{cmd}"] + (["--partials-dir", suite / "no-parts"] if cmd == "merge" else [])
    for flags in (["-v", "-q"], ["--quiet", "--verbose"]):
        r = mieb(cmd, *flags, *line[1:])
        assert r.returncode == 2 and not r.stdout
        assert r.stderr.splitlines()[0] == f"mieb-eval {cmd}: -v and -q exclude each other", r.stderr
        assert r.stderr.splitlines()[-1] == f"Try 'mieb-eval {cmd} --help' for the options and exit statuses."
    r = mieb(*line, "--log-format", "xml")
    assert r.returncode == 2 and r.stderr.startswith(f"mieb-eval {cmd}: bad --log-format 'xml' (one of text, json)\n")
    r = mieb(*line, "--log-format")
    assert r.returncode == 2 and r.stderr.startswith(f"mieb-eval {cmd}: --log-format needs a value\n")
    for other in ("summary", "report", "compare", "inspect", "synth", "list-tasks"):
        r = mieb(other, "-v")
        assert r.returncode == 2 and "-v" in r.stderr.splitlines()[0], (other, r.stderr)
