"""A whole benchmark scored by mieb-eval alone, at a chosen size: time, memory and where it goes.

Writes a synthetic suite of every task of a benchmark that this build scores (`mieb-eval synth
--scale F --dim D [--dtype]`, setup, untimed) into a work folder, then times `mieb-eval run -b
BENCHMARK --mem-limit 8G` as one whole process: wall seconds, CPU seconds (user + system) and
peak RSS (through the build's tests/peak_rss helper, whose wait4 counts the command alone, not
this interpreter). It then splits the time with the phases each result file records
(evaluation_time and evaluation_phases, host/plan/run_loop.c):

  reading         "Data loading" + "Stage: waiting for reads" (embedding reads not hidden
                  behind compute)
  similarity/top-k  "Stage: similarity and top-k" of the tasks whose main stage is scores
                  and a selection (retrieval, VisionCentricQA, zero-shot, compositionality, STS)
  solvers         the same stage of the tasks whose main stage is a fit (linear probes of
                  ImageClassification and multi-label, k-means of ImageClustering)
  merge and heap  "Stage: merge and heap" (retrieval: the chunk merge and mteb's heap)
  metrics         "Stage: metrics"
  aggregates      whole evaluation_time of aggregate tasks (no phases: computed from their
                  sub-tasks' embeddings)
  rest in tasks   evaluation_time minus the above (per-subset setup, the result tree)
  outside tasks   wall minus the sum of evaluation_time (start-up, registry, run plan, writing
                  result files, progress)

It prints the machine (CPU model, family, vector ISA, cores, memory) and the 1-minute load
average before and after the run, then a table per task type (tasks, wall seconds, share of
the summed task time and of the wall), the phase shares, the costliest tasks and the totals.
The work folder is deleted at the end unless --keep.

From a clean clone (Debian, as root):

    scripts/install-deps.sh
    scripts/build.sh build -DMIEB_CUDA=OFF
    python3 bench/bench_whole.py --scale 0.02 --dim 64                  # a quick check
    python3 bench/bench_whole.py --scale 1 --dim 768 --md-out lite.md   # MIEB(lite) at real size
    python3 bench/bench_whole.py -b "MIEB(Multilingual)" --scale 1 --dim 768 --dtype f16

--estimate prints the suite's size (from the registry's est_vectors) and the free disk, and
stops. --suite DIR scores an existing `synth` output instead (not deleted). Only the Python
standard library is needed.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from bench_vs_mteb import load_registry, loadavg, machine  # the same machine line and registry (stdlib only)

ROOT = Path(__file__).resolve().parent.parent
SOLVER_TYPES = {"ImageClassification", "ImageMultilabelClassification", "ImageClustering"}
PHASES = ("reading", "similarity/top-k", "solvers", "merge and heap", "metrics", "aggregates", "rest in tasks",
          "outside tasks")
DTYPE_BYTES = {"f32": 4, "f16": 2, "bf16": 2}


def supported_tasks(binary: str, bench: str) -> list[str]:
    out = subprocess.run([binary, "list-tasks", "-b", bench], capture_output=True, text=True, check=True).stdout
    return [ln.split()[0] for ln in out.splitlines() if len(ln.split()) > 2 and ln.split()[2] == "supported"]


def estimate_bytes(reg: dict, names: list[str], scale: float, dim: int, dtype: str) -> float:
    """Embedding bytes of the suite: the registry's vectors per task (est_vectors) x scale x dim."""
    return sum(reg[n]["est_vectors"]["total"] for n in names if n in reg) * scale * dim * DTYPE_BYTES[dtype]


def _target(pid: int, helper: str | None) -> int:
    """The mieb-eval process: the helper's child where the helper starts it."""
    if not helper:
        return pid
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        return int(kids[0]) if kids else pid
    except OSError:
        return pid


