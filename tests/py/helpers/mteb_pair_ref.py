"""Reference for mieb-eval's Compositionality and Visual STS scoring, built from mteb's own
code wherever it can run without mteb's model stack (mteb is installed --no-deps here, so
`import mteb` fails for want of pydantic and torch):

* the metric functions themselves are taken from the installed mteb source with `ast` and
  executed unchanged: AbsTaskImageTextPairClassification._compute_metrics (with a small
  numpy stand-in for the few torch calls it makes: arange, argmax, ==, all, item, Tensor,
  float, mean), AbsTaskSTS._normalize and _calculate_scores (with the real scipy),
  AbsTaskAggregate.task_results_to_scores, TaskResult._get_score_fast (with mteb's own
  LanguageScripts) and TaskResult._round_scores;
* what runs inside torch or a model is restated in numpy: the evaluator's per-sample
  image x text matrices (F.normalize then img @ txt.T, float32, or float16 / bfloat16
  rounding at torch's rounding points) and the model similarity of STS (pairwise_cos_sim /
  pairwise_dot_score); the STS evaluator's sklearn lines are run as written, with sklearn.
"""
from __future__ import annotations

import ast
import glob
import importlib.util
import logging
import os
import sys
import types

import numpy as np

SITE = sorted(glob.glob(os.path.join(sys.prefix, "lib", "python3*", "site-packages")))[0]
MTEB = os.path.join(SITE, "mteb")


def _method_source(relpath: str, cls: str, name: str) -> str:
    src = open(os.path.join(MTEB, relpath), encoding="utf-8").read()
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == name:
                    item.decorator_list = []
                    return ast.unparse(item)
    raise RuntimeError(f"{cls}.{name} not found in mteb/{relpath}")


def load_method(relpath: str, cls: str, name: str, **names):
    """mteb's method as a plain function (self is its first argument)."""
    ns = {"np": np, "logger": logging.getLogger("mteb-ref"), **names}
    exec(compile("from __future__ import annotations\n" + _method_source(relpath, cls, name),
                 f"mteb/{relpath}:{cls}.{name}", "exec"), ns)
    return ns[name]


# ---- a numpy stand-in for the torch calls _compute_metrics makes ----
class _T:
    def __init__(self, a):
        self.a = np.asarray(a)

    def argmax(self, dim):
        return _T(np.argmax(self.a, axis=dim))  # first maximum; NaN counts as the maximum, as in torch

    def __eq__(self, other):
        return _T(self.a == (other.a if isinstance(other, _T) else other))

    def all(self):
        return _T(np.all(self.a))

    def item(self):
        return self.a.item()

    def float(self):
        return _T(self.a.astype(np.float32))

    def mean(self):
        # torch (CPU): sum in float32 (exact for 0/1 flags), then divide by n in float32
        n = np.float32(self.a.size)
        with np.errstate(invalid="ignore", divide="ignore"):
            return _T(np.float32(self.a.sum(dtype=np.float32)) / n)


_fake_torch = types.ModuleType("torch")
_fake_torch.arange = lambda n: _T(np.arange(n))
_fake_torch.Tensor = lambda lst: _T(np.array(lst, dtype=np.float32))

_compute_metrics = load_method("abstasks/image/image_text_pair_classification.py",
                               "AbsTaskImageTextPairClassification", "_compute_metrics",
                               ImageTextPairClassificationMetrics=dict)


def compo_metrics(matrices, n_img, n_txt):
    """mteb's _compute_metrics on per-sample float matrices [n_img, n_txt]."""
    saved = sys.modules.get("torch")
    sys.modules["torch"] = _fake_torch
    try:
        return _compute_metrics(None, [_T(m) for m in matrices], n_img, n_txt)
    finally:
        if saved is None:
            sys.modules.pop("torch", None)
        else:
            sys.modules["torch"] = saved


