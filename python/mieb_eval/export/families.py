"""What mteb 2.26.24 encodes for each MIEB task family, and the ground truth it scores against.

For every family this module restates the encode calls of the family's AbsTask / evaluator
(the same dataloader functions with the same arguments, the same hf_split and prompt_type),
and reads the ground truth from the loaded task with mteb's own helpers (the query filter,
the few-shot draws, the label normalisation), so the exported files hold what mteb.evaluate
would have seen. Each encode call is one "segment" of a role, in mteb's order.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .taskdata import MIEB_TYPES, Group, csr, label_ids

logger = logging.getLogger("mieb_eval.export")

RETRIEVAL_TYPES = ("Any2AnyRetrieval", "Any2AnyMultilingualRetrieval", "DocumentUnderstanding", "VisionCentricQA")
CORPUS_CHUNK = 50_000  # SearchEncoderWrapper's corpus_chunk_size


@dataclass
class Segment:
    """One of mteb's encode calls: rows [start, start + n) of a role."""

    start: int
    n: int
    make_loader: Callable[[], Any]


@dataclass
class RolePlan:
    split: str  # the eval split whose folder holds the role
    subset: str
    role: str
    n_rows: int
    hf_split: str  # what mteb passes to encode as hf_split
    prompt_type: Any  # mteb PromptType or None
    segments: list[Segment]
    row_index: np.ndarray | None = None


@dataclass
class TaskPlan:
    mieb_type: str
    groups: dict[tuple[str, str], Group] = field(default_factory=dict)
    roles: list[RolePlan] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    columns: dict[str, Any] = field(default_factory=dict)


class Unsupported(Exception):
    """The task's family is not one mieb-eval scores (or not as this abstask does)."""


def _subset_data(task: Any, split: str, subset: str) -> Any:
    """AbsTask.evaluate's choice of the data of one (split, subset)."""
    if subset not in task.dataset and subset == "default":
        return task.dataset[split]
    return task.dataset[subset][split]


def _whole(make: Callable[[], Any], n: int) -> list[Segment]:
    return [Segment(0, n, make)]


# ---------------------------------------------------------------- retrieval
def plan_retrieval(task: Any, enc: dict[str, Any], num_proc: int | None, chunk: int) -> TaskPlan:
    from mteb._create_dataloaders import create_dataloader
    from mteb.abstasks.retrieval import _filter_queries_without_positives
    from mteb.types import PromptType

    if getattr(task, "ignore_identical_ids", False):
        raise Unsupported("ignore_identical_ids=True (no MIEB task sets it; mieb-eval does not implement it)")
    task.convert_v1_dataset_format_to_v2(num_proc=num_proc)
    md = task.metadata
    plan = TaskPlan(md.type if md.type in RETRIEVAL_TYPES else "Any2AnyRetrieval")
    plan.params = {"skip_first_result": bool(getattr(task, "skip_first_result", False))}
    for split in task.eval_splits:
        for subset in task.hf_subsets:
            data = _subset_data(task, split, subset)
            qrels, queries = _filter_queries_without_positives(data["relevant_docs"], data["queries"])
            corpus, top_ranked = data["corpus"], data["top_ranked"]
            qids, cids = list(queries["id"]), list(corpus["id"])
            cpos = {c: i for i, c in enumerate(cids)}
            g = Group()
            g.strings["query_ids"], g.strings["corpus_ids"] = qids, cids
            docs, scores, missing = [], [], 0
            for q in qids:
                row_d, row_s = [], []
                for d, s in qrels[q].items():
                    if d in cpos:
                        row_d.append(cpos[d])
                        row_s.append(int(s))
                    else:
                        missing += 1
                docs.append(row_d)
                scores.append(row_s)
            if missing:
                logger.warning("%s %s/%s: %d qrels name documents outside the corpus; the format cannot hold "
                               "them, so they are left out", md.name, split, subset, missing)
                g.attrs["qrels_docs_outside_corpus"] = np.int64(missing)
            g.datasets["qrels_indptr"], g.datasets["qrels_doc"] = csr(docs)
            g.datasets["qrels_score"] = np.array([s for r in scores for s in r], dtype=np.int32)
            if top_ranked is not None:
                cand = [[cpos[d] for d in top_ranked.get(q, [])] for q in qids]
                g.datasets["candidates_indptr"], g.datasets["candidates_doc"] = csr(cand)
            plan.groups[(split, subset)] = g

            # SearchEncoderWrapper.search: the queries, then the corpus (in chunks of 50,000 for a
            # full-corpus search; whole when reranking top_ranked candidates).
            def q_loader(queries=queries):
                return create_dataloader(queries, task_metadata=md, prompt_type=PromptType.query,
                                         num_proc=num_proc, **enc)

            plan.roles.append(RolePlan(split, subset, "queries", len(qids), split, PromptType.query,
                                       _whole(q_loader, len(qids))))
            bs = enc.get("batch_size", 32)
            size = len(cids) if top_ranked is not None else chunk
            segs = []
            for s0 in range(0, len(cids), max(1, size)):
                s1 = min(len(cids), s0 + size)

                def c_loader(s0=s0, s1=s1, corpus=corpus):
                    sub = corpus if (s0 == 0 and s1 == len(corpus) and top_ranked is not None) else \
                        corpus.select(range(s0, s1))
                    return create_dataloader(sub, task_metadata=md, prompt_type=PromptType.document,
                                             batch_size=bs, num_proc=num_proc)

                segs.append(Segment(s0, s1 - s0, c_loader))
            plan.roles.append(RolePlan(split, subset, "corpus", len(cids), split, PromptType.document, segs))
    return plan


