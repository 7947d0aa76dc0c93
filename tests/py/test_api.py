"""The public C API's surface: libmieb.so exports exactly the functions include/mieb.h declares
(host/api/mieb.map lists them; a function added to one and not the others fails here), and
nothing else of the engine."""
import os
import re
import subprocess
from pathlib import Path

from helpers.mieb_tools import build_dir

SRC = Path(os.environ.get("MIEB_SOURCE_DIR", Path(__file__).resolve().parents[2]))
# a declaration: a return type, the name, "(" ... ");" at the top level of the header
DECL = re.compile(r"^[A-Za-z_][\w \t*]*?\b(mieb_\w+)\s*\([^;{]*\)\s*;", re.M)


def declared() -> set[str]:
    text = re.sub(r"/\*.*?\*/", "", (SRC / "include" / "mieb.h").read_text(), flags=re.S)
    return set(DECL.findall(text))


def mapped() -> set[str]:
    text = (SRC / "host" / "api" / "mieb.map").read_text()
    glob = text.split("global:", 1)[1].split("local:", 1)[0]
    return set(re.findall(r"\b(mieb_\w+);", glob))


def exported() -> set[str]:
    lib = build_dir() / "libmieb.so"
    out = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True, text=True, check=True).stdout
    return {m.group(1) for m in re.finditer(r"^\S+ [TtWi] (\w+?)(@@?\w+)?$", out, re.M)}


def test_header_map_and_library_agree():
    h = declared()
    assert {"mieb_search", "mieb_score_task", "mieb_run", "mieb_engine_new"} <= h, h
    assert mapped() == h, (sorted(mapped() - h), sorted(h - mapped()))
    assert exported() == h, (sorted(exported() - h), sorted(h - exported()))


def test_the_header_parser():
    """The header parser finds a declaration split over lines and skips a typedef's pointer."""
    text = "int mieb_a(int x,\n           int y);\ntypedef void (*mieb_cb)(int);\nconst char *mieb_b(void);\n"
    found = set(DECL.findall(text))
    assert found == {"mieb_a", "mieb_b"}
