#!/usr/bin/env bash
# A short device call for a top-k kernel change, without building on the device: the prebuilt CLIs
# of the tree and of each version (scripts/device/prebuild_cli.sh VERSION...; carry .gpu-deps and
# .gpu-state) run `bench --op mqa_topk` on a few S >= 1024 shapes, first all at once with --check
# (every path checked exactly; each build compiles its kernels into its own cache), then timed in
# turn, ROUNDS (3) rounds; topk_ab_summary.py then tabulates each build against the tree. Logs and
# JSON under $OUT.
#   scripts/device/topk_prebuilt_ab.sh VERSION...
set -u
out=${OUT:-$PWD/gpu-out}; mkdir -p "$out"
t0=$SECONDS; stamp() { echo "[$((SECONDS - t0))s] $*" | tee -a "$out/summary.txt"; }
source scripts/device/prebuilt_cli.sh || exit 1
builds=(tree "$@")
for b in "${builds[@]}"; do [ -x ".gpu-state/cli/$b/mqajit" ] || { echo "no .gpu-state/cli/$b/mqajit"; exit 2; }; done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader | tee -a "$out/summary.txt"
printf 'seq_len,seq_len_kv,heads,head_dim\n1024,8192,32,128\n2048,32768,32,128\n4096,16384,32,128\n2048,32768,64,128\n4096,32768,64,128\n' \
  > "$out/shapes.csv"
for b in "${builds[@]}"; do
  MQAJIT_CACHE_DIR=/tmp/cache-$b timeout -k 5 "${CHECK_S:-150}" ".gpu-state/cli/$b/mqajit" bench --op mqa_topk \
    --shapes "$out/shapes.csv" --runs 3 --warmup 0 --check > "$out/check_$b.txt" 2>&1 &
done
wait; stamp "checked"; grep -i -E "fail|error" "$out"/check_*.txt | head -10 | tee -a "$out/summary.txt"
for r in $(seq "${ROUNDS:-3}"); do
  for b in "${builds[@]}"; do
    MQAJIT_CACHE_DIR=/tmp/cache-$b timeout -k 5 "${ROUND_S:-60}" ".gpu-state/cli/$b/mqajit" bench --op mqa_topk \
      --shapes "$out/shapes.csv" --runs 20 --json-file "$out/bench_${b}_$r.json" > "$out/bench_${b}_$r.txt" 2>&1
    stamp "$b round $r exit $?"
  done
done
python3 scripts/device/topk_ab_summary.py "$out" 2>&1 | tee -a "$out/summary.txt"
