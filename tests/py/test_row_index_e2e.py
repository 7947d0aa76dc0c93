"""/row_index end to end (host/emb/emb_order.c): a role that holds every row of its split may
store its rows in any order when its /row_index says which split row each one is. Every family
must then score it exactly as the same embeddings stored in order: the result files are equal
byte for byte apart from the timings (`evaluation_time`, `date`, the phases' `start`/`end`),
and so are the --per-query files, for one file or uneven shards, every block size the
--mem-limit gives, single-vector and multi-vector (MaxSim) roles and 16-bit encodings.
A /row_index that is not a permutation of the split's rows is refused, naming the file and
/row_index, and the other task of the run is still scored."""
from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess

import h5py
import numpy as np
import pytest

from helpers.mieb_tools import build_dir

# every family: compositionality, retrieval (two), linear probe, clustering, zero-shot, STS, VOC2007
TASKS = ["Winoground", "CIRRIT2IRetrieval", "DTD", "ImageNetDog15Clustering", "DTDZeroShot", "STS13VisualSTS",
         "VOC2007", "VidoreTatdqaRetrieval"]
MAXSIM_TASKS = ["CIRRIT2IRetrieval", "VidoreTatdqaRetrieval", "DTDZeroShot"]
SMALL_MEM = "512K"  # CIRRIT2IRetrieval's 4310 documents then stream in 4 blocks of 1250 (-v says so)


def mieb(*args):
    return subprocess.run([str(build_dir() / "mieb-eval"), *map(str, args)], capture_output=True, text=True,
                          timeout=600)


def synth(out, tasks, *extra):
    r = mieb("synth", "--out", out, "--tasks", ",".join(tasks), "--scale", 0.2, "--dim", 16, "--seed", 5, *extra)
    assert r.returncode == 0, r.stderr
    return os.path.join(out, "task-data"), os.path.join(out, "embeddings")


def run(td, ed, out, tasks, *extra):
    return mieb("run", "--task-data", td, "--embeddings", ed, "--output-folder", out, "--device", "cpu",
                "--progress", "off", "--per-query", os.path.join(out, "pq"), "-t", *tasks, *extra)


TIMING = re.compile(r'("(?:evaluation_time|date|start|end)": )[-0-9.eE+]+')


def outputs(out):
    """Every result and --per-query file under out, timings masked."""
    files = {}
    for p in sorted(glob.glob(os.path.join(out, "**", "*"), recursive=True)):
        if os.path.isfile(p):
            with open(p, encoding="utf-8") as f:
                files[os.path.relpath(p, out)] = TIMING.sub(r"\1T", f.read())
    return files


def role_files(d, role):
    single = os.path.join(d, f"{role}.h5")
    return [single] if os.path.exists(single) else sorted(glob.glob(os.path.join(d, f"{role}-*-of-*.h5")))


def read_role(d, role):
    """The role's items in stored order: raw /embeddings, /offsets, /row_index, attributes."""
    parts = []
    for p in role_files(d, role):
        with h5py.File(p, "r") as f:
            parts.append(dict(start=int(f.attrs.get("row_start", 0)), emb=f["embeddings"][()],
                              off=f["offsets"][()] if "offsets" in f else None,
                              ri=f["row_index"][()] if "row_index" in f else None,
                              attrs={k: v for k, v in f.attrs.items() if k not in ("row_start", "n_rows")},
                              dattrs=dict(f["embeddings"].attrs)))
        os.remove(p)
    parts.sort(key=lambda q: q["start"])
    emb = np.concatenate([q["emb"] for q in parts])
    off = None
    if parts[0]["off"] is not None:
        off, base = [0], 0
        for q in parts:
            off += (q["off"][1:] + base).tolist()
            base += q["off"][-1]
        off = np.asarray(off, np.int64)
    n = len(off) - 1 if off is not None else len(emb)
    ri = np.concatenate([q["ri"] for q in parts]) if parts[0]["ri"] is not None else np.arange(n, dtype=np.int64)
    return emb, off, ri, parts[0]["attrs"], parts[0]["dattrs"]