def _round16(x, dtype):
    x = np.asarray(x, dtype=np.float32)
    if dtype == "f16":
        return x.astype(np.float16).astype(np.float32)
    if dtype == "bf16":
        u = x.view(np.uint32).astype(np.uint64)
        return (((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint32) << 16).view(np.float32)
    return x


def torch_normalize(x, dtype="f32"):
    """F.normalize(x, dim=-1) in the tensor's dtype: norm (fp32 accumulation, rounded to the
    dtype), clamp_min(1e-12 converted to the dtype), x / norm in fp32 rounded to the dtype."""
    x = np.asarray(x, dtype=np.float32)
    nrm = _round16(np.sqrt((x.astype(np.float64) ** 2).sum(axis=1).astype(np.float32)), dtype)
    eps = _round16(np.float32(1e-12), dtype)
    nrm = np.maximum(nrm, eps)
    with np.errstate(invalid="ignore", divide="ignore"):
        return _round16((x / nrm[:, None]).astype(np.float32), dtype)


def compo_matrices(img, txt, n_img, n_txt, dtype="f32"):
    """The evaluator: normalise, view per sample, img @ txt.T (rounded to the dtype)."""
    ni, nt = torch_normalize(img, dtype), torch_normalize(txt, dtype)
    ns = ni.shape[0] // n_img
    d = ni.shape[1]
    ni, nt = ni.reshape(ns, n_img, d), nt.reshape(ns, n_txt, d)
    return [_round16((ni[s].astype(np.float64) @ nt[s].astype(np.float64).T).astype(np.float32), dtype)
            for s in range(ns)]


# ---- Visual STS ----
class _STSSelf:
    def __init__(self, min_score, max_score):
        self.min_score, self.max_score = min_score, max_score


def _sts_fns():
    from scipy.stats import pearsonr, spearmanr
    norm = load_method("abstasks/sts.py", "AbsTaskSTS", "_normalize")
    calc = load_method("abstasks/sts.py", "AbsTaskSTS", "_calculate_scores", pearsonr=pearsonr, spearmanr=spearmanr,
                       STSMetrics=dict)
    return norm, calc


def sts_pair_scores(e1, e2, model_sim="cosine"):
    """AnySTSEvaluator's scoring lines (sklearn, as written there) + the model similarity
    restated from mteb.similarity_functions (float32 torch arithmetic)."""
    from sklearn.metrics.pairwise import (paired_cosine_distances, paired_euclidean_distances,
                                          paired_manhattan_distances)
    cosine_scores = 1 - (paired_cosine_distances(e1, e2))
    manhattan_distances = -paired_manhattan_distances(e1, e2)
    euclidean_distances = -paired_euclidean_distances(e1, e2)
    a, b = np.asarray(e1, dtype=np.float32), np.asarray(e2, dtype=np.float32)  # _convert_to_tensor upcasts
    if model_sim == "cosine":
        a, b = torch_normalize(a), torch_normalize(b)
    prod = (a * b).astype(np.float32)
    similarity_scores = prod.astype(np.float64).sum(axis=1).astype(np.float32)
    return dict(cosine_scores=cosine_scores.tolist(), manhattan_distances=manhattan_distances.tolist(),
                euclidean_distances=euclidean_distances.tolist(), similarity_scores=similarity_scores.tolist())


def sts_subset_scores(e1, e2, gold, min_score=0, max_score=5, model_sim="cosine"):
    """AbsTaskSTS._evaluate_subset minus the encoding: the 8 metrics, unrounded."""
    norm, calc = _sts_fns()
    me = _STSSelf(min_score, max_score)
    normalized_scores = list(map(lambda x: norm(me, x), [float(g) for g in gold]))
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return calc(None, sts_pair_scores(e1, e2, model_sim), normalized_scores)


# ---- aggregate tasks and result writing ----
def _language_scripts():
    stub = types.ModuleType("mteb.languages.check_language_code")
    stub.check_language_code = lambda code: None
    saved = {k: sys.modules.get(k) for k in ("mteb", "mteb.languages", "mteb.languages.check_language_code")}
    sys.modules.setdefault("mteb", types.ModuleType("mteb"))
    sys.modules.setdefault("mteb.languages", types.ModuleType("mteb.languages"))
    sys.modules["mteb.languages.check_language_code"] = stub
    try:
        spec = importlib.util.spec_from_file_location("mteb_language_scripts_ref",
                                                      os.path.join(MTEB, "languages", "language_scripts.py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod  # dataclasses look their module up
        spec.loader.exec_module(mod)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    return mod.LanguageScripts


class _TaskResult:
    def __init__(self, task_name, scores):
        self.task_name, self.scores = task_name, scores


_TaskResult._get_score_fast = load_method("results/task_result.py", "TaskResult", "_get_score_fast",
                                          LanguageScripts=_language_scripts())


def aggregate_scores(agg_main_score, agg_eval_splits, agg_eval_langs, subtask_name, subtask_scores):
    """AbsTaskAggregate.task_results_to_scores on a fresh sub-task result.
    subtask_scores: {split: [per-subset dict with main_score, hf_subset, languages]} in evaluation order;
    agg_eval_langs: the aggregate's eval_langs (a list, as AggregateTaskMetadata computes it)."""
    fn = load_method("abstasks/aggregated_task.py", "AbsTaskAggregate", "task_results_to_scores")
    meta = types.SimpleNamespace(eval_langs=list(agg_eval_langs), eval_splits=list(agg_eval_splits),
                                 main_score=agg_main_score)
    me = types.SimpleNamespace(metadata=meta, taskname_to_task={subtask_name: None})
    return fn(me, [_TaskResult(subtask_name, subtask_scores)])


class _Rounder:
    pass


_Rounder._round_scores = load_method("results/task_result.py", "TaskResult", "_round_scores")


def round_scores(scores):
    """TaskResult.to_disk's rounding, applied in place to a {split: [dict]} tree."""
    _Rounder()._round_scores(scores, 6)
    return scores
