#!/usr/bin/env bash
# Session 2026-12-07 (stop 52), call 2 (an H200 only): the owed H200 call (decode side by side,
# clean_logits=1, issue 16's bar, the bar batches' re-tune) in 480 s, then the head sum on the
# tensor cores for decode on the H200 (prebuilt CLIs "tree" and "hmma"; kernel_ab over the H=64
# next_n=2 rows, where the H200's decode kernel looked held back by more than its bytes).
set -u
CALL_BUDGET=480 bash scripts/device/decode_h200_call.sh
grep -q 'not an H200' "$OUT/call.txt" && exit 0
mkdir -p "$OUT/hmma_ab"
AB_PREBUILT=1 AB_SHAPES=none AB_ROUNDS=2 AB_RUNS=30 AB_DEADLINE=60 \
  AB_DECODE_SHAPES="512,2,64,32768,128,64,0 128,2,64,32768,128,64,0 32,2,64,32768,128,64,0 512,1,64,32768,128,64,0" \
  OUT=$OUT/hmma_ab timeout -k 5 90 bash scripts/device/kernel_ab.sh hmma > "$OUT/hmma_ab/run.txt" 2>&1
echo "hmma kernel_ab exit $?" >> "$OUT/call.txt"
sed -n '/^H /,$p' "$OUT/hmma_ab/summary.txt" >> "$OUT/call.txt"
(cd "$OUT" && tar czf /tmp/hmma_ab.tgz hmma_ab && rm -rf hmma_ab && mv /tmp/hmma_ab.tgz .)
