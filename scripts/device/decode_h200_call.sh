#!/usr/bin/env bash
# One device call for issue 13's H200 standing, run from the repo root on the device machine (carry
# .gpu-deps and .deepgemm): on any other GPU it stops at once. The tree and DeepGEMM 2.6.1 build;
# then the decode side by side as CUDA graph replays with the baseline kernel timed beside the served
# one (side_by_side.py, counted by issue_bars.py), mqajit alone with clean_logits=1, issue 16's bar
# (topk_time.py, one round), and the re-tune of the decode table's bar batches (1, 32, 128, 512,
# 2048) over distinct blocks with what is left of CALL_BUDGET seconds (default 560). Everything
# comes back as $OUT/decode_h200.tgz and $OUT/call.txt.
#   scripts/device/decode_h200_call.sh
set -u
budget=${CALL_BUDGET:-560}
source scripts/device/call_prelude.sh
require_h200
start_builds
wait_builds

side_by_side() {  # name, seconds, side_by_side.py arguments...
  local name=$1 seconds=$2
  shift 2
  scripts/device/with_deepgemm.sh timeout -k 5 "$seconds" python3 python/benchmarks/side_by_side.py decode "$@" --json "$out/$name.json" \
    > "$out/$name.txt" 2>&1
  stamp "$name exit $?: $(tail -1 "$out/$name.txt")"
}
side_by_side decode_graphs 120 --graphs --with-baseline
python3 python/benchmarks/issue_bars.py "$out/decode_graphs.json" 2>&1 | tee -a "$out/call.txt"
side_by_side decode_clean1_graphs 60 --graphs --clean-logits 1 --max-next-n 2 --rounds 1 --batches 1 32 128 512
# Issue 16's bar on the H200 (its standing row was an H100's): one round of topk_time.py, where
# the call has room for it.
if [ $((budget - SECONDS + t0)) -gt 150 ]; then
  PYTHONPATH=build/python timeout -k 5 120 python3 python/benchmarks/topk_time.py --rounds 1 --json "$out/topk_time.json" \
    > "$out/topk_time.txt" 2>&1
  stamp "topk_time exit $?"
else
  stamp "topk_time skipped: too little of CALL_BUDGET left"
fi

left=$((budget - 20 - SECONDS + t0))
if [ "$left" -gt 90 ]; then
  mkdir -p "$out/tune"
  TUNE_BAR_BATCHES=1 TUNE_BUDGET_S=$((left - 25)) OUT=$out/tune timeout -k 5 "$left" \
    bash scripts/h200_decode.sh aot tune > "$out/tune/run.txt" 2>&1
  stamp "aot + tune exit $?: $(grep -E '^tune' "$out/tune/run.txt" | tr '\n' ' ')"
fi
pack_out decode_h200
stamp done
