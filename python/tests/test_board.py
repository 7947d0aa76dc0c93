"""mieb_eval.summary and mieb_eval.report, in this process through the library's board
(include/mieb.h's mieb_summary and mieb_report): the program's own summary table, CSV, JSON and
page for the same folders, atomically written, and the program's refusals as exceptions."""
import json
import subprocess

import pytest

import mieb_eval
from mieb_eval import _lib

from conftest import RUN_TASKS


@pytest.fixture(scope="module")
def two_models(run_suite, tmp_path_factory):
    """Result folders of two "models": the suite's embeddings under cosine and under dot."""
    out = tmp_path_factory.mktemp("board")
    for sim in ("cosine", "dot"):
        subprocess.run([str(_lib.program_path()), "run", "--task-data", str(run_suite / "task-data"), "--embeddings",
                        str(run_suite / "embeddings"), "-t", *RUN_TASKS, "--output-folder", str(out / sim),
                        "--device", "cpu", "--similarity", sim, "--progress", "off", "-q"], check=True,
                       capture_output=True)
    return out


def program(*args):
    return subprocess.run([str(_lib.program_path()), *map(str, args)], capture_output=True, text=True)


@pytest.mark.parametrize("bench", [None, "MIEB(lite)"])
def test_summary_is_the_programs(two_models, tmp_path, bench, engine):
    folders = [two_models / "cosine", two_models / "dot"]
    bflag = ["-b", bench] if bench else []
    ref = program("summary", *folders, *bflag, "--csv", tmp_path / "ref.csv", "--json", tmp_path / "ref.json")
    assert ref.returncode == 0, ref.stderr
    got = mieb_eval.summary(folders, bench, csv=tmp_path / "got.csv", json_path=tmp_path / "got.json",
                            text=tmp_path / "got.txt", engine=engine)
    assert got == json.loads((tmp_path / "ref.json").read_text())
    assert (tmp_path / "got.json").read_text() == (tmp_path / "ref.json").read_text()
    assert (tmp_path / "got.csv").read_bytes() == (tmp_path / "ref.csv").read_bytes()
    assert (tmp_path / "got.txt").read_text() == ref.stdout
    assert len(got["models"]) == 2
    assert not [p.name for p in tmp_path.iterdir() if ".tmp" in p.name]  # the text's temporary is gone


def test_report_is_the_programs(two_models, tmp_path, engine):
    folders = [two_models / "dot", two_models / "cosine"]
    ref = program("report", *folders, "--html", tmp_path / "ref.html")
    assert ref.returncode == 0, ref.stderr
    assert mieb_eval.report(folders, tmp_path / "got.html", engine=engine) == tmp_path / "got.html"
    assert (tmp_path / "got.html").read_bytes() == (tmp_path / "ref.html").read_bytes()
    # another baseline: the program's page with --baseline
    name = json.loads(next((two_models / "cosine").rglob("model_meta.json")).read_text())["name"]
    ref = program("report", *folders, "--html", tmp_path / "ref2.html", "--baseline", name)
    mieb_eval.report(folders, tmp_path / "got2.html", baseline=name, engine=engine)
    assert (tmp_path / "got2.html").read_bytes() == (tmp_path / "ref2.html").read_bytes()


def test_refusals_raise_and_write_nothing(two_models, tmp_path, engine):
    with pytest.raises(mieb_eval.NotFound, match="nowhere"):
        mieb_eval.summary(tmp_path / "nowhere", csv=tmp_path / "s.csv", engine=engine)
    (tmp_path / "empty").mkdir()
    with pytest.raises(mieb_eval.NotFound, match="no result files"):
        mieb_eval.summary(tmp_path / "empty", text=tmp_path / "s.txt", engine=engine)
    assert mieb_eval.summary(tmp_path / "empty", engine=engine, missing_ok=True) == {}
    with pytest.raises(mieb_eval.InvalidArgument, match="NoSuchBench"):
        mieb_eval.summary(two_models, "NoSuchBench", engine=engine)
    with pytest.raises(mieb_eval.InvalidArgument, match="no such model"):
        mieb_eval.report(two_models, tmp_path / "r.html", baseline="nobody/none", engine=engine)
    with pytest.raises(mieb_eval.MiebError, match="nodir"):  # an output that cannot be written
        mieb_eval.report(two_models, tmp_path / "nodir" / "r.html", engine=engine)
    with pytest.raises(ValueError, match="at least one result folder"):
        mieb_eval.summary([], engine=engine)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty"]


def test_published_placement_and_page_are_the_programs(two_models, tmp_path, engine):
    """One model ranked among another's results taken as published: the summary's placement and
    the page equal the program's --published ones."""
    own, pub = two_models / "cosine", two_models / "dot"
    ref = program("summary", own, "-b", "MIEB(lite)", "--published", pub, "--json", tmp_path / "ref.json")
    assert ref.returncode == 0, ref.stderr
    got = mieb_eval.summary(own, "MIEB(lite)", published=pub, text=tmp_path / "got.txt", engine=engine)
    assert got == json.loads((tmp_path / "ref.json").read_text())
    assert got["placement"] and [m["source"] for m in got["models"]].count("own") == 1
    assert (tmp_path / "got.txt").read_text() == ref.stdout
    ref = program("report", own, "--html", tmp_path / "ref.html", "--published", pub, "--top", "1")
    assert ref.returncode == 0, ref.stderr
    mieb_eval.report(own, tmp_path / "got.html", published=pub, top=1, engine=engine)
    assert (tmp_path / "got.html").read_bytes() == (tmp_path / "ref.html").read_bytes()


def test_published_files_of_other_tasks_are_not_read(two_models, tmp_path, engine, caplog):
    """A published folder holds every MTEB task: a file of a task outside the registry is not
    read (a broken one is not counted as unreadable) and changes nothing."""
    import logging
    import shutil

    pub = tmp_path / "published"
    shutil.copytree(two_models / "dot", pub)
    want = mieb_eval.summary(two_models / "cosine", "MIEB(lite)", published=pub, engine=engine)
    for rev in {p.parent for p in pub.rglob("model_meta.json")}:
        (rev / "SomeTextRetrievalTask.json").write_text("{ not json")
    with caplog.at_level(logging.WARNING, logger="mieb_eval"):
        got = mieb_eval.summary(two_models / "cosine", "MIEB(lite)", published=pub, engine=engine)
    assert got == want
    assert not [r for r in caplog.records if "could not be read" in r.getMessage()]
    # the same broken file under a task of the registry is read, and counted
    for rev in {p.parent for p in pub.rglob("model_meta.json")}:
        (rev / "CIFAR10.json").write_text("{ not json")
    with caplog.at_level(logging.WARNING, logger="mieb_eval"):
        mieb_eval.summary(two_models / "cosine", "MIEB(lite)", published=pub, engine=engine)
    assert [r for r in caplog.records if "1 result file(s) could not be read" in r.getMessage()]
