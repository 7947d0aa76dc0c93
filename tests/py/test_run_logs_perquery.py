"""`mieb-eval run` operator surface: --per-query files (TREC run + per-query measures checked
with pytrec_eval against the task's qrels and the result file's averages), --log-format json,
-q, progress lines in batch (non-tty) and terminal mode, and the documented exit statuses."""
from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import zlib

import numpy as np
import pytest
import pytrec_eval

from helpers import mteb_ref as ref
from test_retrieval_e2e import BIN, build_task, result_path, run_mieb

K = ref.K_VALUES
TREC_MEASURES = {f"ndcg_cut.{','.join(map(str, K))}", f"map_cut.{','.join(map(str, K))}",
                 f"recall.{','.join(map(str, K))}", f"P.{','.join(map(str, K))}",
                 f"success.{','.join(map(str, K))}"}
RESULT_KEY = {"ndcg_cut": "ndcg_at", "map_cut": "map_at", "recall": "recall_at", "P": "precision_at",
              "success": "hit_rate_at", "mrr_cut": "mrr_at"}


def read_run(path):
    run, ranks = {}, {}
    for line in open(path, encoding="utf-8"):
        qid, q0, doc, rank, score, tag = line.rstrip("\n").split(" ")
        assert q0 == "Q0" and tag == "mieb-eval"
        run.setdefault(qid, {})[doc] = float(score)
        ranks.setdefault(qid, []).append((int(rank), doc, float(score)))
    return run, ranks


def read_measures(path):
    per_q, means = {}, {}
    for line in open(path, encoding="utf-8"):
        m, qid, v = line.rstrip("\n").split("\t")
        (means if qid == "all" else per_q.setdefault(qid, {}))[m] = float(v)
    return per_q, means


def mteb_results(t, sim, skip):
    """The results dict mteb scores (after skip_first_result), from the reference search."""
    kept = [i for i, ql in enumerate(t["qrels"]) if ql]
    qids = [t["query_ids"][i] for i in kept]
    q, c = t["q"][kept], t["c"]
    if sim == "cosine":
        q, c = ref.normalize(q), ref.normalize(c)
    res = ref.search_full(q, c, qids, t["corpus_ids"])
    if skip:
        res = {k: dict(sorted(v.items(), key=lambda x: x[1], reverse=True)[1:]) for k, v in res.items()}
    qrels = {t["query_ids"][i]: {t["corpus_ids"][d]: s for d, s in t["qrels"][i]} for i in kept}
    return res, qrels


@pytest.mark.parametrize("task,sim,skip,selfm", [("CIRRIT2IRetrieval", "cosine", False, False),
                                                  ("CUB200I2IRetrieval", "dot", True, True)])
def test_per_query_trec_files(tmp_path, task, sim, skip, selfm):
    rng = np.random.default_rng(zlib.crc32(task.encode()))
    td, ed, truth = build_task(str(tmp_path), rng, task, 40, 1200, 16, sim=sim, self_match=selfm)
    out, pq = str(tmp_path / "out"), str(tmp_path / "pq")
    p = run_mieb(td, ed, out, [task], "--per-query", pq)
    assert p.stdout.strip() == os.path.dirname(result_path(out, task))  # stdout: machine output only
    d = os.path.join(pq, task, "test", "default")
    assert sorted(os.listdir(d)) == ["per_query.tsv", "qrels.trec", "run.trec"]  # no temporaries left
    run, ranks = read_run(os.path.join(d, "run.trec"))
    per_q, means = read_measures(os.path.join(d, "per_query.tsv"))
    res, qrels = mteb_results(truth["default"], sim, skip)

    # the run file holds exactly the results dict mteb scores, every query of it, in its order
    assert list(run) == list(res) == list(per_q)
    for qid in res:
        assert set(run[qid]) == set(res[qid])
        for doc, s in res[qid].items():
            assert np.float32(run[qid][doc]) == np.float32(s)
        # ranks 1..n in trec_eval's order: score descending, ties by doc id descending
        rk = ranks[qid]
        assert [r for r, _, _ in rk] == list(range(1, len(rk) + 1))
        assert [doc for _, doc, _ in rk] == [doc for doc, _ in sorted(run[qid].items(), key=lambda x: (x[1], x[0]),
                                                                        reverse=True)]
    # the qrels file is the task's qrels of the scored queries
    qf = {}
    for line in open(os.path.join(d, "qrels.trec"), encoding="utf-8"):
        qid, _, doc, rel = line.split()
        qf.setdefault(qid, {})[doc] = int(rel)
    assert qf == qrels

    # pytrec_eval on the run file reproduces every per-query line
    ev = pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES).evaluate(run)
    n_checked = 0
    for qid, vals in per_q.items():
        for m, v in vals.items():
            if m.startswith("mrr_cut_"):
                k = int(m.rsplit("_", 1)[1])
                top = sorted(run[qid].items(), key=lambda x: (x[1], x[0]), reverse=True)[:k]
                exp = next((1.0 / (i + 1) for i, (doc, _) in enumerate(top) if qrels[qid].get(doc, 0) > 0), 0.0)
            else:
                exp = ev[qid][m]
            assert v == exp, (qid, m, v, exp)
            n_checked += 1
    assert n_checked == len(per_q) * 6 * len(K)

    # 'all' lines are the unrounded means; the result file holds them rounded as mteb does
    sub = json.load(open(result_path(out, task)))["scores"]["test"][0]
    for m, v in means.items():
        name, k = m.rsplit("_", 1)
        mean = sum(per_q[q][m] for q in per_q) / len(per_q)
        assert v == mean, m
        expected = round(mean, 6) if name == "mrr_cut" else round(round(mean, 5), 6)
        assert sub[f"{RESULT_KEY[name]}_{k}"] == expected, m


