"""Compositionality (host/families/compositionality.c, host/metrics/compositionality.c,
host/cpu/cpu_pairwise.c) against mteb's own _compute_metrics
(tests/py/helpers/mteb_pair_ref.py):

* any n_images x n_texts, on embeddings drawn from a small pool of vectors with +-1
  entries (times powers of two), so cosines are exact multiples of 1/4 and ties are
  everywhere: the first-maximum argmax, Winoground's asymmetric rule and the structural
  zeros of ARO / SugarCrepe / ImageCoDe must come out exactly as in mteb;
* float16 / bfloat16 embeddings normalised and multiplied in their own dtype (PROTOCOLS.md
  §13), where the rounding itself creates ties;
* `mieb-eval run` on all seven tasks: the whole result file equals mteb's (float32 means,
  key order, 6-decimal rounding, json.dump bytes), with sharded inputs and a memory limit
  small enough to force many sample blocks;
* bad input is refused with the file at fault.
"""
from __future__ import annotations

import json
import os
import subprocess
import zlib

import h5py
import numpy as np
import pytest

from helpers import fmt_writer as fw
from helpers import mteb_pair_ref as ref
from helpers.mieb_tools import run_tool

BUILD = os.environ.get("MIEB_BUILD_DIR", "")
BIN = os.path.join(BUILD, "mieb-eval")
REPO = os.environ.get("MIEB_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
REG = {t["name"]: t for t in json.load(open(os.path.join(REPO, "configs", "tasks.json")))}
TASKS = ["AROCocoOrder", "AROFlickrOrder", "AROVisualAttribution", "AROVisualRelation", "SugarCrepe", "Winoground",
         "ImageCoDe"]


def _hx(a):
    return " ".join(float(v).hex() for v in np.asarray(a, dtype=np.float64).ravel())


def tool_scores(img, txt, ns, ni, nt, dti="f32", dtt="f32"):
    d = img.shape[1]
    out = run_tool("pairwise_tool", f"compo {dti} {dtt} {ns} {ni} {nt} {d} {_hx(img)} {_hx(txt)}\n").splitlines()
    s = np.array([float.fromhex(t) for t in out[0].split()], dtype=np.float32).reshape(ns, ni, nt)
    f = out[1].split()
    counts = tuple(int(v) for v in f[:4])
    means = dict(image_acc=float.fromhex(f[4]), text_acc=float.fromhex(f[5]), accuracy=float.fromhex(f[6]))
    return s, counts, means


def pool_vectors(rng, n, dim, pool=6):
    """n rows drawn from a pool of `pool` vectors with 4 entries of +-1, each row scaled by 2^k:
    cosines are exact quarters and repeat constantly."""
    p = np.zeros((pool, dim), dtype=np.float32)
    for i in range(pool):
        idx = rng.choice(dim, 4, replace=False)
        p[i, idx] = rng.choice([-1.0, 1.0], 4)
    rows = p[rng.integers(0, pool, n)]
    return rows * (2.0 ** rng.integers(-3, 4, size=(n, 1))).astype(np.float32)


SHAPES = [(1, 1), (1, 2), (1, 5), (2, 2), (3, 2), (2, 3), (10, 1), (4, 4)]


@pytest.mark.parametrize("shape", SHAPES, ids=[f"{a}x{b}" for a, b in SHAPES])
def test_any_shape_with_exact_ties(shape):
    ni, nt = shape
    rng = np.random.default_rng(zlib.crc32(repr(shape).encode()))
    ns = 300
    img, txt = pool_vectors(rng, ns * ni, 8), pool_vectors(rng, ns * nt, 8)
    s, counts, means = tool_scores(img, txt, ns, ni, nt)
    mats = ref.compo_matrices(img, txt, ni, nt)
    assert np.array_equal(s, np.stack(mats))
    want = ref.compo_metrics(mats, ni, nt)
    assert means == want and list(want) == ["image_acc", "text_acc", "accuracy"]
    assert counts[0] == ns
    ties = sum(len(np.unique(m[i])) < nt for m in mats for i in range(ni)) + \
        sum(len(np.unique(m[:, j])) < ni for m in mats for j in range(nt))
    assert ties > ns // 10 or ni * nt == 1  # the ties are really there
    if ni < nt:
        assert means["image_acc"] == 0.0 and means["accuracy"] == 0.0  # ARO / SugarCrepe
    if nt < ni:
        assert means["text_acc"] == 0.0 and means["accuracy"] == 0.0  # ImageCoDe


def test_winoground_asymmetric_rule():
    """S00 == S01 (tie) with S11 > S10: text correct, image not (S11 > S01 fails); and the mirror."""
    v = lambda *x: np.array(x, dtype=np.float32)  # noqa: E731
    i0, i1 = v(1, 1, 1, 1), v(-1, 1, -1, 1)
    t0, t1 = v(1, 1, 1, -1), v(1, 1, -1, 1)
    img, txt = np.stack([i0, i1]), np.stack([t0, t1])
    s, counts, means = tool_scores(img, txt, 1, 2, 2)
    assert s[0].tolist() == [[0.5, 0.5], [-0.5, 0.5]]
    assert counts == (1, 1, 0, 0)
    # swap the roles of images and texts: S transposed -> image correct, text not
    s, counts, _ = tool_scores(txt, img, 1, 2, 2)
    assert counts == (1, 0, 1, 0)
    # S11 == S10 tie: the strict ">" makes the text side wrong
    s, counts, _ = tool_scores(np.stack([i0, t0]), np.stack([i0, i0]), 1, 2, 2)
    assert counts[1] == 0
    assert ref.compo_metrics([m for m in s], 2, 2)["text_acc"] == 0.0


@pytest.mark.parametrize("dt", ["f16", "bf16"])
def test_half_dtypes_round_like_torch(dt):
    """fp16 / bf16: normalised values and scores are rounded to the dtype, which makes close
    cosines tie; the metrics follow mteb on those rounded matrices."""
    rng = np.random.default_rng(11 if dt == "f16" else 12)
    ns, ni, nt, d = 400, 1, 5, 64
    base = rng.standard_normal((ns, d)).astype(np.float32)
    img = ref._round16(base, dt)
    txt = np.repeat(base, nt, axis=0) + rng.standard_normal((ns * nt, d)).astype(np.float32) * 1e-3
    txt = ref._round16(txt, dt)
    s, counts, means = tool_scores(img, txt, ns, ni, nt, dt, dt)
    mats = ref.compo_matrices(img, txt, ni, nt, dt)
    assert np.array_equal(s, np.stack(mats))
    assert means == ref.compo_metrics(mats, ni, nt)
    ties = sum(int(np.sum(m[0] == m[0].max()) > 1) for m in mats)
    assert ties > 10, ties  # half precision creates ties that fp32 would not
    s32, _, m32 = tool_scores(img, txt, ns, ni, nt)
    assert not np.array_equal(s32, s)


def test_zero_vector_in_float16_gives_nan_scores():
    """F.normalize's eps (1e-12) is 0 in float16, so a zero vector normalises to 0/0 = NaN;
    torch.argmax then picks the first NaN, which can make a sample "correct"."""
    rng = np.random.default_rng(5)
    ns, ni, nt, d = 30, 1, 3, 8
    img, txt = pool_vectors(rng, ns * ni, d), pool_vectors(rng, ns * nt, d)
    img[:5] = 0.0  # samples 0-4: NaN row -> argmax 0 -> text correct
    txt[3 * 5 + 1] = 0.0  # sample 5: text 1 is NaN -> argmax 1 (NaN wins) -> wrong
    for dt in ("f16", "bf16", "f32"):
        s, counts, means = tool_scores(img, txt, ns, ni, nt, dt, dt)
        mats = ref.compo_matrices(img, txt, ni, nt, dt)
        assert np.array_equal(s, np.stack(mats), equal_nan=True)
        assert means == ref.compo_metrics(mats, ni, nt)
        assert np.isnan(s[0]).all() == (dt == "f16")  # bf16 keeps 1e-12, f32 too: 0/eps = 0


# ---- end to end ----

def write_task(td, ed, task, rng, ns, dim=8, dtype="f32", shards=1, attrs=None):
    t = REG[task]
    ni, nt = len(t["columns"]["images_column_names"]), len(t["columns"]["texts_column_names"])
    f = fw.open_task_file(td, task)
    g = f.require_group("test/default")
    a = dict(n_samples=ns, n_images=ni, n_texts=nt)
    a.update(attrs or {})
    for k, v in a.items():
        g.attrs[k] = np.int64(v)
    f.close()
    img, txt = pool_vectors(rng, ns * ni, dim), pool_vectors(rng, ns * nt, dim)
    # planted: the correct items share their concept in most samples
    for s in range(ns):
        if rng.random() < 0.6:
            for k in range(min(ni, nt)):
                txt[s * nt + k] = img[s * ni + k] * np.float32(2.0 ** rng.integers(-1, 2))
    img = fw.write_role(ed, task, "test", "default", "images", img, dtype=dtype, shards=shards)
    txt = fw.write_role(ed, task, "test", "default", "texts", txt, dtype=dtype)
    return img, txt, ni, nt


def result_path(out, task):
    return os.path.join(out, "results", "test-org__test-model", "rev0", f"{task}.json")


def run_mieb(td, ed, out, tasks, *extra, check=True):
    p = subprocess.run([BIN, "run", "--task-data", td, "--embeddings", ed, "-t", *tasks, "--output-folder", out,
                        "--device", "cpu", *extra], capture_output=True, text=True, timeout=600)
    if check and p.returncode != 0:
        raise AssertionError(f"mieb-eval failed ({p.returncode}):\n{p.stderr}")
    return p


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_all_tasks_match_mteb(tmp_path, dtype):
    rng = np.random.default_rng(zlib.crc32(dtype.encode()))
    td, ed, out = str(tmp_path / "td"), str(tmp_path / "emb"), str(tmp_path / "out")
    fw.write_model_meta(ed, sim="dot")  # ignored: compositionality is always cosine
    truth = {t: write_task(td, ed, t, rng, ns=int(rng.integers(40, 120)), dtype=dtype, shards=1 + (i % 3))
             for i, t in enumerate(TASKS)}
    run_mieb(td, ed, out, TASKS, "--mem-limit", "4K")  # blocks of a few samples
    for task, (img, txt, ni, nt) in truth.items():
        text = open(result_path(out, task), encoding="utf-8").read()
        data = json.loads(text)
        assert json.dumps(data, indent=2) == text
        m = ref.compo_metrics(ref.compo_matrices(img, txt, ni, nt, dtype), ni, nt)
        t = REG[task]
        want = ref.round_scores({"test": [dict(m, main_score=m[t["main_score"]], hf_subset="default",
                                               languages=t["eval_langs"], mteb_version="2.26.24")]})
        assert data["scores"] == want, (task, data["scores"], want)
        assert list(data["scores"]["test"][0]) == list(want["test"][0])
        assert data["dataset_revision"] == "datarev" and data["kg_co2_emissions"] is None


def test_float32_means_in_file(tmp_path):
    """A 400-sample Winoground with 36 all-correct samples: accuracy is float32(0.09) widened,
    0.09000000357627869, rounded to 0.09 in the file exactly as mteb writes it."""
    assert ref.compo_metrics([np.eye(2, dtype=np.float32)] * 36 + [np.ones((2, 2), np.float32)] * 364, 2, 2)[
        "accuracy"] == 0.09000000357627869
    rng = np.random.default_rng(0)
    ns = 400
    img = np.tile(np.eye(2, 4, dtype=np.float32), (ns, 1))
    txt = np.tile(np.ones((2, 4), np.float32), (ns, 1))
    txt[: 36 * 2] = img[: 36 * 2]
    _, counts, means = tool_scores(img, txt, ns, 2, 2)
    assert counts[3] == 36 and means["accuracy"] == 0.09000000357627869


# ---- bad input ----

def _broken(tmp_path, breaker, task="Winoground", good="AROVisualRelation"):
    rng = np.random.default_rng(1)
    td, ed, out = str(tmp_path / "td"), str(tmp_path / "emb"), str(tmp_path / "out")
    fw.write_model_meta(ed)
    write_task(td, ed, task, rng, 20)
    write_task(td, ed, good, rng, 20)
    what = breaker(td, ed)
    p = run_mieb(td, ed, out, [task, good], check=False)
    assert p.returncode == 1, p.stderr
    assert not os.path.exists(result_path(out, task))
    assert os.path.exists(result_path(out, good))
    for w in what:
        assert w in p.stderr, (w, p.stderr)


def _emb(ed, role, task="Winoground"):
    return os.path.join(ed, task, "test", "default", f"{role}.h5")


def test_rows_not_matching_samples(tmp_path):
    def brk(td, ed):
        with h5py.File(_emb(ed, "images"), "r+") as f:
            x = f["embeddings"][:-1]
            del f["embeddings"]
            f.create_dataset("embeddings", data=x)
        return ["images.h5", "39 rows", "n_samples x n_images = 40"]
    _broken(tmp_path, brk)


def test_attribute_not_matching_registry(tmp_path):
    def brk(td, ed):
        with h5py.File(os.path.join(td, "Winoground.h5"), "r+") as f:
            f["test/default"].attrs["n_texts"] = np.int64(4)
        return ["Winoground.h5", "n_texts = 4", "texts_column_names"]
    _broken(tmp_path, brk)


def test_missing_attribute(tmp_path):
    def brk(td, ed):
        with h5py.File(os.path.join(td, "Winoground.h5"), "r+") as f:
            del f["test/default"].attrs["n_samples"]
        return ["Winoground.h5", "n_samples"]
    _broken(tmp_path, brk)


def test_nan_embedding(tmp_path):
    def brk(td, ed):
        with h5py.File(_emb(ed, "texts"), "r+") as f:
            f["embeddings"][7, 1] = np.nan
        return ["texts.h5", "embeddings"]
    _broken(tmp_path, brk)


def test_dimension_mismatch_and_multivector(tmp_path):
    def brk(td, ed):
        with h5py.File(_emb(ed, "texts"), "r+") as f:
            x = f["embeddings"][:]
            del f["embeddings"]
            f.create_dataset("embeddings", data=np.zeros((x.shape[0], x.shape[1] + 2), np.float32))
            f.attrs["dim"] = x.shape[1] + 2
        return ["images.h5", "dimension"]
    _broken(tmp_path / "a", brk)

    def brk2(td, ed):
        with h5py.File(_emb(ed, "images"), "r+") as f:
            f["offsets"] = np.arange(41, dtype=np.int64)
        return ["images.h5", "multi-vector"]
    _broken(tmp_path / "b", brk2)
