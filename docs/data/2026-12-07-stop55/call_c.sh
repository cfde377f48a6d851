#!/usr/bin/env bash
# Stop 55's device call (carry .gpu-deps .deepgemm .gpu-state). On an H200: the owed decode side by
# side + topk_time (decode_h200_call.sh, shortened), then the claimed-units A/B (prebuilt CLIs).
# On an H100: the claimed-units A/B, then the version laid over the tree, built, its topk GPU
# tests and topk_time.
set -u
n=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $n"
mkdir -p "$OUT"
LOGITS_SHAPES="1024,4096,32,128,0 2048,4096,32,128,0 1024,8192,32,128,0 4096,16384,32,128,0 2048,32768,32,128,0 1024,8192,64,128,0 2048,32768,64,128,0"
if [[ $n == *H200* ]]; then
  CALL_BUDGET=${CALL_BUDGET:-330} bash scripts/device/decode_h200_call.sh
  OUT=$OUT/ab ROUNDS=3 timeout 100 bash scripts/device/topk_prebuilt_ab.sh claimed claimed2 > "$OUT/ab_run.txt" 2>&1
  tail -30 "$OUT/ab/summary.txt"
  OUT=$OUT/ab/logits AB_PREBUILT=1 AB_ROUNDS=3 AB_DEADLINE=60 AB_SHAPES="$LOGITS_SHAPES" timeout 120 bash scripts/device/kernel_ab.sh claimed2 > "$OUT/ab/logits_run.txt" 2>&1
  tail -12 "$OUT/ab/logits/summary.txt"
  out=$OUT/claimed_h200; mkdir -p "$out"
  source scripts/device/version_overlay.sh
  version_overlay claimed /tmp/saved
  export LD_LIBRARY_PATH=/tmp/mqajit-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-} MQAJIT_CACHE_DIR=/tmp/cache-claimed
  cmake --build build --parallel 16 > "$out/rebuild.log" 2>&1; echo "[$SECONDS s] rebuild claimed exit $?" | tee -a "$out/steps.txt"
  export MQAJIT_SYSTEM_DB=$(find "$PWD/build" -name system_tuning.db | head -1)
  [ $SECONDS -lt 470 ] && timeout 80 ctest --test-dir build -R topk --output-on-failure --timeout 75 > "$out/ctest_topk_claimed.txt" 2>&1
  echo "[$SECONDS s] ctest topk claimed exit $?: $(grep -E 'tests passed|tests failed' "$out/ctest_topk_claimed.txt")" | tee -a "$out/steps.txt"
  [ $SECONDS -lt 520 ] && PYTHONPATH=build/python timeout -k 5 40 python3 -m pytest -q python/tests/test_gpu_topk.py > "$out/pytest_topk_claimed.txt" 2>&1
  echo "[$SECONDS s] pytest topk claimed exit $?: $(tail -1 "$out/pytest_topk_claimed.txt")" | tee -a "$out/steps.txt"
  if [ $SECONDS -lt 500 ]; then
    PYTHONPATH=build/python timeout -k 5 $((575 - SECONDS)) python3 python/benchmarks/topk_time.py --rounds 1 --json "$out/topk_time_claimed.json" > "$out/topk_time_claimed.txt" 2>&1
    echo "[$SECONDS s] topk_time claimed exit $?" | tee -a "$out/steps.txt"
  fi
  tar czf "$OUT/ab.tgz" -C "$OUT" ab ab_run.txt claimed_h200 && rm -rf "$OUT/ab" "$OUT/ab_run.txt" "$OUT/claimed_h200"
  exit 0
fi
OUT=$OUT/ab ROUNDS=3 timeout 150 bash scripts/device/topk_prebuilt_ab.sh claimed claimed2 > "$OUT/ab_run.txt" 2>&1
tail -30 "$OUT/ab/summary.txt"
OUT=$OUT/ab/logits AB_PREBUILT=1 AB_ROUNDS=3 AB_DEADLINE=100 AB_SHAPES="$LOGITS_SHAPES" timeout 150 bash scripts/device/kernel_ab.sh claimed2 > "$OUT/ab/logits_run.txt" 2>&1
tail -12 "$OUT/ab/logits/summary.txt"
source scripts/device/call_prelude.sh
source scripts/device/version_overlay.sh
version_overlay claimed /tmp/saved
OUT=/tmp/build-logs bash scripts/gpu_session.sh build > /tmp/build_step.txt 2>&1; stamp "build claimed: $(tail -1 /tmp/build_step.txt)"
export MQAJIT_SYSTEM_DB=$(find "$PWD/build" -name system_tuning.db | head -1)
ctest --test-dir build -R topk --output-on-failure --timeout 200 > "$out/ctest_topk_claimed.txt" 2>&1; stamp "ctest topk claimed exit $?: $(grep -E 'tests passed|tests failed' "$out/ctest_topk_claimed.txt")"
PYTHONPATH=build/python MQAJIT_CACHE_DIR=/tmp/cache-claimed timeout -k 5 150 python3 -m pytest -q python/tests/test_gpu_topk.py > "$out/pytest_topk_claimed.txt" 2>&1; stamp "pytest topk claimed exit $?: $(tail -1 "$out/pytest_topk_claimed.txt")"
PYTHONPATH=build/python MQAJIT_CACHE_DIR=/tmp/cache-claimed timeout -k 5 120 python3 python/benchmarks/topk_time.py --rounds 1 --json "$out/topk_time_claimed.json" > "$out/topk_time_claimed.txt" 2>&1
stamp "topk_time claimed exit $?"
tail -22 "$out/topk_time_claimed.txt"
OUT=$out/ncu TWGMMA_NCU_SHAPES="32 1024 8192;32 2048 32768" TWGMMA_NCU_METRICS=sm__cycles_active.min,sm__cycles_active.max,sm__cycles_active.avg,sm__cycles_elapsed.max,gpu__time_duration.sum \
  timeout 120 bash scripts/device/twgmma_ncu.sh > "$out/ncu_run.txt" 2>&1
stamp "ncu exit $?"
pack_out claimed
stamp done
