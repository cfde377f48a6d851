#!/usr/bin/env bash
# Stop 56's second device call (carry .gpu-deps .deepgemm .gpu-state): the claimed-units A/B that
# stop 56's first call lost (its pack_out failed on a nested call.txt), on whatever card comes: the
# fused path's A/B of claimed and claimed2 against the tree, mqa_logits' A/B of claimed2. On an H200
# the owed decode side by side comes first, shortened (decode_h200_call.sh, CALL_BUDGET=270), unless
# SKIP_DECODE is set (too little device time left for both).
set -u
n=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $n"
mkdir -p "$OUT"
if [[ $n == *H200* ]] && [ -z "${SKIP_DECODE:-}" ]; then
  mkdir -p "$OUT/decode"
  OUT=$OUT/decode CALL_BUDGET=270 bash scripts/device/decode_h200_call.sh > /tmp/decode_run.txt 2>&1
  cp /tmp/decode_run.txt "$OUT/decode/"
  tail -20 "$OUT/decode/call.txt"
fi
mkdir -p "$OUT/ab"
OUT=$OUT/ab ROUNDS=3 timeout 150 bash scripts/device/topk_prebuilt_ab.sh claimed claimed2 > "$OUT/ab/topk_run.txt" 2>&1
echo "[$SECONDS s] topk A/B exit $?"
tail -14 "$OUT/ab/summary.txt"
LOGITS_SHAPES="1024,4096,32,128,0 2048,4096,32,128,0 1024,8192,32,128,0 4096,16384,32,128,0 2048,32768,32,128,0 1024,8192,64,128,0 2048,32768,64,128,0"
left=$((570 - SECONDS))
if [ "$left" -gt 60 ]; then
  OUT=$OUT/ab/logits AB_PREBUILT=1 AB_ROUNDS=3 AB_DEADLINE=$((left - 40)) AB_SHAPES="$LOGITS_SHAPES" timeout "$left" \
    bash scripts/device/kernel_ab.sh claimed2 > "$OUT/ab/logits_run.txt" 2>&1
  echo "[$SECONDS s] logits A/B exit $?"
  tail -12 "$OUT/ab/logits/summary.txt"
fi
tar czf /tmp/ab.tgz -C "$OUT" ab && rm -rf "$OUT/ab" && mv /tmp/ab.tgz "$OUT/"
