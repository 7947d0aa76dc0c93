"""Benchmark mieb-eval's k-means against scikit-learn's MiniBatchKMeans (mteb's settings)
and faiss-cpu k-means: wall time ratios, and the NMI difference to sklearn set beside
sklearn's own spread over 10 random_state values. Default shape is
100,000 x 768 with 1,000 clusters (slow on a small machine: pass --n/--d/--k to shrink).
Usage: MIEB_BUILD_DIR=build python bench/bench_kmeans.py [--n N --d D --k K --seeds S]"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn import cluster, metrics

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "py"))
from helpers.mieb_tools import tool  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--d", type=int, default=768)
    ap.add_argument("--k", type=int, default=1000)
    ap.add_argument("--seeds", type=int, default=10)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    centres = rng.standard_normal((a.k, a.d)).astype(np.float32)
    y = rng.integers(0, a.k, a.n)
    x = (centres[y] + 0.8 * rng.standard_normal((a.n, a.d))).astype(np.float32)

    def sk(seed):
        t = time.perf_counter()
        m = cluster.MiniBatchKMeans(n_clusters=a.k, batch_size=500, n_init="auto", random_state=seed).fit(x)
        sk.steps = m.n_steps_
        return m.labels_, time.perf_counter() - t

    ref, t_sk = sk(42)
    sk_steps = sk.steps
    nmi_ref = metrics.normalized_mutual_info_score(y, ref)
    spread = [metrics.normalized_mutual_info_score(y, sk(s)[0]) for s in range(a.seeds)]
    with tempfile.NamedTemporaryFile(suffix=".f32") as f:
        f.write(x.tobytes())
        f.flush()
        res = {}
        for mode in ("minibatch", "full"):
            t = time.perf_counter()
            out = subprocess.run([str(tool("cluster_tool")), "kmeans", f.name, str(a.n), str(a.d), str(a.k), mode],
                                 capture_output=True, text=True, check=True).stdout.split("\n")
            res[mode] = (np.array([int(v) for v in out[1:] if v]), time.perf_counter() - t, int(out[0].split()[1]))
    import faiss
    t = time.perf_counter()
    km = faiss.Kmeans(a.d, a.k, niter=20, seed=42)
    km.train(x)
    fl = km.index.search(x, 1)[1].ravel()
    t_faiss = time.perf_counter() - t
    print(f"shape {a.n} x {a.d}, k={a.k}")
    print(f"sklearn MiniBatchKMeans(42): {t_sk:.2f} s, {sk_steps} steps, NMI {nmi_ref:.6f}; over {a.seeds} seeds "
          f"NMI mean {np.mean(spread):.6f} std {np.std(spread):.6f} range {max(spread) - min(spread):.6f}")
    for mode, (lab, tm, steps) in res.items():
        # where the runs part (labels not identical) they may stop after different numbers of
        # steps: the time per step is then the fair comparison of the minibatch mode
        per_step = f", {steps} steps, x{(t_sk / sk_steps) / (tm / steps):.2f} per step" if mode == "minibatch" else ""
        print(f"mieb-eval {mode}: {tm:.2f} s (x{t_sk / tm:.2f} vs sklearn{per_step}), identical labels "
              f"{int((lab == ref).sum())}/{a.n}, NMI {metrics.normalized_mutual_info_score(y, lab):.6f} "
              f"(diff {metrics.normalized_mutual_info_score(y, lab) - nmi_ref:+.6f})")
    print(f"faiss Kmeans(niter 20): {t_faiss:.2f} s (x{t_sk / t_faiss:.2f}), "
          f"NMI {metrics.normalized_mutual_info_score(y, fl):.6f}")


if __name__ == "__main__":
    main()