def timed(cmd: list[str], log: Path, helper: str | None, timeout: float | None) -> dict:
    """Run cmd to completion, or interrupt it (SIGINT: it stops after the task in progress is
    abandoned, keeping the result files written) after timeout seconds: wall and CPU seconds,
    peak RSS (MiB), exit status, load before/after."""
    before = loadavg()
    rss_file = log.with_suffix(".peak_rss")
    full = [helper, str(rss_file), *cmd] if helper else cmd
    timed_out = False
    with open(log, "w") as lf:
        t = time.perf_counter()
        p = subprocess.Popen(full, stdout=lf, stderr=subprocess.STDOUT)
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if timeout and not timed_out and time.perf_counter() - t > timeout:
                timed_out = True
                os.kill(_target(p.pid, helper), signal.SIGINT)
            time.sleep(0.2)
        wall = time.perf_counter() - t
    peak, source = ru.ru_maxrss / 1024.0, "wait4 (includes this interpreter's size)"
    if helper:
        try:
            peak, source = int(rss_file.read_text().split()[0]) / 1024.0, "peak_rss"
        except (OSError, ValueError, IndexError):
            pass
    return {"wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "peak_rss_mib": peak, "peak_rss_source": source,
            "rc": os.waitstatus_to_exitcode(status), "timed_out": timed_out, "load_before": before,
            "load_after": loadavg()}


def split_results(out: Path, reg: dict) -> list[dict]:
    """One row per result file: task, type, evaluation_time and its phase seconds."""
    rows = []
    for f in sorted(out.glob("results/*/*/*.json")):
        if f.name == "model_meta.json":
            continue
        doc = json.loads(f.read_text())
        name, et = doc["task_name"], doc["evaluation_time"]
        typ = reg.get(name, {}).get("type", "?")
        ph = dict.fromkeys(PHASES[:-1], 0.0)
        phases = doc.get("evaluation_phases")
        if not phases:
            ph["aggregates"] = et
        else:
            dur: dict = defaultdict(float)
            for p in phases:
                dur[p["name"]] += p["end"] - p["start"]
            ph["reading"] = dur["Data loading"] + dur["Stage: waiting for reads"]
            ph["solvers" if typ in SOLVER_TYPES else "similarity/top-k"] = dur["Stage: similarity and top-k"]
            ph["merge and heap"] = dur["Stage: merge and heap"]
            ph["metrics"] = dur["Stage: metrics"]
            ph["rest in tasks"] = max(0.0, et - sum(ph.values()))
        rows.append({"task": name, "type": typ, "eval_s": et, "phases": ph,
                     "vectors": reg.get(name, {}).get("est_vectors", {}).get("total")})
    return rows


