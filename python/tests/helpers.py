"""What the no-GPU test files share: skips that pytest and the plain-script runner both report,
an expect_error() that checks messages, and the plain-script runner itself (for interpreters
without pytest)."""

import os
import sys

try:
    import pytest
except ImportError:
    pytest = None


class Skipped(Exception):
    pass


def skip(reason):
    # NOTES: pytest's skip only under pytest; run as a script, run_as_script() reports Skipped.
    if pytest is not None and "PYTEST_CURRENT_TEST" in os.environ:
        pytest.skip(reason)
    raise Skipped(reason)


def expect_error(error_type, call, *fragments):
    """Runs `call`, which must raise `error_type` whose message holds every fragment."""
    try:
        call()
    except error_type as error:
        message = str(error)
        for fragment in fragments:
            assert fragment in message, f"{fragment!r} not in the message {message!r}"
        return error
    raise AssertionError(f"no {error_type.__name__} was raised")


def message_of(call):
    """(type name, message, kind) of the exception `call` raises; fails when it raises none."""
    try:
        call()
    except Exception as error:  # the type is compared too
        return type(error).__name__, str(error), getattr(error, "kind", None)
    raise AssertionError("no error raised")


def run_as_script(test_globals):
    """Runs every test_* function of a module, reports each, and returns the exit status."""
    failures = 0
    for name, test in sorted(test_globals.items()):
        if not name.startswith("test_") or not callable(test):
            continue
        try:
            test()
            print(f"PASSED  {name}")
        except Skipped as reason:
            print(f"SKIPPED {name}: {reason}")
        except Exception as error:  # report every failure, then fail the run
            failures += 1
            print(f"FAILED  {name}: {type(error).__name__}: {error}")
    return 1 if failures else 0


def main(test_globals):
    sys.exit(run_as_script(test_globals))
