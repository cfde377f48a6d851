#!/usr/bin/env bash
# Call 2, run as `bash .gpu-state/call_b.sh flushA` on call 1's warm machine (carry .gpu-deps, .gpu-state).
# Follow-up on the warm machine of call a (build/ is there, main's tree): issue 16's bar
# (topk_time.py, one round) for main and for VERSION laid over the tree, rebuilt.
set -u
version=${1:-flushB}
source scripts/device/call_prelude.sh
export MQAJIT_SYSTEM_DB=$(find "$PWD/build" -name system_tuning.db | head -1)
[ -f build/CMakeCache.txt ] || { OUT=/tmp/build-logs bash scripts/gpu_session.sh build > /tmp/build_step.txt 2>&1; stamp "build $(tail -1 /tmp/build_step.txt)"; }
PYTHONPATH=build/python timeout -k 5 150 python3 python/benchmarks/topk_time.py --rounds 1 --json "$out/topk_time_main.json" > "$out/topk_time_main.txt" 2>&1
stamp "topk_time main exit $?"
source scripts/device/version_overlay.sh
version_overlay "$version" /tmp/saved
cmake --build build --parallel 16 > "$out/rebuild.log" 2>&1; stamp "rebuild $version exit $?"
PYTHONPATH=build/python MQAJIT_CACHE_DIR=/tmp/cache-$version timeout -k 5 150 python3 python/benchmarks/topk_time.py --rounds 1 --json "$out/topk_time_$version.json" > "$out/topk_time_$version.txt" 2>&1
stamp "topk_time $version exit $?"
ctest --test-dir build -R topk --output-on-failure --timeout 300 > "$out/ctest_topk_$version.txt" 2>&1; stamp "ctest topk $version exit $?: $(grep -E 'tests passed|tests failed' "$out/ctest_topk_$version.txt")"
PYTHONPATH=build/python MQAJIT_CACHE_DIR=/tmp/cache-$version timeout -k 5 200 python3 -m pytest -q python/tests/test_gpu_topk.py > "$out/pytest_topk_$version.txt" 2>&1; stamp "pytest topk $version exit $?: $(tail -1 "$out/pytest_topk_$version.txt")"
version_restore /tmp/saved
tail -25 "$out/topk_time_main.txt" "$out/topk_time_$version.txt"
pack_out topk_time
stamp done
