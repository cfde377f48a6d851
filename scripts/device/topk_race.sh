#!/usr/bin/env bash
# mqa_topk's twgmma variants raced in one device call without building there, with the prebuilt CLI
# of .gpu-state/cli/tree (scripts/device/prebuild_cli.sh; carry .gpu-deps and .gpu-state):
# `mqajit tune --op mqa_topk` over TOPK_SHAPES with every fused candidate but TOPK_KEEP excluded, so
# each kept one is checked exactly against a sort, then timed (median of 50, L2 flushed) beside the
# unfused path and the baseline. The per-candidate times are in $OUT/topk_race.txt and .json; the
# rows go to a throwaway table.
# Environment: TOPK_KEEP (comma-separated twgmma names), TOPK_SHAPES (space-separated "S,N,H";
# default four of GLM-5's and DeepSeek-V3.2's long rows), TOPK_S (seconds, 200).
set -u
source scripts/device/prebuilt_cli.sh
mkdir -p -m 700 /tmp/topk-race
export MQAJIT_CACHE_DIR=/tmp/mqajit-cache MQAJIT_TUNING_DB=/tmp/topk-race/user.db
cli=$prebuilt/mqajit
out=${OUT:-$PWD/gpu-out}
mkdir -p "$out"
[ -n "${TOPK_KEEP:-}" ] || { echo "TOPK_KEEP: the twgmma variants to race (comma-separated)"; exit 2; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
exclude=$(variants_except mqa_topk "$TOPK_KEEP")
shapes=/tmp/topk-race/shapes.csv
echo "seq_len,seq_len_kv,heads" > $shapes
for row in ${TOPK_SHAPES:-2048,32768,32 4096,32768,32 1024,60000,32 4096,32768,64}; do echo "$row" >> $shapes; done
timeout -k 5 "${TOPK_S:-200}" $cli tune --op mqa_topk -i $shapes -o "$out/topk_race.csv" --runs 50 --exclude "$exclude" \
  --json-file "$out/topk_race.json" > "$out/topk_race.txt" 2>&1
echo "tune exit $?"; grep -v "^  " "$out/topk_race.txt" | sed 's/ (ETA.*//' | tail -40
