#!/usr/bin/env bash
# Configuration: the fuzz targets of fuzz/ (libFuzzer with ASan and UBSan, clang-22), built into
# BUILD_DIR (default build/configs/fuzz) from only the sources they exercise, then each run over its
# corpus for MQAJIT_FUZZ_SECONDS seconds (default 10: a regression run over the committed seeds
# and whatever a short search adds). A finding fails the run; its input is kept in
# BUILD_DIR/findings/. scripts/fuzz.sh runs the same targets longer by hand.
#   scripts/configs/fuzz.sh [BUILD_DIR]    (the `config_fuzz` ctest test runs it)
set -euo pipefail
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
build_dir=${1:-$source_dir/build/configs/fuzz}
seconds=${MQAJIT_FUZZ_SECONDS:-10}
jobs=${MQAJIT_CONFIG_JOBS:-2}
targets=(${MQAJIT_FUZZ_TARGETS:-})
compiler=${MQAJIT_FUZZ_CXX:-$(command -v clang++-22 || true)}
# NOTES: exit 77 is "skipped" for ctest (SKIP_RETURN_CODE): without the compiler or libFuzzer's
# runtime the targets cannot be built here, which is not a failure of the code under test.
if [ -z "$compiler" ]; then
  echo "fuzz: skipped: clang++-22 not found; scripts/setup.sh installs clang-22 and libclang-rt-22-dev" >&2
  exit 77
fi
if ! "$compiler" -print-file-name="libclang_rt.fuzzer-$(uname -m).a" | grep -q /; then
  echo "fuzz: skipped: $compiler has no libFuzzer runtime; install libclang-rt-22-dev (scripts/setup.sh does)" >&2
  exit 77
fi

start=$SECONDS
cmake -S "$source_dir/fuzz" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$compiler" >/dev/null
cmake --build "$build_dir" --parallel "$jobs"
echo "fuzz: built in $((SECONDS - start)) s"
((${#targets[@]})) || targets=($(cd "$source_dir/fuzz" && ls fuzz_*.cpp | sed 's/\.cpp$//'))

# Seeds beyond the committed corpora: the shipped files each reader takes.
extra_seeds() {
  case "$1" in
    fuzz_tuning_csv | fuzz_db_import) echo "$source_dir/tuning_db/configs" ;;
  esac
}

mkdir -p "$build_dir/findings"
status=0
for target in "${targets[@]}"; do
  work="$build_dir/corpus/$target"  # libFuzzer adds what it finds to the first folder: not the source tree
  mkdir -p "$work"
  # NOTES: ASan's own limit, not libFuzzer's RSS one, catches a reader that keeps allocating.
  if ! "$build_dir/$target" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -max_len=65536 \
       -print_final_stats=1 -artifact_prefix="$build_dir/findings/$target-" \
       "$work" "$source_dir/fuzz/corpus/$target" $(extra_seeds "$target") >"$build_dir/$target.log" 2>&1; then
    echo "fuzz: $target FOUND A PROBLEM; input in $build_dir/findings/, log $build_dir/$target.log" >&2
    tail -40 "$build_dir/$target.log" >&2
    status=1
  else
    echo "fuzz: $target ok: $(grep -o 'stat::number_of_executed_units: [0-9]*' "$build_dir/$target.log" | grep -o '[0-9]*$') runs in ${seconds} s"
  fi
done
exit $status