# ---------------------------------------------------------------- classification (linear probe)
def plan_classification(task: Any, enc: dict[str, Any], num_proc: int | None) -> TaskPlan:
    from datasets import Dataset, DatasetDict

    from mteb._create_dataloaders import create_dataloader

    if task.is_cross_validation:
        raise Unsupported("is_cross_validation=True (no MIEB image task uses it)")
    md = task.metadata
    plan = TaskPlan("ImageClassification")
    plan.params = {"samples_per_label": int(task.samples_per_label), "n_experiments": int(task.n_experiments),
                   "train_split": task.train_split}
    plan.columns = {"input_column_name": task.input_column_name, "label_column_name": task.label_column_name}
    inp = [task.input_column_name] if isinstance(task.input_column_name, str) else list(task.input_column_name)
    for split in task.eval_splits:
        for subset in task.hf_subsets:
            # AbsTaskClassification.evaluate's choice of the subset's data and its columns
            ds = task.dataset if (subset not in task.dataset and subset == "default") else task.dataset[subset]
            if isinstance(ds, Dataset | DatasetDict):
                ds = ds.select_columns(list(set(inp) | {task.label_column_name}))
            train, ev = ds[task.train_split], ds[split]
            ytr, yev = list(train[task.label_column_name]), list(ev[task.label_column_name])
            ids = label_ids(ytr, yev)
            sim, sel = None, []
            for i in range(task.n_experiments):  # _evaluate_subset's simulation of the draws
                _, sim, chosen = task._undersample_data(train, i, sim)
                sel.append(list(chosen))
            union = sorted(set().union(*sel))
            g = Group()
            g.datasets["train_labels"] = np.array([ids[v] for v in ytr], dtype=np.int64)
            g.datasets["eval_labels"] = np.array([ids[v] for v in yev], dtype=np.int64)
            width = max((len(s) for s in sel), default=0)
            ti = np.full((len(sel), width), -1, dtype=np.int64)
            for e, s in enumerate(sel):
                ti[e, : len(s)] = s
            g.datasets["train_idx"] = ti
            plan.groups[(split, subset)] = g

            def tr_loader(train=train, union=union):
                return create_dataloader(train.select(union), task_metadata=md, input_column=task.input_column_name,
                                         num_proc=num_proc, **enc)

            def ev_loader(ev=ev):
                return create_dataloader(ev, task_metadata=md, input_column=task.input_column_name,
                                         num_proc=num_proc, **enc)

            plan.roles.append(RolePlan(split, subset, "train", len(union), task.train_split, None,
                                       _whole(tr_loader, len(union)), np.array(union, dtype=np.int64)))
            plan.roles.append(RolePlan(split, subset, "eval", len(ev), split, None, _whole(ev_loader, len(ev))))
    return plan


