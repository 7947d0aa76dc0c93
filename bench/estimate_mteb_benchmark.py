#!/usr/bin/env python3
"""mteb's scoring time for a whole benchmark, estimated from bench_vs_mteb.py's measurements,
beside mieb-eval's measured whole run (bench_whole.py).

mteb takes hours on MIEB's large retrieval tasks, so nobody times it on a whole benchmark at
real size on two cores. This script puts a labelled number on it from what was measured:

- every task of the benchmark at its registry size (`configs/tasks.json`, F = 1);
- mteb's scoring CPU seconds for it: measured, where a bench_vs_mteb.py run measured that task
  at F = 1; else that task's own fit over its measured fractions, where there are at least
  two (the extrapolation bench_vs_mteb.py prints); else a fit over every measured run of the
  task's family (retrieval, probe, clustering, zero-shot, compositionality, STS) on the
  family's cost terms (bench_vs_mteb.cost_terms: for retrieval 1, Q x min(N, 1001) x chunks
  and Q x N), applied to this task's sizes;
- mieb-eval's: the CPU seconds of one measured `bench_whole.py` run of the whole benchmark
  (every task in one process), and its per-type wall seconds.

CPU seconds compare the work on both sides whatever the load was when each was measured; a
wall-clock figure for mteb on the same idle cores is at least its CPU time divided by the
cores (it cannot keep more busy), which gives a lower bound on the wall-time ratio too.

    python3 bench/estimate_mteb_benchmark.py --whole lite.json --vs-mteb f002.json full.json oven.json ...
        [-b "MIEB(lite)"] [--md-out estimate.md]

Reads only JSON and the registry: seconds, no mteb needed.
"""
import argparse
import json
import math
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_vs_mteb as bvm  # noqa: E402  (task_spec, cost_terms, _nnls_fit, the registry)

KEY = "scoring_cpu_s"


def measured_rows(paths: list[str]) -> list[dict]:
    """Every measured row with mteb's scoring CPU seconds and parity within tolerance."""
    rows = []
    for p in paths:
        for r in json.loads(Path(p).read_text())["rows"]:
            if r.get("kind") != "measured" or "error" in r or r["mteb"].get(KEY) is None:
                continue
            par = r.get("parity") or {}
            if par.get("rc") not in (0, None):
                print(f"note: {r['task']} F={r['fraction']:g} in {p}: parity {par.get('status')}; "
                      "its time is used, its values differ (docs/PARITY.md)", file=sys.stderr)
            rows.append(r)
    # one row per (task, fraction): the last file given wins
    return list({(r["task"], round(r["fraction"], 9)): r for r in rows}.values())


def fit(points: list[dict], terms: list[float]) -> float:
    """Non-negative least squares of mteb's seconds on the cost terms (columns scaled to 1, as
    bench_vs_mteb.py fits), evaluated at terms."""
    import numpy as np
    from scipy.optimize import nnls

    x = np.array([p["cost_terms"] for p in points], dtype=np.float64)
    y = np.array([p["mteb"][KEY] for p in points], dtype=np.float64)
    scale = x.max(axis=0)
    scale[scale == 0] = 1
    coef, _ = nnls(x / scale, y)
    return float((np.array(terms, dtype=np.float64) / scale) @ coef)


