#!/usr/bin/env python3
"""check_layers.py - the layer map of the C and CUDA sources, enforced.

Each folder belongs to a layer; a file may include headers of its own folder and of folders in
lower layers only, and (with --objects) an object file may call functions defined only in its
own folder or lower ones. LAYERS below is the map the README draws, and the one
CMakeLists.txt builds (one library per layer, each linking only layers below it); any upward or
sideways edge, in an include, a call or a library link, fails the check, naming what makes it.

Inside a folder the files are ordered too: no loop of includes or calls between them. A file
and its header are one unit (x.c with x.h); unit A uses unit B when a file of A includes B's
header or (with --objects) calls a function B defines. A loop of such uses (A uses B, B uses A,
directly or through others) means one file is both a folder's entry point and its helper
library: split it into a bottom file and a top file. Every loop found is named with its edges.

    tools/check_layers.py [--root DIR] [--objects BUILD_DIR]
Exit status: 0 the map holds, 1 an upward include or call, or a loop inside a folder,
2 usage or unreadable tree.
"""
import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

# bottom to top; folders on one line are one layer (they may not use each other)
LAYERS = [
    ["include"],  # the public API's header (include/mieb.h): it uses nothing
    ["host/core"],
    ["host/math"],
    ["host/backend"],
    ["host/canon", "host/topk"],
    ["host/screen", "kernels"],
    ["host/cpu", "cuda"],
    ["host/dispatch"],
    ["host/emulation"],
    ["host/json"],
    ["host/config"],
    ["host/hdf5"],
    ["host/io", "host/emb", "host/results"],
    ["host/metrics"],
    ["host/families", "host/analysis", "host/synth"],
    ["host/parts", "host/report"],
    ["host/plan"],
    ["host/board"],
    ["host/api"],
    ["host/cli"],
]

