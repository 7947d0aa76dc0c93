"""The one line that ends tools/mieb-eval-model and mieb_eval.evaluate: where the model scored
in OUT/results stands among the published MIEB results, from the summary's placement
(`mieb-eval summary OUT/results -b BENCHMARK --published DIR --json` for the tool,
mieb_eval.summary(..., published=DIR) in the library for evaluate; docs/RUNNING.md, "Where your
model stands"). Nothing is downloaded: the published folder is one the user has.
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Optional, Union

PathLike = Union[str, "os.PathLike[str]"]


def default_published() -> Optional[Path]:
    """mteb's own copy of the published results (ResultCache().download_from_remote() puts it in
    $MTEB_CACHE/remote, by default ~/.cache/mteb/remote), where it exists."""
    root = Path(os.environ.get("MTEB_CACHE") or Path.home() / ".cache" / "mteb") / "remote"
    return root if (root / "results").is_dir() else None


def _rank(place: dict) -> str:
    return f"rank {place['rank']} of {place['of']}" if place["rank"] else f"not ranked ({place['of']} are)"


def describe(placement: dict, benchmark: str, published: PathLike) -> str:
    """One line per own model of the summary JSON's "placement": rank of N on the benchmark's
    ordering and on Borda, the nearest published model above, and what is missing."""
    lines = []
    for p in placement:
        mean = p["Mean(TaskType)"]
        where = f"{_rank(mean)} on {benchmark} (Mean(TaskType)), {_rank(p['Borda'])} on Borda"
        if mean["above"]:
            where += f"; next above: {mean['above']['model']} ({100 * mean['above']['difference']:+.2f})"
        if p["missing_tasks"]:
            where += f"; {len(p['missing_tasks'])} of its tasks missing (docs/RUNNING.md)"
        lines.append(f"{p['model']}: {where}; among the published results in {published}")
    return "\n".join(lines)


def placement_line(program: PathLike, results: PathLike, benchmark: Optional[str],
                   published: Optional[PathLike] = None, env: Optional[dict] = None) -> Optional[str]:
    """The placement of the models in `results` among those of `published` (default:
    default_published()) on `benchmark`, as describe() words it; None when there is no benchmark
    (a task list has no published ordering), no published folder, or summary could not place them."""
    published = published or default_published()
    if not benchmark or not published:
        return None
    with tempfile.TemporaryDirectory(prefix="mieb-placement-") as tmp:
        js = Path(tmp) / "placement.json"
        r = subprocess.run([str(program), "summary", str(results), "-b", benchmark, "--published", str(published),
                            "--json", str(js)], capture_output=True, text=True, env=env)
        if r.returncode not in (0, 1) or not js.is_file():
            return None
        doc = json.loads(js.read_text())
    return describe(doc.get("placement") or [], doc["benchmark"], published) or None