def estimate(names: list[str], reg: dict, rows: list[dict], dim: int) -> list[dict]:
    by_task, by_family = defaultdict(list), defaultdict(list)
    for r in rows:
        by_task[r["task"]].append(r)
        by_family[r["family"]].append(r)
    out = []
    for n in names:
        spec = bvm.task_spec(reg, n, 1.0, dim)
        own = {round(r["fraction"], 9): r for r in by_task.get(n, [])}
        if 1.0 in own:
            est, how = own[1.0]["mteb"][KEY], "measured"
        elif len(own) >= 2:
            est, how = fit(list(own.values()), bvm.cost_terms(spec)), "own fit"
        elif by_family.get(spec["family"]):
            est, how = fit(by_family[spec["family"]], bvm.cost_terms(spec)), "family fit"
        else:
            est, how = None, "no measurement of the family"
        out.append({"task": n, "type": spec["type"], "family": spec["family"], "size": spec["size"],
                    "mteb_cpu_s": est, "how": how})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--whole", required=True, help="bench_whole.py --json-out of the benchmark at --scale 1")
    ap.add_argument("--vs-mteb", nargs="+", required=True, help="bench_vs_mteb.py --json-out files")
    ap.add_argument("-b", "--benchmark", default=None, help="default: the --whole run's benchmark")
    ap.add_argument("--md-out", default=None)
    a = ap.parse_args()
    whole = json.loads(Path(a.whole).read_text())
    bench_name = a.benchmark or whole["benchmark"]
    if whole.get("scale") != 1.0:
        print(f"estimate: {a.whole} is at --scale {whole.get('scale')}, not the real size", file=sys.stderr)
        return 2
    reg, _ = bvm.load_registry()
    names = [t["task"] for t in whole["tasks"]]
    rows = measured_rows(a.vs_mteb)
    est = estimate(names, reg, rows, whole["dim"])
    missing = [e["task"] for e in est if e["mteb_cpu_s"] is None]
    if missing:
        print(f"estimate: no measurement for the family of {', '.join(missing)}", file=sys.stderr)
        return 1
    mieb_wall = defaultdict(float)
    for t in whole["tasks"]:
        mieb_wall[t["type"]] += t["eval_s"]
    types = defaultdict(lambda: {"tasks": 0, "mteb": 0.0, "how": defaultdict(int)})
    for e in est:
        ty = types[e["type"]]
        ty["tasks"] += 1
        ty["mteb"] += e["mteb_cpu_s"]
        ty["how"][e["how"]] += 1
    run = whole["run"]
    cores = whole["machine"].get("affinity") or whole["machine"]["cpus"]
    tot_m = sum(e["mteb_cpu_s"] for e in est)
    md = [f"{bench_name}, {len(est)} tasks at their real size; machine of the mieb-eval run: {whole['machine']['cpu']}, "
          f"{cores} CPUs. mteb: scoring CPU seconds from bench_vs_mteb.py ({len(rows)} measured runs); "
          "mieb-eval: one measured run of the whole benchmark.", "",
          "| task type | tasks | mteb scoring CPU s (estimate) | of which measured / own fit / family fit | mieb-eval wall s (measured) |",
          "|---|---|---|---|---|"]
    for name, ty in sorted(types.items(), key=lambda kv: -kv[1]["mteb"]):
        h = ty["how"]
        md.append(f"| {name} | {ty['tasks']} | {ty['mteb']:,.0f} | {h['measured']} / {h['own fit']} / {h['family fit']} | "
                  f"{mieb_wall[name]:,.1f} |")
    md.append(f"| **total** | {len(est)} | **{tot_m:,.0f}** ({tot_m / 3600:.2f} CPU-hours) | | "
              f"**{run['wall_s']:,.1f}** (CPU {run['cpu_s']:,.1f}) |")
    md.append("")
    cpu_ratio = tot_m / run["cpu_s"]
    wall_low = tot_m / cores / run["wall_s"]
    md.append(f"mieb-eval scores the whole of {bench_name} with {cpu_ratio:.1f}x less CPU time than mteb's scoring "
              f"would take (estimate); on the same {cores} idle cores mteb's wall time would be at least "
              f"{tot_m / cores / 60:,.0f} minutes, {wall_low:.1f}x mieb-eval's {run['wall_s'] / 60:.1f} (a lower bound: "
              "mteb keeps at most every core busy, and its heap and metrics keep one).")
    top = sorted(est, key=lambda e: -e["mteb_cpu_s"])[:8]
    md.append("")
    md.append("Largest by mteb's estimate: " + "; ".join(
        f"{e['task']} {e['mteb_cpu_s']:,.0f} CPU s ({e['how']})" for e in top) + ".")
    text = "\n".join(md)
    print(text)
    if a.md_out:
        Path(a.md_out).write_text(text + "\n")
    return 0 if math.isfinite(tot_m) else 1


if __name__ == "__main__":
    sys.exit(main())
