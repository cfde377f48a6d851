#!/usr/bin/env bash
# Session 2026-12-07 (stop 51), call 2: call 1 ran on an H100. Main's decode kernel side by side with
# DeepGEMM (as CUDA graph replays with the baseline kernel beside the tuned one, then eagerly as stop
# 50 timed it, on an H100 only: on an H200 the decode re-tune of the bar batches instead) and mqajit
# alone with clean_logits=1 (DeepGEMM 2.6.1 cannot run it); the prebuilt A/B of the weights loaded
# with Q first, overlapping the tree's and DeepGEMM's builds.
set -u
out=$OUT; t0=$SECONDS
stamp() { echo "[$((SECONDS - t0))s] $*" | tee -a "$out/call.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader | tee -a "$out/call.txt"
source scripts/device/unpack_gpu_deps.sh; unpack_gpu_deps /tmp/mqajit-deps
mkdir -p /tmp/build-logs
( bash scripts/device/deepgemm_build.sh warm > /tmp/build-logs/deepgemm_build.log 2>&1; echo "exit $?" >> /tmp/build-logs/deepgemm_build.log ) &
( OUT=/tmp/build-logs bash scripts/gpu_session.sh build > /tmp/build-logs/build_step.txt 2>&1; echo "exit $?" >> /tmp/build-logs/build_step.txt ) &
build_pid=$!
mkdir -p "$out/ab"
export AB_PREBUILT=1 AB_SHAPES=none AB_ROUNDS=${AB_ROUNDS:-2} AB_RUNS=${AB_RUNS:-30} AB_DEADLINE=${AB_DEADLINE:-100}
export AB_DECODE_SHAPES="2048,1,64,4096,128,64,0 2048,2,64,4096,128,64,0 512,2,64,4096,128,64,0 128,2,64,32768,128,64,0 512,1,32,32768,128,64,0 32,1,64,32768,128,64,0 1,1,64,32768,128,64,0"
OUT=$out/ab bash scripts/device/kernel_ab.sh weights > "$out/ab/run.txt" 2>&1
stamp "kernel_ab exit $?"; tail -10 "$out/ab/summary.txt" >> "$out/call.txt"
unset AB_PREBUILT MQAJIT_SYSTEM_DB
wait $build_pid; stamp "build $(tail -1 /tmp/build-logs/build_step.txt)"
wait; stamp "DeepGEMM $(tail -1 /tmp/build-logs/deepgemm_build.log)"
cp /tmp/build-logs/*.txt /tmp/build-logs/*.log "$out/" 2>/dev/null
sbs() {  # folder, op, args, seconds
  mkdir -p "$out/$1"
  SIDE_BY_SIDE_OPS=$2 SIDE_BY_SIDE_ARGS=$3 OUT=$out/$1 timeout -k 5 $4 bash scripts/device/h200_session.sh side-by-side > "$out/$1/run.txt" 2>&1
  stamp "side by side $1 exit $?: $(tail -1 "$out/$1/summary.txt")"
}
sbs sbs_graphs decode "--graphs --with-baseline" 110
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  # The H200 re-tune over distinct blocks of the table's bar batches (stop 51's H100 one is no H200 answer).
  left=$((${CALL_BUDGET:-330} - 20 - SECONDS + t0))
  if [ $left -gt 90 ]; then
    mkdir -p "$out/tune" /tmp/bar-configs
    for f in tuning_db/configs/model_configs/paged_mqa_logits_untuned_*.csv; do
      awk -F, 'NR == 1 || $8 == 1 || $8 == 32 || $8 == 128 || $8 == 512 || $8 == 2048' "$f" > /tmp/bar-configs/$(basename "$f")
    done
    DECODE_CONFIGS=/tmp/bar-configs TUNE_BUDGET_S=$((left - 25)) OUT=$out/tune timeout -k 5 $left \
      bash scripts/h200_decode.sh aot tune > "$out/tune/run.txt" 2>&1
    stamp "aot + tune exit $?: $(grep -E '^tune' "$out/tune/run.txt" | tr '\n' ' ')"
  fi
else
  left=$((${CALL_BUDGET:-330} - SECONDS + t0))
  [ $left -gt 60 ] && sbs sbs decode "" $((left - 45 < 80 ? left - 45 : 80))
fi
left=$((${CALL_BUDGET:-330} + 15 - SECONDS + t0))
[ $left -gt 30 ] && sbs sbs_clean1 decode_clean1 "--graphs --rounds 1 --batches 1 32 128 512" $((left - 10))
(cd "$out" && tar czf /tmp/call2.tgz --exclude call.txt . && find . -mindepth 1 ! -name call.txt -delete && mv /tmp/call2.tgz .)
stamp done
