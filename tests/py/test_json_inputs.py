"""model_meta.json and the task registry are read as Python's json module reads them: a text
that cJSON and Python would read differently (a key given twice, \\u0000, bytes that are not
UTF-8, a lone surrogate, a byte order mark, text after the value) is refused, exit 4, the file
and the place named, nothing written; a name or revision too long for a folder says its
length and the limit. An accepted file is copied byte for byte, so mteb reads in the results
folder exactly what was validated. A model_meta.json that is a FIFO is refused at once.

Every case here was accepted (or hung, for the FIFO) before json_strict.c."""
from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pytest

from test_retrieval_e2e import BIN, build_task

TASK = "CIRRIT2IRetrieval"
DEADLINE = 60  # seconds: generous; a refused FIFO answers at once, a blocked read never


def suite(tmp_path):
    td, ed, _ = build_task(str(tmp_path), np.random.default_rng(1), TASK, 6, 30, 4)
    return td, ed


def run(td, ed, out, env=None):
    try:
        return subprocess.run([BIN, "run", "--task-data", td, "--embeddings", ed, "-t", TASK, "--output-folder", out,
                               "--device", "cpu", "--progress", "off"], capture_output=True, text=True,
                              timeout=DEADLINE, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"mieb-eval run did not finish within the {DEADLINE} s deadline (blocked on an input?)")


GOOD = '{"name": "org/m", "revision": "good", "similarity_fn_name": "cosine"'

# (case, bytes of model_meta.json, what stderr must say)
BAD_META = [
    ("duplicate_top", GOOD + ', "revision": "../../x"}', 'key "revision" appears twice in the object at /'),
    ("duplicate_nested", GOOD + ', "loader": {"a": 1, "b": {"k": 1, "\\u006b": 2}}}',
     'key "k" appears twice in the object at /loader/b'),
    ("duplicate_in_list", GOOD + ', "x": [{}, {"n": 1, "n": 2}]}', 'key "n" appears twice in the object at /x/1'),
    ("nul_escape", '{"name": "org/m\\u0000../../x", "revision": "good"}', "\\u0000 (NUL)"),
    ("invalid_utf8", GOOD.encode() + b', "license": "\xff\xfe"}', "byte 0xff is not UTF-8"),
    ("cut_utf8", GOOD.encode() + b', "license": "\xc3"}', "cut short"),
    ("surrogate_utf8", GOOD.encode() + b', "license": "\xed\xa0\x80"}', "not UTF-8"),
    ("lone_surrogate", GOOD + ', "license": "\\ud800"}', "lone UTF-16 surrogate"),
    ("bom", b"\xef\xbb\xbf" + GOOD.encode() + b"}", "byte order mark"),
    ("trailing_text", GOOD + '} {"name": "other/m"}', "more text after the JSON value"),
    ("leading_zero", GOOD + ', "n_parameters": 012}', "leading zero"),
    ("control_char", GOOD + ', "license": "a\x01b"}', "control character"),
    ("odd_whitespace", GOOD + ',\x0b"x": 1}', "expected a key"),
    ("name_too_long", json.dumps({"name": "org/" + "m" * 300, "revision": "r"}),
     '"name" is 304 bytes long; its results folder name (each \'/\' as "__") would be 305 bytes, more than the 255'),
    ("revision_too_long", json.dumps({"name": "org/m", "revision": "r" * 256}),
     '"revision" is 256 bytes long, more than the 255'),
]


@pytest.mark.parametrize("case,text,says", BAD_META, ids=[c[0] for c in BAD_META])
def test_model_meta_python_and_c_would_disagree(tmp_path, case, text, says):
    td, ed = suite(tmp_path)
    with open(os.path.join(ed, "model_meta.json"), "wb") as f:
        f.write(text.encode() if isinstance(text, str) else text)
    out = tmp_path / "o"
    p = run(td, ed, str(out))
    assert p.returncode == 4, p.stderr  # model_meta.json problems fail the whole run (README: exit 4)
    assert "model_meta.json" in p.stderr and says in p.stderr, p.stderr
    assert not out.exists(), list(out.rglob("*"))


def test_what_python_reads_is_what_was_validated(tmp_path):
    """A file mteb writes (NaN, Infinity, non-ASCII, nested objects) is accepted and copied byte
    for byte; Python reading the copy finds the name and revision the results folder is named by."""
    td, ed = suite(tmp_path)
    text = ('{\n  "name": "org/mod\\u00e8le", "revision": "r\u00e9v", "similarity_fn_name": "cosine",\n'
            '  "max_tokens": Infinity, "memory_usage_mb": NaN, "big": 1e999, "neg": -Infinity,\n'
            '  "loader": {"kwargs": {"a": [1, 2.5e-3, -0.0, true, false, null]}}, "emoji": "\\ud83d\\ude00"\n}\n')
    mm = os.path.join(ed, "model_meta.json")
    open(mm, "w", encoding="utf-8").write(text)
    p = run(td, ed, str(tmp_path / "o"))
    assert p.returncode == 0, p.stderr
    res = p.stdout.strip()
    copy = open(os.path.join(res, "model_meta.json"), "rb").read()
    assert copy == open(mm, "rb").read()
    meta = json.loads(copy)
    assert res == os.path.join(str(tmp_path / "o"), "results", meta["name"].replace("/", "__"), meta["revision"])


def test_model_meta_fifo_is_refused_at_once(tmp_path):
    td, ed = suite(tmp_path)
    mm = os.path.join(ed, "model_meta.json")
    os.remove(mm)
    os.mkfifo(mm)
    p = run(td, ed, str(tmp_path / "o"))
    assert p.returncode == 4, p.stderr
    assert "model_meta.json" in p.stderr and "FIFO" in p.stderr, p.stderr


def test_model_meta_symlink_to_a_regular_file_is_read(tmp_path):
    td, ed = suite(tmp_path)
    mm = os.path.join(ed, "model_meta.json")
    os.rename(mm, str(tmp_path / "real_meta.json"))
    os.symlink(str(tmp_path / "real_meta.json"), mm)
    p = run(td, ed, str(tmp_path / "o"))
    assert p.returncode == 0, p.stderr


@pytest.mark.parametrize("case", ["duplicate_key", "fifo"])
def test_registry_read_strictly(tmp_path, case):
    """MIEB_REGISTRY goes through the same reader: a task given twice a "name" is refused."""
    td, ed = suite(tmp_path)
    reg = str(tmp_path / "tasks.json")
    if case == "fifo":
        os.mkfifo(reg)
        says = "FIFO"
    else:
        src = open(os.path.join(os.path.dirname(__file__), "..", "..", "configs", "tasks.json")).read()
        entry = next(t for t in json.loads(src) if t["name"] == TASK)
        text = json.dumps([entry])[:-2] + ', "name": "Other"}]'
        open(reg, "w").write(text)
        says = 'key "name" appears twice in the object at /0'
    env = dict(os.environ, MIEB_REGISTRY=reg)
    p = run(td, ed, str(tmp_path / "o"), env=env)
    assert p.returncode == 4, p.stderr
    assert "tasks.json" in p.stderr and says in p.stderr, p.stderr


def test_results_folder_is_named_as_mteb_names_it(tmp_path):
    """mteb's ModelMeta.model_name_as_path: "/" -> "__" and " " -> "_"."""
    td, ed = suite(tmp_path)
    open(os.path.join(ed, "model_meta.json"), "w").write(json.dumps({"name": "my org/my model", "revision": "r 1"}))
    p = run(td, ed, str(tmp_path / "o"))
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == os.path.join(str(tmp_path / "o"), "results", "my_org__my_model", "r 1")
