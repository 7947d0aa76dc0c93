"""The documentation is part of the product: docs/FORMAT.md's example must write files that
mieb-eval scores, and the repository must stand on its own (no reference to files outside it)
and describe the present (no round of work or issue number in a doc or comment).

The example's ndcg@10 is checked against pytrec_eval (trec_eval 9.0.8, what mteb uses) on the
same cosine ranking, so a doc that drifted from the format, or a reader that drifted from
the doc, fails here."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytrec_eval

from helpers.mieb_tools import build_dir

SRC = Path(os.environ.get("MIEB_SOURCE_DIR", Path(__file__).resolve().parents[2]))
FORMAT = SRC / "docs" / "FORMAT.md"


def blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


def test_format_example_scores_as_trec_eval(tmp_path):
    text = FORMAT.read_text()
    (py,) = blocks(text, "python")
    (sh,) = blocks(text, "sh")
    rng = np.random.default_rng(7)
    q = rng.standard_normal((30, 24)).astype(np.float32)
    d = rng.standard_normal((200, 24)).astype(np.float32)
    # graded qrels, a query without any (dropped, as mteb drops it), one with a 0 judgement
    qrels = {f"q{i}": {f"d{(i * 13) % 200}": 1 + i % 3, f"d{(i * 29 + 5) % 200}": 1} for i in range(29)}
    qrels["q3"] = {"d4": 0, "d8": 2}
    prelude = "import numpy as np\n" f"q = np.array({q.tolist()}, dtype=np.float32)\n" \
              f"d = np.array({d.tolist()}, dtype=np.float32)\nqrels = {qrels!r}\n"
    (tmp_path / "example.py").write_text(prelude + py)
    subprocess.run([sys.executable, "example.py"], cwd=tmp_path, check=True, timeout=300)
    # the shell block: the registry file from its here-document, then the two commands
    reg = re.search(r"<<'JSON'\n(.*?)\nJSON", sh, re.S).group(1)
    (tmp_path / "my-registry.json").write_text(reg)
    env = dict(os.environ, MIEB_REGISTRY=str(tmp_path / "my-registry.json"))
    exe = str(build_dir() / "mieb-eval")
    cmds = [line.split("#")[0].split() for line in sh.splitlines() if line.startswith("mieb-eval ")]
    assert [c[1] for c in cmds] == ["inspect", "run"]
    for c in cmds:
        res = subprocess.run([exe, *c[1:]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr
    out = tmp_path / "out" / "results" / "me__my-model" / "1"
    assert (out / "model_meta.json").read_bytes() == (tmp_path / "emb" / "model_meta.json").read_bytes()
    got = json.loads((out / "MyRetrieval.json").read_text())["scores"]["test"][0]

    qn = q / np.linalg.norm(q, axis=1, keepdims=True)
    dn = d / np.linalg.norm(d, axis=1, keepdims=True)
    s = qn @ dn.T
    run = {f"q{i}": {f"d{j}": float(s[i, j]) for j in range(len(d))} for i in range(len(q)) if f"q{i}" in qrels}
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"})
    want = np.mean([v["ndcg_cut_10"] for v in ev.evaluate(run).values()])
    assert got["main_score"] == got["ndcg_at_10"]
    assert abs(got["ndcg_at_10"] - round(float(want), 5)) <= 1e-5


def test_repository_stands_on_its_own():
    tracked = subprocess.run(["git", "ls-files"], cwd=SRC, capture_output=True, text=True)
    if tracked.returncode != 0:  # a source tree without git (an unpacked archive): walk it
        files = [p.relative_to(SRC).as_posix() for p in SRC.rglob("*") if p.is_file() and ".git" not in p.parts]
    else:
        files = tracked.stdout.split()
    bad, dated = [], []
    pattern = re.compile(r"\.\./shared|shared/spec|STYLE\.md|ARCHITECTURE\.md|of the specification")
    # docs and comments describe the present: no round of work or issue number dates them
    history = re.compile(r"\b(sitting|[Ii]ssue #?\d+)\b")
    for f in files:
        if f == "tests/py/test_docs.py":
            continue
        try:
            text = (SRC / f).read_text(errors="strict")
        except (UnicodeDecodeError, IsADirectoryError, FileNotFoundError):
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if pattern.search(line):
                bad.append(f"{f}:{n}: {line.strip()[:100]}")
            if history.search(line) and f != "configs/tasks.json":
                dated.append(f"{f}:{n}: {line.strip()[:100]}")
    assert not bad, "references to files outside the repository:\n" + "\n".join(bad)
    assert not dated, "history in docs or comments (git holds it):\n" + "\n".join(dated)
    # the documents the code cites by name exist in docs/
    for name in ("FORMAT.md", "PROTOCOLS.md", "PARITY.md", "BAD_INPUT.md"):
        assert (SRC / "docs" / name).is_file(), name


def test_cli_page_is_the_programs_help(tmp_path):
    """docs/CLI.md is what scripts/gen-cli-doc.sh writes from this build's --help texts."""
    import shutil
    copy = tmp_path / "src"
    (copy / "docs").mkdir(parents=True)
    (copy / "scripts").mkdir()
    shutil.copy(SRC / "scripts" / "gen-cli-doc.sh", copy / "scripts")
    r = subprocess.run(["bash", str(copy / "scripts" / "gen-cli-doc.sh"), str(build_dir())], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert (copy / "docs" / "CLI.md").read_text() == (SRC / "docs" / "CLI.md").read_text(), \
        "docs/CLI.md is out of date: run scripts/gen-cli-doc.sh"


def test_environment_is_read_in_one_place_and_documented():
    """Every MIEB_* variable the program reads is read by host/core/env.c alone, and each of its
    names has a row in docs/ENVIRONMENT.md (a switch nobody can find is a switch nobody can
    trust)."""
    readers = []
    for folder in ("host", "cuda", "kernels"):
        for p in sorted((SRC / folder).rglob("*")):
            if p.suffix not in (".c", ".h", ".cu", ".cuh") or p.relative_to(SRC).as_posix() == "host/core/env.c":
                continue
            for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1):
                # getenv("MIEB_X"), a helper given the name alone (flag("MIEB_X")), or a macro naming it
                if re.search(r'\(\s*"MIEB_[A-Z0-9_]+"\s*\)', line) or re.search(r'#define\s+\w+\s+"MIEB_[A-Z_]+"', line):
                    readers.append(f"{p.relative_to(SRC)}:{n}: {line.strip()}")
    assert not readers, "MIEB_* variables read outside host/core/env.c:\n" + "\n".join(readers)
    names = re.findall(r'"(MIEB_[A-Z0-9_]+)"', (SRC / "host" / "core" / "env.c").read_text())
    assert len(names) >= 10, names
    doc = (SRC / "docs" / "ENVIRONMENT.md").read_text()
    rows = set(re.findall(r"^\| `(MIEB_[A-Z0-9_]+)` \|", doc, re.M))
    assert set(names) == rows, f"docs/ENVIRONMENT.md rows {sorted(rows)} != host/core/env.c {sorted(names)}"
    assert "docs/ENVIRONMENT.md" in (SRC / "README.md").read_text()


