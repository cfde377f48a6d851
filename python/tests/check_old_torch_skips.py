"""Under an old torch (no float8_e4m3fn, as Debian 12's 1.13), the Python tests that need a newer
torch must report skipped, not fail: test_no_gpu.py passes with its torch test skipped (as a plain
script and, where pytest is importable, under pytest), and test_gpu.py exits 77, ctest's skip,
naming the reason. The old torch is the stand-in in old_torch/.

Run by ctest (python_old_torch_skips) with PYTHONPATH=<build>/python."""

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REASON = "torch 1.13.1 has no float8_e4m3fn"


def run(*arguments):
    path = os.pathsep.join(filter(None, [str(HERE / "old_torch"), os.environ.get("PYTHONPATH")]))
    result = subprocess.run([sys.executable, *arguments], capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": path})
    return result.returncode, result.stdout + result.stderr


def main():
    failures = []
    code, output = run(str(HERE / "test_no_gpu.py"))
    if code != 0 or f"SKIPPED test_tensors_must_be_torch_cuda_tensors: {REASON}" not in output:
        failures.append(f"test_no_gpu.py (script) exited {code} without reporting its torch test skipped:\n{output}")
    try:
        import pytest  # noqa: F401
    except ImportError:
        print("pytest is not importable: checked the plain-script run only")
    else:
        code, output = run("-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(HERE / "test_no_gpu.py"))
        if code != 0 or "1 skipped" not in output or REASON not in output:
            failures.append(f"test_no_gpu.py (pytest) exited {code} without one skip for {REASON!r}:\n{output}")
    code, output = run(str(HERE / "test_gpu.py"))
    if code != 77 or REASON not in output:
        failures.append(f"test_gpu.py exited {code}; it should exit 77 naming {REASON!r}:\n{output}")
    for failure in failures:
        print(failure)
    if not failures:
        print(f"under a stand-in old torch ({REASON}) the tests that need a newer torch report skipped")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