# ---------------------------------------------------------------- multilabel classification (VOC2007)
def plan_multilabel(task: Any, enc: dict[str, Any], num_proc: int | None) -> TaskPlan:
    from datasets import DatasetDict

    from mteb._create_dataloaders import create_dataloader
    from mteb.abstasks.abstask import _multilabel_subsampling

    if not isinstance(task.input_column_name, str):
        raise Unsupported("multilabel classification over several input columns")
    md = task.metadata
    plan = TaskPlan("ImageClassification")
    plan.params = {"samples_per_label": int(task.samples_per_label), "n_experiments": int(task.n_experiments),
                   "train_split": task.train_split, "max_eval_samples": task.max_eval_samples}
    plan.columns = {"input_column_name": task.input_column_name, "label_column_name": task.label_column_name}
    col, lab = task.input_column_name, task.label_column_name
    # AbsTask.evaluate runs splits in order and subsets in order on one task object; every
    # subset's draws advance the task's np_rng, so they are replayed here in that order.
    for split in task.eval_splits:
        for subset in task.hf_subsets:
            data = task.dataset if (subset not in task.dataset and subset == "default") else task.dataset[subset]
            if isinstance(data, DatasetDict):
                data = data.select_columns([col, lab])
            train, ev = data[task.train_split], data[split]
            samples = []
            for _ in range(task.n_experiments):
                idx, _ = task._undersample_data_indices(train[lab], task.samples_per_label, None)
                samples.append([int(i) for i in idx])
            unique = [int(i) for i in list(set(itertools.chain.from_iterable(samples)))]
            test = ev
            if task.max_eval_samples is not None and len(ev) > task.max_eval_samples:
                test = _multilabel_subsampling(DatasetDict({split: ev}), seed=task.seed, splits=[split], label=lab,
                                               n_samples=task.max_eval_samples)[split]
            ytr, yev = list(train[lab]), list(test[lab])
            ids = label_ids([v for r in ytr for v in r], [v for r in yev for v in r])
            g = Group()
            g.datasets["train_labels_indptr"], g.datasets["train_labels_flat"] = csr([[ids[v] for v in r] for r in ytr])
            g.datasets["eval_labels_indptr"], g.datasets["eval_labels_flat"] = csr([[ids[v] for v in r] for r in yev])
            width = max((len(s) for s in samples), default=0)
            ti = np.full((len(samples), width), -1, dtype=np.int64)
            for e, s in enumerate(samples):
                ti[e, : len(s)] = s
            g.datasets["train_idx"] = ti
            plan.groups[(split, subset)] = g

            def tr_loader(train=train, unique=unique):
                return create_dataloader(train.select(unique).select_columns(col), task_metadata=md,
                                         input_column=col, num_proc=num_proc, **enc)

            def ev_loader(test=test):
                return create_dataloader(test.select_columns(col), task_metadata=md, input_column=col,
                                         num_proc=num_proc, **enc)

            plan.roles.append(RolePlan(split, subset, "train", len(unique), task.train_split, None,
                                       _whole(tr_loader, len(unique)), np.array(unique, dtype=np.int64)))
            plan.roles.append(RolePlan(split, subset, "eval", len(test), split, None, _whole(ev_loader, len(test))))
    return plan