RANK = {folder: i for i, layer in enumerate(LAYERS) for folder in layer}
SOURCE = re.compile(r"\.(c|h|cu|cuh)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of(rel):
    parts = Path(rel).parts
    if parts[0] == "host" and len(parts) > 2:
        return "/".join(parts[:2])
    return parts[0] if len(parts) > 1 else None


def resolve(root, src_rel, inc):
    """The repository path an #include "..." names: beside the file, else under host/, cuda/, kernels/."""
    for base in (Path(src_rel).parent, Path("host"), Path("cuda"), Path("kernels")):
        p = os.path.normpath(base / inc)
        if (root / p).is_file():
            return p
    return None


def unit_of(rel):
    """A file's unit inside its folder: its path without the extension (x.c and x.h are one)."""
    return os.path.splitext(rel)[0]


def include_edges(root, file_edges=None):
    edges = {}
    for top in ("host", "cuda", "kernels"):
        for dp, _, files in os.walk(root / top):
            for f in files:
                if not SOURCE.search(f):
                    continue
                rel = os.path.relpath(os.path.join(dp, f), root)
                text = Path(root, rel).read_text(errors="replace")
                for m in INCLUDE.finditer(text):
                    tgt = resolve(root, rel, m.group(1))
                    if tgt:
                        a, b = folder_of(rel), folder_of(tgt)
                        if a and b and a != b:
                            edges.setdefault((a, b), []).append(f"{rel} includes {tgt}")
                        elif a and a == b and file_edges is not None and unit_of(rel) != unit_of(tgt):
                            file_edges.setdefault((unit_of(rel), unit_of(tgt)), []).append(f"{rel} includes {tgt}")
    return edges


def object_edges(build, root, file_edges=None):
    """(from folder, to folder) for every call from an object file to a function defined in another
    folder. Objects whose source file is gone (left in a build folder by a move) are skipped."""
    objs = []
    for p in Path(build).rglob("*.o"):
        m = re.search(r"/((?:host/\w+|cuda|kernels)/[^/]+)\.o$", str(p))
        if m and (root / m.group(1)).is_file():
            objs.append(p)
    defined, undefined = {}, []
    for o in objs:
        m = re.search(r"/((host/\w+)|cuda|kernels)/[^/]+$", str(o))
        folder = m.group(1)
        unit = unit_of(re.search(r"/((?:host/\w+|cuda|kernels)/[^/]+)\.o$", str(o)).group(1))
        # one listing of the global symbols: "U name" for a call out, "addr T name" (D, B, R, C) for a definition
        out = subprocess.run(["nm", "-g", str(o)], capture_output=True, text=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == "U":
                undefined.append((folder, unit, o.name, parts[1]))
            elif len(parts) == 3 and parts[1] in "TDBRC":
                defined[parts[2]] = (folder, unit)
    edges = {}
    for folder, unit, name, sym in undefined:
        tgt, tunit = defined.get(sym, (None, None))
        if tgt and tgt != folder:
            edges.setdefault((folder, tgt), []).append(f"{folder}/{name} calls {sym} ({tgt})")
        elif tgt and file_edges is not None and tunit != unit:
            file_edges.setdefault((unit, tunit), []).append(f"{name} calls {sym} ({tunit})")
    return edges


def loops(file_edges):
    """The loops between units of one folder: each strongly connected component of more than one
    unit (Tarjan's algorithm, iterative), with the edges inside it."""
    graph = {}
    for a, b in file_edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index, low, on, stack, comps, counter = {}, {}, set(), [], [], [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    comps.append(sorted(comp))
    out = []
    for comp in sorted(comps):
        inside = set(comp)
        why = [w for (a, b), ws in sorted(file_edges.items()) if a in inside and b in inside for w in ws[:2]]
        out.append((comp, why))
    return out


def upward(edges):
    bad = {}
    for (a, b), why in edges.items():
        if a not in RANK or b not in RANK:
            bad[(a, b)] = why + [f"{a if a not in RANK else b} is in no layer of tools/check_layers.py"]
        elif RANK[b] > RANK[a] or (RANK[b] == RANK[a] and a != b):
            bad[(a, b)] = why
    return bad


def cmake_edges(root):
    """(from folder, to folder) for every layer library that CMakeLists.txt links to another
    (mieb_layer(<folder> LAYERS <lower> ...)), so that the build's map is the same one."""
    cm = Path(root, "CMakeLists.txt")
    if not cm.is_file():
        return {}
    text = re.sub(r"#[^\n]*", "", cm.read_text())
    edges = {}
    for m in re.finditer(r"\bmieb_layer\(\s*(\w+)([^)]*)\)", text):
        words = m.group(2).split()
        lower = words[words.index("LAYERS") + 1:] if "LAYERS" in words else []
        lower = lower[:next((i for i, w in enumerate(lower) if w in ("OUTSIDE", "SOURCES")), len(lower))]
        for b in lower:
            edges.setdefault((f"host/{m.group(1)}", f"host/{b}"), []).append(
                f"CMakeLists.txt: mieb_{m.group(1)} links mieb_{b}")
    return edges


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=Path(__file__).resolve().parents[1], type=Path)
    ap.add_argument("--objects", help="a build folder whose object files are checked for upward calls")
    args = ap.parse_args()
    if not (args.root / "host").is_dir():
        print(f"check_layers: {args.root}: no host/ folder", file=sys.stderr)
        return 2
    file_edges = {}
    edges = include_edges(args.root, file_edges)
    for k, v in cmake_edges(args.root).items():
        edges.setdefault(k, []).extend(v)
    if args.objects:
        for k, v in object_edges(args.objects, args.root, file_edges).items():
            edges.setdefault(k, []).extend(v)
    bad = upward(edges)
    for (a, b), why in sorted(bad.items()):
        print(f"check_layers: {a} uses {b}, a layer above it or beside it:", file=sys.stderr)
        for w in why[:5]:
            print(f"    {w}", file=sys.stderr)
    found = loops(file_edges)
    for comp, why in found:
        print(f"check_layers: a loop between the files of {os.path.dirname(comp[0])}: "
              f"{', '.join(os.path.basename(c) for c in comp)}:", file=sys.stderr)
        for w in why[:8]:
            print(f"    {w}", file=sys.stderr)
    if bad or found:
        return 1
    print(f"check_layers: the layer map holds ({len(edges)} folder edges, every one downward; "
          f"{len(file_edges)} file edges inside folders, no loop)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
