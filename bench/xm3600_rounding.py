#!/usr/bin/env python3
"""Where mteb's and mieb-eval's XM3600T2IRetrieval results part: score rounding, per subset.

    nice -n 19 .venv-mteb/bin/python bench/xm3600_rounding.py [--fraction 1] [--work DIR]
        [--canon build/bench/canon_scores] [--detail] SUBSET ... | all

bench_vs_mteb.py runs the whole task through both programs and compares the metrics; this
reproduces one subset's scores without either program's pipeline, so a difference can be
traced to single scores in a minute or two per subset (full size) instead of 17 minutes:

1. The subset's planted vectors, exactly as bench_vs_mteb.py's task builds and exports them
   (its task_spec, _rng and _unit; --fraction as there).
2. mteb's scores: torch.nn.functional.normalize on both sides, then `a @ b.T`, the operations of
   mteb's cos_sim (mteb/similarity_functions.py) on the CPU. mieb-eval's scores: its
   normalisation and fixed-order dot products (build/bench/canon_scores, bench/canon_scores.c).
3. Each side's per-query top 1,000, as mteb's search keeps them (topk of 1,001, then the
   heap of (score, id)); for mieb-eval, exact ties lower row first (docs/PARITY.md).
4. mteb's own metric code (calculate_retrieval_scores, make_score_dict) on both result sets; a
   value counts as differing when the two differ after 6-decimal rounding (what `mieb-eval
   parity` compares). With --results (a kept bench_vs_mteb.py work folder of the task) every
   value computed here is also checked against the two programs' own results files.

Printed per subset: the share of scores whose bits differ, the queries whose ranked list
differs, the differing metric values, and for the first query pairs whose order flips the
scores of both sides (float32 bits as decimals), their gap in units in the last place, and the
float64 cosine. --detail adds the split into causes (mieb-eval's summation order on torch's
normalised rows; torch's product on mieb-eval's normalised rows), every abstention cutoff
(nAUC) whose retained queries differ, and every relevant document whose rank moves.

Needs the CPU build's bench target: cmake --build build --target canon_scores.
"""
from __future__ import annotations

import argparse
import heapq
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "python"))  # mieb_eval.export
sys.path.insert(0, str(REPO / "tests" / "py"))

import bench_vs_mteb as B  # noqa: E402

K_VALUES = (1, 3, 5, 10, 20, 100, 1000)
TOP_K = max(K_VALUES)
RATES = np.linspace(0, 1, 11)[:-1]  # mteb's abstention rates


def planted(spec: dict, s: str):
    """Queries, documents and qrels of subset s, as bench_vs_mteb.build_task plants them."""
    q, n, d = spec["n_queries"], spec["n_corpus"], spec["dim"]
    rng = B._rng(spec, "ret", s)
    rel = []
    for i in range(q):
        r = [int(rng.integers(0, n))]
        if i % 3 == 0 and n > 1:
            r.append(int((r[0] + 1 + rng.integers(0, n - 1)) % n))
        rel.append(r)
    qrels = {f"q{i}": {f"d{x}": (2 if (i % 5 == 0 and k == 0) else 1) for k, x in enumerate(r)}
             for i, r in enumerate(rel)}
    docs = B._unit(B._rng(spec, "docs", s), n, d)
    noise = B._unit(B._rng(spec, "qnoise", s), q, d)
    v = np.stack([docs[r].mean(axis=0) for r in rel]).astype(np.float32)
    queries = (v + np.float32(B.SIGMA["retrieval"]) * noise).astype(np.float32)
    return queries, docs, qrels


def canon(binary: str, work: Path, qv, dv, prenormalised: bool):
    """mieb-eval's scores (and its normalised rows) from bench/canon_scores."""
    nq, nd, d = len(qv), len(dv), qv.shape[1]
    qv.tofile(work / "q.f32")
    dv.tofile(work / "d.f32")
    subprocess.run([binary, str(work / "q.f32"), str(work / "d.f32"), str(nq), str(nd), str(d), str(work / "s.f32"),
                    str(work / "n.f32")] + (["--prenormalised"] if prenormalised else []), check=True)
    s = np.fromfile(work / "s.f32", np.float32).reshape(nq, nd)
    rows = np.fromfile(work / "n.f32", np.float32)
    for f in ("q.f32", "d.f32", "s.f32", "n.f32"):
        (work / f).unlink()
    return s, rows[:nq * d].reshape(nq, d), rows[nq * d:].reshape(nd, d)


