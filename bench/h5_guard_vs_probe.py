#!/usr/bin/env python3
"""Completeness of the in-process HDF5 guard against the forked probe, file by file
(docs/BAD_INPUT.md, "The in-process guard and the forked probe, measured").

  bench/h5_guard_vs_probe.py RELEASE_BUILD ASAN_BUILD DIR...

DIR: fuzz inputs of the taskdata or emb target (tests/fuzz/regressions/<t>, tests/fuzz/seeds/<t>,
a libFuzzer corpus; the target is the last path part, or 'emb' when it contains it). Each
input becomes its HDF5 file(s) (emb: a selector byte, then one file or two shards), and each
file goes through:
  guard   h5_guard_measure guard (release build): refused / read
  probe   h5_guard_measure probe --data --timeout 2 (release build): clean / h5-error / crash /
          timeout / memory
  asan    h5_guard_measure walk --data (ASan build, one process per file): does libhdf5 itself
          read or write out of bounds on it (the unguarded walk the probe's child makes)?
Prints one line per file and the cross-table."""
import collections
import os
import struct
import subprocess
import sys
import tempfile


def files_of(path, kind, out):
    b = open(path, "rb").read()
    base = os.path.join(out, f"{kind}-{os.path.basename(path)}")
    if kind != "emb":
        parts = [b]
    elif not b:
        return []
    else:
        sel, b = b[0], b[1:]
        if sel & 0x80 and len(b) >= 4:
            n = min(struct.unpack_from("<I", b, 0)[0], len(b) - 4)
            parts = [b[4:4 + n], b[4 + n:]]
        else:
            parts = [b]
    names = []
    for i, p in enumerate(parts):
        names.append(f"{base}-{i}.h5")
        open(names[-1], "wb").write(p)
    return names


def main():
    rel, asan, dirs = sys.argv[1], sys.argv[2], sys.argv[3:]
    tool = lambda b: os.path.join(b, "tests", "h5_guard_measure")
    out = tempfile.mkdtemp(prefix="h5gp-")
    files = []
    for d in dirs:
        kind = "emb" if "emb" in os.path.basename(os.path.normpath(d)) else "taskdata"
        for n in sorted(os.listdir(d)):
            if os.path.isfile(os.path.join(d, n)) and not n.endswith(".md"):
                files += files_of(os.path.join(d, n), kind, out)
    res = {f: {} for f in files}
    for mode, args in (("guard", ["guard"]), ("probe", ["probe", "--data", "--timeout", "2"])):
        for i in range(0, len(files), 50):
            p = subprocess.run([tool(rel), *args, *files[i:i + 50]], capture_output=True, text=True)
            for line in p.stdout.splitlines():
                r = line.split("\t")
                res[r[0]][mode] = r[1]
                res[r[0]][mode + "_ms"] = float(r[2])
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1", UBSAN_OPTIONS="halt_on_error=1")
    for f in files:
        try:
            p = subprocess.run([tool(asan), "walk", "--data", f], capture_output=True, text=True, timeout=20, env=env)
            err = p.stderr
            res[f]["asan"] = ("oob" if "AddressSanitizer" in err and "overflow" in err or "SEGV" in err else
                              "asan-other" if "AddressSanitizer" in err or "runtime error" in err else
                              "ok" if p.returncode == 0 else f"rc{p.returncode}")
        except subprocess.TimeoutExpired:
            res[f]["asan"] = "hang"
    table = collections.Counter()
    for f in files:
        r = res[f]
        print(f"{os.path.basename(f)}\t{r.get('guard')}\t{r.get('probe')}\t{r.get('asan')}")
        table[(r.get("guard"), r.get("probe"), r.get("asan"))] += 1
    print(f"\n{len(files)} files; guard / probe / libhdf5 under ASan: count")
    for k, v in sorted(table.items(), key=lambda kv: -kv[1]):
        print(f"  {k[0]:8} {k[1]:9} {k[2]:10} {v}")
    g = [res[f]["guard_ms"] for f in files if "guard_ms" in res[f]]
    p = [res[f]["probe_ms"] for f in files if "probe_ms" in res[f] and res[f]["probe"] != "timeout"]
    if g and p:
        print(f"median ms per file: guard {sorted(g)[len(g) // 2]:.2f}, probe {sorted(p)[len(p) // 2]:.2f}")


if __name__ == "__main__":
    main()
