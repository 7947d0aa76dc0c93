"""tools/check_layers.py keeps the layer map true: the tree as it is passes (includes, and calls
between the CPU build's object files), and an upward include, an include into a folder of no
layer, an upward call, an upward library link (CMakeLists.txt), or a loop of includes or calls
between the files of one folder added to a copy of the tree fails it, naming the edges."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from helpers.mieb_tools import build_dir

SRC = Path(os.environ.get("MIEB_SOURCE_DIR", Path(__file__).resolve().parents[2]))
CHECK = SRC / "tools" / "check_layers.py"


def check(*args):
    return subprocess.run([sys.executable, str(CHECK), *map(str, args)], capture_output=True, text=True, timeout=300)


def copy_tree(tmp):
    root = tmp / "tree"
    for d in ("host", "cuda", "kernels", "tools"):
        shutil.copytree(SRC / d, root / d)
    shutil.copy(SRC / "CMakeLists.txt", root / "CMakeLists.txt")
    return root


def test_tree_and_objects_hold():
    r = check("--root", SRC, "--objects", build_dir())
    assert r.returncode == 0, r.stderr
    assert "the layer map holds" in r.stdout


def test_upward_include_fails(tmp_path):
    root = copy_tree(tmp_path)
    f = root / "host" / "core" / "radix_sort.c"
    f.write_text('#include "../families/family.h"\n' + f.read_text())
    r = check("--root", root)
    assert r.returncode == 1
    assert "host/core uses host/families" in r.stderr and "radix_sort.c includes host/families/family.h" in r.stderr


def test_sideways_and_unmapped_fail(tmp_path):
    root = copy_tree(tmp_path)
    f = root / "host" / "analysis" / "compare.c"
    f.write_text('#include "../families/family.h"\n' + f.read_text())  # families and analysis share a layer
    (root / "host" / "extra").mkdir()
    (root / "host" / "extra" / "x.h").write_text("#define X 1\n")
    g = root / "host" / "cli" / "main.c"
    g.write_text('#include "../extra/x.h"\n' + g.read_text())
    r = check("--root", root)
    assert r.returncode == 1
    assert "host/analysis uses host/families" in r.stderr
    assert "host/extra is in no layer" in r.stderr


def test_upward_library_link_fails(tmp_path):
    # the build's map is the same: a layer library linking one above it fails
    root = copy_tree(tmp_path)
    cm = root / "CMakeLists.txt"
    text = cm.read_text()
    assert "mieb_layer(config    LAYERS core json)" in text
    cm.write_text(text.replace("mieb_layer(config    LAYERS core json)", "mieb_layer(config    LAYERS core json metrics)"))
    r = check("--root", root)
    assert r.returncode == 1
    assert "host/config uses host/metrics" in r.stderr and "mieb_config links mieb_metrics" in r.stderr, r.stderr


def test_upward_call_fails(tmp_path):
    # an object file in host/core that calls a function of host/families
    objs = tmp_path / "objs" / "host" / "core"
    objs.mkdir(parents=True)
    fam = tmp_path / "objs" / "host" / "families"
    fam.mkdir(parents=True)
    (tmp_path / "a.c").write_text("int mieb_family_thing(void);\nint core_fn(void) { return mieb_family_thing(); }\n")
    (tmp_path / "b.c").write_text("int mieb_family_thing(void) { return 1; }\n")
    cc = shutil.which("cc") or shutil.which("gcc")
    subprocess.run([cc, "-c", str(tmp_path / "a.c"), "-o", str(objs / "a.c.o")], check=True)
    subprocess.run([cc, "-c", str(tmp_path / "b.c"), "-o", str(fam / "b.c.o")], check=True)
    root = copy_tree(tmp_path)  # the objects' sources must exist in the tree checked
    (root / "host" / "core" / "a.c").write_text((tmp_path / "a.c").read_text())
    (root / "host" / "families" / "b.c").write_text((tmp_path / "b.c").read_text())
    r = check("--root", root, "--objects", tmp_path / "objs")
    assert r.returncode == 1
    assert "host/core uses host/families" in r.stderr and "calls mieb_family_thing" in r.stderr


def test_cuda_objects_hold():
    """The CUDA build's objects too (scripts/test.sh builds build-cuda where nvcc is): its
    operation files and their shared helpers form no loop."""
    cuda_build = SRC / "build-cuda"
    if not (cuda_build / "CMakeCache.txt").is_file():
        import pytest
        pytest.skip("no CUDA build beside the source (scripts/test.sh makes build-cuda where nvcc is)")
    r = check("--root", SRC, "--objects", cuda_build)
    assert r.returncode == 0, r.stderr


def test_include_loop_inside_a_folder_fails(tmp_path):
    # fileutil.h includes radix_sort.h and radix_sort.c includes fileutil.h: a loop of two units
    root = copy_tree(tmp_path)
    h = root / "host" / "core" / "fileutil.h"
    h.write_text(h.read_text().replace('#include "status.h"', '#include "status.h"\n#include "radix_sort.h"', 1))
    c = root / "host" / "core" / "radix_sort.c"
    c.write_text('#include "fileutil.h"\n' + c.read_text())
    r = check("--root", root)
    assert r.returncode == 1
    assert "a loop between the files of host/core: fileutil, radix_sort" in r.stderr, r.stderr
    assert "host/core/radix_sort.c includes host/core/fileutil.h" in r.stderr


def test_call_loop_inside_a_folder_fails(tmp_path):
    # two object files of host/core, each calling the other (an entry point that is also a helper)
    objs = tmp_path / "objs" / "host" / "core"
    objs.mkdir(parents=True)
    (tmp_path / "top.c").write_text("int helper(void);\nint entry(void) { return helper(); }\n")
    (tmp_path / "bottom.c").write_text("int entry(void);\nint helper(void) { return 1; }\nint again(void) { return entry(); }\n")
    cc = shutil.which("cc") or shutil.which("gcc")
    for name in ("top", "bottom"):
        subprocess.run([cc, "-c", str(tmp_path / f"{name}.c"), "-o", str(objs / f"{name}.c.o")], check=True)
    root = copy_tree(tmp_path)
    for name in ("top", "bottom"):
        (root / "host" / "core" / f"{name}.c").write_text((tmp_path / f"{name}.c").read_text())
    r = check("--root", root, "--objects", tmp_path / "objs")
    assert r.returncode == 1
    assert "a loop between the files of host/core: bottom, top" in r.stderr, r.stderr
    assert "bottom.c.o calls entry (host/core/top)" in r.stderr and "top.c.o calls helper (host/core/bottom)" in r.stderr
