#!/usr/bin/env python3
"""mieb_eval's Python API in mteb: mteb.evaluate's search three ways, and the API against the program.

    .venv-mteb/bin/python bench/bench_python.py [--shape 1000x60000x256 ...] [-t TASK ... --fraction F]
        [--dim 256] [--binary build/mieb-eval] [--work DIR] [--timeout S] [--json-out F] [--md-out F]

The question it answers: "I run mteb.evaluate on retrieval tasks; how much faster is it with
mieb_eval.mteb.SearchIndex as the search index, against mteb's default search and against its
FaissSearchIndex, and are the numbers the same? And what does calling the engine from Python
cost against `mieb-eval run`?"

For each retrieval task (--shape Q x N x D: Q queries, N documents, dimension D, text to
text; or -t: a registry task's sizes times --fraction, as bench_vs_mteb.py builds it):

1. The task is built in memory as mteb's AbsTaskRetrieval with synthetic embeddings of that
   shape (bench_vs_mteb.py's planted vectors: relevant documents near their queries), and
   mieb_eval.export writes its task data and embeddings (setup, not timed). Exported
   embeddings of the real tasks are not used (they are not on a development machine): the
   output says "synthetic".
2. mteb.evaluate with the replay model (mieb_eval.export: every encode call answered with
   the exported rows), four ways, each in its own process: mteb's default search
   (SearchEncoderWrapper without an index), SearchEncoderWrapper(index_backend=
   FaissSearchIndex) (faiss-cpu), SearchEncoderWrapper(index_backend=
   mieb_eval.mteb.SearchIndex), and mieb_eval.mteb.search_wrapper. Timed: the whole evaluate
   call (mteb's one-off imports done before); its search step (the wrapper's index + search
   less the replay model's encode calls and mteb's dataloader preparation, a datasets map
   over the items: what is left is similarity, top-k, mteb's heaps and result dicts, and for
   the indexes add_documents and their search); the index's own search call;
   the process's peak RSS (tests/peak_rss). Every score key of the three results is compared
   with the default's.
3. The API against the program, five times each: `mieb-eval run` on the exported files
   (one process: wall, and its result's "similarity and top-k" + "merge and heap" stages),
   mieb_eval.score on the same embeddings as arrays (in a process that has them loaded: the
   call's wall time, against run's wall) and mieb_eval.search at mteb's top_k in heap order
   (the call's wall time, against run's two stages), best of five. On a shared machine two
   runs of the same work differ by a third, more than the overhead sought, so the overhead is
   also measured inside each call: its wall time over the evaluation_time the engine records
   in the result (the scoring itself), less one, for mieb_eval.score and for the run process
   (whose share is start-up, the registry, reading the files and writing the result).

Timings on a shared machine are disturbed: the load average is printed beside each step.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "python"))
import bench_vs_mteb as B  # noqa: E402  (puts tests/py on sys.path)

WAYS = ("default", "faiss", "mieb", "mieb-wrapper")
TOP_K = 1000  # mteb's retrieval top_k: max(k_values) of AbsTaskRetrieval
REPEAT = 5  # the API calls and `mieb-eval run`: best of this many


def shape_spec(shape: str, dim: int) -> dict:
    q, n, d = (int(x) for x in shape.lower().split("x"))
    name = f"PyBenchT2T{q}x{n}x{d}"
    return {"registry_name": name, "name": name, "family": "retrieval", "type": "Any2AnyRetrieval",
            "category": "t2t", "modalities": ["text"], "main_score": "ndcg_at_10", "subsets": ["default"],
            "eval_langs": ["eng-Latn"], "fraction": 1.0, "dim": d or dim, "seed": 0, "columns": {},
            "n_queries": q, "n_corpus": n, "skip_first_result": False, "size": f"Q {q:,} x N {n:,} x D {d}"}


def _scores(res_file: Path) -> dict:
    res = json.loads(res_file.read_text())
    return {f"{split}/{s.get('hf_subset', '')}/{k}": v for split, subsets in res["scores"].items()
            for s in subsets for k, v in s.items() if "time" not in k}


# ------------------------------------------------------------------ child: mteb.evaluate one way
def _preimport() -> None:
    """What mteb.evaluate imports on its first call (sentence_transformers, the evaluators):
    a one-off per process, not the search."""
    import importlib
    import pkgutil

    import mteb._evaluators as ev
    import sentence_transformers  # noqa: F401

    for mod in ["pytrec_eval", *[m.name for m in pkgutil.walk_packages(ev.__path__, "mteb._evaluators.")]]:
        try:
            importlib.import_module(mod)
        except Exception:  # noqa: BLE001
            pass


def child_way(spec_path: str, emb: str, way: str, out: str) -> int:
    import mteb
    import mteb.models.search_wrappers as SW
    from mieb_eval.export import ReplayEncoder
    from mteb.models.search_wrappers import SearchEncoderWrapper

    from helpers import mteb_parity_driver as D

    _preimport()
    spec = json.loads(Path(spec_path).read_text())
    task = B.build_task(spec)
    clock = {"encode_s": 0.0, "loader_s": 0.0, "index_search_s": 0.0, "backend_search_s": 0.0}
    make_loader = SW.create_dataloader

    def timed_loader(*a, **kw):  # mteb's dataloader preparation (a datasets map over the items)
        t = time.perf_counter()
        try:
            return make_loader(*a, **kw)
        finally:
            clock["loader_s"] += time.perf_counter() - t

    SW.create_dataloader = timed_loader

    class TimedReplay(ReplayEncoder):
        def encode(self, *a, **kw):
            t = time.perf_counter()
            try:
                return super().encode(*a, **kw)
            finally:
                clock["encode_s"] += time.perf_counter() - t

    def timed_calls(wrapper):
        """The wrapper, its index and search calls added to index_search_s."""
        for name in ("index", "search"):
            inner = getattr(wrapper, name)

            def call(*a, _inner=inner, **kw):
                t = time.perf_counter()
                try:
                    return _inner(*a, **kw)
                finally:
                    clock["index_search_s"] += time.perf_counter() - t

            setattr(wrapper, name, call)
        return wrapper

    model = TimedReplay(emb)
    backend, wrapper = None, None
    if way == "faiss":
        from mteb.models.search_encoder_index.search_indexes.faiss_search_index import FaissSearchIndex

        backend = FaissSearchIndex(model)
    elif way == "mieb":
        from mieb_eval.mteb import SearchIndex

        backend = SearchIndex(model)
    if way == "mieb-wrapper":
        from mieb_eval.mteb import search_wrapper

        wrapper = search_wrapper(model)
        backend = wrapper.index_backend
    if backend is not None:
        inner = backend.search

        def timed_search(*a, **kw):
            t = time.perf_counter()
            try:
                return inner(*a, **kw)
            finally:
                clock["backend_search_s"] += time.perf_counter() - t

        backend.search = timed_search
    wrapper = timed_calls(wrapper or SearchEncoderWrapper(model, index_backend=backend))
    t = time.perf_counter()
    mteb.evaluate(wrapper, D.reset([task]), cache=mteb.ResultCache(cache_path=out),
                  overwrite_strategy="always", encode_kwargs=dict(D.ENCODE), raise_error=True,
                  show_progress_bar=False)
    clock["evaluate_s"] = time.perf_counter() - t
    clock["search_step_s"] = clock["index_search_s"] - clock["encode_s"] - clock["loader_s"]
    clock["scores"] = _scores(next(Path(out).rglob(f"{spec['name']}.json")))
    (Path(out) / "way.json").write_text(json.dumps(clock))
    return 0


# ------------------------------------------------------------------ child: the Python API
def child_api(spec_path: str, export: str, out: str, phases_from: str) -> int:
    import numpy as np
    from mieb_eval.export.h5roles import RoleReader

    import mieb_eval

    spec = json.loads(Path(spec_path).read_text())
    sdir = Path(export) / "embeddings" / spec["name"] / "test" / "default"
    roles = {name: RoleReader(sdir, name).embeddings() for name in ("queries", "corpus")}
    q, c = (np.ascontiguousarray(roles[k], dtype=np.float32) for k in ("queries", "corpus"))
    reg = Path(export) / "task-data" / "mieb-registry.json"
    rec = {}
    with mieb_eval.Engine("cpu", registry=str(reg)) as eng:
        mieb_eval.search(q[:2], c[:10], top_k=5, engine=eng)  # the engine's first call: one-off set-up
        rec["search_s"] = rec["score_s"] = float("inf")
        rec["score_over_engine"] = []
        for _ in range(REPEAT):
            t = time.perf_counter()
            mieb_eval.search(q, c, top_k=TOP_K, similarity="cosine", order="heap", engine=eng)
            rec["search_s"] = min(rec["search_s"], time.perf_counter() - t)
            t = time.perf_counter()
            mieb_eval.score(spec["name"], {("test", "default", k): v for k, v in (("queries", q), ("corpus", c))},
                            Path(export) / "task-data", similarity="cosine", output_folder=out, as_mteb=False,
                            engine=eng)
            wall = time.perf_counter() - t
            rec["score_s"] = min(rec["score_s"], wall)
            engine_s = json.loads((Path(out) / f"{spec['name']}.json").read_text())["evaluation_time"]
            rec["score_over_engine"].append(wall / engine_s - 1)
    rec["scores"] = _scores(Path(out) / f"{spec['name']}.json")
    rec["run_scores"] = _scores(Path(phases_from))
    Path(out, "api.json").write_text(json.dumps(rec))
    return 0


# ------------------------------------------------------------------ the parent
def stage_s(res_file: Path, words: tuple[str, ...]) -> float | None:
    """Seconds of the phases of a mieb-eval result whose names hold one of the words."""
    res = json.loads(res_file.read_text())
    tot = [ph["end"] - ph["start"] for ph in res.get("evaluation_phases") or []
           if any(w in ph["name"].lower() for w in words)]
    return sum(tot) if tot else None


def measure(spec: dict, a, work: Path) -> dict:
    wd = work / spec["name"]
    wd.mkdir(parents=True, exist_ok=True)
    sp = wd / "spec.json"
    sp.write_text(json.dumps(spec))
    py, me, env = sys.executable, str(Path(__file__).resolve()), B.mteb_env()
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO / "python"), env.get("PYTHONPATH", "")) if p)
    env.setdefault("MIEB_EVAL_LIBRARY", str(Path(a.binary).resolve().parent / "libmieb.so"))
    rec: dict = {"task": spec["registry_name"], "size": spec["size"], "data": "synthetic"}
    stamp = lambda: time.strftime("%H:%M:%S")  # noqa: E731
    print(f"[{stamp()}] {spec['registry_name']} ({spec['size']}, synthetic embeddings): export", flush=True)
    ex = B.timed([py, str(HERE / "bench_vs_mteb.py"), "_export", str(sp), str(wd / "export")], env, wd / "export.log")
    if ex["rc"] != 0:
        raise SystemExit(f"bench_python: export failed, see {ex['log']}")
    for way in WAYS:
        out = wd / f"mteb-{way}"
        r = B.timed([py, me, "_way", str(sp), str(wd / "export/embeddings"), way, str(out)], env, wd / f"{way}.log",
                    a.timeout)
        if r["rc"] == 0:
            r.update(json.loads((out / "way.json").read_text()))
        rec[way] = r
        print(f"[{stamp()}]   {way}: evaluate {B.fmt_s(r.get('evaluate_s'))} s, search step "
              f"{B.fmt_s(r.get('search_step_s'))} s, peak {r['peak_rss_mib']:,.0f} MiB, rc {r['rc']}, "
              f"load {r['load_before']} -> {r['load_after']}", flush=True)
    renv = dict(env, MIEB_REGISTRY=str(wd / "export/task-data/mieb-registry.json"))
    run: dict = {}
    for i in range(REPEAT):
        r = B.timed([a.binary, "run", "--task-data", str(wd / "export/task-data"), "--embeddings",
                     str(wd / "export/embeddings"), "-t", spec["name"], "--output-folder", str(wd / f"mieb-run{i}"),
                     "--device", "cpu", "--progress", "off", "-q"], renv, wd / f"run{i}.log", a.timeout)
        if r["rc"] != 0:
            raise SystemExit(f"bench_python: mieb-eval run failed, see {r['log']}")
        res_file = next((wd / f"mieb-run{i}").rglob(f"{spec['name']}.json"))
        r["stage_s"] = stage_s(res_file, ("similarity and top-k", "merge and heap"))
        over = r["wall_s"] / json.loads(res_file.read_text())["evaluation_time"] - 1
        overs = run.get("run_over_engine", []) + [over]
        if not run or r["wall_s"] < run["wall_s"]:
            run = {**r, "best_stage_s": run.get("best_stage_s", float("inf"))}
        run["run_over_engine"] = overs
        run["best_stage_s"] = min(run["best_stage_s"], r["stage_s"] or float("inf"))
    run["stage_s"] = run.pop("best_stage_s")
    rec["run"] = run
    api = B.timed([py, me, "_api", str(sp), str(wd / "export"), str(wd / "api"), str(res_file)], env, wd / "api.log",
                  a.timeout)
    if api["rc"] == 0:
        api.update(json.loads((wd / "api" / "api.json").read_text()))
    rec["api"] = api
    base = rec["default"].get("scores") or {}
    for way in WAYS[1:] + ("api",):
        got = rec[way].get("scores") or {}
        rec[way]["keys_equal"] = sum(1 for k, v in base.items() if got.get(k) == v or (v != v and got.get(k) != got.get(k)))
        rec[way]["keys"] = len(base)
    print(f"[{stamp()}]   mieb-eval run {B.fmt_s(run['wall_s'])} s (stage {B.fmt_s(run['stage_s'])} s); "
          f"mieb_eval.score {B.fmt_s(api.get('score_s'))} s, mieb_eval.search {B.fmt_s(api.get('search_s'))} s", flush=True)
    return rec


def ratio(a, b) -> str:
    return f"{a / b:.2f}x" if a and b else "-"


def table(rows: list[dict]) -> str:
    hdr = ["task (synthetic)", "way", "search step s", "vs default", "vs faiss", "index's search s", "evaluate s",
           "vs default", "peak RSS MiB", "keys equal to default"]
    lines = ["| " + " | ".join(hdr) + " |", "|" + "---|" * len(hdr)]
    for r in rows:
        d, f = r["default"], r["faiss"]
        for way in WAYS:
            x = r[way]
            lines.append("| " + " | ".join([
                f"{r['task']} ({r['size']})" if way == "default" else "", way, B.fmt_s(x.get("search_step_s")),
                ratio(d.get("search_step_s"), x.get("search_step_s")) if way != "default" else "",
                ratio(f.get("search_step_s"), x.get("search_step_s")) if way.startswith("mieb") else "",
                B.fmt_s(x.get("backend_search_s")) if way != "default" else "", B.fmt_s(x.get("evaluate_s")),
                ratio(d.get("evaluate_s"), x.get("evaluate_s")) if way != "default" else "",
                f"{x['peak_rss_mib']:,.0f}", f"{x['keys_equal']}/{x['keys']}" if "keys" in x else "",
            ]) + " |")
    return "\n".join(lines)


def _median(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2


def api_lines(rows: list[dict]) -> list[str]:
    out = []
    for r in rows:
        run, api = r["run"], r["api"]
        for name, x, y in (("mieb_eval.score against `mieb-eval run` (process)", api.get("score_s"), run.get("wall_s")),
                           ("mieb_eval.search against run's similarity/top-k and heap stages", api.get("search_s"),
                            run.get("stage_s"))):
            if x and y:
                out.append(f"{r['task']}: {name}, best of {REPEAT}: {B.fmt_s(x)} s against {B.fmt_s(y)} s, "
                           f"{100 * (x / y - 1):+.1f} %")
        if api.get("score_over_engine") and run.get("run_over_engine"):
            a, b = _median(api["score_over_engine"]), _median(run["run_over_engine"])
            out.append(f"{r['task']}: time outside the engine's own evaluation_time, median of {REPEAT}: "
                       f"mieb_eval.score {100 * a:+.1f} %, `mieb-eval run` {100 * b:+.1f} % "
                       f"(API overhead {'met' if a < 0.05 else 'NOT met'}: < 5 %); score's keys equal to run's "
                       f"{api.get('keys_equal', '-')}/{api.get('keys', '-')}")
    return out


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "_way":
        return child_way(*sys.argv[2:6])
    if len(sys.argv) > 1 and sys.argv[1] == "_api":
        return child_api(*sys.argv[2:6])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    ap.add_argument("--shape", nargs="+", default=None, help="QxNxD tasks (default: 1000x60000x256)")
    ap.add_argument("-t", "--tasks", nargs="+", default=[], help="registry retrieval tasks at --fraction")
    ap.add_argument("--fraction", type=float, default=1.0)
    ap.add_argument("--dim", type=int, default=256, help="dimension of -t tasks")
    ap.add_argument("--binary", default=str(REPO / "build" / "mieb-eval"))
    ap.add_argument("--work", default=None, help="working folder (default: a new one under /tmp)")
    ap.add_argument("--timeout", type=float, default=None, help="seconds per timed process")
    ap.add_argument("--json-out", default=None)
    ap.add_argument("--md-out", default=None)
    a = ap.parse_args()
    helper = Path(a.binary).resolve().parent / "tests" / "peak_rss"
    if os.access(helper, os.X_OK):
        B.PEAK_RSS = str(helper)
    import tempfile

    work = Path(a.work) if a.work else Path(tempfile.mkdtemp(prefix="bench_python."))
    reg, _ = B.load_registry()
    specs = [B.task_spec(reg, t, a.fraction, a.dim) for t in a.tasks]
    specs += [shape_spec(s, a.dim) for s in (a.shape or ([] if a.tasks else ["1000x60000x256"]))]
    mach = B.machine()
    print(f"machine: {mach['cpu']}, {mach['cpus']} CPUs, {mach['memory']}; mteb {B._mteb_version()}; work {work}")
    print("embeddings: synthetic, of the shapes below (exported embeddings of the real tasks are not used)")
    rows = [measure(s, a, work) for s in specs]
    md = table(rows)
    print(md)
    for r in rows:
        d, f = r["default"], r["faiss"]
        for way in WAYS[2:]:
            m = r[way]
            for name, x, y, want in (("search step >= 8x default", d.get("search_step_s"), m.get("search_step_s"), 8.0),
                                     ("search step >= 1.5x faiss", f.get("search_step_s"), m.get("search_step_s"), 1.5),
                                     ("evaluate >= 3x default", d.get("evaluate_s"), m.get("evaluate_s"), 3.0)):
                print(f"{r['task']}, {way}: {name}: {ratio(x, y)} {'met' if x and y and x / y >= want else 'NOT met'}")
    for line in api_lines(rows):
        print(line)
    if a.json_out:
        Path(a.json_out).write_text(json.dumps({"machine": mach, "rows": rows}, indent=1, default=str))
    if a.md_out:
        Path(a.md_out).write_text(md + "\n\n" + "\n".join(api_lines(rows)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
