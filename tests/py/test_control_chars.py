"""Strings from outside the program (ids and names in files, paths and values on the command
line) never reach a terminal or a line-oriented file raw (host/core/escape.h).

The rule is re-implemented here from its description (`escape_ref`), and every output is
checked against it byte for byte: the messages and tables on stderr and stdout hold no control
byte but the newlines that end their lines, and each id in run.trec, qrels.trec and
per_query.tsv is written exactly as the rule says, so that every line keeps its fields."""
from __future__ import annotations

import csv
import io
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from helpers import fmt_writer as fw
from conftest import TIME_SCALE

BUILD = os.environ.get("MIEB_BUILD_DIR", "")
BIN = os.path.join(BUILD, "mieb-eval")
SRC = Path(os.environ.get("MIEB_SOURCE_DIR", Path(__file__).resolve().parents[2]))
TASK = "CIRRIT2IRetrieval"

# Code points that act on a terminal or on the lines it shows, besides C0 and DEL.
CONTROL_CPS = set(range(0x80, 0xA0)) | {0x200E, 0x200F, 0x2028, 0x2029} | set(range(0x202A, 0x202F)) | set(
    range(0x2066, 0x206A))


def escape_ref(s: str | bytes, mode: str) -> bytes:
    """The rule of escape.h: C0, DEL, C1, the line separators and bidirectional controls, and
    bytes that are not UTF-8 as \\xHH per byte; "csv" also the backslash, "word" also the
    space and the backslash, and the empty string as \\x00."""
    raw = s.encode() if isinstance(s, str) else s
    if mode == "word" and not raw:
        return b"\\x00"
    extra = {"display": b"", "csv": b"\\", "word": b" \\"}[mode]
    out, i = bytearray(), 0
    while i < len(raw):
        b = raw[i]
        if b < 0x80:
            out += b"\\x%02x" % b if b < 0x20 or b == 0x7F or bytes([b]) in extra else bytes([b])
            i += 1
            continue
        for n in (2, 3, 4):  # the shortest valid UTF-8 sequence starting here
            try:
                ch = raw[i:i + n].decode("utf-8")
            except UnicodeDecodeError:
                continue
            if len(ch) == 1:
                break
        else:
            out += b"\\x%02x" % b  # not UTF-8: this byte alone
            i += 1
            continue
        seq = raw[i:i + n]
        out += b"".join(b"\\x%02x" % c for c in seq) if ord(ch) in CONTROL_CPS else seq
        i += n
    return bytes(out)


def unescape(tok: bytes) -> bytes:
    """One pass back: \\xHH to its byte, \\x00 alone to the empty string."""
    if tok == b"\\x00":
        return b""
    out, i = bytearray(), 0
    while i < len(tok):
        if tok[i:i + 2] == b"\\x":
            out.append(int(tok[i + 2:i + 4], 16))
            i += 4
        else:
            out.append(tok[i])
            i += 1
    return bytes(out)


def raw_controls(text: bytes) -> list[str]:
    """Control characters in program output, but the newlines that end lines."""
    found = [f"byte 0x{b:02x} at {i}" for i, b in enumerate(text) if (b < 0x20 and b != 0x0A) or b == 0x7F]
    decoded = text.decode("utf-8", errors="replace")
    found += [f"U+{ord(c):04X}" for c in decoded if ord(c) in CONTROL_CPS]
    return found


def mieb(*args, cwd=None, env=None):
    e = dict(os.environ, MIEB_BLAS_TUNE="0", **(env or {}))
    return subprocess.run([BIN, *args], capture_output=True, timeout=120 * TIME_SCALE, cwd=cwd, env=e)


def assert_clean(p):
    for name, text in (("stdout", p.stdout), ("stderr", p.stderr)):
        bad = raw_controls(text)
        assert not bad, f"raw control characters in {name}: {bad[:5]}\n{text[-2000:]!r}"


