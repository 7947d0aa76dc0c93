"""Benchmark mieb-eval's linear probe (ImageClassification, PROTOCOLS.md §2) against mteb's
own recipe on the same machine in one run: scikit-learn LogisticRegression(max_iter=100) on
the same float32 embeddings and the same few-shot draws (RandomState(42) shuffles), one
experiment after another as mteb runs them. Reports the wall-time ratio (mieb-eval's whole
`run`, file reading included, against sklearn's fit + predict only), the accuracy difference
and how many test predictions differ (mieb-eval's predictions come from build/tests/logreg_tool,
the same fit and predict code, on each experiment's training matrix).

Both sides get the same cores: mieb-eval all of them (or --threads), sklearn its BLAS
threads (numpy's OpenBLAS, all cores unless --sk-blas-threads). Wall and CPU seconds are
printed, with the load average: on a shared machine the wall ratio moves with the load.

The task's registry entry fixes shots and experiments (Imagenet1k: 16 x 5; STL10: 8 x 10).
Full ImageNet-shaped size (1,000 classes x 16 shots, dim 768, 50,000 test rows, 5
experiments; about 2 GB of memory, 4-6 minutes on 2 cores, most of it the prediction check):
    MIEB_BUILD_DIR=build python bench/bench_probe.py --classes 1000 --dim 768 --n-test 50000
Default (a minute on 2 cores): 200 classes, dim 384, 10,000 test rows.
On a GPU (`--device cuda`, a build with the CUDA backend) the experiments are fitted as one
lockstep batch on the device; the fit + predict time is the result's "Stage: similarity and
top-k" phase, and the predictions compared with sklearn's are the run's own (--per-query).
Usage: MIEB_BUILD_DIR=build python bench/bench_probe.py [--task T] [--classes K] [--dim D]
       [--n-test N] [--train-per-class M] [--sep S] [--threads N] [--sk-blas-threads N]
       [--device cpu|cuda] [--no-pred-diff]"""
