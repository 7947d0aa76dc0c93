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


# ---- the reader against Python's json module, on many texts ----

REFUSED = object()


def _floats(v):
    """Numbers as the doubles cJSON holds (integers too), for comparing trees."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, (int, float)):
        try:
            return float(v)
        except OverflowError:  # an integer of 400 digits: strtod's infinity
            return float("inf") if v > 0 else float("-inf")
    if isinstance(v, list):
        return [_floats(x) for x in v]
    return {k: _floats(x) for k, x in v.items()}


def _has_nul(v):
    if isinstance(v, str):
        return "\0" in v
    if isinstance(v, list):
        return any(_has_nul(x) for x in v)
    if isinstance(v, dict):
        return any("\0" in k or _has_nul(x) for k, x in v.items())
    return False


def python_reading(raw: bytes):
    """What mteb's Python makes of the bytes: the tree (NaN as None, as mieb-eval keeps it), or
    REFUSED when it cannot read them, or would read them differently from a C reader (a key
    given twice, NUL in a string) or could not write them back (a lone surrogate)."""
    dup = []

    def pairs(kv):
        keys = [k for k, _ in kv]
        dup.extend([True] if len(set(keys)) != len(keys) else [])
        return dict(kv)

    try:
        v = json.loads(raw.decode("utf-8"), object_pairs_hook=pairs,
                       parse_constant=lambda c: None if c == "NaN" else float(c))
        json.dumps(v, ensure_ascii=False).encode("utf-8")  # a lone surrogate cannot be
    except (UnicodeError, ValueError, RecursionError):
        return REFUSED
    return REFUSED if dup or _has_nul(v) else _floats(v)


TRICKY = [b'{}', b'[]', b' \t\r\n{"a": 1} \n', b'{"a": 1, "a": 1}', b'{"a": {"b": 1, "b": 2}}',
          b'{"a": "\\u0000"}', b'{"\\u0000": 1}', b'{"a": "\\ud800"}', b'{"a": "\\udc00\\ud800"}',
          b'{"a": "\\ud83d\\ude00"}', b'{"a": "\\ud83dx"}', b'{"a": "\\ud83d\\u0041"}', b'\xef\xbb\xbf{}',
          b'{"a": "\xc3\xa9"}', b'{"a": "\xc3"}', b'{"a": "\xe0\x80\x80"}', b'{"a": "\xf4\x90\x80\x80"}',
          b'{"a": "\xed\xa0\x80"}', b'{"a": 01}', b'{"a": 1.}', b'{"a": .5}', b'{"a": +1}', b'{"a": -}',
          b'{"a": 1e}', b'{"a": 1e+5}', b'{"a": -0}', b'{"a": 1E-400}', b'{"a": 1e999}', b'{"a": -1e999}',
          b'{"a": 123456789012345678901234567890}', b'{"a": ' + b'9' * 400 + b'}', b'{"a": NaN}',
          b'{"a": Infinity}', b'{"a": -Infinity}', b'{"a": nan}', b'{"a": -NaN}', b'{"a": true, "b": null}',
          b'{"a": tru}', b'{"a": 1,}', b'[1,]', b'[1 2]', b'{"a" 1}', b'{a: 1}', b"{'a': 1}", b'{"a": 1}}',
          b'{"a": 1} x', b'{"a": 1}\x00', b'\x00{"a": 1}', b'{"a":\x0b1}', b'{"a":\x0c1}', b'{"a": "x\ty"}',
          b'{"a": "x\x7fy"}', b'{"a": "\\x41"}', b'{"a": "\\u004"}', b'{"a": "\\u004G"}', b'{"a": "\\/"}',
          b'"just a string"', b'12', b'null', b'', b' ', b'{"a": [' * 50 + b']' * 50 + b'}',
          b'[' * 300 + b']' * 300, b'[' * 1001 + b']' * 1001]  # 1000 deep: see json_strict.h


def mutations(seed, n):
    import random
    rng = random.Random(seed)
    base = ('{"name": "org/m\\u00e8", "revision": "r", "similarity_fn_name": "cosine", "max_tokens": Infinity, '
            '"n": [1, -2.5e3, 0.0, true, null], "loader": {"k": "v\\n", "e": "\\ud83d\\ude00"}}').encode()
    tokens = [b'\\u0000', b'\\ud800', b'"name": 1, ', b', "k": 2', b'\x0b', b'\xff', b'\xc3', b'\xef\xbb\xbf', b'0',
              b'.', b'e', b'-', b'NaN', b'"', b'\\', b'}', b']', b'{', b'[', b',', b':', b' ', b'\x01', b'\xe2\x82\xac']
    for _ in range(n):
        t = bytearray(base)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(t) + 1)
            op = rng.random()
            if op < 0.5:
                t[at:at] = rng.choice(tokens)
            elif op < 0.8 and at < len(t):
                del t[at]
            elif at < len(t):
                t[at] = rng.randrange(256)
        yield bytes(t)


def test_reader_agrees_with_python_json(tmp_path):
    """Every text mieb-eval accepts, Python reads to the same tree; every text it refuses,
    Python cannot read, or would read differently from a C reader (the cases above)."""
    texts = TRICKY + list(mutations(11, 600))
    paths = []
    for i, t in enumerate(texts):
        p = tmp_path / f"{i}.json"
        p.write_bytes(t)
        paths.append(str(p))
    from helpers.mieb_tools import tool
    out = subprocess.run([str(tool("json_strict_tool")), *paths], capture_output=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.decode("utf-8").split("\n")[:-1]
    assert len(lines) == len(texts)
    refused = 0
    for t, line in zip(texts, lines):
        py = python_reading(t)
        if line.startswith("refused "):
            refused += 1
            assert py is REFUSED, f"{t!r}: refused ({line}) but Python reads {py!r}"
        else:
            assert line.startswith("ok ")
            assert py is not REFUSED, f"{t!r}: accepted, but Python refuses it or reads it another way"
            assert _floats(json.loads(line[3:])) == py, f"{t!r}: read as {line[3:]}, Python reads {py!r}"
    assert 0 < refused < len(texts)
