"""ImageClustering end to end: h5py-written files -> `mieb-eval run --device cpu` -> result
JSON, compared with sklearn's MiniBatchKMeans (mteb's settings, one OpenMP thread) + mteb's
_compute_metrics on the same embeddings: same keys in the same order, same values after
to_disk's 6-decimal rounding (exact: the labels are reproduced bit for bit), same bytes as
json.dump. Also --kmeans full (recorded as kmeans_mode) and labels/embeddings of different
lengths (exit 1, message naming both files)."""
import json
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import subprocess  # noqa: E402

import numpy as np  # noqa: E402
from scipy.optimize import linear_sum_assignment  # noqa: E402
from sklearn import cluster, metrics  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from helpers import fmt_writer as fw  # noqa: E402
from helpers.mieb_tools import build_dir  # noqa: E402

BIN = str(build_dir() / "mieb-eval")


def mteb_scores(x, labels):
    # ClusteringEvaluator.__call__ + AbsTaskClusteringLegacy._compute_metrics (mteb 2.26.24)
    with threadpool_limits(1):
        pred = cluster.MiniBatchKMeans(n_clusters=len(set(labels)), batch_size=500, n_init="auto",
                                       compute_labels=True, random_state=42).fit(x).labels_.tolist()
    m = metrics.confusion_matrix(labels, pred)
    r, c = linear_sum_assignment(m, maximize=True)
    return {"v_measure": float(metrics.cluster.v_measure_score(labels, pred)),
            "nmi": float(metrics.cluster.normalized_mutual_info_score(labels, pred)),
            "ari": float(metrics.cluster.adjusted_rand_score(labels, pred)),
            "cluster_accuracy": float(m[r, c].sum() / len(labels))}


def make(tmp, task, split, n, d, k, seed, n_emb=None):
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((k, d)) * 2
    y = rng.integers(0, k, n) * 3 + 5  # arbitrary ids with gaps
    x = (centres[(y - 5) // 3] + rng.standard_normal((n, d))).astype(np.float32)
    td, ed = os.path.join(tmp, "td"), os.path.join(tmp, "emb")
    fw.write_model_meta(ed)
    with fw.open_task_file(td, task) as f:
        fw.write_labels_group(f, split, "default", eval_labels=y)
    fw.write_role(ed, task, split, "default", "eval", x[: n_emb or n] if n_emb is None or n_emb <= n
                  else np.concatenate([x, x[: n_emb - n]]))
    return td, ed, x, y.tolist()


def run(td, ed, out, task, *extra):
    return subprocess.run([BIN, "run", "--task-data", td, "--embeddings", ed, "-t", task, "--output-folder", out,
                           "--device", "cpu", *extra], capture_output=True, text=True)


def result(out, task):
    path = os.path.join(out, "results", "test-org__test-model", "rev0", f"{task}.json")
    text = open(path, encoding="utf-8").read()
    data = json.loads(text)
    assert json.dumps(data, indent=2) == text
    return data


def test_matches_mteb(tmp_path):
    for task, split, n, d, k, seed in [("ImageNetDog15Clustering", "test", 1076, 24, 15, 1),
                                       ("TinyImageNetClustering", "valid", 1500, 16, 200, 2)]:
        td, ed, x, y = make(str(tmp_path / task), task, split, n, d, k, seed)
        out = str(tmp_path / task / "out")
        p = run(td, ed, out, task)
        assert p.returncode == 0, p.stderr
        sub = result(out, task)["scores"][split][0]
        ref = {key: round(v, 6) for key, v in mteb_scores(x, y).items()}
        ref.update({"main_score": ref["nmi"], "hf_subset": "default", "languages": ["eng-Latn"],
                    "mteb_version": sub["mteb_version"]})
        assert list(sub.keys()) == list(ref.keys())
        assert sub == ref, (sub, ref)


def test_full_mode_recorded(tmp_path):
    td, ed, x, y = make(str(tmp_path), "CIFAR10Clustering", "test", 800, 8, 10, 3)
    p = run(td, ed, str(tmp_path / "out"), "CIFAR10Clustering", "--kmeans", "full")
    assert p.returncode == 0, p.stderr
    sub = result(str(tmp_path / "out"), "CIFAR10Clustering")["scores"]["test"][0]
    assert list(sub.keys())[:5] == ["v_measure", "nmi", "ari", "cluster_accuracy", "kmeans_mode"]
    assert sub["kmeans_mode"] == "full" and 0.5 < sub["nmi"] <= 1.0
    p = run(td, ed, str(tmp_path / "out2"), "CIFAR10Clustering", "--kmeans", "fast")
    assert p.returncode == 2 and "--kmeans" in p.stderr


def test_length_mismatch(tmp_path):
    td, ed, _, _ = make(str(tmp_path), "CIFAR10Clustering", "test", 300, 8, 10, 4, n_emb=290)
    p = run(td, ed, str(tmp_path / "out"), "CIFAR10Clustering")
    assert p.returncode == 1
    assert "eval.h5" in p.stderr and "eval_labels" in p.stderr and "290" in p.stderr and "300" in p.stderr
    assert not os.path.exists(os.path.join(str(tmp_path / "out"), "results", "test-org__test-model", "rev0",
                                           "CIFAR10Clustering.json"))