def report(a, mach: dict, res: dict, rows: list[dict], size: float, n_tasks: int) -> tuple[dict, list[str]]:
    wall = res["wall_s"]
    in_tasks = sum(r["eval_s"] for r in rows)
    phases = dict.fromkeys(PHASES, 0.0)
    for r in rows:
        for k, v in r["phases"].items():
            phases[k] += v
    phases["outside tasks"] = max(0.0, wall - in_tasks)
    by_type: dict = defaultdict(lambda: {"tasks": 0, "s": 0.0, "phases": dict.fromkeys(PHASES[:-1], 0.0)})
    for r in rows:
        t = by_type[r["type"]]
        t["tasks"] += 1
        t["s"] += r["eval_s"]
        for k, v in r["phases"].items():
            t["phases"][k] += v
    md = []
    md.append(f"machine: {mach['cpu']}, {mach['affinity']} of {mach['cpus']} CPUs, {mach['memory']}; "
              f"load average (1, 5, 15 min) before {res['load_before']}, after {res['load_after']}")
    md.append(f"suite: {a.benchmark}, {n_tasks} tasks, synth --scale {a.scale:g} --dim {a.dim} --dtype {a.dtype}, "
              f"{size / 1e9:.2f} GB of HDF5")
    md.append(f"run: mieb-eval run -b \"{a.benchmark}\" --mem-limit {a.mem_limit} --threads {a.threads}: "
              f"exit {res['rc']}, wall {wall:,.1f} s, CPU {res['cpu_s']:,.1f} s ({res['cpu_s'] / wall:.2f} cores), "
              f"peak RSS {res['peak_rss_mib']:,.0f} MiB ({res['peak_rss_source']}); {len(rows)} result files")
    md.append("")
    md.append("| task type | tasks | seconds | share of wall | reading | similarity/top-k | solvers | merge and heap "
              "| metrics | other |")
    md.append("|---|---|---|---|---|---|---|---|---|---|")
    for typ, t in sorted(by_type.items(), key=lambda kv: -kv[1]["s"]):
        p = t["phases"]
        other = p["aggregates"] + p["rest in tasks"]
        md.append(f"| {typ} | {t['tasks']} | {t['s']:,.1f} | {t['s'] / wall:.1%} | {p['reading']:,.1f} | "
                  f"{p['similarity/top-k']:,.1f} | {p['solvers']:,.1f} | {p['merge and heap']:,.1f} | "
                  f"{p['metrics']:,.1f} | {other:,.1f} |")
    md.append(f"| outside tasks | | {phases['outside tasks']:,.1f} | {phases['outside tasks'] / wall:.1%} | | | | | | |")
    md.append(f"| **total** | {len(rows)} | **{wall:,.1f}** | 100% | {phases['reading']:,.1f} | "
              f"{phases['similarity/top-k']:,.1f} | {phases['solvers']:,.1f} | {phases['merge and heap']:,.1f} | "
              f"{phases['metrics']:,.1f} | {phases['aggregates'] + phases['rest in tasks'] + phases['outside tasks']:,.1f} |")
    md.append("")
    md.append("phase shares of the wall: " + ", ".join(f"{k} {v / wall:.1%}" for k, v in phases.items()))
    md.append("")
    md.append(f"| top {a.top} tasks by time | type | vectors | seconds | share of wall | main phase |")
    md.append("|---|---|---|---|---|---|")
    for r in sorted(rows, key=lambda r: -r["eval_s"])[:a.top]:
        k, v = max(r["phases"].items(), key=lambda kv: kv[1])
        vec = f"{r['vectors'] * a.scale:,.0f}" if r["vectors"] else "-"
        md.append(f"| {r['task']} | {r['type']} | {vec} | {r['eval_s']:,.1f} | {r['eval_s'] / wall:.1%} | "
                  f"{k} {v / max(r['eval_s'], 1e-9):.0%} |")
    out = {"machine": mach, "benchmark": a.benchmark, "scale": a.scale, "dim": a.dim, "dtype": a.dtype,
           "mem_limit": a.mem_limit, "suite_bytes": size, "run": res, "phases": phases,
           "by_type": {k: dict(v) for k, v in by_type.items()}, "tasks": rows}
    return out, md


def pairs(reg: dict, name: str, scale: float) -> float:
    """Query x document pairs a retrieval task scores at scale (totals spread evenly over subsets)."""
    t = reg.get(name, {})
    if not t.get("n_queries") or not t.get("n_corpus"):
        return 0.0
    k = max(1, len(t.get("hf_subsets") or [1]))
    return t["n_queries"] * scale * t["n_corpus"] * scale / k


