"""bench/estimate_mteb_benchmark.py: mteb's time for a whole benchmark from bench_vs_mteb.py's
rows. On rows made from a known linear cost model it must return, task by task, the measured
value where the task was measured at F = 1 (labelled so), and the model's value from the task's
own fit and from the family's fit (both recover the model exactly); the totals and the ratio must follow;
and it must refuse a suite that is not at its real size or a family nobody measured."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

SRC = os.environ.get("MIEB_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(SRC, "bench", "estimate_mteb_benchmark.py")
sys.path.insert(0, os.path.join(SRC, "bench"))
import bench_vs_mteb as bvm  # noqa: E402

COEF = {"retrieval": [1.5, 2e-6, 3e-9], "probe": [0.5, 1e-4]}


def model_seconds(spec: dict) -> float:
    return sum(c * t for c, t in zip(COEF[spec["family"]], bvm.cost_terms(spec)))


def row(reg: dict, task: str, f: float, seconds: float | None = None) -> dict:
    spec = bvm.task_spec(reg, task, f, 768)
    return {"task": task, "fraction": f, "family": spec["family"], "kind": "measured",
            "cost_terms": bvm.cost_terms(spec), "parity": {"rc": 0, "status": "ok"},
            "mteb": {"scoring_cpu_s": model_seconds(spec) if seconds is None else seconds}}


def whole(tasks: list[str], reg: dict, scale: float = 1.0) -> dict:
    return {"benchmark": "MIEB(lite)", "scale": scale, "dim": 768,
            "machine": {"cpu": "test CPU", "cpus": 2, "affinity": 2},
            "run": {"wall_s": 100.0, "cpu_s": 150.0},
            "tasks": [{"task": t, "type": reg[t]["type"], "eval_s": 10.0} for t in tasks]}


def run(tmp_path, w: dict, rows: list[dict]):
    (tmp_path / "whole.json").write_text(json.dumps(w))
    (tmp_path / "vs.json").write_text(json.dumps({"rows": rows}))
    return subprocess.run([sys.executable, SCRIPT, "--whole", str(tmp_path / "whole.json"), "--vs-mteb",
                           str(tmp_path / "vs.json")], capture_output=True, text=True, timeout=120)


def test_measured_own_fit_and_family_fit(tmp_path):
    reg, _ = bvm.load_registry()
    oven, cirr, vidore, sun, dtd = ("OVENIT2TRetrieval", "CIRRIT2IRetrieval", "VidoreTatdqaRetrieval", "SUN397", "DTD")
    rows = [row(reg, oven, f) for f in (0.01, 0.02, 0.04, 0.1)]          # OVEN: its own fit
    rows += [row(reg, vidore, 1.0)]                                       # measured at F = 1
    rows += [row(reg, vidore, f) for f in (0.02, 0.05)]
    rows += [row(reg, sun, f) for f in (0.02, 0.05)]                      # the probe family
    w = whole([oven, cirr, vidore, sun, dtd], reg)
    p = run(tmp_path, w, rows)
    assert p.returncode == 0, p.stderr
    want = {oven: model_seconds(bvm.task_spec(reg, oven, 1.0, 768)),
            cirr: model_seconds(bvm.task_spec(reg, cirr, 1.0, 768)),
            vidore: model_seconds(bvm.task_spec(reg, vidore, 1.0, 768)),
            sun: model_seconds(bvm.task_spec(reg, sun, 1.0, 768)),
            dtd: model_seconds(bvm.task_spec(reg, dtd, 1.0, 768))}
    total = sum(want.values())
    m = re.search(r"\*\*total\*\* \| 5 \| \*\*([\d,]+)\*\*", p.stdout)
    assert m, p.stdout
    assert int(m.group(1).replace(",", "")) == pytest.approx(total, abs=1.0)
    assert f"with {total / 150.0:.1f}x less CPU time" in p.stdout
    assert f"{total / 2 / 100.0:.1f}x mieb-eval's" in p.stdout
    # the family fit carried the retrieval model to CIRR (and the own fit and the measurement
    # are labelled as such)
    assert f"{oven} {want[oven]:,.0f} CPU s (own fit)" in p.stdout
    assert "| Any2AnyRetrieval | 2 |" in p.stdout and "| 0 / 1 / 1 |" in p.stdout
    assert "| DocumentUnderstanding | 1 |" in p.stdout and "| 1 / 0 / 0 |" in p.stdout


def test_refuses_a_scaled_suite_and_an_unmeasured_family(tmp_path):
    reg, _ = bvm.load_registry()
    rows = [row(reg, "SUN397", f) for f in (0.02, 0.05)]
    p = run(tmp_path, whole(["SUN397"], reg, scale=0.3), rows)
    assert p.returncode == 2 and "not the real size" in p.stderr
    p = run(tmp_path, whole(["SUN397", "CIRRIT2IRetrieval"], reg), rows)
    assert p.returncode == 1 and "CIRRIT2IRetrieval" in p.stderr
