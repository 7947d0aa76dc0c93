#!/usr/bin/env python3
"""mieb-eval against mteb itself, whole tasks at MIEB's real sizes (times a fraction).

    .venv-mteb/bin/python bench/bench_vs_mteb.py [-t TASK ...] [--fraction F] [--dim 768]
        [--fit TASK ...] [--fit-fractions 0.01,0.02,0.04] [--fit-above-pairs 2e9] [--fit-check F2]
        [--device cpu|cuda] [--threads N] [--binary build/mieb-eval] [--work DIR] [--keep]
        [--timeout S] [--json-out F] [--md-out F] [--from-json F ...]

The question it answers: "I have my model's embeddings; how long does mteb take to score these
tasks, how long does mieb-eval take, and are the numbers the same?"

For each task (default: the largest MIEB(lite) task of every task type, by the number of vectors
mteb encodes for it, configs/tasks.json `est_vectors`, over configs/benchmarks.json's MIEB(lite)):

1. The task is built in memory as one of mteb's own task classes (AbsTaskRetrieval,
   AbsTaskClassification, AbsTaskClusteringLegacy, AbsTaskZeroShotClassification,
   AbsTaskImageTextPairClassification, AbsTaskSTS), with the registry's type, category,
   modalities, main score and hf_subsets, at the registry's sizes times F: queries and corpus
   (per subset: the totals divided evenly), train and test rows, classes, pairs; a
   VisionCentricQA task gets per-query candidate lists (top_ranked) of n_corpus / n_queries
   documents. Items are tiny images (2x2 pixels) and short texts that carry an item number; a
   planted encoder maps the number to a synthetic vector of dimension --dim with structure:
   relevant documents near their queries, class clusters, captions near their image, STS pairs
   correlated with their gold score. The metadata helper is tests/py/helpers/mteb_inmem.py's, the
   encode settings and the rng reset tests/py/helpers/mteb_parity_driver.py's.
2. mieb_eval.export's `export` (tools/mieb-export) writes the task data and the embeddings in mieb-eval's format
   (setup, not timed).
3. mteb: a subprocess imports mteb, builds the task and runs `mteb.evaluate` with the replay
   model (mieb_eval.export.ReplayEncoder: every encode call answered with the exported rows). Timed as
   a whole process (wall, peak RSS of the process); inside it the evaluate call and the time
   spent inside the replay model's encode calls (mteb's dataloader feeding the model, the item
   hashing and the row lookup) are timed too, and "mteb scoring" is evaluate minus encode.
4. mieb-eval: `mieb-eval run` on the exported files as a whole process (wall, peak RSS).
5. `mieb-eval parity --reference <mteb's results> --candidate <mieb-eval's>`: every key; the
   script exits 1 when parity finds anything beyond its tolerances (or a side fails).

Where mteb would take hours (retrieval tasks whose query x document pairs at F exceed
--fit-above-pairs, or tasks named by --fit), both sides are measured at --fit-fractions
instead and each side's time at F is extrapolated from a non-negative least-squares fit on the
family's cost terms (retrieval: 1, Q x min(N, 1001) x chunks (mteb's heap), Q x N (scores);
clustering: 1, n x k; probe: 1, k x (16 k + n_test); zero-shot: 1, n x k; compositionality:
1, n x images x texts; STS: 1, n). Such rows are labelled "extrapolated".

Wall times and CPU seconds (user + system, all threads) are both fitted; on a loaded machine the
CPU seconds are the steadier of the two. --fit-check F2 measures the task at F2 as well and prints
the fit's prediction beside the measurement. --from-json reuses the measured rows of earlier
--json-out files (same task and fraction) instead of measuring them again, so a fit can be redone
over other fractions without rerunning anything. A run in them where mieb-eval finished and mteb
did not (mteb killed for memory at full size, say) gives the extrapolated row at its fraction
mieb-eval's measured side instead of mieb-eval's fit; mteb's side stays the fit.

Timings on a shared machine are disturbed: /proc/loadavg is read before and after every timed
process and printed beside it.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "python"))  # mieb_eval.export
sys.path.insert(0, str(REPO / "tests" / "py"))

RETRIEVAL_TYPES = ("Any2AnyRetrieval", "Any2AnyMultilingualRetrieval", "DocumentUnderstanding", "VisionCentricQA")
FAMILY = {
    "ImageClassification": "probe",
    "ImageClustering": "clustering",
    "ZeroShotClassification": "zeroshot",
    "Compositionality": "compositionality",
    "VisualSTS(eng)": "sts",
    "VisualSTS(multi)": "sts",
    **{t: "retrieval" for t in RETRIEVAL_TYPES},
}
CORPUS_CHUNK = 50_000
MODEL_NAME = "mieb-bench/planted"
SIGMA = {"retrieval": 6.0, "multichoice": 1.5, "probe": 2.5, "clustering": 1.2, "zeroshot": 3.0}


# ------------------------------------------------------------------ registry and task specs
def load_registry() -> tuple[dict, dict]:
    tasks = {e["name"]: e for e in json.loads((REPO / "configs/tasks.json").read_text())}
    bench = json.loads((REPO / "configs/benchmarks.json").read_text())
    return tasks, bench


def default_tasks(reg: dict, bench: dict, benchmark: str = "MIEB(lite)") -> list[str]:
    """The largest task (most vectors mteb encodes) of each task type of the benchmark."""
    b = next(x for x in bench["benchmarks"] if x["name"] == benchmark)
    best: dict[str, str] = {}
    for n in b["tasks"]:
        e = reg[n]
        if e["type"] not in FAMILY:
            continue
        if e["type"] not in best or e["est_vectors"]["total"] > reg[best[e["type"]]]["est_vectors"]["total"]:
            best[e["type"]] = n
    return list(best.values())


def _scale(x: float, f: float, lo: int) -> int:
    return max(lo, int(round(x * f)))


def task_spec(reg: dict, name: str, f: float, dim: int, seed: int = 0) -> dict:
    """Everything both processes need to build the same in-memory task (JSON-serialisable)."""
    e = reg[name]
    fam = FAMILY.get(e["type"])
    if fam is None:
        raise SystemExit(f"bench_vs_mteb: {name}: type {e['type']} is not handled")
    subsets = list(e["hf_subsets"])
    langs = e.get("eval_langs")
    if not isinstance(langs, dict) or sorted(langs) != sorted(subsets):
        langs = {s: ["eng-Latn"] for s in subsets} if len(subsets) > 1 else ["eng-Latn"]
    spec = {
        "registry_name": name, "name": "Bench" + re.sub(r"[^A-Za-z0-9]", "", name), "family": fam,
        "type": e["type"], "category": e["category"], "modalities": list(e["modalities"]),
        "main_score": e["main_score"], "subsets": subsets, "eval_langs": langs, "fraction": f, "dim": dim,
        "seed": seed, "columns": e.get("columns") or {},
    }
    ns = len(subsets)
    if fam == "retrieval":
        q = _scale(e["n_queries"] / ns, f, 2)
        n = _scale(e["n_corpus"] / ns, f, 2)
        spec.update(n_queries=q, n_corpus=n, skip_first_result=bool(e["params"].get("skip_first_result")))
        if e["type"] == "VisionCentricQA":
            spec["candidates"] = max(2, min(n, int(round(e["n_corpus"] / e["n_queries"])) or 2))
            if e["n_corpus"] >= 2 * e["n_queries"]:  # each query its own candidates (BLINK's shape)
                spec["n_corpus"] = n = max(n, spec["candidates"] * q)
        spec["size"] = f"{ns} x Q {q:,} x N {n:,}" if ns > 1 else f"Q {q:,} x N {n:,}"
    elif fam == "probe":
        k = _scale(e["n_classes"], f, 2)
        ntr = max(2 * k, _scale(e["n_train"] / ns, f, 2))
        nte = max(k, _scale(e["n_test"] / ns, f, 2))
        spec.update(n_classes=k, n_train=ntr, n_test=nte, samples_per_label=int(e["params"].get("samples_per_label", 16)),
                    n_experiments=int(e["params"].get("n_experiments", 5)))
        spec["size"] = f"k {k} x train {ntr:,} x test {nte:,}"
    elif fam in ("clustering", "zeroshot"):
        k = _scale(e["n_classes"], f, 2)
        n = max(2 * k, _scale(e["n_test"] / ns, f, 2))
        spec.update(n_classes=k, n_test=n)
        spec["size"] = f"n {n:,} x k {k}"
    elif fam == "compositionality":
        cols = spec["columns"]
        icols = cols.get("images_column_names") or ["image_0", "image_1"]
        tcols = cols.get("texts_column_names") or ["caption_0", "caption_1"]
        n = _scale(e["n_test"] / ns, f, 10)
        spec.update(images_columns=icols, texts_columns=tcols, n_test=n)
        ni = 1 if isinstance(icols, str) else len(icols)
        nt = 1 if isinstance(tcols, str) else len(tcols)
        spec["size"] = f"n {n:,} x {ni} img x {nt} txt"
    elif fam == "sts":
        n = _scale(e["n_test"] / ns, f, 10)
        spec.update(n_test=n)
        spec["size"] = f"{ns} x {n:,} pairs" if ns > 1 else f"{n:,} pairs"
    return spec


def cost_terms(spec: dict) -> list[float]:
    """The family's cost terms at this spec's sizes (the fit's features; the first is 1)."""
    fam, ns = spec["family"], len(spec["subsets"])
    if fam == "retrieval":
        q, n = spec["n_queries"], spec["n_corpus"]
        if "candidates" in spec:
            return [1.0, ns * q * spec["candidates"], ns * q * spec["candidates"]]
        return [1.0, ns * q * min(n, 1001) * math.ceil(n / CORPUS_CHUNK), ns * q * n]
    if fam == "probe":
        k = spec["n_classes"]
        return [1.0, k * (min(spec["n_train"], spec["samples_per_label"] * k) + spec["n_test"])]
    if fam in ("clustering", "zeroshot"):
        return [1.0, spec["n_test"] * spec["n_classes"]]
    if fam == "compositionality":
        ni = 1 if isinstance(spec["images_columns"], str) else len(spec["images_columns"])
        nt = 1 if isinstance(spec["texts_columns"], str) else len(spec["texts_columns"])
        return [1.0, ns * spec["n_test"] * ni * nt]
    return [1.0, ns * spec["n_test"]]


def pairs_of(spec: dict) -> float:
    if spec["family"] != "retrieval":
        return 0.0
    return len(spec["subsets"]) * spec["n_queries"] * spec.get("candidates", spec["n_corpus"])


# ------------------------------------------------------------------ in-memory mteb tasks (child processes)
def _rng(spec: dict, *key):
    import hashlib

    import numpy as np

    h = hashlib.blake2b(repr((spec["seed"], spec["name"], *key)).encode(), digest_size=8).digest()
    return np.random.default_rng(int.from_bytes(h, "little"))


def _img(idx: int):
    from PIL import Image

    return Image.frombytes("RGB", (2, 2), int(idx).to_bytes(12, "little"))


def _txt(idx: int) -> str:
    return f"t{idx}"


def _images_ds(col_values: dict):
    """A datasets.Dataset; PIL columns as the Image feature (PNG-encoded, as datasets stores them)."""
    from datasets import Dataset

    return Dataset.from_dict(col_values)


class _Alloc:
    """Item numbers of one task, and the recipe of their planted vectors."""

    def __init__(self) -> None:
        self.n = 0
        self.parts: list = []  # (start, count, fn(rng)-> float32 [count, D])

    def take(self, count: int) -> int:
        s = self.n
        self.n += count
        return s


def _unit(rng, n: int, d: int):
    import numpy as np

    return (rng.standard_normal((n, d), dtype=np.float32) / np.float32(math.sqrt(d))).astype(np.float32)


def build_task(spec: dict):
    """mteb task object of the spec, data loaded; task._plant() makes the planted vectors table."""
    import numpy as np
    from datasets import DatasetDict

    from helpers import mteb_inmem as M
    from mteb.abstasks import (
        AbsTaskClassification,
        AbsTaskRetrieval,
        AbsTaskSTS,
        AbsTaskZeroShotClassification,
    )
    from mteb.abstasks.clustering_legacy import AbsTaskClusteringLegacy
    from mteb.abstasks.image.image_text_pair_classification import AbsTaskImageTextPairClassification
    from mteb.abstasks.retrieval_dataset_loaders import RetrievalSplitData

    fam, d = spec["family"], spec["dim"]
    md = M._meta(spec["name"], spec["type"], spec["main_score"], spec["modalities"], spec["category"],
                 spec["eval_langs"])
    alloc = _Alloc()
    plant: list = []  # (start, fn() -> vectors)
    multi = len(spec["subsets"]) > 1

    def by_subset(parts: dict):
        return parts if multi else parts[spec["subsets"][0]]

    if fam == "retrieval":
        qside, dside = spec["category"].split("2")
        qmods = {"i": "image", "t": "text"}
        qcols = [qmods[c] for c in qside if c in qmods]
        dcols = [qmods[c] for c in dside if c in qmods]

        def load_data(self, num_proc=None, **kw):
            out = {}
            for s in spec["subsets"]:
                rng = _rng(spec, "ret", s)
                q, n = spec["n_queries"], spec["n_corpus"]
                d0 = alloc.take(n)
                q0 = alloc.take(q)
                qids, cids = [f"q{i}" for i in range(q)], [f"d{j}" for j in range(n)]
                rel, top = [], None
                qrels = {}
                if "candidates" in spec:
                    m = spec["candidates"]
                    top = {}
                    own = n >= m * q
                    for i in range(q):
                        st = i * m if own else int(rng.integers(0, n))
                        cand = [(st + j) % n for j in range(m)]
                        right = cand[int(rng.integers(0, m))]
                        rel.append([right])
                        top[qids[i]] = [cids[c] for c in cand]
                        qrels[qids[i]] = {cids[c]: int(c == right) for c in cand}
                else:
                    for i in range(q):
                        r = [int(rng.integers(0, n))]
                        if i % 3 == 0 and n > 1:
                            r.append(int((r[0] + 1 + rng.integers(0, n - 1)) % n))
                        rel.append(r)
                        qrels[qids[i]] = {cids[x]: (2 if (i % 5 == 0 and k == 0) else 1) for k, x in enumerate(r)}

                def mk(cols, base, count):
                    vals = {}
                    if "image" in cols:
                        vals["image"] = [_img(base + j) for j in range(count)]
                    if "text" in cols:
                        vals["text"] = [_txt(base + j) for j in range(count)]
                    return vals

                queries = _images_ds({"id": qids, **mk(qcols, q0, q)})
                corpus = _images_ds({"id": cids, **mk(dcols, d0, n)})
                out[s] = {"test": RetrievalSplitData(queries=queries, corpus=corpus, relevant_docs=qrels,
                                                     top_ranked=top)}
                sigma = SIGMA["multichoice" if "candidates" in spec else "retrieval"]

                def fn_docs(n=n, s=s):
                    return _unit(_rng(spec, "docs", s), n, d)

                def fn_q(q=q, s=s, rel=rel, d0=d0):
                    docs = _vec_cache[d0]
                    noise = _unit(_rng(spec, "qnoise", s), q, d)
                    v = np.stack([docs[r].mean(axis=0) for r in rel]).astype(np.float32)
                    return (v + np.float32(sigma) * noise).astype(np.float32)

                plant.append((d0, fn_docs))
                plant.append((q0, fn_q))
            self.dataset = out
            self.data_loaded = True

        base = AbsTaskRetrieval
        attrs = {"skip_first_result": spec["skip_first_result"]}

    elif fam in ("probe", "clustering", "zeroshot"):
        k = spec["n_classes"]

        def labelled(rng, n):
            y = np.arange(n) % k
            rng.shuffle(y)
            return y

        def load_data(self, num_proc=None, **kw):
            rng = _rng(spec, "labels")
            cen0 = alloc.take(k) if fam == "zeroshot" else None
            parts = {}
            splits = [("train", spec["n_train"]), ("test", spec["n_test"])] if fam == "probe" else [("test", spec["n_test"])]
            for split, n in splits:
                y = labelled(rng, n)
                i0 = alloc.take(n)
                parts[split] = _images_ds({"image": [_img(i0 + j) for j in range(n)], "label": [int(v) for v in y]})

                def fn(n=n, y=y, split=split):
                    c = _centroids()
                    return (c[y] + np.float32(SIGMA[fam]) * _unit(_rng(spec, "noise", split), n, d)).astype(np.float32)

                plant.append((i0, fn))
            if cen0 is not None:
                plant.append((cen0, lambda: _centroids()))
                self._labels_text = [_txt(cen0 + j) for j in range(k)]
            self.dataset = DatasetDict(parts)
            self.data_loaded = True

        _cent: list = []

        def _centroids():
            if not _cent:
                _cent.append(_unit(_rng(spec, "centroids"), k, d) * np.float32(1.0))
            return _cent[0]

        if fam == "probe":
            base = AbsTaskClassification
            attrs = {"input_column_name": "image", "label_column_name": "label",
                     "samples_per_label": spec["samples_per_label"], "n_experiments": spec["n_experiments"]}
        elif fam == "clustering":
            base = AbsTaskClusteringLegacy
            attrs = {"input_column_name": "image", "label_column_name": "label"}
        else:
            base = AbsTaskZeroShotClassification
            attrs = {"get_candidate_labels": lambda self: list(self._labels_text)}

    elif fam == "compositionality":
        icols, tcols = spec["images_columns"], spec["texts_columns"]
        il = [icols] if isinstance(icols, str) else list(icols)
        tl = [tcols] if isinstance(tcols, str) else list(tcols)

        def load_data(self, num_proc=None, **kw):
            n = spec["n_test"]
            i0 = alloc.take(n * len(il))
            t0 = alloc.take(n * len(tl))
            cols = {}
            for a, c in enumerate(il):
                cols[c] = [_img(i0 + s * len(il) + a) for s in range(n)]
            for b, c in enumerate(tl):
                cols[c] = [_txt(t0 + s * len(tl) + b) for s in range(n)]
            self.dataset = DatasetDict({"test": _images_ds(cols)})

            def fn_img():
                return _unit(_rng(spec, "cimg"), n * len(il), d)

            def fn_txt():
                im = _vec_cache[i0].reshape(n, len(il), d)
                noise = _unit(_rng(spec, "ctxt"), n * len(tl), d).reshape(n, len(tl), d)
                out = np.empty((n, len(tl), d), np.float32)
                for b in range(len(tl)):
                    own = im[:, b] if b < len(il) else np.float32(0.9) * im[:, 0]
                    out[:, b] = own + np.float32(1.0) * noise[:, b]
                return out.reshape(n * len(tl), d)

            plant.append((i0, fn_img))
            plant.append((t0, fn_txt))
            self.data_loaded = True

        base = AbsTaskImageTextPairClassification
        attrs = {"images_column_names": icols, "texts_column_names": tcols}

    else:  # sts
        def load_data(self, num_proc=None, **kw):
            out = {}
            for s in spec["subsets"]:
                n = spec["n_test"]
                rng = _rng(spec, "gold", s)
                gold = rng.integers(0, 26, n) / 5.0
                a0 = alloc.take(n)
                b0 = alloc.take(n)
                out[s] = DatasetDict({"test": _images_ds({
                    "sentence1": [_img(a0 + j) for j in range(n)], "sentence2": [_img(b0 + j) for j in range(n)],
                    "score": [float(g) for g in gold]})})

                def fn_a(n=n, s=s):
                    return _unit(_rng(spec, "s1", s), n, d)

                def fn_b(n=n, s=s, gold=gold, a0=a0):
                    r = (gold / 5.0).astype(np.float32)[:, None]
                    v1 = _vec_cache[a0]
                    return (r * v1 + np.sqrt(1 - r * r) * _unit(_rng(spec, "s2", s), n, d)
                            + np.float32(0.3) * _unit(_rng(spec, "s2b", s), n, d)).astype(np.float32)

                plant.append((a0, fn_a))
                plant.append((b0, fn_b))
            self.dataset = by_subset(out)
            self.data_loaded = True

        base = AbsTaskSTS
        attrs = {}

    _vec_cache: dict[int, np.ndarray] = {}

    def _plant(self):
        table = np.zeros((alloc.n, d), np.float32)
        for start, fn in plant:  # in order: later parts may read earlier ones through _vec_cache
            v = fn()
            _vec_cache[start] = v
            table[start:start + len(v)] = v
        return table

    cls = type(spec["name"], (base,), {"metadata": md, "load_data": load_data, "_plant": _plant, **attrs})
    task = cls()
    task.load_data()
    task.np_rng = np.random.default_rng(task.seed)
    return task


def _encoder(dim: int, tables: dict):
    import numpy as np

    from mteb.models.abs_encoder import AbsEncoder
    from mteb.models.model_meta import ModelMeta, ScoringFunction

    class PlantedEncoder(AbsEncoder):
        """Item number (in the text, else in the image's pixels) -> the task's planted vector."""

        def __init__(self) -> None:
            self.mteb_model_meta = ModelMeta.create_empty(overwrites={
                "name": MODEL_NAME, "revision": "1", "similarity_fn_name": ScoringFunction.COSINE,
                "modalities": ["image", "text"], "embed_dim": dim})

        def encode(self, inputs, *, task_metadata, hf_split, hf_subset, prompt_type=None, **kw):
            table = tables[task_metadata.name]
            idx = []
            for batch in inputs:
                n = len(batch["text"] if "text" in batch else batch["image"])
                for i in range(n):
                    if "text" in batch:
                        idx.append(int(re.search(r"t(\d+)", batch["text"][i]).group(1)))
                    else:
                        im = batch["image"][i]
                        raw = np.asarray(im.convert("RGB") if hasattr(im, "convert") else im, dtype=np.uint8)
                        if raw.ndim == 3 and raw.shape[0] == 3 and raw.shape[-1] != 3:
                            raw = raw.transpose(1, 2, 0)
                        idx.append(int.from_bytes(np.ascontiguousarray(raw).tobytes()[:12], "little"))
            return table[np.asarray(idx, dtype=np.int64)] if idx else np.zeros((0, dim), np.float32)

    return PlantedEncoder()


def child_export(spec_path: str, out: str) -> int:
    from mieb_eval.export import export

    from helpers import mteb_parity_driver as D

    spec = json.loads(Path(spec_path).read_text())
    task = build_task(spec)
    tables = {spec["name"]: task._plant()}
    summary = export(_encoder(spec["dim"], tables), D.reset([task]), Path(out) / "task-data", Path(out) / "embeddings",
                     encode_kwargs=dict(D.ENCODE))
    if summary["failed"]:
        print(json.dumps(summary["failed"]), file=sys.stderr)
        return 1
    return 0


def child_mteb(spec_path: str, emb: str, out: str, phases: str) -> int:
    t0 = time.perf_counter()
    import mteb
    import sentence_transformers  # noqa: F401  (mteb.evaluate imports it on its first call: not scoring)
    from mieb_eval.export import ReplayEncoder

    # what the families' evaluators import on first use: a one-off per process, not scoring
    import importlib
    import pkgutil

    import mteb._evaluators as ev

    for mod in ["sklearn.linear_model", "sklearn.cluster", "sklearn.metrics", "sklearn.neighbors",
                "sklearn.multioutput", "scipy.stats", "scipy.optimize", "pytrec_eval",
                *[m.name for m in pkgutil.walk_packages(ev.__path__, "mteb._evaluators.")]]:
        try:
            importlib.import_module(mod)
        except Exception:  # noqa: BLE001
            pass

    from helpers import mteb_parity_driver as D

    t_import = time.perf_counter() - t0
    spec = json.loads(Path(spec_path).read_text())
    t1 = time.perf_counter()
    task = build_task(spec)
    t_build = time.perf_counter() - t1

    class TimedReplay(ReplayEncoder):
        encode_s = 0.0
        encode_cpu_s = 0.0

        def encode(self, *a, **kw):
            s, c = time.perf_counter(), time.process_time()
            try:
                return super().encode(*a, **kw)
            finally:
                TimedReplay.encode_s += time.perf_counter() - s
                TimedReplay.encode_cpu_s += time.process_time() - c

    model = TimedReplay(emb)
    c2 = time.process_time()
    t2 = time.perf_counter()
    mteb.evaluate(model, D.reset([task]), cache=mteb.ResultCache(cache_path=out), overwrite_strategy="always",
                  encode_kwargs=dict(D.ENCODE), raise_error=True)
    t_eval = time.perf_counter() - t2
    c_eval = time.process_time() - c2
    res = json.loads(next(Path(out).rglob(f"{spec['name']}.json")).read_text())
    phase_s: dict = {}
    for ph in res.get("evaluation_phases") or []:
        phase_s[ph["name"]] = phase_s.get(ph["name"], 0.0) + ph["end"] - ph["start"]
    Path(phases).write_text(json.dumps({"import_s": t_import, "build_s": t_build, "evaluate_s": t_eval,
                                        "task_evaluation_time_s": res.get("evaluation_time"), "phases_s": phase_s,
                                        "metrics_s": phase_s.get("Scoring"),
                                        "encode_s": TimedReplay.encode_s, "encode_calls": len(model.calls),
                                        "scoring_cpu_s": c_eval - TimedReplay.encode_cpu_s,
                                        "scoring_s": t_eval - TimedReplay.encode_s}))
    return 0


# ------------------------------------------------------------------ the parent: timed processes
def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


PEAK_RSS: str | None = None  # tests/programs/peak_rss of the build, when there is one


def timed(cmd: list[str], env: dict, log: Path, timeout: float | None = None) -> dict:
    """Run cmd to completion: wall seconds, CPU seconds (user + system of the process and the
    children it waited for), peak RSS (MiB), exit status, load averages before and after.

    Linux keeps a process's RSS high-water mark across execve, so a command forked straight from
    this interpreter would count at least the interpreter's own size: the command is started by
    the build's small peak_rss helper (tests/programs/peak_rss.c) where there is one, whose wait4
    gives the command's own peak; without it the figure includes this interpreter's size
    ("peak_rss_source" says which)."""
    before = loadavg()
    rss_file = log.with_suffix(".peak_rss")
    full = [PEAK_RSS, str(rss_file), *cmd] if PEAK_RSS else cmd
    with open(log, "w") as lf:
        t = time.perf_counter()
        p = subprocess.Popen(full, stdout=lf, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        deadline = None if timeout is None else t + timeout
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if deadline and time.perf_counter() > deadline:
                os.killpg(p.pid, 9)
                pid, status, ru = os.wait4(p.pid, 0)
                break
            time.sleep(0.02)
        wall = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    peak, source = ru.ru_maxrss / 1024.0, "wait4 (includes the forking interpreter's size)"
    if PEAK_RSS:
        try:
            peak, source = int(rss_file.read_text().split()[0]) / 1024.0, "peak_rss"
        except (OSError, ValueError, IndexError):
            pass
    return {"wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "peak_rss_mib": peak, "peak_rss_source": source,
            "rc": p.returncode, "load_before": before, "load_after": loadavg(), "log": str(log)}


def mteb_env() -> dict:
    return dict(os.environ, HF_DATASETS_DISABLE_PROGRESS_BARS="1", HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1",
                TRANSFORMERS_OFFLINE="1", TQDM_DISABLE="1", TOKENIZERS_PARALLELISM="false")


def parse_parity(stdout: str, task: str) -> dict:
    row = re.search(rf"^{re.escape(task)}\s+(\S+)\s+(\d+)\s+(\S+)\s+(.+?)\s{{2,}}(ok|ABOVE TOLERANCE|UNREADABLE|MISSING.*)$",
                    stdout, re.M)
    n_diff = len(re.findall(rf"^    {re.escape(task)} \S+: reference", stdout, re.M))
    more = re.search(rf"^    {re.escape(task)}: \.\.\. and (\d+) more", stdout, re.M)
    if more:
        n_diff += int(more.group(1))
    closing = re.search(r"^parity: .*$", stdout, re.M)
    if not row:
        return {"status": "no row", "closing": closing.group(0) if closing else None}
    n = int(row.group(2))
    return {"family": row.group(1), "values": n, "equal": n - n_diff, "max_diff": row.group(3),
            "tolerance": row.group(4).strip(), "status": row.group(5),
            "closing": closing.group(0) if closing else None}


def measure(spec: dict, a, work: Path) -> dict:
    """Export, then mteb, then mieb-eval, then parity, for one spec."""
    tag = f"{spec['name']}-f{spec['fraction']:g}"
    wd = work / tag
    if wd.exists():
        shutil.rmtree(wd)
    wd.mkdir(parents=True)
    sp = wd / "spec.json"
    sp.write_text(json.dumps(spec, indent=1))
    me = Path(__file__).resolve()
    py = sys.executable
    rec: dict = {"task": spec["registry_name"], "in_memory_name": spec["name"], "type": spec["type"],
                 "family": spec["family"], "size": spec["size"], "fraction": spec["fraction"],
                 "pairs": pairs_of(spec), "cost_terms": cost_terms(spec), "kind": "measured", "spec_path": str(sp),
                 "spec": spec}
    print(f"[{time.strftime('%H:%M:%S')}] {spec['registry_name']} at F={spec['fraction']:g} ({spec['size']}): export",
          flush=True)
    ex = timed([py, str(me), "_export", str(sp), str(wd / "export")], mteb_env(), wd / "export.log")
    rec["export"] = ex
    if ex["rc"] != 0:
        rec["error"] = f"export failed (rc {ex['rc']}), see {ex['log']}"
        return rec
    reg_file = wd / "export/task-data/mieb-registry.json"
    env = dict(os.environ, MIEB_REGISTRY=str(reg_file))

    print(f"[{time.strftime('%H:%M:%S')}]   mteb.evaluate (replay model) ...", flush=True)
    mt = timed([py, str(me), "_mteb", str(sp), str(wd / "export/embeddings"), str(wd / "mteb-out"),
                str(wd / "mteb-phases.json")], mteb_env(), wd / "mteb.log", a.timeout)
    if mt["rc"] == 0:
        mt.update(json.loads((wd / "mteb-phases.json").read_text()))
    rec["mteb"] = mt

    print(f"[{time.strftime('%H:%M:%S')}]   mieb-eval run ...", flush=True)
    cmd = [a.binary, "run", "--task-data", str(wd / "export/task-data"), "--embeddings", str(wd / "export/embeddings"),
           "-t", spec["name"], "--output-folder", str(wd / "mieb-out"), "--device", a.device, "--progress", "off", "-q"]
    if a.threads:
        cmd += ["--threads", str(a.threads)]
    mi = timed(cmd, env, wd / "mieb-eval.log", a.timeout)
    rec["mieb_eval"] = mi

    if mt["rc"] == 0 and mi["rc"] == 0:
        par = subprocess.run([a.binary, "parity", "--reference", str(wd / "mteb-out"), "--candidate",
                              str(wd / "mieb-out"), "-t", spec["name"]], capture_output=True, text=True, env=env)
        (wd / "parity.txt").write_text(par.stdout + par.stderr)
        rec["parity"] = parse_parity(par.stdout, spec["name"])
        rec["parity"]["rc"] = par.returncode
    else:
        rec["error"] = f"mteb rc {mt['rc']} ({mt['log']}), mieb-eval rc {mi['rc']} ({mi['log']})"
    if not a.keep:
        shutil.rmtree(wd / "export/embeddings", ignore_errors=True)
    par = rec.get("parity", {})
    print(f"[{time.strftime('%H:%M:%S')}]   mteb scoring {fmt_s(mt.get('scoring_s'))} s (process {fmt_s(mt['wall_s'])} s), "
          f"mieb-eval {fmt_s(mi['wall_s'])} s, parity {par.get('status', '-')} "
          f"({par.get('equal', '-')}/{par.get('values', '-')}), load {loadavg()}", flush=True)
    with open(work / "progress.jsonl", "a") as f:
        f.write(json.dumps(rec, default=str) + "\n")
    return rec


def _nnls_fit(xs: list, ys: list, target_x: list, fractions: list) -> dict:
    """Non-negative least squares of seconds on the cost terms; the prediction at target_x."""
    import numpy as np
    from scipy.optimize import nnls

    x = np.array(xs, dtype=np.float64)
    y = np.array(ys, dtype=np.float64)
    scale = x.max(axis=0)
    scale[scale == 0] = 1
    coef, resid = nnls(x / scale, y)
    tx = np.array(target_x, dtype=np.float64) / scale
    growth = [math.log(y[i + 1] / y[i]) / math.log(fractions[i + 1] / fractions[i]) if y[i] > 0 and y[i + 1] > 0 else None
              for i in range(len(ys) - 1)]
    return {"seconds": float(tx @ coef), "coef_per_term": (coef / scale).tolist(), "residual_s": float(resid),
            "fit_fractions": list(fractions), "measured_s": y.tolist(), "growth_exponent_vs_F": growth}


def metric_terms(spec: dict) -> list[float]:
    """Retrieval's metric stage (trec_eval over each query's top 1000): 1, Q x min(N, 1000)."""
    ns, q = len(spec["subsets"]), spec["n_queries"]
    return [1.0, ns * q * min(spec.get("candidates", spec["n_corpus"]), 1000)]


def fit_extrapolate(points: list[dict], target: dict, side: str, key: str) -> dict:
    """The side's seconds at target from the measured points. mteb's retrieval time is split by
    its own evaluation_phases: the "Scoring" phase (metrics) is fitted on metric_terms, the rest
    (search: scores, top-k, heap) on cost_terms, and the two predictions are added."""
    fr = [p["fraction"] for p in points]
    ys = [p[side][key] for p in points]
    if side == "mteb" and key in ("scoring_s", "scoring_cpu_s") and target["family"] == "retrieval" and \
            all(p["mteb"].get("metrics_s") is not None for p in points):
        # the metrics' share of the wall time (mteb's own phases), applied to the key's seconds
        m = [p["mteb"][key] * min(1.0, p["mteb"]["metrics_s"] / p["mteb"]["scoring_s"]) for p in points]
        tasks = [p.get("spec") or json.loads(Path(p["spec_path"]).read_text()) for p in points]
        fm = _nnls_fit([metric_terms(t) for t in tasks], m, metric_terms(target), fr)
        fs = _nnls_fit([p["cost_terms"] for p in points], [y - mm for y, mm in zip(ys, m)], cost_terms(target), fr)
        tot = _nnls_fit([p["cost_terms"] for p in points], ys, cost_terms(target), fr)
        tot["seconds"] = fm["seconds"] + fs["seconds"]
        tot["search_fit"], tot["metrics_fit"] = fs, fm
        return tot
    return _nnls_fit([p["cost_terms"] for p in points], ys, cost_terms(target), fr)


def fmt_t(v: float) -> str:
    return f"{v:,.1f} s" + (f" ({v / 3600:.2f} h)" if v >= 3600 else "")


def fmt_s(v) -> str:
    if v is None:
        return "-"
    if v >= 3600:
        return f"{v / 3600:.1f} h"
    return f"{v:,.1f}" if v >= 10 else f"{v:.2f}"


def machine() -> dict:
    info: dict = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            k, _, v = line.partition(":")
            k = k.strip()
            if k in ("model name", "cpu family", "model", "flags") and k not in info:
                info[k] = v.strip()
    except OSError:
        pass
    flags = set(info.get("flags", "").split())
    isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2"
    if "avx512_bf16" in flags:  # what the exact screen needs (host/screen/screen.h)
        isa += " + AVX512_BF16"
    if "amx_bf16" in flags:
        isa += " + AMX-BF16"
    cpu = f"{info.get('model name', '?')} (family {info.get('cpu family', '?')} model {info.get('model', '?')}, {isa})"
    mem = "?"
    try:
        mem = f"{int(Path('/proc/meminfo').read_text().split()[1]) / 1048576:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return {"cpu": cpu, "cpus": os.cpu_count(), "affinity": len(os.sched_getaffinity(0)), "memory": mem,
            "python": platform.python_version()}


def table_rows(rows: list[dict]) -> tuple[tuple, list[tuple]]:
    hdr = ("task", "type", "size", "F", "mteb s", "mteb proc s", "mieb-eval s", "ratio", "mteb cpu s", "mieb cpu s",
           "cpu ratio", "keys equal",
           "mteb MiB", "mieb MiB", "load before/after")
    lines = []
    for r in rows:
        mt, mi, par = r.get("mteb", {}), r.get("mieb_eval", {}), r.get("parity", {})
        ext = r["kind"] == "extrapolated"
        ms = mt.get("scoring_s")
        ws = mi.get("wall_s")
        ratio = f"{ms / ws:.1f}x" if ms and ws else "-"
        keys = f"{par['equal']}/{par['values']}" if par.get("values") is not None else ("(fit)" if ext else "-")
        lines.append((
            r["task"] + (" *" if ext else ""), r["type"], r["size"], f"{r['fraction']:g}", fmt_s(ms),
            fmt_s(mt.get("wall_s")), fmt_s(ws), ratio, fmt_s(mt.get("scoring_cpu_s")),
            fmt_s(mi.get("cpu_s")),
            f"{mt['scoring_cpu_s'] / mi['cpu_s']:.1f}x" if mt.get("scoring_cpu_s") and mi.get("cpu_s") else "-",
            keys,
            "-" if ext or "peak_rss_mib" not in mt else f"{mt['peak_rss_mib']:,.0f}",
            "-" if (ext and not r.get("mieb_eval_measured")) or "peak_rss_mib" not in mi
            else f"{mi['peak_rss_mib']:,.0f}",
            "-" if ext else f"{mt.get('load_before', '?').split()[0]}/{mi.get('load_after', '?').split()[0]}"))
    return hdr, lines


def print_table(rows: list[dict], a) -> None:
    hdr, lines = table_rows(rows)
    w = [max(len(h), *(len(x[i]) for x in lines)) if lines else len(h) for i, h in enumerate(hdr)]
    print("  ".join(h.ljust(w[i]) for i, h in enumerate(hdr)))
    for x in lines:
        print("  ".join(v.ljust(w[i]) for i, v in enumerate(x)))
    if a.md_out:
        with open(a.md_out, "w") as f:
            f.write("| " + " | ".join(hdr) + " |\n|" + "---|" * len(hdr) + "\n")
            for x in lines:
                f.write("| " + " | ".join(v.replace("|", "/") for v in x) + " |\n")


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "_export":
        return child_export(*sys.argv[2:4])
    if len(sys.argv) > 1 and sys.argv[1] == "_mteb":
        return child_mteb(*sys.argv[2:6])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-t", "--tasks", nargs="+", help="registry task names (default: the largest MIEB(lite) task per type)")
    ap.add_argument("-b", "--benchmark", default="MIEB(lite)", help="benchmark for the default task choice")
    ap.add_argument("--fraction", type=float, default=1.0, help="every size times F, both sides (default 1)")
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--fit", nargs="*", default=[], help="tasks to extrapolate from --fit-fractions instead of running at F")
    ap.add_argument("--fit-fractions", default="0.01,0.02,0.04")
    ap.add_argument("--fit-check", type=float, default=None,
                    help="also measure extrapolated tasks at this fraction and print the fit's prediction beside it")
    ap.add_argument("--fit-above-pairs", type=float, default=2e9,
                    help="retrieval tasks with more query x document pairs than this at F are extrapolated")
    ap.add_argument("--device", default=None,
                    help="mieb-eval's --device (default: cuda when nvidia-smi lists a GPU, else cpu)")
    ap.add_argument("--threads", type=int, default=0, help="mieb-eval's --threads (0: its default)")
    ap.add_argument("--binary", default=str(REPO / "build" / "mieb-eval"))
    ap.add_argument("--work", default=None, help="working folder (default: a new one under /tmp)")
    ap.add_argument("--keep", action="store_true", help="keep the exported embeddings")
    ap.add_argument("--timeout", type=float, default=None, help="seconds per timed process")
    ap.add_argument("--json-out", default=None)
    ap.add_argument("--from-json", nargs="+", default=None,
                    help="reuse the measured rows of earlier --json-out files (same task and fraction) "
                         "instead of measuring them again: refits and prints without rerunning")
    ap.add_argument("--md-out", default=None, help="the table as Markdown")
    a = ap.parse_args()
    if not os.access(a.binary, os.X_OK):
        print(f"bench_vs_mteb: {a.binary} is not an executable: build with scripts/build.sh", file=sys.stderr)
        return 2
    global PEAK_RSS
    helper = Path(a.binary).resolve().parent / "tests" / "peak_rss"
    if os.access(helper, os.X_OK):
        PEAK_RSS = str(helper)
    else:
        print(f"bench_vs_mteb: {helper} not built: peak RSS from wait4 includes this interpreter's size",
              file=sys.stderr)
    if a.device is None:
        try:
            gpu = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
            a.device = "cuda" if gpu.returncode == 0 and "GPU" in gpu.stdout else "cpu"
        except (OSError, subprocess.TimeoutExpired):
            a.device = "cpu"
    reg, bench = load_registry()
    names = a.tasks or default_tasks(reg, bench, a.benchmark)
    for n in names:
        if n not in reg:
            print(f"bench_vs_mteb: unknown task {n}", file=sys.stderr)
            return 2
    import tempfile

    work = Path(a.work) if a.work else Path(tempfile.mkdtemp(prefix="bench_vs_mteb."))
    work.mkdir(parents=True, exist_ok=True)
    fit_fr = sorted(float(x) for x in a.fit_fractions.split(","))
    mach = machine()
    print(f"machine: {mach['cpu']}, {mach['cpus']} CPUs ({mach['affinity']} in this process's mask), {mach['memory']}; "
          f"load average {loadavg()}", flush=True)
    print(f"fraction F = {a.fraction:g} of every registry size, both sides; dim {a.dim}; mieb-eval --device {a.device}; "
          f"work folder {work}", flush=True)
    rows, measured, failures = [], [], []
    cache = {}
    # runs where mieb-eval finished and mteb did not (killed for memory at full size, say):
    # an extrapolated row at that fraction takes mieb-eval's measured side instead of its fit
    mieb_only = {}
    for fj in a.from_json or []:
        for r in json.loads(Path(fj).read_text())["rows"]:
            if r.get("kind") == "measured" and "error" not in r:
                cache[(r["task"], round(r["fraction"], 9))] = r
            elif r.get("kind") == "measured" and r.get("mieb_eval", {}).get("rc") == 0:
                mieb_only[(r["task"], round(r["fraction"], 9))] = r

    def measure_or_cached(spec: dict) -> dict:
        r = cache.get((spec["registry_name"], round(spec["fraction"], 9)))
        if r is not None:
            print(f"{spec['registry_name']} at F={spec['fraction']:g}: measurement from --from-json", flush=True)
            return dict(r, fit_check=None)
        return measure(spec, a, work)

    for n in names:
        target = task_spec(reg, n, a.fraction, a.dim)
        if n in a.fit or (target["family"] == "retrieval" and pairs_of(target) > a.fit_above_pairs):
            pts = [measure_or_cached(task_spec(reg, n, f, a.dim)) for f in fit_fr if f < a.fraction]
            measured += pts
            rows += pts
            bad = [p for p in pts if "error" in p]
            if bad or len(pts) < 2:
                failures += [f"{n}: {p.get('error')}" for p in bad] or [f"{n}: fewer than two fit fractions below F"]
                continue
            ex = {"task": n, "in_memory_name": target["name"], "type": target["type"], "family": target["family"],
                  "size": target["size"], "fraction": a.fraction, "pairs": pairs_of(target),
                  "cost_terms": cost_terms(target), "kind": "extrapolated",
                  "mteb": {}, "mieb_eval": {}}
            for side, key, dst in (("mteb", "scoring_s", "scoring_s"), ("mteb", "wall_s", "wall_s"),
                                   ("mteb", "scoring_cpu_s", "scoring_cpu_s"), ("mieb_eval", "wall_s", "wall_s"),
                                   ("mieb_eval", "cpu_s", "cpu_s")):
                if any(p[side].get(key) is None for p in pts):
                    continue
                f = fit_extrapolate(pts, target, side, key)
                ex[side][dst] = f["seconds"]
                ex[side][f"fit_{dst}"] = f
            mine = mieb_only.get((n, round(a.fraction, 9)))
            if mine is not None:
                mi = mine["mieb_eval"]
                ex["mieb_eval_measured"] = {"mteb_error": mine.get("error"), "fit_wall_s": ex["mieb_eval"].get("wall_s"),
                                            "fit_cpu_s": ex["mieb_eval"].get("cpu_s")}
                ex["mieb_eval"].update({k: mi[k] for k in ("wall_s", "cpu_s", "peak_rss_mib") if k in mi})
            rows.append(ex)
            if a.fit_check and a.fit_check not in fit_fr:
                # the fit's own check: measure one more fraction and set it beside the prediction
                chk = measure_or_cached(task_spec(reg, n, a.fit_check, a.dim))
                measured.append(chk)
                rows.append(chk)
                if "error" in chk:
                    failures.append(f"{n}: {chk['error']}")
                else:
                    cspec = task_spec(reg, n, a.fit_check, a.dim)
                    chk["fit_check"] = {
                        "mteb_scoring_s_predicted": fit_extrapolate(pts, cspec, "mteb", "scoring_s")["seconds"],
                        "mteb_scoring_s_measured": chk["mteb"]["scoring_s"],
                        "mieb_eval_s_predicted": fit_extrapolate(pts, cspec, "mieb_eval", "wall_s")["seconds"],
                        "mieb_eval_s_measured": chk["mieb_eval"]["wall_s"]}
                    if all(p["mteb"].get("scoring_cpu_s") is not None for p in [*pts, chk]):
                        chk["fit_check"].update({
                            "mteb_cpu_s_predicted": fit_extrapolate(pts, cspec, "mteb", "scoring_cpu_s")["seconds"],
                            "mteb_cpu_s_measured": chk["mteb"]["scoring_cpu_s"],
                            "mieb_eval_cpu_s_predicted": fit_extrapolate(pts, cspec, "mieb_eval", "cpu_s")["seconds"],
                            "mieb_eval_cpu_s_measured": chk["mieb_eval"]["cpu_s"]})
        else:
            r = measure_or_cached(target)
            measured.append(r)
            rows.append(r)
            if "error" in r:
                failures.append(f"{n}: {r['error']}")
    print()
    print(f"MIEB whole tasks, mteb {_mteb_version()} (replay model) vs mieb-eval ({a.device}); "
          f"F = {a.fraction:g}; {mach['cpu']}, {mach['cpus']} CPUs")
    print_table(rows, a)
    tot_m = sum(r["mteb"].get("scoring_s", 0) for r in measured if r["fraction"] == a.fraction and "error" not in r)
    tot_i = sum(r["mieb_eval"].get("wall_s", 0) for r in measured if r["fraction"] == a.fraction and "error" not in r)
    ext = [r for r in rows if r["kind"] == "extrapolated"]
    tot_me = tot_m + sum(r["mteb"]["scoring_s"] for r in ext)
    tot_ie = tot_i + sum(r["mieb_eval"]["wall_s"] for r in ext)
    at_f = [r for r in rows if r["fraction"] == a.fraction and "error" not in r]
    cpu_m = sum(r["mteb"].get("scoring_cpu_s") or 0 for r in at_f)
    cpu_i = sum(r["mieb_eval"].get("cpu_s") or 0 for r in at_f)
    eq = sum(r["parity"]["equal"] for r in measured if r.get("parity", {}).get("values") is not None)
    tot = sum(r["parity"]["values"] for r in measured if r.get("parity", {}).get("values") is not None)
    print(f"\ntotal at F = {a.fraction:g}: mteb scoring {fmt_t(tot_me)}, mieb-eval {fmt_t(tot_ie)}"
          + (f" (ratio {tot_me / tot_ie:.1f}x)" if tot_ie else "")
          + (f"; of which extrapolated (*): mteb {fmt_t(tot_me - tot_m)}, mieb-eval {fmt_t(tot_ie - tot_i)}"
             if ext else ""))
    print(f"CPU seconds at F = {a.fraction:g}: mteb scoring {fmt_t(cpu_m)}, mieb-eval {fmt_t(cpu_i)}"
          + (f" (ratio {cpu_m / cpu_i:.1f}x)" if cpu_i else "") + (" (extrapolated rows included)" if ext else ""))
    print(f"parity: {eq} of {tot} values within tolerance over {len(measured)} measured run(s)")
    print("mteb s: mteb.evaluate minus the replay model's encode calls; mteb proc s: the whole mteb process "
          "(import, in-memory task build, evaluate); mieb-eval s: the whole `mieb-eval run` process; "
          "cpu s: CPU seconds (all threads) of mteb's scoring and of the whole mieb-eval process; "
          "MiB: peak RSS; load: 1-minute load average before the mteb process / after mieb-eval's.")
    for r in ext:
        f = r["mteb"]["fit_scoring_s"]
        g = ", ".join("-" if x is None else f"{x:.2f}" for x in f["growth_exponent_vs_F"])
        print(f"* {r['task']}: extrapolated to F = {r['fraction']:g} ({r['size']}) from measurements at "
              f"F = {', '.join(f'{x:g}' for x in f['fit_fractions'])} (non-negative least squares on the "
              f"{r['family']} cost terms); mteb's time grew as F^({g}) between them")
        cpu = r["mteb"].get("scoring_cpu_s")
        own = r.get("mieb_eval_measured")
        print(f"  mteb would take about {fmt_t(r['mteb']['scoring_s'])} of scoring here"
              + (f" ({fmt_t(cpu)} of CPU)" if cpu is not None else "")
              + (f": extrapolated, not measured; mieb-eval measured at this size {fmt_t(r['mieb_eval']['wall_s'])} "
                 f"(its fit said {fmt_t(own['fit_wall_s'])}; mteb's run there: {own['mteb_error']})" if own else
                 f", mieb-eval about {fmt_t(r['mieb_eval']['wall_s'])}: extrapolated, not measured"))
    for r in rows:
        c = r.get("fit_check")
        if c:
            print(f"  fit check, {r['task']} at F = {r['fraction']:g}: mteb predicted {fmt_s(c['mteb_scoring_s_predicted'])} s, "
                  f"measured {fmt_s(c['mteb_scoring_s_measured'])} s; mieb-eval predicted "
                  f"{fmt_s(c['mieb_eval_s_predicted'])} s, measured {fmt_s(c['mieb_eval_s_measured'])} s")
            if "mteb_cpu_s_predicted" in c:
                print(f"    CPU seconds: mteb predicted {fmt_s(c['mteb_cpu_s_predicted'])}, measured "
                      f"{fmt_s(c['mteb_cpu_s_measured'])}; mieb-eval predicted {fmt_s(c['mieb_eval_cpu_s_predicted'])}, "
                      f"measured {fmt_s(c['mieb_eval_cpu_s_measured'])}")
    bad_parity = [r for r in measured if r.get("parity") and (r["parity"].get("rc") != 0 or r["parity"].get("status") != "ok")]
    for r in bad_parity:
        failures.append(f"{r['task']} F={r['fraction']:g}: parity {r['parity'].get('status')} "
                        f"({r['parity'].get('closing')}), see {work}")
    out = {"machine": mach, "mteb_version": _mteb_version(), "fraction": a.fraction, "dim": a.dim, "device": a.device,
           "tasks": names, "rows": rows, "work": str(work),
           "totals": {"mteb_scoring_s": tot_me, "mieb_eval_s": tot_ie, "values_equal": eq, "values": tot},
           "failures": failures}
    if a.json_out:
        Path(a.json_out).write_text(json.dumps(out, indent=1, default=str))
    for f in failures:
        print(f"FAIL: {f}", file=sys.stderr)
    return 1 if failures else 0


def _mteb_version() -> str:
    try:
        from importlib.metadata import version

        return version("mteb")
    except Exception:  # noqa: BLE001
        return "?"


if __name__ == "__main__":
    sys.exit(main())
