"""`mieb-eval` (the console script) and `python -m mieb_eval`: the C program itself."""
import os
import sys

from ._lib import program_path


def main() -> None:
    prog = str(program_path())
    os.execv(prog, [prog, *sys.argv[1:]])


if __name__ == "__main__":
    main()
