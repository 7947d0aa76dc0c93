"""ImageClustering metrics (host/metrics/clustering_metrics.c) against scikit-learn and
scipy, computed exactly as mteb's AbsTaskClusteringLegacy._compute_metrics does, on
randomized labellings: many clusters, empty (unused) cluster ids, one cluster, all-distinct
labels, arbitrary int64 ids, and contingency tables full of ties. Tolerance 1e-9."""
import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn import metrics

from helpers.mieb_tools import run_tool


def mteb_metrics(labels, pred):
    # the body of mteb/abstasks/clustering_legacy.py:_compute_metrics (mteb 2.26.24)
    v = metrics.cluster.v_measure_score(labels, pred)
    nmi = metrics.cluster.normalized_mutual_info_score(labels, pred)
    ari = metrics.cluster.adjusted_rand_score(labels, pred)
    m = metrics.confusion_matrix(labels, pred)
    r, c = linear_sum_assignment(m, maximize=True)
    acc = m[r, c].sum() / len(labels)
    return [float(v), float(nmi), float(ari), float(acc)]


def ours(labels, pred):
    s = f"{len(labels)}\n" + " ".join(map(str, labels)) + "\n" + " ".join(map(str, pred)) + "\n"
    return [float(t) for t in run_tool("cluster_tool", s, "metrics").split()]


def cases():
    rng = np.random.default_rng(7)
    yield [0, 0, 1, 1], [1, 1, 0, 0]
    yield [5, 5, 5, 5], [0, 1, 2, 3]            # one class
    yield [0, 1, 2, 3], [7, 7, 7, 7]            # one cluster
    yield [3, 3, 3], [1, 1, 1]                  # both single: nmi 1 by convention
    yield list(range(40)), list(range(40))      # all distinct
    yield list(range(40)), list(rng.permutation(40) % 7)
    yield [-(2**40), 2**40, 17, 17, -3], [0, 1, 1, 2, 0]  # arbitrary int64 ids
    for _ in range(60):
        n = int(rng.integers(2, 400))
        kc = int(rng.integers(1, 60))
        kk = int(rng.integers(1, 60))
        labels = rng.integers(0, kc, n) * int(rng.integers(1, 5))  # gaps = unused ids
        if rng.random() < 0.5:  # correlated predictions
            pred = (labels // max(1, int(rng.integers(1, 4))) + (rng.random(n) < 0.2) * rng.integers(0, kk, n)) % kk
        else:
            pred = rng.integers(0, kk, n)
        yield labels.tolist(), pred.tolist()
    for _ in range(20):  # tiny alphabets, many ties in the confusion matrix
        n = int(rng.integers(4, 60))
        yield rng.integers(0, 3, n).tolist(), rng.integers(0, 3, n).tolist()


def test_metrics_vs_sklearn():
    bad = []
    for labels, pred in cases():
        ref, got = mteb_metrics(labels, pred), ours(labels, pred)
        for name, r, g in zip(["v_measure", "nmi", "ari", "cluster_accuracy"], ref, got):
            if not abs(r - g) <= 1e-9:
                bad.append((name, r, g, len(labels)))
    assert not bad, bad[:10]


def test_assignment_vs_scipy():
    rng = np.random.default_rng(3)
    for _ in range(80):
        r, c = int(rng.integers(1, 30)), int(rng.integers(1, 30))
        m = rng.integers(0, int(rng.integers(1, 6)), (r, c))  # small values: many ties
        ri, ci = linear_sum_assignment(m, maximize=True)
        s = f"{r} {c}\n" + " ".join(map(str, m.ravel())) + "\n"
        assert int(run_tool("cluster_tool", s, "assign")) == int(m[ri, ci].sum())


if __name__ == "__main__":
    test_metrics_vs_sklearn()
    test_assignment_vs_scipy()
    print("ok")
