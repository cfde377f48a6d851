#!/usr/bin/env bash
# Session 2026-12-07 (stop 51), call 3 (lean; an H200 only: call 1's H100 already measured the rest):
# main's decode kernel side by side with DeepGEMM 2.6.1 as CUDA graph replays, the baseline kernel
# beside the tuned one; then mqajit alone with clean_logits=1 as time allows.
set -u
out=$OUT; t0=$SECONDS
stamp() { echo "[$((SECONDS - t0))s] $*" | tee -a "$out/call.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader | tee -a "$out/call.txt"
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { stamp "not an H200: nothing run"; exit 0; }
source scripts/device/unpack_gpu_deps.sh; unpack_gpu_deps /tmp/mqajit-deps
mkdir -p /tmp/build-logs
( bash scripts/device/deepgemm_build.sh warm > /tmp/build-logs/deepgemm_build.log 2>&1; echo "exit $?" >> /tmp/build-logs/deepgemm_build.log ) &
OUT=/tmp/build-logs bash scripts/gpu_session.sh build > /tmp/build-logs/build_step.txt 2>&1
stamp "build exit $?"
wait; stamp "DeepGEMM $(tail -1 /tmp/build-logs/deepgemm_build.log)"
sbs() {  # folder, op, args, seconds
  mkdir -p "$out/$1"
  SIDE_BY_SIDE_OPS=$2 SIDE_BY_SIDE_ARGS=$3 OUT=$out/$1 timeout -k 5 $4 bash scripts/device/h200_session.sh side-by-side > "$out/$1/run.txt" 2>&1
  stamp "side by side $1 exit $?: $(tail -1 "$out/$1/summary.txt")"
}
sbs sbs_graphs decode "--graphs --with-baseline" 100
left=$((${CALL_BUDGET:-240} - SECONDS + t0))
[ $left -gt 25 ] && sbs sbs_clean1 decode_clean1 "--graphs --rounds 1 --batches 1 32 128 512" $((left - 8))
(cd "$out" && tar czf /tmp/call3.tgz --exclude call.txt . && find . -mindepth 1 ! -name call.txt -delete && mv /tmp/call3.tgz .)
stamp done
