#!/usr/bin/env python3
"""compare_results.py - compare two mieb-eval results folders (CPU run vs CUDA run).

    compare_results.py CPU_DIR CUDA_DIR [--tol 1e-4] [--probe-tol 0.01]

Every <TaskName>.json under CPU_DIR must exist under CUDA_DIR with the same structure.
Everything under "scores" is compared: strings and ints exactly, floats within --tol
(results are rounded to 6 decimals; a near-tie ranked differently in fp32 can move a
metric slightly). Timing, date and emission fields are ignored. Prints one line per task
and the largest difference; exit status 0 when everything agrees.

Linear-probe results (scores holding "scores_per_experiment") are fits of an optimiser
whose GEMMs round differently on the GPU: a test prediction near a class boundary may
flip, which moves a metric of a small synthetic set by 1/n_eval. They are compared within
--probe-tol; the 0.001-accuracy parity on large sets is test_cuda_backend's.
"""
import json
import math
import os
import sys

IGNORED = {"evaluation_time", "date", "kg_co2_emissions"}


def walk(a, b, path, out):
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            out["errors"].append(f"{path}: keys differ: {sorted(set(a) ^ set(b))}")
            return
        for k in a:
            if k not in IGNORED:
                walk(a[k], b[k], f"{path}.{k}", out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out["errors"].append(f"{path}: lengths {len(a)} != {len(b)}")
            return
        for i, (x, y) in enumerate(zip(a, b)):
            walk(x, y, f"{path}[{i}]", out)
    elif isinstance(a, float) or isinstance(b, float):
        out["values"] += 1
        x, y = float(a), float(b)
        if math.isnan(x) and math.isnan(y):
            return
        d = abs(x - y)
        if d > 0:
            out["differ"] += 1
        if d > out["max"]:
            out["max"], out["where"] = d, path
    elif a != b:
        out["errors"].append(f"{path}: {a!r} != {b!r}")


def results(folder):
    found = {}
    for dirpath, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]  # .mieb-eval/: the run manifest, not a result
        for f in files:
            if f.endswith(".json") and f != "model_meta.json":
                found[f] = os.path.join(dirpath, f)
    return found


def main():
    args = sys.argv[1:]
    tol, probe_tol = 1e-4, 0.01
    for flag in ("--tol", "--probe-tol"):
        if flag in args:
            i = args.index(flag)
            if flag == "--tol":
                tol = float(args[i + 1])
            else:
                probe_tol = float(args[i + 1])
            del args[i:i + 2]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    cpu, gpu = results(args[0]), results(args[1])
    if not cpu:
        print(f"compare_results: no results under {args[0]}", file=sys.stderr)
        return 1
    ok = True
    for name in sorted(cpu):
        if name not in gpu:
            print(f"  {name}: missing from the CUDA run")
            ok = False
            continue
        a, b = json.load(open(cpu[name])), json.load(open(gpu[name]))
        out = {"errors": [], "values": 0, "differ": 0, "max": 0.0, "where": ""}
        walk(a.get("scores"), b.get("scores"), "scores", out)
        probe = "scores_per_experiment" in json.dumps(a.get("scores"))
        bad = out["errors"] or out["max"] > (probe_tol if probe else tol)
        ok = ok and not bad
        print(f"  {name}: {out['values']} values, {out['differ']} differ, max |diff| {out['max']:.3g}"
              f"{' at ' + out['where'] if out['differ'] else ''} {'FAIL' if bad else 'ok'}")
        for e in out["errors"][:5]:
            print(f"    {e}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
