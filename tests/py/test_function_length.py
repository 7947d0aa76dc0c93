"""tools/check_function_length.py keeps every C function in host/ within 120 lines: the tree as it
is passes, a copy with one long function added fails naming it, and the same function with a
`long-function:` reason above it (on the line before, or in its comment block) passes."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

SRC = Path(os.environ.get("MIEB_SOURCE_DIR", Path(__file__).resolve().parents[2]))
CHECK = SRC / "tools" / "check_function_length.py"


def check(*args):
    return subprocess.run([sys.executable, str(CHECK), *map(str, args)], capture_output=True, text=True, timeout=300)


def long_function(name, body_lines, before=""):
    body = "".join(f"    x += {i}; /* a brace in a comment: {{ */\n" for i in range(body_lines))
    return f'{before}static int {name}(int x)\n{{\n    const char *s = "}}";\n{body}    return x + (s[0] == \'}}\');\n}}\n'


def copy_tree(tmp):
    root = tmp / "tree"
    shutil.copytree(SRC / "host", root / "host")
    return root


def test_tree_holds():
    r = check("--root", SRC)
    assert r.returncode == 0, r.stderr
    assert "none over 120 lines" in r.stdout


def test_long_function_fails(tmp_path):
    root = copy_tree(tmp_path)
    f = root / "host" / "core" / "radix_sort.c"
    text = f.read_text()
    f.write_text(text + "\n" + long_function("too_long", 130) + long_function("short_enough", 110))
    r = check("--root", root)
    assert r.returncode == 1
    assert "host/core/radix_sort.c" in r.stderr and "too_long is 134 lines" in r.stderr, r.stderr
    assert "short_enough" not in r.stderr


def test_marker_lets_it_pass(tmp_path):
    root = copy_tree(tmp_path)
    f = root / "host" / "core" / "radix_sort.c"
    text = f.read_text()
    f.write_text(text + "\n" + long_function("marked_line", 130, "// long-function: one table, read top to bottom\n")
                 + "\n" + long_function("marked_block", 130, "/*\n * Scores one thing.\n * long-function: a state "
                                        "machine whose states share locals\n */\n"))
    r = check("--root", root)
    assert r.returncode == 0, r.stderr
    # a marker without a reason, or one separated from the function by code, does not count
    f.write_text(text + "\n/* long-function: */\n" + long_function("no_reason", 130)
                 + "\n/* long-function: far away */\nint y;\n" + long_function("far_away", 130))
    r = check("--root", root)
    assert r.returncode == 1 and "no_reason is" in r.stderr and "far_away is" in r.stderr, r.stderr

