"""The runner's overhead beside the scoring time, on a synthetic MIEB(lite)-shaped run.

Generates a synthetic suite of every MIEB(lite) task this build scores (`mieb-eval synth`),
runs `mieb-eval run -b "MIEB(lite)"` on it (a fresh output folder each repeat) and splits the
process's wall time with the stage times the program records in each result file
(evaluation_time and evaluation_phases, see host/plan/run_loop.c):

  scoring       sum over subsets of the "Evaluation" window minus "Stage: waiting for reads"
                (similarity + top-k, merge, metrics and the rest of the driver's work);
                aggregate tasks (no phases) count whole, as scoring
  reading       "Data loading" (opening the task data) + "Stage: waiting for reads"
                (embedding reads not hidden behind compute)
  bookkeeping   inside tasks: evaluation_time minus the phases (per-subset setup, JSON tree)
  outside tasks wall minus the sum of evaluation_time: process start, registry, model_meta,
                run plan, writing result files, progress and logs

overhead = wall - scoring, reported as a fraction of wall time (median over repeats).
Usage: MIEB_BUILD_DIR=build python bench/bench_runner_overhead.py [--scale F] [--dim D] [--repeats N]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "py"))
from helpers.mieb_tools import build_dir  # noqa: E402

BENCH = "MIEB(lite)"


def mieb(*args, **kw):
    return subprocess.run([str(build_dir() / "mieb-eval"), *map(str, args)], capture_output=True, text=True,
                          check=True, **kw)


def split_times(results: Path):
    """Sums over every result file of one run: (scoring, reading, bookkeeping, sum of evaluation_time)."""
    scoring = reading = booking = total = 0.0
    for f in results.glob("results/*/*/*.json"):
        if f.name == "model_meta.json":
            continue
        doc = json.loads(f.read_text())
        et = doc["evaluation_time"]
        total += et
        phases = doc.get("evaluation_phases")
        if not phases:  # aggregate task: computed from its sub-task's embeddings, counted as scoring
            scoring += et
            continue
        dur = {}
        for p in phases:
            dur[p["name"]] = dur.get(p["name"], 0.0) + (p["end"] - p["start"])
        wait = dur.get("Stage: waiting for reads", 0.0)
        scoring += dur.get("Evaluation", 0.0) - wait
        reading += dur.get("Data loading", 0.0) + wait
        booking += et - dur.get("Evaluation", 0.0) - dur.get("Data loading", 0.0)
    return scoring, reading, booking, total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=0.02, help="synth --scale (the demo's 0.02 by default)")
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="run --threads (0: all cores)")
    a = ap.parse_args()
    listed = mieb("list-tasks", "-b", BENCH).stdout.splitlines()
    tasks = [ln.split()[0] for ln in listed if len(ln.split()) > 2 and ln.split()[2] == "supported"]
    with tempfile.TemporaryDirectory(prefix="mieb-overhead-") as tmp:
        suite = Path(tmp) / "suite"
        mieb("synth", "--out", suite, "--seed", 7, "--scale", a.scale, "--dim", a.dim, "--tasks", ",".join(tasks))
        size = sum(f.stat().st_size for f in suite.rglob("*.h5"))
        rows = []
        for rep in range(a.repeats):
            out = Path(tmp) / f"out{rep}"
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            mieb("run", "--task-data", suite / "task-data", "--embeddings", suite / "embeddings", "-b", BENCH,
                 "--output-folder", out, "--threads", a.threads, "-q")
            wall = time.perf_counter() - t
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            scoring, reading, booking, total = split_times(out)
            rows.append((wall, cpu, scoring, reading, booking, wall - total))
    r = np.array(rows)
    med = np.median(r, axis=0)
    wall, cpu, scoring, reading, booking, outside = med
    print(f"{BENCH}: {len(tasks)} tasks, synth --scale {a.scale} --dim {a.dim}, {size / 1e6:.1f} MB of HDF5; "
          f"{a.repeats} runs, medians; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"wall {wall:.3f} s (CPU {cpu:.3f} s): scoring {scoring:.3f} s, reading {reading:.3f} s, "
          f"bookkeeping in tasks {booking:.3f} s, outside tasks {outside:.3f} s")
    fr = (r[:, 0] - r[:, 2]) / r[:, 0]
    print(f"runner overhead (wall - scoring) / wall: {np.median(fr):.3f} "
          f"(runs: {', '.join(f'{x:.3f}' for x in fr)}); reading {reading / wall:.3f}, "
          f"bookkeeping {booking / wall:.3f}, outside tasks {outside / wall:.3f}")


if __name__ == "__main__":
    main()