def write_permuted(d, role, rng, n_shards, compress, even=False):
    """Store the role's items in a random order with the /row_index that says where each
    belongs, in n_shards uneven shards (some may be empty), or even ones."""
    emb, off, ri, attrs, dattrs = read_role(d, role)
    n = len(ri)
    perm = rng.permutation(n)
    if off is None:
        emb, off_new = emb[perm], None
    else:
        items = [emb[off[i]:off[i + 1]] for i in perm]
        emb = np.concatenate(items)
        off_new = np.concatenate([[0], np.cumsum([len(x) for x in items])]).astype(np.int64)
    ri = ri[perm]
    cuts = [0, *sorted(rng.integers(0, n + 1, n_shards - 1).tolist()), n]
    if even:
        cuts = np.linspace(0, n, n_shards + 1).astype(int).tolist()
    for k in range(n_shards):
        a, b = cuts[k], cuts[k + 1]
        name = f"{role}.h5" if n_shards == 1 else f"{role}-{k:05d}-of-{n_shards:05d}.h5"
        with h5py.File(os.path.join(d, name), "w") as f:
            for key, v in attrs.items():
                f.attrs[key] = v
            if n_shards > 1:
                f.attrs["row_start"], f.attrs["n_rows"] = np.int64(a), np.int64(b - a)
            r0, r1 = (a, b) if off_new is None else (off_new[a], off_new[b])
            part = emb[r0:r1]
            kw = dict(chunks=(min(len(part), 5), part.shape[1]), compression="gzip") if compress and len(part) else {}
            ds = f.create_dataset("embeddings", data=part, **kw)
            for key, v in dattrs.items():
                ds.attrs[key] = v
            if off_new is not None:
                f["offsets"] = off_new[a:b + 1] - off_new[a]
            f["row_index"] = ri[a:b]


def permute_all(ed_src, ed_dst, seed, n_shards, compress=False, even=False):
    """Copy the embeddings and store every role of every task permuted (the few-shot train
    roles too: they keep their subset semantics and must also give the same scores)."""
    shutil.copytree(ed_src, ed_dst)
    rng = np.random.default_rng(seed)
    for d in sorted(glob.glob(os.path.join(ed_dst, "*", "*", "*"))):
        roles = sorted({re.sub(r"-\d+-of-\d+$", "", os.path.basename(p)[:-3]) for p in glob.glob(f"{d}/*.h5")})
        for role in roles:
            write_permuted(d, role, rng, n_shards, compress, even)


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rowidx")
    td, ed = synth(str(tmp / "s"), TASKS, "--shards", 2)
    out = str(tmp / "in-order")
    r = run(td, ed, out, TASKS)
    assert r.returncode == 0, r.stderr
    return tmp, td, ed, outputs(out)


@pytest.mark.parametrize("n_shards,compress,seed", [(1, False, 1), (3, False, 2), (4, True, 3)],
                         ids=["one-file", "shards", "shards-gzip"])
@pytest.mark.parametrize("mem", [None, SMALL_MEM], ids=["whole", "blocks"])
def test_permuted_roles_score_as_in_order(base, n_shards, compress, seed, mem):
    """Every role of every family stored in a seeded random order: the same result and
    --per-query files, whole and with the corpus streamed in four blocks."""
    tmp, td, ed, want = base
    ed2 = str(tmp / f"perm-{n_shards}-{compress}-{seed}-{mem}")
    permute_all(ed, ed2, seed, n_shards, compress)
    out = str(tmp / f"out-{n_shards}-{compress}-{seed}-{mem}")
    r = run(td, ed2, out, TASKS, *(["--mem-limit", mem, "-v"] if mem else []))
    assert r.returncode == 0, r.stderr
    assert not mem or "corpus 4310, blocks of 1250 docs" in r.stderr, r.stderr
    got = outputs(out)
    assert sorted(got) == sorted(want)
    for name in want:
        assert got[name] == want[name], name


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_permuted_multivector_roles_score_as_in_order(tmp_path, dtype):
    """MaxSim: each item moves with its token rows; queries and corpus in shards, small blocks."""
    td, ed = synth(str(tmp_path / "s"), MAXSIM_TASKS, "--model-sim", "MaxSim", "--dtype", dtype)
    r = run(td, ed, str(tmp_path / "a"), MAXSIM_TASKS)
    assert r.returncode == 0, r.stderr
    permute_all(ed, str(tmp_path / "perm"), 7, 3)
    for mem in ([], ["--mem-limit", SMALL_MEM]):
        out = str(tmp_path / f"b{len(mem)}")
        r = run(td, str(tmp_path / "perm"), out, MAXSIM_TASKS, *mem)
        assert r.returncode == 0, r.stderr
        assert outputs(out) == outputs(str(tmp_path / "a"))


def set_row_index(path, values):
    with h5py.File(path, "r+") as f:
        del f["row_index"]
        f["row_index"] = np.asarray(values, np.int64)


def duplicate(files, k, ri):
    ri = ri.copy()
    ri[5] = ri[2]
    set_row_index(files[k], ri)
    return "/row_index[5] = %d repeats /row_index[2]" % ri[2]


def out_of_range(files, k, ri):
    ri = ri.copy()
    ri[4] = 10**6
    set_row_index(files[k], ri)
    return "/row_index[4] = 1000000 is outside"


def negative(files, k, ri):
    ri = ri.copy()
    ri[3] = -4
    set_row_index(files[k], ri)
    return "/row_index[3] = -4 is negative"


