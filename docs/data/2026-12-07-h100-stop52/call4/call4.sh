#!/usr/bin/env bash
# Session 2026-12-07 (stop 52), call 4 (what is left of the session's device time: about 420 s of
# work): on an H200, the owed H200 call without most of its re-tune (decode side by side,
# clean_logits=1, issue 16's bar); on any other GPU, main's C++ GPU test cases at this HEAD as a
# health check (the whole suite last ran on 2026-12-06).
set -u
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  CALL_BUDGET=${CALL_BUDGET:-420} exec bash scripts/device/decode_h200_call.sh
fi
source scripts/device/call_prelude.sh
OUT=/tmp/build-logs bash scripts/gpu_session.sh build > "$out/build_step.txt" 2>&1
stamp "build exit $?"
export MQAJIT_SYSTEM_DB=$(find "$PWD/build" -name system_tuning.db | head -1)
left=$((${CALL_BUDGET:-420} - SECONDS + t0))
timeout -k 5 "$left" ctest --test-dir build --output-on-failure -L gpu -E python_gpu --timeout 240 > "$out/gpu_tests.log" 2>&1
stamp "C++ GPU tests exit $?: $(grep -E 'tests passed|tests failed' "$out/gpu_tests.log")"
grep -E "\*\*\*Failed|Timeout|\(Failed\)|Skipped" "$out/gpu_tests.log" | head -20 >> "$out/call.txt"
pack_out call4
stamp done
