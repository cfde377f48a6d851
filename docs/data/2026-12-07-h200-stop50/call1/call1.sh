#!/usr/bin/env bash
# Session 2026-12-07 (stop 50), call 1: the tree (wip/topk-lane-columns) is built in the background
# with DeepGEMM beside it while the prebuilt CLIs (tree, topk-base = main's topk family) are checked
# and timed on mqa_topk; then the side by side of prefill and decode (main's kernels: the branch
# changes only the topk family), then the topk GPU tests of the tree.
set -u
out=$OUT; t0=$SECONDS
stamp() { echo "[$((SECONDS - t0))s] $*" | tee -a "$out/call.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader | tee -a "$out/call.txt"
source scripts/device/unpack_gpu_deps.sh; unpack_gpu_deps /tmp/mqajit-deps
mkdir -p /tmp/build-logs
( OUT=/tmp/build-logs bash scripts/gpu_session.sh build > /tmp/build-logs/build_step.txt 2>&1; echo "exit $?" >> /tmp/build-logs/build_step.txt ) &
build_pid=$!
( bash scripts/device/deepgemm_build.sh > /tmp/build-logs/deepgemm_build.log 2>&1; echo "exit $?" >> /tmp/build-logs/deepgemm_build.log ) &
mkdir -p "$out/topk_ab"
OUT=$out/topk_ab ROUNDS=${ROUNDS:-3} bash scripts/device/topk_prebuilt_ab.sh topk-base > "$out/topk_ab/run.txt" 2>&1
stamp "topk prebuilt A/B exit $?"; cat "$out/topk_ab/summary.txt" >> "$out/call.txt"
wait; stamp "builds: $(tail -1 /tmp/build-logs/build_step.txt) / DeepGEMM $(tail -1 /tmp/build-logs/deepgemm_build.log)"
cp /tmp/build-logs/*.txt /tmp/build-logs/*.log "$out/" 2>/dev/null
mkdir -p "$out/sbs"
SIDE_BY_SIDE_OPS="${SBS_OPS:-decode prefill}" OUT=$out/sbs bash scripts/device/h200_session.sh side-by-side > "$out/sbs/run.txt" 2>&1
stamp "side by side exit $?"; cat "$out/sbs/summary.txt" >> "$out/call.txt"
export LD_LIBRARY_PATH=/tmp/mqajit-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-} MQAJIT_CACHE_DIR=/tmp/mqajit-cache
left=$((570 - SECONDS + t0))
[ $left -gt 30 ] && { timeout -k 5 $((left < 150 ? left : 150)) ctest --test-dir build -L gpu -R topk --output-on-failure > "$out/ctest_topk.txt" 2>&1
  stamp "ctest topk exit $?: $(grep -E 'tests passed|tests failed' "$out/ctest_topk.txt")"; }
left=$((560 - SECONDS + t0))
[ $left -gt 90 ] && { (cd python/tests && PYTHONPATH=../../build/python timeout -k 5 90 python3 -m pytest -q test_gpu_topk.py > "$out/py_topk.txt" 2>&1)
  stamp "pytest topk exit $?: $(tail -1 "$out/py_topk.txt")"; }
left=$((560 - SECONDS + t0))
[ $left -gt 60 ] && { PYTHONPATH=build/python timeout -k 5 $left python3 python/benchmarks/topk_time.py --rounds 1 \
    --json "$out/topk_time_tree.json" > "$out/topk_time_tree.txt" 2>&1; stamp "topk_time tree exit $?"; }
(cd "$out" && tar czf /tmp/call1.tgz --exclude call.txt . && find . -mindepth 1 ! -name call.txt -delete && mv /tmp/call1.tgz .)
stamp done
