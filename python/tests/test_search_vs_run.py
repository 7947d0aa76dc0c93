"""mieb_eval.search gives the rankings `mieb-eval run --per-query` writes (run.trec) for the same
embeddings and ids: the package and the program are one engine."""
import json
import re
import subprocess

import h5py
import numpy as np

import mieb_eval
from mieb_eval import _lib

TASK = "BLINKIT2IRetrieval"


def unescape(word: str) -> str:
    """run.trec's ids: \\xHH for the bytes the file rule escapes (docs/BAD_INPUT.md)."""
    raw = re.sub(rb"\\x([0-9a-fA-F]{2})", lambda m: bytes([int(m.group(1), 16)]), word.encode())
    return raw.decode()


def test_search_ranks_as_run_writes(tmp_path, engine):
    prog = str(_lib.program_path())
    subprocess.run([prog, "synth", "--out", tmp_path, "--tasks", TASK, "--scale", "0.2"], check=True,
                   capture_output=True)
    subprocess.run([prog, "run", "--task-data", tmp_path / "task-data", "--embeddings", tmp_path / "embeddings",
                    "-t", TASK, "--output-folder", tmp_path / "out", "--per-query", tmp_path / "pq",
                    "--device", "cpu"], check=True, capture_output=True)
    with h5py.File(tmp_path / "task-data" / f"{TASK}.h5", "r") as td:
        g = td["test/default"]
        qids = [x.decode() for x in g["query_ids"][()]]
        cids = [x.decode() for x in g["corpus_ids"][()]]
        indptr = g["qrels_indptr"][()]
    emb = tmp_path / "embeddings" / TASK / "test" / "default"
    with h5py.File(emb / "queries.h5", "r") as f:
        q = f["embeddings"][()]
    with h5py.File(emb / "corpus.h5", "r") as f:
        c = f["embeddings"][()]
    sim = json.loads((tmp_path / "embeddings" / "model_meta.json").read_text()).get("similarity_fn_name") or "cosine"

    ran = {}
    for line in (tmp_path / "pq" / TASK / "test" / "default" / "run.trec").read_text().splitlines():
        qid, _, doc, rank, score, _ = line.split(" ")
        ran.setdefault(unescape(qid), []).append((int(rank), unescape(doc), float(score)))
    scores, indices = mieb_eval.search(q, c, top_k=1000, similarity=sim, corpus_ids=cids, engine=engine)
    kept = [i for i in range(len(qids)) if indptr[i + 1] > indptr[i]]
    assert kept and set(ran) == {qids[i] for i in kept}
    for i in kept:
        want = sorted(ran[qids[i]])
        got = [(r + 1, cids[d], float(s)) for r, (d, s) in enumerate(zip(indices[i], scores[i])) if d >= 0]
        assert [w[1] for w in want] == [g[1] for g in got], qids[i]
        np.testing.assert_array_equal(np.float32([w[2] for w in want]), np.float32([g[2] for g in got]))