def torch_scores(qv, dv, normalise: bool = True):
    import torch

    a, b = torch.from_numpy(qv), torch.from_numpy(dv)
    if normalise:
        a = torch.nn.functional.normalize(a, p=2, dim=1)
        b = torch.nn.functional.normalize(b, p=2, dim=1)
    return (a @ b.transpose(0, 1)).numpy(), a.numpy(), b.numpy()


def top_lists(S, mteb_side: bool) -> dict:
    """{qid: {cid: score}}: topk of min(1001, N) per query, then mteb's heap of (score, id) to 1000."""
    import torch

    kk = min(TOP_K + 1, S.shape[1])
    if mteb_side:
        tv, ti = torch.topk(torch.from_numpy(S), kk, dim=1, largest=True)
        idx, vals = ti.numpy(), tv.numpy()
    else:  # exact ties: lower row first
        idx = np.argsort(-S, axis=1, kind="stable")[:, :kk]
        vals = np.take_along_axis(S, idx, 1)
    out = {}
    for i, (il, vl) in enumerate(zip(idx.tolist(), vals.tolist())):
        h: list = []
        for j, sc in zip(il, vl):
            if len(h) < TOP_K:
                heapq.heappush(h, (sc, f"d{j}"))
            else:
                heapq.heappushpop(h, (sc, f"d{j}"))
        out[f"q{i}"] = {c: sc for sc, c in h}
    return out


def metrics(res: dict, qrels: dict) -> dict:
    """mteb's metric values under the keys of its results file."""
    from mteb._evaluators.retrieval_metrics import calculate_retrieval_scores, make_score_dict

    r = calculate_retrieval_scores(res, qrels, K_VALUES)
    d = make_score_dict(ndcg=r.ndcg, _map=r.map, recall=r.recall, precision=r.precision, mrr=r.mrr, naucs=r.naucs,
                        naucs_mrr=r.naucs_mrr, hit_rate=r.hit_rate, task_scores={})
    return {k: float(v) for k, v in d.items() if isinstance(v, (int, float))}


def results_file(folder: Path) -> dict:
    """{subset: {key: value}} of one side's results (a bench_vs_mteb work folder's mteb-out or mieb-out)."""
    f = next(folder.glob("results/*/*/BenchXM3600T2IRetrieval.json"))
    return {e["hf_subset"]: {k: v for k, v in e.items() if isinstance(v, (int, float))}
            for e in json.loads(f.read_text())["scores"]["test"]}


def differing(a: dict, b: dict) -> dict:
    def same(x, y):
        return (math.isnan(x) and math.isnan(y)) or round(x, 6) == round(y, 6)

    return {k: (a[k], b[k]) for k in a if not same(a[k], b[k])}


def ranked(res: dict, qid: str) -> list[str]:
    """The order pytrec_eval evaluates: score descending, then document id descending."""
    return [c for c, _ in sorted(res[qid].items(), key=lambda x: (x[1], x[0]), reverse=True)]


def ulps(gap: float, at: float) -> float:
    return float(gap / np.spacing(np.float32(abs(at))))


