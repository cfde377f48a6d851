#!/usr/bin/env bash
# Session 2026-12-07 (stop 51), call 1: main (0767fdc's decode kernel, unhinted loads above 1 GiB)
# built with DeepGEMM beside it, while prebuilt CLIs time main against each request's weights loaded
# by TMA with its Q (kernel_ab, decode rows); the paged GPU tests and Python paged tests; the decode side by side
# as CUDA graph replays (as engines run decode; the baseline kernel timed beside the tuned one:
# where the shipped table, tuned over shared blocks, is wrong), eagerly (as stop 50 timed it), and
# with clean_logits=1 (next_n <= 2); then the decode re-tune over distinct blocks on the bar's
# batches with what is left of the call.
set -u
out=$OUT; t0=$SECONDS
stamp() { echo "[$((SECONDS - t0))s] $*" | tee -a "$out/call.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader | tee -a "$out/call.txt"
source scripts/device/unpack_gpu_deps.sh; unpack_gpu_deps /tmp/mqajit-deps
mkdir -p /tmp/build-logs
( bash scripts/device/deepgemm_build.sh warm > /tmp/build-logs/deepgemm_build.log 2>&1; echo "exit $?" >> /tmp/build-logs/deepgemm_build.log ) &
( OUT=/tmp/build-logs bash scripts/gpu_session.sh build > /tmp/build-logs/build_step.txt 2>&1; echo "exit $?" >> /tmp/build-logs/build_step.txt ) &
build_pid=$!
mkdir -p "$out/ab"  # prebuilt CLIs: main ("tree") against the request's weights loaded with Q ("weights")
export AB_PREBUILT=1 AB_SHAPES=none AB_ROUNDS=${AB_ROUNDS:-3} AB_RUNS=${AB_RUNS:-30} AB_DEADLINE=${AB_DEADLINE:-150}
export AB_DECODE_SHAPES="2048,1,64,4096,128,64,0 2048,2,64,4096,128,64,0 2048,1,32,4096,128,64,0 512,1,64,4096,128,64,0 512,2,64,4096,128,64,0 128,2,64,32768,128,64,0 512,2,64,32768,128,64,0 32,1,64,32768,128,64,0 32,2,64,4096,128,64,0 1,1,64,32768,128,64,0"
OUT=$out/ab bash scripts/device/kernel_ab.sh weights > "$out/ab/run.txt" 2>&1
stamp "kernel_ab exit $?"; tail -14 "$out/ab/summary.txt" >> "$out/call.txt"
unset AB_PREBUILT MQAJIT_SYSTEM_DB
wait $build_pid; stamp "build $(tail -1 /tmp/build-logs/build_step.txt)"
export LD_LIBRARY_PATH=/tmp/mqajit-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-} MQAJIT_CACHE_DIR=/tmp/mqajit-cache
timeout -k 5 120 ctest --test-dir build -L gpu -R paged --output-on-failure > "$out/ctest_paged.txt" 2>&1
stamp "ctest paged exit $?: $(grep -E 'tests passed|tests failed' "$out/ctest_paged.txt")"
(cd python/tests && PYTHONPATH=../../build/python timeout -k 5 120 python3 -m pytest -q -k paged > "$out/py_paged.txt" 2>&1)
stamp "pytest paged exit $?: $(tail -1 "$out/py_paged.txt")"
wait; stamp "DeepGEMM $(tail -1 /tmp/build-logs/deepgemm_build.log)"
cp /tmp/build-logs/*.txt /tmp/build-logs/*.log "$out/" 2>/dev/null
sbs() {  # folder, ops, args, seconds
  mkdir -p "$out/$1"
  SIDE_BY_SIDE_OPS=$2 SIDE_BY_SIDE_ARGS=$3 OUT=$out/$1 timeout -k 5 $4 bash scripts/device/h200_session.sh side-by-side > "$out/$1/run.txt" 2>&1
  stamp "side by side $1 exit $?: $(tail -1 "$out/$1/side_by_side_${2}.txt")"
}
sbs sbs_graphs decode "--graphs --with-baseline" 150
sbs sbs decode "" 120
sbs sbs_clean1 decode_clean1 "--graphs --max-next-n 2 --rounds 2" 100
python3 python/benchmarks/issue_bars.py "$out/sbs_graphs/side_by_side_decode.json" >> "$out/call.txt" 2>&1
python3 python/benchmarks/issue_bars.py "$out/sbs/side_by_side_decode.json" >> "$out/call.txt" 2>&1
left=$((${CALL_BUDGET:-570} - 25 - SECONDS + t0))
if [ $left -gt 90 ]; then  # the decode re-tune over distinct blocks, on the bar's batches only
  mkdir -p "$out/tune" /tmp/bar-configs
  for f in tuning_db/configs/model_configs/paged_mqa_logits_untuned_*.csv; do
    awk -F, 'NR == 1 || $8 == 1 || $8 == 32 || $8 == 128 || $8 == 512 || $8 == 2048' "$f" > /tmp/bar-configs/$(basename "$f")
  done
  DECODE_CONFIGS=/tmp/bar-configs TUNE_BUDGET_S=$((left - 30)) OUT=$out/tune timeout -k 5 $left \
    bash scripts/h200_decode.sh aot tune > "$out/tune/run.txt" 2>&1
  stamp "aot + tune exit $?: $(grep -E '^tune' "$out/tune/run.txt" | tr '\n' ' ')"
fi
(cd "$out" && tar czf /tmp/call1.tgz --exclude call.txt . && find . -mindepth 1 ! -name call.txt -delete && mv /tmp/call1.tgz .)
stamp done
