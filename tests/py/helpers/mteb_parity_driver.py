"""The mteb side of tests/py/test_mteb_parity.py; runs in .venv-mteb (mteb with torch).

    python tests/py/helpers/mteb_parity_driver.py OUT

Builds mteb's mock image tasks and the in-memory tasks (helpers/mteb_inmem.py), then writes under OUT:
  export/            mieb-export of every task with the hash encoder (task-data/, embeddings/)
  mteb-direct/       mteb.evaluate with the hash encoder itself (an mteb ResultCache folder)
  mteb-replay/       mteb.evaluate with the replay model over export/embeddings
  export-sharded/    a few tasks exported again with a tiny shard size
  export-resume/     the same tasks, exported by a run that fails mid-role, then resumed
  export-half/       the same tasks in float16 and bfloat16 (inspect only)
  driver.json        what the driver checked and measured
Nothing is downloaded.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2] / "python"))  # mieb_eval.export
sys.path.insert(0, str(HERE.parent))  # tests/py: the helpers package, when run by path

import numpy as np  # noqa: E402

ENCODE = {"batch_size": 32, "show_progress_bar": False}
SUBSET = ["InMemT2IRetrieval", "InMemImageClassification", "InMemARO", "MockVisionCentricQA"]


def reset(tasks):
    """Every task's np_rng back to its seed (mteb_inmem.make_tasks says why), before each use."""
    for t in tasks:
        t.np_rng = np.random.default_rng(t.seed)
    return tasks


def role_files(root: Path) -> dict[str, bytes]:
    """Final role files under root: relative path -> (embeddings, item_key) bytes."""
    import h5py

    out = {}
    for p in sorted(root.rglob("*.h5")):
        if p.name.startswith("."):
            continue
        with h5py.File(p, "r") as f:
            out[str(p.relative_to(root))] = f["embeddings"][...].tobytes() + f["item_key"][...].tobytes()
    return out


def concat_roles(root: Path) -> dict[tuple[str, str, str, str], np.ndarray]:
    """Every role under an embeddings folder, shards joined, as float32 arrays."""
    from mieb_eval.export.h5roles import RoleReader
    from mieb_eval.export.replay import _ROLE_FILE

    out = {}
    for sdir in sorted({p.parent for p in root.rglob("*.h5")}):
        task, split, subset = sdir.relative_to(root).parts
        for name in sorted({m.group(1) for p in sdir.glob("*.h5") if (m := _ROLE_FILE.match(p.name))}):
            r = RoleReader(sdir, name)
            out[(task, split, subset, name)] = (r.embeddings(), r.keys)
    return out