def subset(files, k, ri):
    """One item fewer than the split: its /row_index still names row n-1 of a role of n-1 items."""
    n = sum(len(h5py.File(p, "r")["row_index"]) for p in files)
    drop = next(j for j in range(len(ri)) if ri[j] != n - 1)
    keep_at = [j for j in range(len(ri)) if j != drop]  # row n-1 stays, now out of range
    with h5py.File(files[k], "r+") as f:
        x = f["embeddings"][()][keep_at]
        del f["embeddings"]
        f["embeddings"] = x
        f.attrs["n_rows"] = np.int64(len(x))
    for p in files[k + 1:]:
        with h5py.File(p, "r+") as f:
            f.attrs["row_start"] = np.int64(f.attrs["row_start"] - 1)
    set_row_index(files[k], ri[keep_at])
    at = keep_at.index(int(np.flatnonzero(ri == n - 1)[0]))
    return "/row_index[%d] = %d is outside 0..%d" % (at, n - 1, n - 2)


def wrong_length(files, k, ri):
    set_row_index(files[k], ri[:-1])
    return "/row_index has %d entries, expected %d" % (len(ri) - 1, len(ri))


# (what is broken, task, role); wrong_length was refused before /row_index was applied too
CASES = [(duplicate, "CIRRIT2IRetrieval", "corpus"), (out_of_range, "STS13VisualSTS", "sentence2"),
         (negative, "DTDZeroShot", "eval"), (subset, "DTD", "eval"), (duplicate, "ImageNetDog15Clustering", "eval"),
         (out_of_range, "Winoground", "texts"), (subset, "CIRRIT2IRetrieval", "queries"),
         (wrong_length, "DTDZeroShot", "candidate_labels")]


@pytest.mark.parametrize("breaker,task,role", CASES, ids=[f"{b.__name__}-{t}-{r}" for b, t, r in CASES])
def test_row_index_not_a_permutation_is_refused(tmp_path, breaker, task, role):
    good = "VidoreTatdqaRetrieval"
    td, ed = synth(str(tmp_path / "s"), [task, good])
    ed2 = str(tmp_path / "perm")
    permute_all(ed, ed2, 3, 2, even=True)
    files = role_files(os.path.join(ed2, task, "test", "default"), role)
    index = [h5py.File(p, "r")["row_index"][()] for p in files]
    n = sum(len(ri) for ri in index)
    k = next(k for k, ri in enumerate(index) if (ri == n - 1).any())  # the shard holding the last row
    ri = index[k]
    msg = breaker(files, k, ri)
    out = str(tmp_path / "out")
    r = run(td, ed2, out, [task, good])
    assert r.returncode == 1, r.stderr
    assert os.path.basename(files[k]) in r.stderr and msg in r.stderr and task in r.stderr, r.stderr
    names = {os.path.basename(p) for p in glob.glob(os.path.join(out, "results", "*", "*", "*.json"))}
    assert f"{good}.json" in names and f"{task}.json" not in names, names


def test_permuted_corpus_in_corpus_parts(tmp_path):
    """Corpus parts stream ranges of mteb's 50,000-document chunks: each part gathers its range
    of a corpus stored in another order, and the merged result (and --per-query files) equal a
    single run on the corpus stored in order. Parts of either layout merge with each other:
    the input fingerprint hashes the items in the split's order."""
    from test_retrieval_e2e import build_task
    task = "CIRRIT2IRetrieval"
    td, ed, _ = build_task(str(tmp_path), np.random.default_rng(4), task, 12, 120_000, 8, sim="dot", shards=2)
    single = str(tmp_path / "single")
    assert run(td, ed, single, [task]).returncode == 0
    ed2 = str(tmp_path / "perm")
    permute_all(ed, ed2, 9, 3)
    pd, merged = str(tmp_path / "parts"), str(tmp_path / "merged")
    for i in range(2):
        r = run(td, ed2 if i == 0 else ed, str(tmp_path / "p"), [task], "--corpus-parts", 2, "--corpus-part", i,
                "--partials-dir", pd, "--mem-limit", "4M")
        assert r.returncode == 0, r.stderr
    r = mieb("merge", "--partials-dir", pd, "--task-data", td, "--embeddings", ed2, "--output-folder", merged,
             "-t", task, "--per-query", os.path.join(merged, "pq"))
    assert r.returncode == 0, r.stderr
    assert merged_outputs(merged) == merged_outputs(single)
    shutil.rmtree(pd)
    for i in range(2):
        r = run(td, ed2, str(tmp_path / "p2"), [task], "--corpus-parts", 2, "--corpus-part", i, "--partials-dir", pd,
                "--mem-limit", "4M")
        assert r.returncode == 0, r.stderr
    merged = str(tmp_path / "merged2")
    r = mieb("merge", "--partials-dir", pd, "--task-data", td, "--embeddings", ed2, "--output-folder", merged,
             "-t", task, "--per-query", os.path.join(merged, "pq"))
    assert r.returncode == 0, r.stderr
    assert merged_outputs(merged) == merged_outputs(single)


def merged_outputs(out):
    """outputs() with each result cut before "evaluation_time": a merge names its phases apart."""
    return {k: v.split('"evaluation_time"')[0] for k, v in outputs(out).items()}
