#!/usr/bin/env bash
# Stop 55's short device call (carry .gpu-deps .gpu-state): the claimed-units A/B on whatever card
# comes (fused path: claimed and claimed2 against main; mqa_logits: claimed2 against main), then,
# while DEADLINE (seconds) allows, claimed laid over the tree, built, and its top-k GPU tests.
set -u
deadline=${DEADLINE:-380}
n=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $n"
mkdir -p "$OUT/ab"
OUT=$OUT/ab ROUNDS=3 timeout 120 bash scripts/device/topk_prebuilt_ab.sh claimed claimed2 > "$OUT/ab/topk_run.txt" 2>&1
echo "[$SECONDS s] topk A/B exit $?"
tail -20 "$OUT/ab/summary.txt"
LOGITS_SHAPES="1024,4096,32,128,0 2048,4096,32,128,0 1024,8192,32,128,0 4096,16384,32,128,0 2048,32768,32,128,0 1024,8192,64,128,0 2048,32768,64,128,0"
OUT=$OUT/ab/logits AB_PREBUILT=1 AB_ROUNDS=3 AB_DEADLINE=$((deadline / 3)) AB_SHAPES="$LOGITS_SHAPES" timeout $((deadline / 3 + 60)) \
  bash scripts/device/kernel_ab.sh claimed2 > "$OUT/ab/logits_run.txt" 2>&1
echo "[$SECONDS s] logits A/B exit $?"
tail -12 "$OUT/ab/logits/summary.txt"
if [ $SECONDS -lt $((deadline - 150)) ]; then
  out=$OUT/ab/claimed_tests; mkdir -p "$out"
  source scripts/device/unpack_gpu_deps.sh; unpack_gpu_deps /tmp/mqajit-deps
  export LD_LIBRARY_PATH=/tmp/mqajit-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-} MQAJIT_CACHE_DIR=/tmp/cache-claimed
  source scripts/device/version_overlay.sh
  version_overlay claimed /tmp/saved
  OUT=/tmp/build-logs timeout $((deadline - SECONDS - 60)) bash scripts/gpu_session.sh build > "$out/build_step.txt" 2>&1
  echo "[$SECONDS s] build claimed: $(tail -1 "$out/build_step.txt")"
  export MQAJIT_SYSTEM_DB=$(find "$PWD/build" -name system_tuning.db | head -1)
  [ $SECONDS -lt $((deadline - 30)) ] && timeout $((deadline - SECONDS)) ctest --test-dir build -R topk --output-on-failure \
    > "$out/ctest_topk_claimed.txt" 2>&1
  echo "[$SECONDS s] ctest topk claimed exit $?: $(grep -E 'tests passed|tests failed' "$out/ctest_topk_claimed.txt")"
  [ $SECONDS -lt $((deadline - 10)) ] && PYTHONPATH=build/python timeout $((deadline - SECONDS + 20)) python3 -m pytest -q \
    python/tests/test_gpu_topk.py > "$out/pytest_topk_claimed.txt" 2>&1
  echo "[$SECONDS s] pytest topk claimed exit $?: $(tail -1 "$out/pytest_topk_claimed.txt")"
fi
tar czf "$OUT/ab.tgz" -C "$OUT" ab && rm -rf "$OUT/ab"