import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "py"))
from helpers import fmt_writer as fw  # noqa: E402
from helpers.mieb_tools import build_dir, mteb_fewshot_draw, tool  # noqa: E402

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def our_predictions(X, y, Xt, classes):
    """mieb's fit + predict (host/emulation/logreg_lbfgs.c) through logreg_tool."""
    cls_idx = np.searchsorted(classes, y)
    with tempfile.NamedTemporaryFile(suffix=".bin") as f:
        f.write(np.array([len(X), X.shape[1], len(classes), 100, len(Xt)], dtype=np.int64).tobytes())
        f.write(np.ascontiguousarray(X, dtype=np.float32).tobytes())
        f.write(cls_idx.astype(np.int64).tobytes())
        f.write(np.ascontiguousarray(Xt, dtype=np.float32).tobytes())
        f.flush()
        out = subprocess.run([str(tool("logreg_tool")), f.name], capture_output=True, text=True, check=True).stdout
    lines = out.split("\n", len(Xt) + 1)
    return classes[np.array(lines[1:1 + len(Xt)], dtype=np.int64)], lines[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--task", default="Imagenet1k")
    ap.add_argument("--classes", type=int, default=200)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--n-test", type=int, default=10_000)
    ap.add_argument("--train-per-class", type=int, default=40)
    ap.add_argument("--sep", type=float, default=0.25, help="class-centre scale against unit noise")
    ap.add_argument("--threads", type=int, default=0, help="mieb-eval --threads (0: all cores)")
    ap.add_argument("--sk-blas-threads", type=int, default=0, help="numpy's BLAS threads for sklearn (0: as installed)")
    ap.add_argument("--device", default="cpu", help="mieb-eval --device (cpu or cuda)")
    ap.add_argument("--no-pred-diff", action="store_true")
    a = ap.parse_args()
    task = {t["name"]: t for t in json.load(open(os.path.join(REPO, "configs", "tasks.json")))}[a.task]
    spl, n_exp, split = task["params"]["samples_per_label"], task["params"]["n_experiments"], task["eval_splits"][0]
    rng = np.random.default_rng(0)
    centres = rng.standard_normal((a.classes, a.dim)).astype(np.float32)
    n_train = a.classes * a.train_per_class
    y_all = np.concatenate([np.repeat(np.arange(a.classes), a.train_per_class), rng.integers(0, a.classes, a.n_test)])
    rng.shuffle(y_all[:n_train])
    X_all = (centres[y_all] * np.float32(a.sep) + rng.standard_normal((len(y_all), a.dim), dtype=np.float32))
    Xtr, ytr, Xte, yte = X_all[:n_train], y_all[:n_train], X_all[n_train:], y_all[n_train:]
    print(f"{a.task}: {a.classes} classes x {spl} shots, dim {a.dim}, {a.n_test} test rows, {n_exp} experiments, "
          f"{os.cpu_count()} cores", flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        td, ed, out = os.path.join(tmp, "td"), os.path.join(tmp, "emb"), os.path.join(tmp, "out")
        fw.write_model_meta(ed)
        with fw.open_task_file(td, a.task) as f:
            fw.write_labels_group(f, split, "default", train_labels=ytr, eval_labels=yte)
        fw.write_role(ed, a.task, split, "default", "train", Xtr)
        fw.write_role(ed, a.task, split, "default", "eval", Xte)
        pq = os.path.join(tmp, "pq")
        cmd = [str(build_dir() / "mieb-eval"), "run", "--task-data", td, "--embeddings", ed, "-t", a.task,
               "--output-folder", out, "--device", a.device, "--per-query", pq] + \
            (["--threads", str(a.threads)] if a.threads else [])
        print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
        ru0, t = os.times(), time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        t_ours, ru1 = time.perf_counter() - t, os.times()
        c_ours = (ru1.children_user + ru1.children_system) - (ru0.children_user + ru0.children_system)
        res = json.load(open(os.path.join(out, "results", "test-org__test-model", "rev0", f"{a.task}.json")))
        ours = res["scores"][split][0]
        stages = {p["name"]: p["end"] - p["start"] for p in res["evaluation_phases"]}
        t_fit = stages.get("Stage: similarity and top-k", float("nan"))
        table = np.loadtxt(os.path.join(pq, a.task, split, "default", "predictions.tsv"), dtype=np.int64,
                           skiprows=1, ndmin=2)
        run_preds = table[:, 2:].T  # [n_exp, n_test]: the run's own predicted labels

    sels = mteb_fewshot_draw(ytr.tolist(), spl, n_exp)
    t_sk, c_sk, accs, preds, iters = 0.0, 0.0, [], [], []
    limit = threadpool_limits(a.sk_blas_threads) if a.sk_blas_threads else contextlib.nullcontext()
    with limit, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for sel in sels:
            t, c = time.perf_counter(), time.process_time()
            clf = LogisticRegression(max_iter=100)
            clf.fit(Xtr[sel], ytr[sel])
            pred = clf.predict(Xte)
            t_sk, c_sk = t_sk + time.perf_counter() - t, c_sk + time.process_time() - c
            accs.append(float(np.mean(pred == yte)))
            preds.append((pred, clf.classes_))
            iters.append(int(clf.n_iter_[0]))
    print(f"load average after: {os.getloadavg()[0]:.2f}", flush=True)
    n_diff, n_tot = 0, 0
    for e, (sel, (pred, classes)) in enumerate(zip(sels, preds)):
        d = int(np.sum(run_preds[e] != pred))
        n_diff += d
        n_tot += len(pred)
        line = f"  experiment {e}: sklearn n_iter {iters[e]}, {d} of {len(pred)} predictions of the run differ"
        if not a.no_pred_diff and a.device == "cpu":
            mine, it = our_predictions(Xtr[sel], ytr[sel], Xte, classes)
            line += f"; logreg_tool n_iter/converged {it}, {int(np.sum(mine != pred))} differ"
        print(line, flush=True)
    acc_sk = float(np.mean(accs))
    print(f"mieb-eval run (read + {n_exp} fits + predict): {t_ours:8.2f} s wall {c_ours:8.2f} s CPU "
          f"(--device {a.device}; fits + predict alone {t_fit:.2f} s)")
    print(f"sklearn fit + predict ({n_exp} experiments):    {t_sk:8.2f} s wall {c_sk:8.2f} s CPU")
    print(f"speed-up sklearn / mieb-eval: {t_sk / t_ours:.2f}x wall, {c_sk / c_ours:.2f}x CPU")
    print(f"accuracy mieb {ours['accuracy']:.6f} sklearn {acc_sk:.6f} difference {ours['accuracy'] - acc_sk:+.6f}")
    per = [s["accuracy"] for s in ours["scores_per_experiment"]]
    print("per-experiment accuracy difference:", " ".join(f"{p - q:+.6f}" for p, q in zip(per, accs)))
    print(f"differing predictions (run vs sklearn): {n_diff} of {n_tot} ({n_diff / n_tot:.4%})")


if __name__ == "__main__":
    main()
