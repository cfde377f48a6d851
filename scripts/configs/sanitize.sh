#!/usr/bin/env bash
# Configuration: the library, the CLI and the test suite built with AddressSanitizer and
# UndefinedBehaviorSanitizer (-DMQAJIT_SANITIZE=address,undefined) into BUILD_DIR (default
# build/configs/sanitize), without the Python binding and the benchmarks, then the suite run under
# them: any memory error, leak or undefined behaviour fails its test. The leaks of the vendor
# libraries are suppressed by tests/sanitizers/*.supp. Measured: 1,357 CPU-seconds to build and
# 180 to run the suite (about 13 minutes on two idle cores; docs/testing.md).
set -euo pipefail
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
build_dir=${1:-$source_dir/build/configs/sanitize}
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi

start=$SECONDS
cmake -S "$source_dir" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DMQAJIT_SANITIZE=address,undefined -DMQAJIT_BUILD_PYTHON=OFF -DMQAJIT_BUILD_BENCHMARKS=OFF \
      ${MQAJIT_CMAKE_ARGS:-} >/dev/null
cmake --build "$build_dir" --parallel "$(nproc)"
built=$SECONDS
echo "sanitize: built in $((built - start)) s"

suppressions=$source_dir/tests/sanitizers
# NOTES: abort_on_error makes a finding kill the process, so the test fails even where the
# program would have carried on; verify_asan_link_order=0 lets the tests start uninstrumented
# helpers (sh, timeout, setpriv) that then run instrumented children.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:verify_asan_link_order=0
export LSAN_OPTIONS=suppressions=$suppressions/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:suppressions=$suppressions/ubsan.supp
# The configurations themselves (label config) are not run again inside; nor the installed-package
# test, whose example program is built without the sanitizers.
status=0
ctest --test-dir "$build_dir" --output-on-failure -j"$(nproc)" -LE config -E '^installed_package' || status=$?
echo "sanitize: tests ran in $((SECONDS - built)) s (total $((SECONDS - start)) s)"
exit $status