# ---------------------------------------------------------------- zero-shot
def plan_zeroshot(task: Any, enc: dict[str, Any], num_proc: int | None) -> TaskPlan:
    from mteb._create_dataloaders import _create_dataloader_from_texts, create_dataloader

    md = task.metadata
    plan = TaskPlan("ZeroShotClassification")
    plan.columns = {"input_column_name": task.input_column_name, "label_column_name": task.label_column_name}
    for split in task.eval_splits:
        for subset in task.hf_subsets:
            data = _subset_data(task, split, subset)
            cols = [task.input_column_name] if isinstance(task.input_column_name, str) else list(task.input_column_name)
            data = data.select_columns([*cols, task.label_column_name])
            labels_text = task.get_candidate_labels()
            y = task._normalize_labels(list(data[task.label_column_name]), labels_text)
            g = Group()
            g.datasets["eval_labels"] = np.array([int(v) for v in y], dtype=np.int64)
            plan.groups[(split, subset)] = g

            # ZeroShotClassificationEvaluator: the candidate labels, then the inputs
            def lab_loader(labels_text=labels_text):
                return _create_dataloader_from_texts(labels_text, num_proc=num_proc, **enc)

            def ev_loader(data=data):
                return create_dataloader(data, input_column=task.input_column_name, task_metadata=md,
                                         num_proc=num_proc, **enc)

            plan.roles.append(RolePlan(split, subset, "candidate_labels", len(labels_text), split, None,
                                       _whole(lab_loader, len(labels_text))))
            plan.roles.append(RolePlan(split, subset, "eval", len(data), split, None, _whole(ev_loader, len(data))))
    return plan


# ---------------------------------------------------------------- clustering
def plan_clustering(task: Any, enc: dict[str, Any], num_proc: int | None) -> TaskPlan:
    from mteb._create_dataloaders import create_dataloader

    md = task.metadata
    if md.modalities == ["text"]:
        raise Unsupported("text clustering (cluster sets) is not a MIEB family")
    plan = TaskPlan("ImageClustering")
    plan.columns = {"input_column_name": task.input_column_name, "label_column_name": task.label_column_name}
    for split in task.eval_splits:
        for subset in task.hf_subsets:
            data = _subset_data(task, split, subset).select_columns([task.input_column_name, task.label_column_name])
            y = list(data[task.label_column_name])
            ids = label_ids(y)
            g = Group()
            g.datasets["eval_labels"] = np.array([ids[v] for v in y], dtype=np.int64)
            plan.groups[(split, subset)] = g

            def ev_loader(data=data):  # ClusteringEvaluator
                return create_dataloader(data, task_metadata=md, input_column=task.input_column_name,
                                         num_proc=num_proc, **enc)

            plan.roles.append(RolePlan(split, subset, "eval", len(data), split, None, _whole(ev_loader, len(data))))
    return plan


# ---------------------------------------------------------------- compositionality
def plan_compositionality(task: Any, enc: dict[str, Any], num_proc: int | None) -> TaskPlan:
    from torch.utils.data import DataLoader

    from mteb._create_dataloaders import _create_dataloader_from_texts, _transform_image_to_rgb
    from mteb._evaluators.image.imagetext_pairclassification_evaluator import (
        _build_image_dataset,
        _image_collate_fn,
    )

    plan = TaskPlan("Compositionality")
    icols, tcols = task.images_column_names, task.texts_column_names
    plan.columns = {"images_column_names": icols, "texts_column_names": tcols}
    for split in task.eval_splits:
        for subset in task.hf_subsets:
            data = _subset_data(task, split, subset)
            sel = ([icols] if isinstance(icols, str) else list(icols)) + ([tcols] if isinstance(tcols, str) else list(tcols))
            data = data.select_columns(sel)
            n_img = 1 if isinstance(icols, str) else len(icols)
            n_txt = 1 if isinstance(tcols, str) else len(tcols)
            # ImageTextPairClassificationEvaluator.__call__: sample-major lists
            if isinstance(icols, str):
                images = list(data[icols])
            else:
                images = [row[c] for row in data for c in icols]
            images = [_transform_image_to_rgb(im) for im in images]
            if isinstance(tcols, str):
                texts = list(data[tcols])
            else:
                texts = [row[c] for row in data for c in tcols]
            g = Group()
            g.attrs["n_samples"], g.attrs["n_images"], g.attrs["n_texts"] = (
                np.int64(len(data)), np.int64(n_img), np.int64(n_txt))
            plan.groups[(split, subset)] = g

            def txt_loader(texts=texts):
                return _create_dataloader_from_texts(texts, num_proc=num_proc, **enc)

            def img_loader(images=images):  # batch size 1: the evaluator passes none
                return DataLoader(_build_image_dataset(images), collate_fn=_image_collate_fn,
                                  num_workers=num_proc if num_proc is not None and num_proc > 1 else 0)

            plan.roles.append(RolePlan(split, subset, "texts", len(texts), split, None, _whole(txt_loader, len(texts))))
            plan.roles.append(RolePlan(split, subset, "images", len(images), split, None,
                                       _whole(img_loader, len(images))))
    return plan


