#!/usr/bin/env bash
# mqa_topk's select kernels, this tree against a base, in one device call: build, the topk GPU tests
# (C++ and Python), python/benchmarks/topk_time.py on this tree; then the base's files laid over
# the tree (the version .gpu-state/versions/topk-base: `scripts/device/kernel_ab_version.sh topk-base
# REF codegen runtime` makes it; carry .gpu-state with .gpu-deps), an incremental rebuild,
# topk_time.py again, and the tree's files put back. Each topk_time run times the bar
# (mqa_logits plus one read of its logits) beside the paths, so the two runs compare by their ratios
# to it as well as by time. Run as: bash scripts/device/topk_ab_session.sh | tee $OUT/session.txt;
# the logs and JSON come back as $OUT/topk_ab.tgz (a device call returns at most 8 files).
# First a smoke call of the fused path (scripts/device/topk_smoke.py) under a 2-minute limit: if it
# fails or hangs, the base's copies of the sm90 epilogue files come in before the tests.
# TOPK_ROUNDS (2): rounds of each topk_time run; TOPK_LONG=1: the tree's run adds --long;
# TOPK_PYTEST=0: no Python topk tests (a short call);
# TOPK_TIME_ARGS: more topk_time arguments for every run (e.g. --fused-variant 32=NAME);
# TOPK_BUDGET (570): seconds the script may take, for calls that run something before it.
# TOPK_VARIANT="NAME|FILE|FROM|TO": after the tree's run, FILE with its first FROM (a sed regex)
# replaced by TO is built and timed (one round, --profile) as NAME, then put back.
set -u
t0=$SECONDS
left() { echo $((${TOPK_BUDGET:-570} - SECONDS + t0)); }
final=$OUT
OUT=/tmp/topk-ab-logs
mkdir -p $OUT
stamp() {
  echo "[$((SECONDS - t0))s] $*"
  tar czf $final/topk_ab.tgz -C $OUT .
}
# NOTES: a warm machine's second call gets the tree copied with its own file times, older than the
# build there: without this, ninja rebuilds nothing and the old kernels run (2026-12-05).
[ -f build/build.ninja ] && find codegen runtime core include python tools -type f -exec touch {} +
OUT=$OUT bash scripts/gpu_session.sh build > $OUT/build_step.txt 2>&1; stamp "build exit $?"; tail -3 $OUT/build_step.txt
export LD_LIBRARY_PATH=/tmp/mqajit-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export MQAJIT_CACHE_DIR=/tmp/mqajit-cache MQAJIT_SYSTEM_DB=$(find "$PWD/build" -name system_tuning.db | head -1)
EPILOGUE_FILES="codegen/families/sm90_mqa_logits/sm90_consumer.cuh codegen/families/sm90_mqa_logits/sm90_epilogue.cuh codegen/families/sm90_mqa_topk/sm90_topk_epilogue.cuh"
PYTHONPATH=build/python timeout -k 5 120 python3 scripts/device/topk_smoke.py > $OUT/smoke.txt 2>&1
smoke=$?; stamp "smoke exit $smoke"; tail -2 $OUT/smoke.txt
base=.gpu-state/versions/topk-base
if [ $smoke != 0 ] && [ -d $base ]; then
  for file in $EPILOGUE_FILES; do cp "$base/$file" "$file"; done
  cmake --build build --parallel 16 > $OUT/build_fallback.txt 2>&1; stamp "the base's epilogue in, rebuild exit $?"
  PYTHONPATH=build/python timeout -k 5 120 python3 scripts/device/topk_smoke.py > $OUT/smoke_fallback.txt 2>&1
  stamp "smoke with the base's epilogue exit $?"; tail -1 $OUT/smoke_fallback.txt
fi
timeout -k 10 120 ctest --test-dir build -L gpu -R "topk" --output-on-failure > $OUT/ctest_topk.txt 2>&1
stamp "ctest topk exit $?"; grep -E "tests passed|FAILED|Failed" $OUT/ctest_topk.txt | head -20
if [ "${TOPK_PYTEST:-1}" = 1 ]; then
  (cd python/tests && PYTHONPATH=../../build/python timeout -k 10 120 python3 -m pytest -q test_gpu_topk.py > $OUT/py_topk.txt 2>&1)
  stamp "pytest exit $?"; tail -5 $OUT/py_topk.txt
fi
timing() {  # NAME [extra topk_time arguments]
  local name=$1; shift
  # shellcheck disable=SC2086 # TOPK_TIME_ARGS holds several arguments
  PYTHONPATH=build/python timeout -k 10 $(left) python3 python/benchmarks/topk_time.py --rounds ${TOPK_ROUNDS:-2} \
    --profile "$@" ${TOPK_TIME_ARGS:-} --json $OUT/topk_$name.json > $OUT/topk_time_$name.txt 2>&1
  stamp "topk_time $name exit $?"; grep -E "^ *(32|64) |geometric|fused with|per call" $OUT/topk_time_$name.txt
}
timing tree
if [ -n "${TOPK_VARIANT:-}" ]; then
  IFS='|' read -r vname vfile vfrom vto <<< "$TOPK_VARIANT"
  cp "$vfile" /tmp/topk-variant-saved && sed -i "0,/$vfrom/s//$vto/" "$vfile"
  cmake --build build --parallel 16 > $OUT/build_$vname.txt 2>&1; stamp "$vname rebuild exit $?"
  TOPK_ROUNDS=1 timing "$vname"
  cp /tmp/topk-variant-saved "$vfile"
fi
[ -d $base ] || { stamp "no $base: no base run"; exit 0; }
source scripts/device/version_overlay.sh
version_overlay topk-base /tmp/topk-tree-files
cmake --build build --parallel 16 > $OUT/build_base.txt 2>&1; stamp "base rebuild exit $?"; tail -2 $OUT/build_base.txt
timing base
version_restore /tmp/topk-tree-files && stamp "tree files restored"
if [ "${TOPK_LONG:-0}" = 1 ] && [ "$(left)" -gt 120 ]; then
  cmake --build build --parallel 16 > $OUT/build_tree_again.txt 2>&1; stamp "tree rebuild exit $?"
  TOPK_ROUNDS=1 timing tree_long --long
fi