def _small_suite(tmp_path, tasks=("CIRRIT2IRetrieval",), n_q=20, n_c=300):
    rng = np.random.default_rng(3)
    for t in tasks:
        td, ed, _ = build_task(str(tmp_path), rng, t, n_q, n_c, 8)
    return td, ed


def test_json_logs(tmp_path):
    td, ed = _small_suite(tmp_path, ("CIRRIT2IRetrieval", "CUB200I2IRetrieval"))
    # a task whose task-data file is missing: an error line naming it
    p = run_mieb(td, ed, str(tmp_path / "o"), ["CIRRIT2IRetrieval", "CUB200I2IRetrieval", "MSCOCOI2TRetrieval"],
                 "--log-format", "json", check=False)
    assert p.returncode == 1, p.stderr
    lines = [json.loads(s) for s in p.stderr.splitlines()]  # every stderr line is one JSON object
    assert lines
    for o in lines:
        assert set(o) >= {"time", "level", "msg"} and o["level"] in ("debug", "info", "warning", "error")
        assert o["time"].endswith("Z") and "T" in o["time"]
    errs = [o for o in lines if o["level"] == "error"]
    assert len(errs) == 1 and "MSCOCOI2TRetrieval" in errs[0]["msg"] and errs[0]["task"] == "MSCOCOI2TRetrieval"
    (summary,) = [o["summary"] for o in lines if o["msg"] == "summary"]  # the closing record
    assert {t["task"] for t in summary["tasks"] if t["outcome"] == "scored"} == {"CIRRIT2IRetrieval", "CUB200I2IRetrieval"}
    assert [t["task"] for t in summary["tasks"] if t["outcome"] == "failed"] == ["MSCOCOI2TRetrieval"]
    prog = [o for o in lines if "progress" in o]
    assert prog and prog[-1]["progress"]["tasks_done"] == 3 and prog[-1]["progress"]["tasks_total"] == 3
    assert p.stdout.count("\n") == 1  # stdout: the results folder only
    # -v: debug lines carry task, split and subset
    p = run_mieb(td, ed, str(tmp_path / "o2"), ["CUB200I2IRetrieval"], "--log-format", "json", "-v")
    dbg = [json.loads(s) for s in p.stderr.splitlines()]
    assert any(o["level"] == "debug" and o.get("split") == "test" and o.get("subset") for o in dbg)


def test_quiet(tmp_path):
    td, ed = _small_suite(tmp_path)
    p = run_mieb(td, ed, str(tmp_path / "o"), ["CIRRIT2IRetrieval"], "-q")
    assert p.stderr == "" and p.stdout.strip()
    p = run_mieb(td, ed, str(tmp_path / "o"), ["CIRRIT2IRetrieval", "NoSuch"], "-q", check=False)
    assert p.returncode == 2 and "NoSuch" in p.stderr