# ---------------------------------------------------------------- visual STS
def plan_sts(task: Any, enc: dict[str, Any], num_proc: int | None) -> TaskPlan:
    from mteb._create_dataloaders import create_dataloader

    md = task.metadata
    plan = TaskPlan(md.type if md.type in ("VisualSTS(eng)", "VisualSTS(multi)") else "VisualSTS(eng)")
    plan.params = {"min_score": task.min_score, "max_score": task.max_score}
    for split in task.eval_splits:
        for subset in task.hf_subsets:
            data = _subset_data(task, split, subset)
            g = Group()
            g.datasets["gold"] = np.array([float(s) for s in data["score"]], dtype=np.float64)
            g.attrs["min_score"], g.attrs["max_score"] = float(task.min_score), float(task.max_score)
            plan.groups[(split, subset)] = g
            # AnySTSEvaluator: sentence 1, then sentence 2, each renamed to its modality
            for k, (role, ptype) in enumerate((("sentence1", task.input1_prompt_type),
                                                ("sentence2", task.input2_prompt_type))):
                c = task.column_names[k]
                if isinstance(c, str) and len(md.modalities) == 1:
                    cols, names = c, {c: md.modalities[0]}
                else:
                    cols, names = list(c), c

                def loader(cols=cols, names=names, data=data):
                    return create_dataloader(data.select_columns(cols).rename_columns(names), task_metadata=md,
                                             num_proc=num_proc, **enc)

                plan.roles.append(RolePlan(split, subset, role, len(data), split, ptype, _whole(loader, len(data))))
    return plan


def plan_task(task: Any, enc: dict[str, Any], num_proc: int | None = None, chunk: int = CORPUS_CHUNK) -> TaskPlan:
    """The export plan of one loaded task, by its abstask."""
    from mteb.abstasks import (
        AbsTaskClassification,
        AbsTaskMultilabelClassification,
        AbsTaskRetrieval,
        AbsTaskSTS,
        AbsTaskZeroShotClassification,
    )
    from mteb.abstasks.clustering import AbsTaskClustering
    from mteb.abstasks.clustering_legacy import AbsTaskClusteringLegacy
    from mteb.abstasks.image.image_text_pair_classification import AbsTaskImageTextPairClassification

    if isinstance(task, AbsTaskRetrieval):
        plan = plan_retrieval(task, enc, num_proc, chunk)
    elif isinstance(task, AbsTaskMultilabelClassification):
        plan = plan_multilabel(task, enc, num_proc)
    elif isinstance(task, AbsTaskClassification):
        plan = plan_classification(task, enc, num_proc)
    elif isinstance(task, AbsTaskZeroShotClassification):
        plan = plan_zeroshot(task, enc, num_proc)
    elif isinstance(task, AbsTaskClusteringLegacy):
        plan = plan_clustering(task, enc, num_proc)
    elif isinstance(task, AbsTaskClustering):
        raise Unsupported("AbsTaskClustering (bootstrapped clustering): MIEB's ImageClustering tasks use "
                          "AbsTaskClusteringLegacy, which is what mieb-eval scores")
    elif isinstance(task, AbsTaskImageTextPairClassification):
        plan = plan_compositionality(task, enc, num_proc)
    elif isinstance(task, AbsTaskSTS):
        plan = plan_sts(task, enc, num_proc)
    else:
        raise Unsupported(f"{type(task).__name__} ({task.metadata.type}) is not a MIEB task family")
    assert plan.mieb_type in MIEB_TYPES
    return plan