def cosine64(qv, dv, i: int, j: int) -> float:
    a, b = qv[i].astype(np.float64), dv[j].astype(np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def flips(rt: dict, rm: dict, St, Sm, qv, dv, qrels, limit: int):
    """Queries whose ranked list differs; for each, the first position where the lists part."""
    nq, out = 0, []
    for qid in rt:
        lt, lm = ranked(rt, qid), ranked(rm, qid)
        if lt == lm:
            continue
        nq += 1
        p = next((p for p, (x, y) in enumerate(zip(lt, lm)) if x != y), min(len(lt), len(lm)))
        if p >= min(len(lt), len(lm)) or len(out) >= limit:
            continue
        i, ja, jb = int(qid[1:]), int(lt[p][1:]), int(lm[p][1:])
        ea, eb = cosine64(qv, dv, i, ja), cosine64(qv, dv, i, jb)
        out.append({"query": qid, "rank": p, "torch_first": lt[p], "mieb_first": lm[p],
                    "torch": [repr(float(St[i, ja])), repr(float(St[i, jb]))],
                    "mieb": [repr(float(Sm[i, ja])), repr(float(Sm[i, jb]))],
                    "float64": [ea, eb],
                    "gap_ulps": {"torch": ulps(St[i, ja] - St[i, jb], St[i, ja]),
                                 "mieb": ulps(Sm[i, ja] - Sm[i, jb], St[i, ja]),
                                 "float64": ulps(ea - eb, St[i, ja])},
                    "relevant": [lt[p] in qrels[qid], lm[p] in qrels[qid]]})
    return nq, out


def cutoff_swaps(rt: dict, rm: dict, nq: int) -> list[dict]:
    """Abstention cutoffs (mteb's nauc) whose retained queries differ between the two sides."""
    from mteb._evaluators.retrieval_metrics import confidence_scores

    ct = [confidence_scores(list(rt[f"q{i}"].values())) for i in range(nq)]
    cm = [confidence_scores(list(rm[f"q{i}"].values())) for i in range(nq)]
    out = []
    for fct in ("max", "std", "diff1"):
        a = np.array([c[fct] for c in ct])
        b = np.array([c[fct] for c in cm])
        oa, ob = np.argsort(a, stable=True), np.argsort(b, stable=True)
        ties = (int((np.unique(a, return_counts=True)[1] > 1).sum()), int((np.unique(b, return_counts=True)[1] > 1).sum()))
        for rate in RATES:
            num = min(round(rate * nq), nq - 1)
            ka, kb = set(oa[num:].tolist()), set(ob[num:].tolist())
            if ka != kb:
                qs = sorted(ka ^ kb)
                out.append({"confidence": fct, "rate": round(float(rate), 1), "position": num,
                            "kept_by_torch_only": sorted(ka - kb), "kept_by_mieb_only": sorted(kb - ka),
                            "torch": {f"q{i}": repr(float(a[i])) for i in qs},
                            "mieb": {f"q{i}": repr(float(b[i])) for i in qs},
                            "tied_groups": {"torch": ties[0], "mieb": ties[1]}})
    return out


def relevant_moves(rt: dict, rm: dict, St, Sm, qv, dv, qrels) -> list[dict]:
    out = []
    for qid, rel in qrels.items():
        lt, lm = ranked(rt, qid), ranked(rm, qid)
        for c in rel:
            pt = lt.index(c) if c in lt else None
            pm = lm.index(c) if c in lm else None
            if pt == pm:
                continue
            i, j = int(qid[1:]), int(c[1:])
            e = {"query": qid, "doc": c, "grade": rel[c], "rank": {"torch": pt, "mieb": pm},
                 "score": {"torch": repr(float(St[i, j])), "mieb": repr(float(Sm[i, j])), "float64": cosine64(qv, dv, i, j)}}
            if pt is not None and pm is not None:
                o = lm[pt] if pm > pt else lt[pm]  # the document that took its place on one side
                k = int(o[1:])
                e["against"] = {"doc": o, "torch": repr(float(St[i, k])), "mieb": repr(float(Sm[i, k])),
                                "float64": cosine64(qv, dv, i, k),
                                "gap_ulps": {"torch": ulps(St[i, j] - St[i, k], St[i, j]),
                                             "mieb": ulps(Sm[i, j] - Sm[i, k], St[i, j]),
                                             "float64": ulps(cosine64(qv, dv, i, j) - cosine64(qv, dv, i, k), St[i, j])}}
            out.append(e)
    return out


def analyse(spec: dict, s: str, binary: str, work: Path, detail: bool, n_flips: int, results: dict | None) -> dict:
    t0 = time.perf_counter()
    qv, dv, qrels = planted(spec, s)
    St, qt, dt = torch_scores(qv, dv)
    Sm, qm, dm = canon(binary, work, qv, dv, prenormalised=False)
    rt, rm = top_lists(St, True), top_lists(Sm, False)
    mt, mm = metrics(rt, qrels), metrics(rm, qrels)
    diff = differing(mt, mm)
    nflip, examples = flips(rt, rm, St, Sm, qv, dv, qrels, n_flips)
    info = {
        "subset": s, "queries": len(qv), "documents": len(dv),
        "scores_bits_differ": float((St != Sm).mean()),
        "normalised_rows_differ": {"queries": int((qt != qm).any(1).sum()), "documents": int((dt != dm).any(1).sum())},
        "queries_ranked_list_differs": nflip,
        "queries_top1000_set_differs": sum(1 for q in rt if set(rt[q]) != set(rm[q])),
        "metric_values": len(mt), "metric_values_differ": len(diff),
        "largest_difference": max((abs(a - b) for a, b in diff.values()), default=0.0),
        "differing": {k: list(v) for k, v in sorted(diff.items(), key=lambda kv: -abs(kv[1][0] - kv[1][1]))},
        "flip_examples": examples,
    }
    if detail:
        Sc, _, _ = canon(binary, work, qt, dt, prenormalised=True)  # fixed order, torch's rows
        Sx, _, _ = torch_scores(qm, dm, normalise=False)           # torch's product, mieb-eval's rows
        for name, S, mteb_side in (("summation_order_only", Sc, False), ("normalisation_only", Sx, True)):
            r = top_lists(S, mteb_side)
            info[name] = {"scores_bits_differ": float((S != St).mean()),
                          "queries_ranked_list_differs": flips(rt, r, St, S, qv, dv, qrels, 0)[0],
                          "metric_values_differ": len(differing(mt, metrics(r, qrels)))}
        info["cutoff_swaps"] = cutoff_swaps(rt, rm, len(qv))
        info["relevant_moves"] = relevant_moves(rt, rm, St, Sm, qv, dv, qrels)
    if results:
        for side, mine in (("mteb", mt), ("mieb-eval", mm)):
            theirs = results[side].get(s, {})
            keys = [k for k in mine if k in theirs]
            info[f"reproduces_{side}"] = f"{sum(1 for k in keys if not differing({k: mine[k]}, {k: theirs[k]}))}/{len(keys)}"
    info["seconds"] = round(time.perf_counter() - t0, 1)
    return info


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("subsets", nargs="+", help="XM3600 subsets (es, pl, ...) or all")
    ap.add_argument("--fraction", type=float, default=1.0)
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--canon", default=str(REPO / "build" / "bench" / "canon_scores"))
    ap.add_argument("--work", help="folder for the scratch matrices (default: a new one under /tmp)")
    ap.add_argument("--detail", action="store_true", help="causes, nAUC cutoffs and relevant documents too")
    ap.add_argument("--flips", type=int, default=5, help="flip examples per subset")
    ap.add_argument("--results", help="a bench_vs_mteb.py work folder of this task (--keep): check that the values "
                    "computed here equal its mteb-out and mieb-out results, key by key")
    ap.add_argument("--json-out")
    a = ap.parse_args()
    if not Path(a.canon).exists():
        raise SystemExit(f"xm3600_rounding: {a.canon} missing: cmake --build build --target canon_scores")
    reg, _ = B.load_registry()
    spec = B.task_spec(reg, "XM3600T2IRetrieval", a.fraction, a.dim)
    subsets = spec["subsets"] if a.subsets == ["all"] else a.subsets
    work = Path(a.work) if a.work else Path(tempfile.mkdtemp(prefix="xm3600-"))
    work.mkdir(parents=True, exist_ok=True)
    results = None
    if a.results:
        results = {"mteb": results_file(Path(a.results) / "mteb-out"), "mieb-eval": results_file(Path(a.results) / "mieb-out")}
    report = []
    for s in subsets:
        info = analyse(spec, s, a.canon, work, a.detail, a.flips, results)
        report.append(info)
        print(json.dumps(info), flush=True)
        if a.json_out:
            Path(a.json_out).write_text(json.dumps(report, indent=1))
    total = sum(r["metric_values_differ"] for r in report)
    print(f"# {len(report)} subsets, {sum(r['metric_values'] for r in report)} metric values, {total} differ "
          f"(in {sum(1 for r in report if r['metric_values_differ'])} subsets)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
