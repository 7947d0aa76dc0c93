"""In-memory MIEB-style tasks and a small deterministic encoder, for the mteb parity test.

Runs in .venv-mteb (mteb with torch). Nothing is downloaded: images are drawn from seeded
numpy generators, and the encoder maps an item's content to a vector:

* an image is reduced to 8x8x3 block means and multiplied by a fixed random matrix;
* a text is the sum of one vector per word, where the word "c<K>" maps to the image vector
  of class K's pattern (so "a photo of c3" lies near the images of class 3) and any other
  word to a vector seeded by its hash;
* a query (prompt_type query) gets a fixed offset, so a wrong prompt type shows.

Class patterns share structure (each class mixes a group pattern with its own), noise is
added per image and some items are exact duplicates, so the metrics are neither 0 nor 1 and
exact ties occur.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

import numpy as np
from datasets import Dataset, DatasetDict
from PIL import Image

from mteb.abstasks import (
    AbsTaskClassification,
    AbsTaskMultilabelClassification,
    AbsTaskRetrieval,
    AbsTaskSTS,
    AbsTaskZeroShotClassification,
)
from mteb.abstasks.clustering_legacy import AbsTaskClusteringLegacy
from mteb.abstasks.image.image_text_pair_classification import AbsTaskImageTextPairClassification
from mteb.abstasks.retrieval_dataset_loaders import RetrievalSplitData
from mteb.abstasks.task_metadata import TaskMetadata
from mteb.models.abs_encoder import AbsEncoder
from mteb.models.model_meta import ModelMeta, ScoringFunction
from mteb.types import PromptType

DIM = 48
GRID = 8
SIDE = 32  # image side in pixels: GRID cells of 4x4


# MIEB_PARITY_SALT=S draws every vector, image and label from other seeds (a sweep over
# salts looks for data-dependent differences); unset, the data are the committed test's.
_SALT = os.environ.get("MIEB_PARITY_SALT", "")


def _rng(*key: Any) -> np.random.Generator:
    if _SALT:
        key = (_SALT, *key)
    h = hashlib.blake2b(repr(key).encode(), digest_size=8).digest()
    return np.random.default_rng(int.from_bytes(h, "little"))


def pattern(k: int) -> np.ndarray:
    """Class k's 8x8x3 pattern in [0, 1]: 60% its group's (k // 3), 40% its own."""
    return 0.6 * _rng("group", k // 3).uniform(0, 1, (GRID, GRID, 3)) + 0.4 * _rng("class", k).uniform(0, 1, (GRID, GRID, 3))


def make_image(k: int, seed: Any, noise: float = 70.0) -> Image.Image:
    """An image of class k: its pattern, upscaled, plus pixel noise drawn from seed."""
    base = np.kron(pattern(k), np.ones((SIDE // GRID, SIDE // GRID, 1))) * 255.0
    px = base + _rng("noise", seed).normal(0.0, noise, base.shape)
    return Image.fromarray(np.clip(px, 0, 255).astype(np.uint8), "RGB")


_PROJ = _rng("projection").normal(0.0, 1.0, (DIM, GRID * GRID * 3)) / np.sqrt(GRID * GRID * 3)
_QUERY_OFFSET = _rng("query-offset").normal(0.0, 0.05, DIM)


def _image_vector(img: Image.Image) -> np.ndarray:
    a = np.asarray(img.convert("RGB").resize((GRID, GRID), Image.BOX), dtype=np.float64) / 255.0 - 0.5
    return _PROJ @ a.reshape(-1)


def _word_vector(w: str) -> np.ndarray:
    if len(w) > 1 and w[0] == "c" and w[1:].isdigit():
        return _PROJ @ (pattern(int(w[1:])) - 0.5).reshape(-1)
    return _rng("word", w).normal(0.0, 0.35, DIM)


def _text_vector(t: str) -> np.ndarray:
    words = t.lower().replace(".", " ").replace(",", " ").split()
    if not words:
        return np.zeros(DIM)
    return sum(_word_vector(w) for w in words) / np.sqrt(len(words))


class HashEncoder(AbsEncoder):
    """The deterministic encoder (see the module comment). Embeddings are float32 [n, DIM]."""

    def __init__(self, name: str = "mieb-test/hash-encoder", revision: str = "1", fail_after: int | None = None):
        self.mteb_model_meta = ModelMeta.create_empty(
            overwrites={
                "name": name,
                "revision": revision,
                "similarity_fn_name": ScoringFunction.COSINE,
                "modalities": ["image", "text"],
                "embed_dim": DIM,
            }
        )
        self.n_calls = 0
        self.fail_after = fail_after  # raise on this call (to test resuming an export)

    def encode(self, inputs: Any, *, task_metadata: Any, hf_split: str, hf_subset: str,
               prompt_type: PromptType | None = None, **kwargs: Any) -> np.ndarray:
        self.n_calls += 1
        if self.fail_after is not None and self.n_calls > self.fail_after:
            raise RuntimeError("HashEncoder: simulated interruption")
        out = []
        for batch in inputs:
            n = len(batch["image"] if "image" in batch else batch["text"])
            for i in range(n):
                v = np.zeros(DIM)
                if "image" in batch:
                    v = v + _image_vector(batch["image"][i])
                if "text" in batch:
                    v = v + _text_vector(batch["text"][i])
                if prompt_type == PromptType.query:
                    v = v + _QUERY_OFFSET
                out.append(v)
        return np.asarray(out, dtype=np.float32).reshape(len(out), DIM)


def _meta(name: str, type_: str, main: str, modalities: list[str], category: str, langs: Any = None) -> TaskMetadata:
    return TaskMetadata(
        name=name,
        description="An in-memory task for the mieb-eval parity test.",
        reference="https://github.com/embeddings-benchmark/mteb",
        dataset={"path": "NA", "revision": "NA"},
        type=type_,
        category=category,
        eval_splits=["test"],
        eval_langs=langs or ["eng-Latn"],
        main_score=main,
        date=("2024-01-01", "2024-01-02"),
        dialect=[],
        domains=[],
        task_subtypes=[],
        license="cc-by-4.0",
        annotations_creators="derived",
        modalities=modalities,
        sample_creation="found",
        bibtex_citation="",
    )


# ------------------------------------------------------------------ retrieval
class InMemT2IRetrieval(AbsTaskRetrieval):
    """Text queries ("a photo of c<K>") over an image corpus: 40 classes x 9 images, 6 exact
    duplicate images (ties), graded and zero-score qrels, one query without qrels (dropped)."""

    metadata = _meta("InMemT2IRetrieval", "Any2AnyRetrieval", "ndcg_at_10", ["image", "text"], "t2i")

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        ids, imgs, cls = [], [], []
        for k in range(40):
            for j in range(9):
                ids.append(f"img{k:02d}_{j}")
                imgs.append(make_image(k, ("t2i", k, j)))
                cls.append(k)
        for j in range(6):  # exact duplicates: tied scores
            ids.append(f"dup{j}")
            imgs.append(imgs[j * 9])
            cls.append(j)
        qids, texts, qrels = [], [], {}
        for q in range(60):
            k = q % 40
            qid = f"q{q:02d}"
            qids.append(qid)
            texts.append(f"a photo of c{k}" + (" outdoors" if q >= 40 else ""))
            rel = {ids[i]: (2 if i % 9 == 0 else 1) for i in range(len(ids)) if cls[i] == k}
            if q == 5:
                rel = {d: 0 for d in rel}  # all judged non-relevant: kept, scores 0
            if q == 7:
                rel = {}  # no qrels: mteb drops the query
            if q == 8:
                rel[ids[200]] = 0
            qrels[qid] = rel
        self.dataset = {"default": {"test": RetrievalSplitData(
            queries=Dataset.from_dict({"id": qids, "text": texts}),
            corpus=Dataset.from_dict({"id": ids, "image": imgs}),
            relevant_docs=qrels,
            top_ranked=None,
        )}}
        self.data_loaded = True


class InMemI2IRetrieval(AbsTaskRetrieval):
    """Image queries that are also in the corpus, scored with skip_first_result (as CUB200)."""

    metadata = _meta("InMemI2IRetrieval", "Any2AnyRetrieval", "hit_rate_at_1", ["image"], "i2i")
    skip_first_result = True

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        ids, imgs, cls = [], [], []
        for k in range(12):
            for j in range(8):
                ids.append(f"d{k}_{j}")
                imgs.append(make_image(k, ("i2i", k, j), noise=90.0))
                cls.append(k)
        qsel = list(range(0, len(ids), 3))
        qrels = {f"q{i}": {ids[d]: 1 for d in range(len(ids)) if cls[d] == cls[i]} for i in qsel}
        self.dataset = {"default": {"test": RetrievalSplitData(
            queries=Dataset.from_dict({"id": [f"q{i}" for i in qsel], "image": [imgs[i] for i in qsel]}),
            corpus=Dataset.from_dict({"id": ids, "image": imgs}),
            relevant_docs=qrels,
            top_ranked=None,
        )}}
        self.data_loaded = True


class InMemMultiChoice(AbsTaskRetrieval):
    """Image + text queries answered from 4 candidate texts each (top_ranked), as VisionCentricQA."""

    metadata = _meta("InMemMultiChoice", "VisionCentricQA", "accuracy", ["image", "text"], "it2t")

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        answers = [f"it shows c{k}" for k in range(20)]
        qids, qimgs, qtexts, qrels, top = [], [], [], {}, {}
        for q in range(50):
            k = q % 20
            qid = f"q{q}"
            qids.append(qid)
            qimgs.append(make_image(k, ("mc", q), noise=100.0))
            qtexts.append("what does the picture show")
            options = [k, (k + 1) % 20, (k + 3) % 20, (k + 7) % 20]
            top[qid] = [f"a{o}" for o in (options if q % 2 else options[::-1])]
            qrels[qid] = {f"a{o}": int(o == k) for o in options}
        self.dataset = {"default": {"test": RetrievalSplitData(
            queries=Dataset.from_dict({"id": qids, "image": qimgs, "text": qtexts}),
            corpus=Dataset.from_dict({"id": [f"a{k}" for k in range(20)], "text": answers}),
            relevant_docs=qrels,
            top_ranked=top,
        )}}
        self.data_loaded = True


# ------------------------------------------------------------------ classification
class InMemImageClassification(AbsTaskClassification):
    """10 classes with string labels (as Birdsnap's), 30 train images per class, 16 shots x 5."""

    metadata = _meta("InMemImageClassification", "ImageClassification", "accuracy", ["image"], "i2c")
    input_column_name = "image"
    label_column_name = "species"
    samples_per_label = 16
    n_experiments = 5

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        names = [f"species {chr(ord('a') + k)}" for k in range(10)]

        def split(n_per: int, tag: str) -> Dataset:
            rows = [(make_image(k, (tag, k, j), noise=110.0), names[k]) for j in range(n_per) for k in range(10)]
            return Dataset.from_dict({"image": [r[0] for r in rows], "species": [r[1] for r in rows]})

        self.dataset = DatasetDict({"train": split(30, "clf-train"), "test": split(12, "clf-test")})
        self.data_loaded = True


class InMemBinaryClassification(AbsTaskClassification):
    """Two classes (the binary branch: ap, one weight vector), 8 shots x 10 (STL10's setting)."""

    metadata = _meta("InMemBinaryClassification", "ImageClassification", "accuracy", ["image"], "i2c")
    input_column_name = "image"

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        def split(n_per: int, tag: str) -> Dataset:
            rows = [(make_image(k, (tag, k, j), noise=150.0), k - 3) for j in range(n_per) for k in (3, 4)]
            return Dataset.from_dict({"image": [r[0] for r in rows], "label": [r[1] for r in rows]})

        self.dataset = DatasetDict({"train": split(25, "bin-train"), "test": split(30, "bin-test")})
        self.data_loaded = True


class InMemMultilabel(AbsTaskMultilabelClassification):
    """Images holding 1-3 of 6 labels (the mean of their patterns), kNN(5) as VOC2007."""

    metadata = _meta("InMemMultilabel", "ImageClassification", "lrap", ["image"], "i2c")
    input_column_name = "image"
    label_column_name = "classes"
    samples_per_label = 8
    n_experiments = 5
    max_eval_samples = None

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        def split(n: int, tag: str) -> Dataset:
            rng = _rng("ml", tag)
            imgs, labs = [], []
            for i in range(n):
                ks = sorted(rng.choice(6, size=int(rng.integers(1, 4)), replace=False).tolist())
                px = np.mean([np.kron(pattern(k), np.ones((4, 4, 1))) for k in ks], axis=0) * 255
                px = px + _rng("mlnoise", tag, i).normal(0, 50.0, px.shape)
                imgs.append(Image.fromarray(np.clip(px, 0, 255).astype(np.uint8), "RGB"))
                labs.append(ks)
            return Dataset.from_dict({"image": imgs, "classes": labs})

        self.dataset = DatasetDict({"train": split(120, "train"), "test": split(70, "test")})
        self.data_loaded = True


# ------------------------------------------------------------------ zero-shot
class InMemZeroShot(AbsTaskZeroShotClassification):
    """12 classes, prompts "a photo of c<K>." (modalities [image, text]: softmax(100 cos))."""

    metadata = _meta("InMemZeroShot", "ZeroShotClassification", "accuracy", ["image", "text"], "i2t")

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        rows = [(make_image(k, ("zs", k, j), noise=120.0), k) for j in range(10) for k in range(12)]
        self.dataset = DatasetDict({"test": Dataset.from_dict({"image": [r[0] for r in rows],
                                                               "label": [r[1] for r in rows]})})
        self.data_loaded = True

    def get_candidate_labels(self) -> list[str]:
        return [f"a photo of c{k}." for k in range(12)]


class InMemZeroShotBinary(AbsTaskZeroShotClassification):
    """2 classes with string labels, modalities [text, image] (the model.similarity branch, ap keys)."""

    metadata = _meta("InMemZeroShotBinary", "ZeroShotClassification", "accuracy", ["text", "image"], "i2t")

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        labels = self.get_candidate_labels()
        rows = [(make_image(k, ("zsb", k, j), noise=160.0), labels[k - 5]) for j in range(25) for k in (5, 6)]
        self.dataset = DatasetDict({"test": Dataset.from_dict({"image": [r[0] for r in rows],
                                                               "label": [r[1] for r in rows]})})
        self.data_loaded = True

    def get_candidate_labels(self) -> list[str]:
        return ["tissue of type c5", "tissue of type c6\n"]


# ------------------------------------------------------------------ clustering
class InMemClustering(AbsTaskClusteringLegacy):
    """620 images of 8 classes: MiniBatchKMeans sees two batches of 500."""

    metadata = _meta("InMemClustering", "ImageClustering", "nmi", ["image"], "i2c")
    input_column_name = "image"
    label_column_name = "label"

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        rows = [(make_image(k, ("clu", i), noise=120.0), k) for i in range(620) for k in [i % 8]]
        self.dataset = DatasetDict({"test": Dataset.from_dict({"image": [r[0] for r in rows],
                                                               "label": [r[1] for r in rows]})})
        self.data_loaded = True


# ------------------------------------------------------------------ compositionality
class InMemWinoground(AbsTaskImageTextPairClassification):
    """2 images x 2 captions per sample (Winoground's shape)."""

    metadata = _meta("InMemWinoground", "Compositionality", "text_acc", ["image", "text"], "i2t")
    images_column_names = ["image_0", "image_1"]
    texts_column_names = ["caption_0", "caption_1"]

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        cols: dict[str, list[Any]] = {c: [] for c in ("image_0", "image_1", "caption_0", "caption_1")}
        for s in range(40):
            a, b = s % 30, (s * 7 + 3) % 30
            cols["image_0"].append(make_image(a, ("wg", s, 0), noise=130.0))
            cols["image_1"].append(make_image(b, ("wg", s, 1), noise=130.0))
            cols["caption_0"].append(f"c{a} next to something")
            cols["caption_1"].append(f"c{b} next to something" if s % 5 else f"c{a} next to something")
        self.dataset = DatasetDict({"test": Dataset.from_dict(cols)})
        self.data_loaded = True


class InMemARO(AbsTaskImageTextPairClassification):
    """1 image x 4 captions per sample, the right one first (ARO's shape)."""

    metadata = _meta("InMemARO", "Compositionality", "text_acc", ["image", "text"], "i2t")
    images_column_names = "image"
    texts_column_names = ["true_caption", "false_caption_1", "false_caption_2", "false_caption_3"]

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        cols: dict[str, list[Any]] = {c: [] for c in ["image", *self.texts_column_names]}
        for s in range(45):
            k = s % 25
            cols["image"].append(make_image(k, ("aro", s), noise=140.0))
            cols["true_caption"].append(f"the c{k}")
            for j, c in enumerate(self.texts_column_names[1:]):
                cols[c].append(f"the c{(k + j + 1) % 25}")
        self.dataset = DatasetDict({"test": Dataset.from_dict(cols)})
        self.data_loaded = True


class InMemImageCoDe(AbsTaskImageTextPairClassification):
    """5 images x 1 caption per sample (ImageCoDe's shape), duplicate images in some samples (ties)."""

    metadata = _meta("InMemImageCoDe", "Compositionality", "image_acc", ["image", "text"], "i2t")
    images_column_names = [f"image_{i}" for i in range(5)]
    texts_column_names = "caption"

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        cols: dict[str, list[Any]] = {c: [] for c in [*self.images_column_names, "caption"]}
        for s in range(30):
            ks = [(s + 3 * i) % 20 for i in range(5)]
            imgs = [make_image(k, ("icd", s, i), noise=140.0) for i, k in enumerate(ks)]
            if s % 6 == 0:
                imgs[1] = imgs[0]  # a tie between the right image and another
            for i in range(5):
                cols[f"image_{i}"].append(imgs[i])
            cols["caption"].append(f"find c{ks[0]}")
        self.dataset = DatasetDict({"test": Dataset.from_dict(cols)})
        self.data_loaded = True


# ------------------------------------------------------------------ visual STS
class InMemVisualSTS(AbsTaskSTS):
    """120 image pairs with gold 0-5 (the closer the classes' groups, the higher)."""

    metadata = _meta("InMemVisualSTS", "VisualSTS(eng)", "cosine_spearman", ["image"], "i2i")
    identical_every = 0  # every n-th pair shows the same image twice (0: none)

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        s1, s2, gold = [], [], []
        for i in range(120):
            a = i % 30
            b = (a + (i // 30) * 2) % 30
            s1.append(make_image(a, ("sts", i, 1), noise=100.0))
            same = self.identical_every and i % self.identical_every == 0
            s2.append(s1[-1] if same else make_image(b, ("sts", i, 2), noise=100.0))
            gold.append(5.0 if a == b else max(0.0, 4.0 - abs(a // 3 - b // 3)) + (i % 3) * 0.25)
        self.dataset = DatasetDict({"test": Dataset.from_dict({"sentence1": s1, "sentence2": s2, "score": gold})})
        self.data_loaded = True


class InMemVisualSTSTies(InMemVisualSTS):
    """InMemVisualSTS with 8 pairs of identical images: cosines of 1 within an ulp, whose order
    in the model-similarity columns depends on torch's reduction order (docs/PARITY.md)."""

    metadata = _meta("InMemVisualSTSTies", "VisualSTS(eng)", "cosine_spearman", ["image"], "i2i")
    identical_every = 17


IN_MEMORY_TASKS = [
    InMemT2IRetrieval,
    InMemI2IRetrieval,
    InMemMultiChoice,
    InMemImageClassification,
    InMemBinaryClassification,
    InMemMultilabel,
    InMemZeroShot,
    InMemZeroShotBinary,
    InMemClustering,
    InMemWinoground,
    InMemARO,
    InMemImageCoDe,
    InMemVisualSTS,
    InMemVisualSTSTies,
]

# mteb's own mock tasks of every family MIEB uses (mteb.mocks.MOCK_MIEB_TASK_GRID, less the
# families MIEB does not score: bootstrapped clustering, regression, pair classification).
MOCK_TASK_NAMES = [
    "MockAny2AnyRetrievalI2TTask",
    "MockAny2AnyRetrievalT2ITask",
    "MockMultiChoiceTask",
    "MockMultilingualMultiChoiceTask",
    "MockImageClassificationTask",
    "MockMultilingualImageClassificationTask",
    "MockImageMultilabelClassificationTask",
    "MockZeroShotClassificationTask",
    "MockImageClusteringTask",
    "MockImageTextPairClassificationTask",
    "MockMultilingualImageTextPairClassificationTask",
    "MockVisualSTSTask",
]


def make_tasks() -> list[Any]:
    """Fresh task objects (mocks first), data loaded, each task's np_rng reset to its seed.

    mteb's mock tasks draw their random images from the task's own np_rng in load_data; a task
    loaded from the hub leaves it untouched. The reset puts every task in the hub task's state,
    which is what mieb-eval's VOC2007 draw assumes (and the exporter records the draws anyway).
    """
    from mteb import mocks

    tasks = [getattr(mocks, n)() for n in MOCK_TASK_NAMES] + [cls() for cls in IN_MEMORY_TASKS]
    for t in tasks:
        t.load_data()
        t.np_rng = np.random.default_rng(t.seed)
    return tasks


def WarnsThenFails():  # noqa: N802 - a model factory, named like the encoders above
    """A model that cannot load after huggingface_hub warned once (as a download retry does)."""
    from huggingface_hub.utils import logging as hf_logging

    hf_logging.get_logger("huggingface_hub.mieb_test").warning("hf-warning-said-once")
    raise OSError("this test model never loads")