# Hostile text of every kind: terminal sequences, line breaks, C1 CSI, bidi override,
# a line separator, a lone continuation byte is not possible in a Python str (ids are UTF-8).
HOSTILE = ["\x1b[2J\x1b[31mred", "cr\rover", "nl\nsplit", "tab\there", "c1\u009b2J", "bidi\u202eevil", "ls\u2028x",
           "del\x7f", "bell\x07"]


def retrieval_task(root: Path, qids, cids, seed=0, dim=8, meta_name="test-org/test-model"):
    rng = np.random.default_rng(seed)
    td, ed = root / "td", root / "emb"
    fw.write_model_meta(str(ed), name=meta_name, sim="cosine")
    f = fw.open_task_file(str(td), TASK)
    qrels = [[(int(d), 1 + (k % 2)) for k, d in enumerate(rng.choice(len(cids), 2, replace=False))] for _ in qids]
    fw.write_retrieval_group(f, "test", "default", qids, cids, qrels, None)
    f.close()
    fw.write_role(str(ed), TASK, "test", "default", "queries", rng.standard_normal((len(qids), dim)).astype(np.float32))
    fw.write_role(str(ed), TASK, "test", "default", "corpus", rng.standard_normal((len(cids), dim)).astype(np.float32))
    return td, ed, qrels


def run(td, ed, out, *extra, cwd=None, env=None):
    return mieb("run", "--task-data", str(td), "--embeddings", str(ed), "-t", TASK, "--output-folder", str(out),
                "--device", "cpu", "--progress", "off", *extra, cwd=cwd, env=env)


# ---- ids in every line-oriented file ----

IDS = ["", "plain", "sp ace", "t\tab", "n\nl", "cr\r", "back\\slash", "\\x20", "\\x00", "Ωmega", "文档", "😀",
       "c1\u009b", "bidi\u202e", "ls\u2028", "esc\x1b[0m", "del\x7f", "all"]


def test_ids_in_line_files_follow_the_rule(tmp_path):
    """run.trec 6 fields, qrels.trec 4, per_query.tsv 3 on every line, each id written exactly
    as escape_ref says (the empty id as \\x00, not an empty field), and read back byte for byte."""
    qids = [f"q{i}{s}" if s else "" for i, s in enumerate(IDS)]
    qids[0] = ""  # the empty query id
    qids[1] = "all"  # trec_eval's name for the row of means
    cids = [f"d{s}" for s in IDS] + [""]  # the empty document id
    td, ed, qrels = retrieval_task(tmp_path, qids, cids)
    pq = tmp_path / "pq"
    p = run(td, ed, tmp_path / "out", "--per-query", str(pq))
    assert p.returncode == 0, p.stderr.decode()
    d = pq / TASK / "test" / "default"
    want_q = {escape_ref(q, "word") for q in qids}
    want_d = {escape_ref(c, "word") for c in cids}
    run_lines = (d / "run.trec").read_bytes().split(b"\n")
    assert run_lines[-1] == b""
    for line in run_lines[:-1]:
        f = line.split(b" ")
        assert len(f) == 6 and f[1] == b"Q0" and f[5] == b"mieb-eval", line
        assert f[0] in want_q and f[2] in want_d, line
    assert {unescape(line.split(b" ")[0]) for line in run_lines[:-1]} == {q.encode() for q in qids}
    qrel_lines = (d / "qrels.trec").read_bytes().split(b"\n")[:-1]
    got = sorted((unescape(a), unescape(c), int(r)) for a, z, c, r in (line.split(b" ") for line in qrel_lines))
    assert got == sorted((qids[i].encode(), cids[k].encode(), s) for i, ql in enumerate(qrels) for k, s in ql)
    tsv = (d / "per_query.tsv").read_bytes().split(b"\n")[:-1]
    assert all(len(t.split(b"\t")) == 3 for t in tsv), tsv[:5]
    ids = [t.split(b"\t")[1] for t in tsv]
    per_query = {escape_ref(q, "word") for q in qids if q != "all"} | {b"\\x61ll"}
    assert set(ids) == per_query | {b"all"}
    n_measures = ids.count(b"all")  # one row of means per measure, the query "all" apart
    assert n_measures > 0 and all(ids.count(i) == n_measures for i in per_query)


