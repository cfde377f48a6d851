#!/usr/bin/env bash
# Session 2026-12-07 (stop 53), call 1: mqa_topk's candidate filter in the producer warpgroup's
# spare warps (branch wip/topk-filter-warps = the tree) against main's topk family (topk-base):
# prebuilt CLIs checked and timed in turn while the tree builds; then the tree's topk GPU tests
# (C++ and Python) and issue 16's bar (topk_time.py, one round) on the tree.
set -u
out=$OUT; t0=$SECONDS
stamp() { echo "[$((SECONDS - t0))s] $*" | tee -a "$out/call.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader | tee -a "$out/call.txt"
source scripts/device/unpack_gpu_deps.sh; unpack_gpu_deps /tmp/mqajit-deps
mkdir -p /tmp/build-logs
( OUT=/tmp/build-logs bash scripts/gpu_session.sh build > /tmp/build-logs/build_step.txt 2>&1; echo "exit $?" >> /tmp/build-logs/build_step.txt ) &
mkdir -p "$out/topk_ab"
OUT=$out/topk_ab ROUNDS=${ROUNDS:-2} bash scripts/device/topk_prebuilt_ab.sh topk-base filter8 > "$out/topk_ab/run.txt" 2>&1
stamp "topk prebuilt A/B exit $?"; cat "$out/topk_ab/summary.txt" >> "$out/call.txt"
wait; stamp "build: $(tail -1 /tmp/build-logs/build_step.txt)"
cp /tmp/build-logs/*.txt "$out/" 2>/dev/null
export LD_LIBRARY_PATH=/tmp/mqajit-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-} MQAJIT_CACHE_DIR=/tmp/mqajit-cache
left=$((560 - SECONDS + t0))
[ $left -gt 30 ] && { timeout -k 5 $((left < 150 ? left : 150)) ctest --test-dir build -L gpu -R topk --output-on-failure > "$out/ctest_topk.txt" 2>&1
  stamp "ctest topk exit $?: $(grep -E 'tests passed|tests failed' "$out/ctest_topk.txt")"; }
left=$((560 - SECONDS + t0))
[ $left -gt 60 ] && { (cd python/tests && PYTHONPATH=../../build/python timeout -k 5 $((left < 120 ? left : 120)) python3 -m pytest -q test_gpu_topk.py > "$out/py_topk.txt" 2>&1)
  stamp "pytest topk exit $?: $(tail -1 "$out/py_topk.txt")"; }
left=$((565 - SECONDS + t0))
[ $left -gt 60 ] && { PYTHONPATH=build/python timeout -k 5 $left python3 python/benchmarks/topk_time.py --rounds 1 \
    --json "$out/topk_time_tree.json" > "$out/topk_time_tree.txt" 2>&1; stamp "topk_time tree exit $?"; }
(cd "$out" && tar czf /tmp/call1.tgz --exclude call.txt . && find . -mindepth 1 ! -name call.txt -delete && mv /tmp/call1.tgz .)
stamp done