def main() -> int:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    report: dict = {"timings": {}}
    t0 = time.time()

    import mteb
    from helpers import mteb_inmem as M
    from mieb_eval.export import ReplayEncoder, export
    from mieb_eval.export.identity import IDENTITY_NAME

    tasks = M.make_tasks()
    report["tasks"] = [t.metadata.name for t in tasks]
    report["timings"]["build_tasks"] = time.time() - t0

    # 1. the export
    t = time.time()
    summary = export(M.HashEncoder(), reset(tasks), out / "export/task-data", out / "export/embeddings",
                     encode_kwargs=ENCODE)
    report["export"] = summary
    report["timings"]["export"] = time.time() - t

    # 2. mteb on the encoder itself, and on the replayed embeddings
    for name, model in (("mteb-direct", M.HashEncoder()), ("mteb-replay", ReplayEncoder(out / "export/embeddings"))):
        t = time.time()
        mteb.evaluate(model, reset(tasks), cache=mteb.ResultCache(cache_path=out / name),
                      overwrite_strategy="always", encode_kwargs=dict(ENCODE), raise_error=True)
        report["timings"][name] = time.time() - t
        if name == "mteb-replay":
            report["replay_calls"] = model.calls

    sub = [x for x in tasks if x.metadata.name in SUBSET]

    # 3. sharded: every role above 4 KiB is split
    t = time.time()
    export(M.HashEncoder(), reset(sub), out / "export-sharded/task-data", out / "export-sharded/embeddings",
           encode_kwargs=ENCODE, shard_bytes=4096)
    full, sharded = concat_roles(out / "export/embeddings"), concat_roles(out / "export-sharded/embeddings")
    report["sharded"] = {
        "n_shard_files": sum(1 for p in (out / "export-sharded/embeddings").rglob("*-of-*.h5")),
        "same_rows": all(np.array_equal(full[k][0], v[0]) and np.array_equal(full[k][1], v[1])
                         for k, v in sharded.items()),
        "roles": len(sharded),
    }
    report["timings"]["export_sharded"] = time.time() - t

    # 4. resume: the run fails on its 6th encode call (MockVisionCentricQA takes two, then
    # InMemT2IRetrieval's queries and two corpus chunks of 100 succeed, the third chunk fails),
    # then a second run finishes the export and a third finds nothing left to do
    t = time.time()
    dst = out / "export-resume"
    # (a call in which the model raises fails its task; the export goes on with the next ones,
    # whose calls fail the same way)
    enc1 = M.HashEncoder(fail_after=5)
    first = export(enc1, reset(sub), dst / "task-data", dst / "embeddings", encode_kwargs=ENCODE, corpus_chunk=100)
    if not first["failed"]:
        report["resume"] = {"interrupted": False}
    else:
        e = first["failed"]["InMemT2IRetrieval"]
        emb = dst / "embeddings"
        finals = sorted(str(p.relative_to(emb)) for p in emb.rglob("*.h5") if not p.name.startswith("."))
        staged = sorted(str(p.relative_to(emb)) for p in emb.rglob(".*") if p.is_file() and p.name != IDENTITY_NAME)
        import h5py

        complete = True
        for p in finals:  # a final file is always whole: every row written, keys included
            with h5py.File(emb / p, "r") as f:
                keys = f["item_key"][...]
                complete &= bool(keys.shape[0] == f["embeddings"].shape[0] and (keys != 0).any(axis=1).all())
        state = json.loads(next((emb / "InMemT2IRetrieval/test/default").glob(".corpus.state.json")).read_text())
        enc2 = M.HashEncoder()
        export(enc2, reset(sub), dst / "task-data", dst / "embeddings", encode_kwargs=ENCODE, corpus_chunk=100)
        enc3 = M.HashEncoder()
        export(enc3, reset(sub), dst / "task-data", dst / "embeddings", encode_kwargs=ENCODE, corpus_chunk=100)
        resumed = concat_roles(emb)
        report["resume"] = {
            "interrupted": True,
            "error": str(e),
            "finals_after_interrupt": finals,
            "staged_after_interrupt": staged,
            "finals_complete": complete,
            "rows_done_at_interrupt": state["rows_done"],
            "calls_first_run": enc1.n_calls,
            "calls_resume": enc2.n_calls,
            "calls_third_run": enc3.n_calls,
            "same_rows": all(np.array_equal(full[k][0], v[0]) and np.array_equal(full[k][1], v[1])
                             for k, v in resumed.items()),
            "roles": len(resumed),
            "leftover_staged": sorted(str(p) for p in emb.rglob(".*") if p.is_file() and p.name != IDENTITY_NAME),
        }
    report["timings"]["export_resume"] = time.time() - t

    # 5. half precision: float16 and bfloat16 files round as numpy / torch round
    import torch

    t = time.time()
    half = {}
    for dt in ("float16", "bfloat16"):
        export(M.HashEncoder(), reset(sub), out / f"export-{dt}/task-data", out / f"export-{dt}/embeddings",
               encode_kwargs=ENCODE, dtype=dt)
        got = concat_roles(out / f"export-{dt}/embeddings")
        ok = True
        for k, (x, _) in got.items():
            ref = full[k][0]
            want = (ref.astype(np.float16).astype(np.float32) if dt == "float16"
                    else torch.from_numpy(ref).to(torch.bfloat16).float().numpy())
            ok &= bool(np.array_equal(x, want))
        half[dt] = ok
    report["half_precision_rounding_matches"] = half
    report["timings"]["export_half"] = time.time() - t
    report["timings"]["total"] = time.time() - t0
    (out / "driver.json").write_text(json.dumps(report, indent=1, default=str))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main())