def test_every_source_file_is_in_the_test_map():
    """tests/README.md maps every C and CUDA source file to the tests that exercise it: a file
    added without its row, or a row naming a file that is gone, fails here."""
    text = (SRC / "tests" / "README.md").read_text()
    section = text[text.index("## Where each part of the code is tested"):]
    named = set(re.findall(r"`([A-Za-z0-9_]+\.(?:c|cu))`", section))
    files = {p.name for top in ("host", "cuda", "kernels") for p in (SRC / top).rglob("*")
             if p.suffix in (".c", ".cu")}
    assert not files - named, f"source files missing from tests/README.md's map: {sorted(files - named)}"
    assert not named - files, f"tests/README.md's map names files that do not exist: {sorted(named - files)}"


def test_links_between_documents_resolve():
    """Every relative link of a tracked Markdown file names a file or folder of the repository
    (a doc moved or renamed leaves no dangling link)."""
    tracked = subprocess.run(["git", "ls-files", "*.md"], cwd=SRC, capture_output=True, text=True)
    files = tracked.stdout.split() if tracked.returncode == 0 else \
        [p.relative_to(SRC).as_posix() for p in SRC.rglob("*.md") if ".git" not in p.parts]
    assert "README.md" in files and "docs/INSTALL.md" in files
    dangling = []
    for f in files:
        text = re.sub(r"```.*?```", "", (SRC / f).read_text(), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = target.split("#")[0]
            if not (SRC / f).parent.joinpath(path).exists():
                dangling.append(f"{f}: {target}")
    assert not dangling, "links to nothing:\n" + "\n".join(dangling)


def test_mteb_extra_admits_the_tested_version():
    """pyproject.toml's [mteb] extra states a range, and the version the tests run (the lock
    file's) lies in it, as docs/INSTALL.md says."""
    import tomllib

    from packaging.requirements import Requirement

    extra = tomllib.loads((SRC / "pyproject.toml").read_text())["project"]["optional-dependencies"]["mteb"]
    (req,) = [Requirement(r) for r in extra]
    lock = re.search(r"^mteb==(\S+)$", (SRC / "tools" / "requirements-mteb-lock.txt").read_text(), re.M).group(1)
    assert req.name == "mteb" and req.specifier, "the mteb extra states no supported range"
    assert req.specifier.contains(lock), f"{req} leaves out the tested mteb {lock}"
    assert f"`{extra[0]}`" in (SRC / "docs" / "INSTALL.md").read_text(), "docs/INSTALL.md does not state the range"