def test_summary_csv_rows_are_one_line(tmp_path):
    """Model names and revisions from result folders: each CSV row one line, each field the
    rule's CSV form, read back by Python's csv module."""
    names = ["org/a,comma", 'org/q"uote', "org/nl\nname", "org/cr\rname", "org/esc\x1b[2J", "org/back\\slash"]
    root = tmp_path / "results"
    for k, name in enumerate(names):
        d = root / name.replace("/", "__") / f"rev{k}"
        d.mkdir(parents=True)
        (d / "model_meta.json").write_text(json.dumps({"name": name, "revision": f"rev{k}"}))
        (d / f"{TASK}.json").write_text(json.dumps({
            "task_name": TASK, "dataset_revision": "x", "mteb_version": "2.26.24", "evaluation_time": 1.0,
            "kg_co2_emissions": None,
            "scores": {"test": [{"ndcg_at_10": 0.1 * k, "main_score": 0.1 * k, "hf_subset": "default",
                                 "languages": ["eng-Latn"]}]}}))
    out_csv = tmp_path / "s.csv"
    p = mieb("summary", str(root), "--csv", str(out_csv))
    assert p.returncode == 0, p.stderr.decode()
    assert_clean(p)
    lines = out_csv.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) - 2 == len(names), lines
    rows = list(csv.DictReader(io.StringIO(out_csv.read_text())))
    header = rows[0].keys()
    model_col = next(h for h in header if h.lower() in ("model", "model_name"))
    assert sorted(r[model_col].encode() for r in rows) == sorted(escape_ref(n, "csv") for n in names)


# ---- messages and tables ----

@pytest.mark.parametrize("hostile", HOSTILE)
def test_duplicated_corpus_id_message_is_escaped(tmp_path, hostile):
    """The message about a duplicated corpus id names the id, escaped; the run goes on to exit 1."""
    cids = ["d0", f"dup{hostile}", f"dup{hostile}", "d3"]
    td, ed, _ = retrieval_task(tmp_path, ["q0", "q1"], cids)
    p = run(td, ed, tmp_path / "out")
    assert p.returncode == 1, p.stderr.decode()
    assert_clean(p)
    assert escape_ref(f"dup{hostile}", "display") in p.stderr


@pytest.mark.parametrize("hostile", HOSTILE)
def test_model_name_with_control_character_is_refused(tmp_path, hostile):
    """model_meta.json's name and revision name the results folder: a control character there is
    refused (exit 4), shown escaped, and no folder is made."""
    td, ed, _ = retrieval_task(tmp_path, ["q0"], ["d0", "d1", "d2"], meta_name=f"org/m{hostile}")
    p = run(td, ed, tmp_path / "out")
    assert p.returncode == 4, p.stderr.decode()
    assert_clean(p)
    assert b"control character" in p.stderr and escape_ref(f"org/m{hostile}", "display") in p.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.json"))


def test_registry_names_with_control_characters_are_refused(tmp_path):
    tasks = json.load(open(SRC / "configs" / "tasks.json"))
    for key, bad in (("name", "Task\x1b[2J"), ("eval_splits", ["te\nst"]), ("hf_subsets", ["../x"])):
        t = dict(tasks[0], **{key: bad})
        reg = tmp_path / key / "tasks.json"
        reg.parent.mkdir()
        reg.write_text(json.dumps([t]))
        p = mieb("list-tasks", env={"MIEB_REGISTRY": str(reg)})
        assert p.returncode == 4, (key, p.stderr.decode())
        assert_clean(p)
        assert b"cannot name a file" in p.stderr or b"control character" in p.stderr


