"""The public C API's surface: libmieb.so exports exactly the functions include/mieb.h declares
(host/api/mieb.map lists them; a function added to one and not the others fails here), and
nothing else of the engine; and the Python package's ctypes mirrors of the header's structs
have the C compiler's layout, field by field."""
import ctypes
import os
import re
import subprocess
import sys
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


# --- The ctypes mirrors of the header's structs (python/mieb_eval/_structs.py) -----------------

STRUCT = re.compile(r"\bstruct\s+(mieb_\w+)\s*\{(.*?)\}\s*;", re.S)


def header_structs(text: str) -> dict[str, list[str]]:
    """Each struct the header defines: its field names in order (several declarators per line,
    pointers and nested structs included)."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    out = {}
    for name, body in STRUCT.findall(text):
        fields = []
        for decl in filter(None, (d.strip() for d in body.split(";"))):
            first, *more = decl.split(",")
            fields.append(re.findall(r"(\w+)\s*$", first)[0])
            fields += [re.sub(r"[\s*]", "", m) for m in more]
        out[name] = fields
    return out


def c_layout(header_dir: Path, structs: dict[str, list[str]], tmp: Path) -> dict[str, dict]:
    """sizeof each struct and (offset, size) of each field, as the C compiler lays them out:
    a program generated from the field lists, compiled against the header and run."""
    lines = ['#include <stddef.h>', '#include <stdio.h>', '#include "mieb.h"', "int main(void) {"]
    for s, fields in structs.items():
        lines.append(f'printf("%s %zu\\n", "{s}", sizeof(struct {s}));')
        for f in fields:
            lines.append(f'printf("%s.%s %zu %zu\\n", "{s}", "{f}", offsetof(struct {s}, {f}), '
                         f'sizeof(((struct {s} *)0)->{f}));')
    lines += ["return 0; }"]
    (tmp / "layout.c").write_text("\n".join(lines))
    subprocess.run(["cc", "-std=c11", "-I", str(header_dir), "-o", str(tmp / "layout"), str(tmp / "layout.c")],
                   check=True, capture_output=True)
    out: dict[str, dict] = {}
    for line in subprocess.run([str(tmp / "layout")], capture_output=True, text=True, check=True).stdout.splitlines():
        key, *nums = line.split()
        s, _, f = key.partition(".")
        out.setdefault(s, {})[f or "sizeof"] = tuple(int(n) for n in nums) if f else int(nums[0])
    return out


def mirror_mismatches(structs: dict[str, list[str]], layout: dict[str, dict], mirrors: dict) -> list[str]:
    """Where a mirror differs from the C layout: a struct without a mirror, a field missing, added
    or out of order, an offset, a size or the struct's size."""
    bad = [f"struct {s}: no ctypes mirror in _structs.MIRRORS" for s in structs if s not in mirrors]
    for s, cls in mirrors.items():
        if s not in structs:
            bad.append(f"struct {s}: mirrored but not in the header")
            continue
        names = [f[0] for f in cls._fields_]
        if names != structs[s]:
            bad.append(f"struct {s}: fields {structs[s]} in C, {names} in the mirror")
            continue
        for f in names:
            got = (getattr(cls, f).offset, getattr(cls, f).size)
            if got != layout[s][f]:
                bad.append(f"struct {s}.{f}: offset, size {layout[s][f]} in C, {got} in the mirror")
        if ctypes.sizeof(cls) != layout[s]["sizeof"]:
            bad.append(f"struct {s}: sizeof {layout[s]['sizeof']} in C, {ctypes.sizeof(cls)} in the mirror")
    return bad


def _mirrors() -> dict:
    sys.path.insert(0, str(SRC / "python"))
    try:
        from mieb_eval._structs import MIRRORS  # the structs alone: the library is not loaded
    finally:
        sys.path.pop(0)
    return MIRRORS


def test_the_ctypes_mirrors_match_the_c_layout(tmp_path):
    structs = header_structs((SRC / "include" / "mieb.h").read_text())
    assert {"mieb_array", "mieb_search_request", "mieb_role_array"} <= set(structs), structs
    layout = c_layout(SRC / "include", structs, tmp_path)
    assert mirror_mismatches(structs, layout, _mirrors()) == []


def test_a_field_added_in_c_alone_is_caught(tmp_path):
    """The check fails for a header whose struct gained a field the mirror lacks, even one that
    fits in the struct's tail padding (sizeof unchanged), and for one whose field changed type."""
    text = (SRC / "include" / "mieb.h").read_text()
    grown = text.replace("    int32_t order;        /* enum mieb_api_order */",
                         "    int32_t order;        /* enum mieb_api_order */\n    int32_t flags;")
    assert grown != text
    retyped = text.replace("    int64_t rows, dim;", "    int32_t rows; int64_t dim;")
    assert retyped != text
    for i, variant in enumerate((grown, retyped)):
        d = tmp_path / f"h{i}"
        d.mkdir()
        (d / "mieb.h").write_text(variant)
        structs = header_structs(variant)
        bad = mirror_mismatches(structs, c_layout(d, structs, d), _mirrors())
        assert bad and all("mirror" in b for b in bad), bad
