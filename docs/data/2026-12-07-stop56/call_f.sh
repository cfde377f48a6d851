#!/usr/bin/env bash
# Stop 56's last device call, for what little device time was left (carry .gpu-deps .deepgemm): the
# owed decode side by side with DeepGEMM on an H200 alone, as CUDA graph replays with the baseline
# kernel beside the served one, counted by issue_bars.py. Any other card: nothing runs.
set -u
budget=300
source scripts/device/call_prelude.sh
require_h200
start_builds
wait_builds
scripts/device/with_deepgemm.sh timeout -k 5 $((budget - 30 - SECONDS + t0)) python3 python/benchmarks/side_by_side.py decode \
  --graphs --with-baseline --rounds 2 --json "$out/decode_graphs.json" > "$out/decode_graphs.txt" 2>&1
stamp "decode_graphs exit $?: $(tail -1 "$out/decode_graphs.txt")"
python3 python/benchmarks/issue_bars.py "$out/decode_graphs.json" 2>&1 | tee -a "$out/call.txt"
pack_out decode_h200
stamp done