def extrapolate(reg: dict, rows: list[dict], left: list[str], scale: float) -> list[str]:
    """The unfinished retrieval tasks' time at the rate of the finished ones with the most pairs."""
    big = sorted((r for r in rows if pairs(reg, r["task"], scale) > 0), key=lambda r: -pairs(reg, r["task"], scale))[:3]
    if not big:
        return []
    rate = sum(r["eval_s"] for r in big) / sum(pairs(reg, r["task"], scale) for r in big)
    lines = [f"rate of the finished retrieval tasks with the most pairs ({', '.join(r['task'] for r in big)}): "
             f"{rate * 1e9:.2f} s per 1e9 query x document pairs; at that rate:"]
    for n in left:
        p = pairs(reg, n, scale)
        lines.append(f"  {n}: {p:.3g} pairs, about {p * rate:,.0f} s" if p else f"  {n}: (not a retrieval task)")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-b", "--benchmark", default="MIEB(lite)")
    ap.add_argument("--scale", type=float, default=0.02, help="synth --scale: fraction of the registry's sizes")
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--dtype", default="f32", choices=sorted(DTYPE_BYTES))
    ap.add_argument("--mem-limit", default="8G")
    ap.add_argument("--threads", type=int, default=0, help="run --threads (0: every CPU this process may use)")
    ap.add_argument("--binary", default=str(Path(os.environ.get("MIEB_BUILD_DIR", ROOT / "build")) / "mieb-eval"))
    ap.add_argument("--work", default=None, help="work folder (default: a fresh one under $TMPDIR)")
    ap.add_argument("--suite", default=None, help="score this existing synth output instead of writing one")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    ap.add_argument("--estimate", action="store_true", help="print the suite's size and the free disk, and stop")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--timeout", type=float, default=None,
                    help="interrupt the run after this many seconds and report the tasks it finished")
    ap.add_argument("--json-out", default=None)
    ap.add_argument("--md-out", default=None)
    a = ap.parse_args()
    if not os.access(a.binary, os.X_OK):
        print(f"bench_whole: {a.binary} is not an executable: build with scripts/build.sh", file=sys.stderr)
        return 2
    helper = Path(a.binary).resolve().parent / "tests" / "peak_rss"
    helper = str(helper) if os.access(helper, os.X_OK) else None
    if not helper:
        print("bench_whole: tests/peak_rss not built: peak RSS from wait4 includes this interpreter", file=sys.stderr)
    reg, _ = load_registry()
    names = supported_tasks(a.binary, a.benchmark)
    work = Path(a.work) if a.work else Path(tempfile.mkdtemp(prefix="mieb-whole-"))
    work.mkdir(parents=True, exist_ok=True)
    est = estimate_bytes(reg, names, a.scale, a.dim, a.dtype)
    free = shutil.disk_usage(work).free
    print(f"{a.benchmark}: {len(names)} tasks this build scores; suite about {est / 1e9:.2f} GB of embeddings "
          f"(--scale {a.scale:g} --dim {a.dim} --dtype {a.dtype}); {free / 1e9:.1f} GB free at {work}", flush=True)
    if a.estimate:
        if not a.work:
            work.rmdir()
        return 0
    if not a.suite and est > 0.9 * free:
        print("bench_whole: not enough free disk for the suite: use --dtype f16 or a smaller --scale", file=sys.stderr)
        return 2
    mach = machine()
    try:
        suite = Path(a.suite) if a.suite else work / "suite"
        if not a.suite:
            t = time.perf_counter()
            subprocess.run([a.binary, "synth", "--out", str(suite), "--seed", "7", "--scale", str(a.scale), "--dim",
                            str(a.dim), "--dtype", a.dtype, "--tasks", ",".join(names)], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            print(f"synth: {time.perf_counter() - t:,.1f} s (setup, untimed)", flush=True)
        size = sum(f.stat().st_size for f in suite.rglob("*.h5"))
        out = work / "out"
        shutil.rmtree(out, ignore_errors=True)
        cmd = [a.binary, "run", "--task-data", str(suite / "task-data"), "--embeddings", str(suite / "embeddings"),
               "-b", a.benchmark, "--mem-limit", a.mem_limit, "--threads", str(a.threads), "--output-folder",
               str(out), "--progress", "plain"]
        print("timing: " + " ".join(cmd), flush=True)
        res = timed(cmd, work / "run.log", helper, a.timeout)
        if res["rc"] != 0 and not res["timed_out"]:
            print(f"bench_whole: mieb-eval run exited {res['rc']}; its log:", file=sys.stderr)
            print((work / "run.log").read_text()[-4000:], file=sys.stderr)
        rows = split_results(out, reg)
        doc, md = report(a, mach, res, rows, size, len(names))
        done = {r["task"] for r in rows}
        left = [n for n in names if n not in done]
        if left:
            md += ["", f"interrupted after {a.timeout:g} s: {len(left)} of {len(names)} tasks not finished "
                   "(the first was in progress): " + ", ".join(left)]
            md += extrapolate(reg, rows, left, a.scale)
            doc["unfinished"] = left
        print("\n".join(md))
        if a.json_out:
            Path(a.json_out).write_text(json.dumps(doc, indent=1))
        if a.md_out:
            Path(a.md_out).write_text("\n".join(md) + "\n")
        return 0 if res["rc"] == 0 else 1
    finally:
        if a.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