def result_folder(root: Path, name: str, rev: str, score: float):
    d = root / name.replace("/", "__") / rev
    d.mkdir(parents=True)
    (d / "model_meta.json").write_text(json.dumps({"name": name, "revision": rev}))
    (d / f"{TASK}.json").write_text(json.dumps({
        "task_name": TASK, "dataset_revision": "x", "mteb_version": "2.26.24", "evaluation_time": 1.0,
        "kg_co2_emissions": None,
        "scores": {"test": [{"ndcg_at_10": score, "main_score": score, "hf_subset": "default",
                             "languages": ["eng-Latn"]}]}}))
    return d


@pytest.mark.parametrize("hostile", HOSTILE)
def test_names_from_result_files_are_shown_escaped(tmp_path, hostile):
    """summary, parity and report print model names and revisions read from result folders."""
    a, b = tmp_path / "a", tmp_path / "b"
    result_folder(a, f"org/m{hostile}", f"r{hostile}", 0.5)
    result_folder(b, f"org/m{hostile}", f"r{hostile}", 0.25)
    (b / "org__other").mkdir()  # a folder with no results: named in a message
    for args in (["summary", str(a), str(b)], ["parity", "--reference", str(a), "--candidate", str(b)],
                 ["report", str(a), str(b), "--html", str(tmp_path / "r.html")]):
        p = mieb(*args)
        assert p.returncode in (0, 1), (args, p.stderr.decode())
        assert_clean(p)
        if args[0] != "report":  # report prints the page's path alone
            assert escape_ref(f"org/m{hostile}", "display") in p.stdout + p.stderr, args


# ---- control characters on the command line ----

PATH_OPTIONS = [
    ("run", "--output-folder"), ("run", "--task-data"), ("run", "--embeddings"), ("run", "--per-query"),
    ("run", "--partials-dir"), ("run", "--export"), ("run", "--model"), ("merge", "--output-folder"),
    ("synth", "--out"), ("summary", "--csv"), ("report", "--html"), ("compare", "--json"),
    ("parity", "--reference"), ("inspect", "--embeddings"), ("list-tasks", "--registry"),
]


@pytest.mark.parametrize("cmd,opt", PATH_OPTIONS)
@pytest.mark.parametrize("ch", ["\n", "\r", "\t", "\x1b", "\u009b"])
def test_control_character_in_an_option_is_refused(tmp_path, cmd, opt, ch):
    """Exit 2 before anything runs, the option named and the character shown escaped, nothing
    created (a folder named "out\\n" was created silently before)."""
    work = tmp_path / "cwd"
    work.mkdir()
    val = f"out{ch}" if ch != "\r" else f"o\rut"
    p = mieb(cmd, opt, val, cwd=work)
    assert p.returncode == 2, (cmd, opt, p.stderr.decode())
    assert_clean(p)
    assert opt.encode() in p.stderr and escape_ref(val, "display") in p.stderr
    assert list(work.iterdir()) == []


@pytest.mark.parametrize("cmd", ["summary", "report", "compare"])
def test_control_character_in_a_positional_folder_is_refused(tmp_path, cmd):
    work = tmp_path / "cwd"
    work.mkdir()
    p = mieb(cmd, "res\n", "other", cwd=work)
    assert p.returncode == 2, p.stderr.decode()
    assert_clean(p)
    assert b"res\\x0a" in p.stderr
    assert list(work.iterdir()) == []


def test_slurm_submit_refuses_control_characters(tmp_path):
    p = subprocess.run(["bash", str(SRC / "scripts" / "slurm" / "submit.sh"), "--task-data", "td", "--embeddings",
                        "e", "--output-folder", "out\n\x1b[2J", "-t", TASK], capture_output=True,
                       timeout=60 * TIME_SCALE, cwd=tmp_path)
    assert p.returncode == 2, p.stderr.decode()
    assert_clean(p)
    assert b"control character" in p.stderr
    assert list(tmp_path.iterdir()) == []
