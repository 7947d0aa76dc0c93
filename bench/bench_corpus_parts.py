"""Corpus parts on one machine: wall time of one process against two processes running
`run --corpus-parts 2` side by side, plus what `merge` adds.

A mid-size synthetic retrieval task (bench/gen_big_retrieval.py: dot similarity, float32,
default 500 queries x 200,000 documents x 768, i.e. four of mteb's 50,000-document chunks) is
scored
  * by one process (`run`, --threads T),
  * by two processes started together, parts 0 and 1 (`run --corpus-parts 2 --corpus-part I`,
    --threads T/2 each so the two use the cores one process uses), then `merge`,
each --repeat times (the best wall time is kept). The merged result must equal the single
run's (bytes up to evaluation_time). Prints a table of wall times and ratios.

  MIEB_BUILD_DIR=build .venv/bin/python bench/bench_corpus_parts.py [--n-corpus 200000] [--threads 2]
"""
from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TASK = "CIRRIT2IRetrieval"


def load():
    return os.getloadavg()[0]


def result_text(out):
    path = glob.glob(os.path.join(out, "results", "*", "*", f"{TASK}.json"))[0]
    text = open(path, encoding="utf-8").read()
    return text[:text.index('"evaluation_time"')]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n-corpus", type=int, default=200_000)
    ap.add_argument("--n-queries", type=int, default=500)
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--work", default=None, help="folder for the data (default: a temporary folder)")
    a = ap.parse_args()
    binary = os.path.join(os.environ.get("MIEB_BUILD_DIR", os.path.join(HERE, "..", "build")), "mieb-eval")
    work = a.work or tempfile.mkdtemp(prefix="bench_parts_")
    os.makedirs(work, exist_ok=True)
    loads = [load()]
    subprocess.run([sys.executable, os.path.join(HERE, "gen_big_retrieval.py"), "--out", work, "--n-corpus",
                    str(a.n_corpus), "--dim", str(a.dim), "--n-queries", str(a.n_queries), "--shard-rows", "100000"],
                   check=True, stdout=subprocess.DEVNULL)
    td, ed = os.path.join(work, "task-data"), os.path.join(work, "embeddings")

    def run_cmd(out, threads, *extra):
        return [binary, "run", "--task-data", td, "--embeddings", ed, "--output-folder", out, "--device", "cpu",
                "--progress", "off", "-q", "-t", TASK, "--threads", str(threads), *extra]

    half = max(1, a.threads // 2)
    single_t, parts_t, merge_t = [], [], []
    for rep in range(a.repeat):
        single = os.path.join(work, f"single{rep}")
        t0 = time.monotonic()
        subprocess.run(run_cmd(single, a.threads), check=True, stdout=subprocess.DEVNULL)
        single_t.append(time.monotonic() - t0)
        loads.append(load())

        out, pd = os.path.join(work, f"parts{rep}"), os.path.join(work, f"pd{rep}")
        t0 = time.monotonic()
        procs = [subprocess.Popen(run_cmd(out, half, "--corpus-parts", "2", "--corpus-part", str(i),
                                          "--partials-dir", pd), stdout=subprocess.DEVNULL) for i in range(2)]
        if any(p.wait() != 0 for p in procs):
            sys.exit("a part failed")
        parts_t.append(time.monotonic() - t0)
        t0 = time.monotonic()
        subprocess.run([binary, "merge", "--partials-dir", pd, "--task-data", td, "--embeddings", ed,
                        "--output-folder", out, "-q", "-t", TASK], check=True, stdout=subprocess.DEVNULL)
        merge_t.append(time.monotonic() - t0)
        loads.append(load())
        if result_text(single) != result_text(out):
            sys.exit("merged result differs from the single run")

    s, p, m = min(single_t), min(parts_t), min(merge_t)
    part_bytes = sum(os.path.getsize(f) for f in glob.glob(os.path.join(work, "pd0", TASK, "*", "*", "*.h5")))
    print(f"task: {a.n_queries} queries x {a.n_corpus} documents x {a.dim} (float32, dot), "
          f"{os.cpu_count()} cores; best of {a.repeat}; load average during the runs "
          f"{min(loads):.1f}..{max(loads):.1f}")
    print("| setup | wall s | vs 1 process |")
    print("|---|---|---|")
    print(f"| 1 process, --threads {a.threads} | {s:.2f} | 1.00x |")
    print(f"| 2 parts side by side, --threads {half} each | {p:.2f} | {s / p:.2f}x |")
    print(f"| merge of the 2 parts | {m:.2f} | {m / s:.1%} of 1 process |")
    print(f"| 2 parts + merge | {p + m:.2f} | {s / (p + m):.2f}x |")
    print(f"partial files: {part_bytes / 1e6:.1f} MB; merged result identical to the single run")
    print("all times:", [round(x, 2) for x in single_t], [round(x, 2) for x in parts_t],
          [round(x, 2) for x in merge_t])
    if not a.work:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
