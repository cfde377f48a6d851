"""The `mqajit` console script of the wheel: runs the CLI the wheel carries in mqajit/bin."""

import os
import sys
from pathlib import Path


def main():
    executable = Path(__file__).resolve().parent / "bin" / "mqajit"
    if not executable.is_file():
        sys.exit(f"mqajit: the CLI is not installed beside this package ({executable}); it ships in the wheel, "
                 "and a build tree has it in <build>/tools/mqajit")
    os.execv(executable, [str(executable), *sys.argv[1:]])
