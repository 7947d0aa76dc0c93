#!/usr/bin/env python3
"""check_function_length.py - no C function in host/ longer than the limit, unless it says why.

A function's length is the lines from its opening brace to its closing brace. A function over
the limit passes only when the line before its signature, or the comment block just above it,
holds the marker `long-function:` followed by the reason, e.g.

    /* long-function: one table of every option, in the order of the help text */
    static int parse_args(int argc, char **argv, struct opts *o)

    tools/check_function_length.py [--root DIR] [--limit N]
Exit status: 0 every function is within the limit or marked, 1 a long function without the
marker (each named with its file, line and length), 2 usage or unreadable tree.
"""
import argparse
import re
import sys
from pathlib import Path

LIMIT = 120

MARKER = re.compile(r"long-function:\s*\w")  # the marker and a reason (a word)


def strip(text):
    """The text with comments, strings and character literals blanked (newlines kept), so that
    braces inside them do not count."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + (c if j - 1 > i else ""))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


SIGNATURE_END = re.compile(r"\)\s*(__attribute__\s*\(\(.*?\)\)\s*)*$", re.S)


def functions(text):
    """(name, first line of the signature, line of '{', line of '}') of every function definition:
    a brace at depth 0 whose preceding code ends with a parameter list. Preprocessor lines are
    left out of the scan."""
    code = strip(text)
    code = re.sub(r"(?m)^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", lambda m: re.sub(r"[^\n]", " ", m.group(0)), code)
    lines_before = [0]
    for ch in code:
        lines_before.append(lines_before[-1] + (ch == "\n"))
    depth, start_of_decl, found = 0, 0, []
    i, n = 0, len(code)
    open_at = None
    while i < n:
        c = code[i]
        if c == "{":
            if depth == 0:
                head = code[start_of_decl:i]
                m = re.search(r"([A-Za-z_]\w*)\s*\(", head)
                if SIGNATURE_END.search(head.rstrip()) and m and "=" not in head.split("(")[0]:
                    # the function's name: the identifier before the outermost parameter list
                    names = re.findall(r"([A-Za-z_]\w*)\s*\(", head)
                    name = names[0] if names else "?"
                    if name in ("__attribute__",) and len(names) > 1:
                        name = names[1]
                    sig_line = lines_before[start_of_decl + len(head) - len(head.lstrip())] + 1
                    open_at = (name, sig_line, lines_before[i] + 1)
                else:
                    open_at = None
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                if open_at:
                    found.append((*open_at, lines_before[i] + 1))
                open_at = None
                start_of_decl = i + 1
        elif c == ";" and depth == 0:
            start_of_decl = i + 1
        i += 1
    return found


def marked(lines, sig_line):
    """Whether the line before the signature, or the comment block ending there, holds the marker."""
    k = sig_line - 2  # index of the line before the signature
    if k < 0:
        return False
    if MARKER.search(lines[k]):
        return True
    if not lines[k].rstrip().endswith("*/"):
        return False
    while k >= 0:
        if MARKER.search(lines[k]):
            return True
        if "/*" in lines[k]:
            return False
        k -= 1
    return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=Path(__file__).resolve().parents[1], type=Path)
    ap.add_argument("--limit", default=LIMIT, type=int)
    args = ap.parse_args()
    host = args.root / "host"
    if not host.is_dir():
        print(f"check_function_length: {host} is not a folder", file=sys.stderr)
        return 2
    bad, count = [], 0
    for path in sorted(host.rglob("*.c")):
        try:
            text = path.read_text(errors="replace")
        except OSError as e:
            print(f"check_function_length: {path}: {e}", file=sys.stderr)
            return 2
        lines = text.splitlines()
        for name, sig, first, last in functions(text):
            count += 1
            length = last - first + 1
            if length > args.limit and not marked(lines, sig):
                bad.append(f"{path.relative_to(args.root)}:{sig}: {name} is {length} lines "
                           f"(limit {args.limit}; split it, or say why above it with 'long-function: <reason>')")
    for b in bad:
        print(b, file=sys.stderr)
    if bad:
        return 1
    print(f"check_function_length: {count} functions in host/, none over {args.limit} lines unmarked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
