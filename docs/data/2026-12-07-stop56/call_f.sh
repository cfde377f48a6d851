#!/usr/bin/env bash
# Stop 56's last device call, for what little device time was left (carry .gpu-deps .deepgemm): the
# owed decode side by side with DeepGEMM on an H200 alone, as CUDA graph replays with the baseline
# kernel beside the served one, counted by issue_bars.py. On any other card: the twgmma kernel's
# SM balance on main, the metrics the first call took of the claimed build (twgmma_ncu.sh); so too
# on an H200 with NCU_ONLY set (too little device time left for the decode run).
set -u
budget=${CALL_BUDGET:-240}
source scripts/device/call_prelude.sh
if [ -n "${NCU_ONLY:-}" ] || [[ $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) != *H200* ]]; then
  OUT=$out/ncu TWGMMA_NCU_SHAPES="32 1024 8192;32 2048 32768" \
    TWGMMA_NCU_METRICS=sm__cycles_active.min,sm__cycles_active.max,sm__cycles_active.avg,sm__cycles_elapsed.max,gpu__time_duration.sum \
    timeout 200 bash scripts/device/twgmma_ncu.sh > "$out/ncu_run.txt" 2>&1
  stamp "ncu exit $?"
  pack_out tree_ncu
  exit 0
fi
start_builds
wait_builds
scripts/device/with_deepgemm.sh timeout -k 5 $((budget - 30 - SECONDS + t0)) python3 python/benchmarks/side_by_side.py decode \
  --graphs --with-baseline --rounds 2 --json "$out/decode_graphs.json" > "$out/decode_graphs.txt" 2>&1
stamp "decode_graphs exit $?: $(tail -1 "$out/decode_graphs.txt")"
python3 python/benchmarks/issue_bars.py "$out/decode_graphs.json" 2>&1 | tee -a "$out/call.txt"
pack_out decode_h200
stamp done