def test_progress_plain_lines(tmp_path):
    td, ed = _small_suite(tmp_path, ("CIRRIT2IRetrieval", "CUB200I2IRetrieval"))
    env = dict(os.environ, MIEB_PROGRESS_INTERVAL="0.01")
    p = subprocess.run([BIN, "run", "--task-data", td, "--embeddings", ed, "-t", "CIRRIT2IRetrieval",
                        "CUB200I2IRetrieval", "--output-folder", str(tmp_path / "o"), "--device", "cpu"],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    assert "\r" not in p.stderr and "\033" not in p.stderr  # not a terminal: plain lines
    prog = [s for s in p.stderr.splitlines() if s.startswith("mieb-eval: progress")]
    ends = [s for s in prog if "scored)" in s]
    assert len(ends) == 2 and "2/2 tasks" in ends[-1] and "ETA" in ends[-1]
    assert "(CIRRIT2IRetrieval scored): 1/2 tasks" in ends[0]
    # off: none
    p = run_mieb(td, ed, str(tmp_path / "o"), ["CIRRIT2IRetrieval"], "--progress", "off", "--overwrite-strategy",
                 "always")
    assert "mieb-eval: progress" not in p.stderr


def test_progress_terminal_line(tmp_path):
    td, ed = _small_suite(tmp_path)
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(BIN, [BIN, "run", "--task-data", td, "--embeddings", ed, "-t", "CIRRIT2IRetrieval",
                       "--output-folder", str(tmp_path / "o"), "--device", "cpu"])
    buf = b""
    while True:
        r, _, _ = select.select([fd], [], [], 30)
        if not r:
            break
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        buf += chunk
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    text = buf.decode("utf-8", "replace")
    assert "\r\x1b[K" in text and "1/1 tasks" in text and "ETA" in text  # redrawn in place
    assert "mieb-eval: summary: 1 scored, 0 skipped, 0 failed" in text and "CIRRIT2IRetrieval" in text


def test_exit_statuses(tmp_path):
    h = subprocess.run([BIN, "run", "--help"], capture_output=True, text=True)
    assert h.returncode == 0
    for code in ("0 ", "1 ", "2 ", "3 ", "4 ", "130 "):
        assert f"\n  {code:>4}".rstrip() in h.stdout or f" {code}" in h.stdout, code
    assert "exit status:" in h.stdout and "interrupted" in h.stdout
    td, ed = _small_suite(tmp_path)
    base = [BIN, "run", "--task-data", td, "--embeddings", ed, "--output-folder", str(tmp_path / "o")]
    assert subprocess.run(base + ["-t", "CIRRIT2IRetrieval", "--bogus"], capture_output=True).returncode == 2
    assert subprocess.run(base + ["-t", "CIRRIT2IRetrieval", "--log-format", "xml"],
                          capture_output=True).returncode == 2
    assert subprocess.run(base + ["-t", "CIRRIT2IRetrieval", "-v", "-q"], capture_output=True).returncode == 2
    # a task without inputs: 1
    assert subprocess.run(base + ["-t", "MSCOCOI2TRetrieval", "--device", "cpu"],
                          capture_output=True).returncode == 1
    # no usable GPU: 3 (only where none is usable)
    p = subprocess.run(base + ["-t", "CIRRIT2IRetrieval", "--device", "cuda"], capture_output=True, text=True)
    assert p.returncode in (0, 3), p.stderr
    # output folder not writable: 4
    blocker = tmp_path / "file"
    blocker.write_text("x")
    p = subprocess.run([BIN, "run", "--task-data", td, "--embeddings", ed, "--output-folder", str(blocker / "o"),
                        "-t", "CIRRIT2IRetrieval", "--device", "cpu"], capture_output=True, text=True)
    assert p.returncode == 4, p.stderr


def test_interrupted_is_130(tmp_path):
    tasks = ("CIRRIT2IRetrieval", "CUB200I2IRetrieval", "SOPI2IRetrieval", "METI2IRetrieval")
    td, ed = _small_suite(tmp_path, tasks, n_q=60, n_c=4000)
    p = subprocess.Popen([BIN, "run", "--task-data", td, "--embeddings", ed, "-t", *tasks, "--output-folder",
                          str(tmp_path / "o"), "--device", "cpu", "--progress", "off"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in p.stderr:  # handlers are installed before "scoring N task(s)" is logged
        if "scoring" in line:
            p.send_signal(signal.SIGINT)
            break
    rest = p.stderr.read()
    assert p.wait() == 130, rest
    assert "interrupted" in rest


def test_per_sample_predictions(tmp_path):
    """Zero-shot and clustering: predictions.tsv reproduces the result file's scores."""
    import h5py
    from sklearn.metrics import accuracy_score, normalized_mutual_info_score
    sd = str(tmp_path / "s")
    subprocess.run([BIN, "synth", "--out", sd, "--tasks", "CIFAR10ZeroShot,CIFAR10Clustering", "--scale", "0.02"],
                   check=True, capture_output=True)
    out, pq = str(tmp_path / "o"), str(tmp_path / "pq")
    p = subprocess.run([BIN, "run", "--task-data", f"{sd}/task-data", "--embeddings", f"{sd}/embeddings", "-t",
                        "CIFAR10ZeroShot", "CIFAR10Clustering", "--output-folder", out, "--per-query", pq,
                        "--device", "cpu"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    res_dir = p.stdout.strip()
    for task, metric, key in (("CIFAR10ZeroShot", accuracy_score, "accuracy"),
                              ("CIFAR10Clustering", normalized_mutual_info_score, "nmi")):
        rows = [line.rstrip("\n").split("\t") for line in open(f"{pq}/{task}/test/default/predictions.tsv")]
        assert rows[0][:2] == ["index", "label"]
        idx, lab, pred = (np.array([int(r[i]) for r in rows[1:]]) for i in range(3))
        with h5py.File(f"{sd}/task-data/{task}.h5") as f:
            truth = f["test/default/eval_labels"][:]
        assert (idx == np.arange(len(truth))).all() and (lab == truth).all()
        sub = json.load(open(f"{res_dir}/{task}.json"))["scores"]["test"][0]
        assert abs(sub[key] - metric(lab, pred)) < 2e-6, task
