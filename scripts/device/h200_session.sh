#!/usr/bin/env bash
# One device call of a GPU session, from the repo root on the device machine; each step fits one
# 10-minute call and the first rebuilds when the machine came up bare (DeepGEMM's extension is
# built beside it, in the background):
#   verify        AOT of every sm_90a variant, the GPU tests (C++ and Python), mqajit bench --check
#                 on the GLM-5 and DeepSeek-V3.2 prefill shapes
#   gpu-tests     the C++ GPU tests matching GPU_TESTS (a ctest regex, default all) and the Python ones
#   tune          the decode tuner (scripts/h200_decode.sh tune, TUNE_BUDGET_S) while DeepGEMM's JIT
#                 compiles its kernels once on the side
#   decode-bench  the tuned decode rows imported and re-checked, mqajit bench on the decode bar rows
#   side-by-side  mqajit and DeepGEMM in one process on the same inputs, for each op in
#                 SIDE_BY_SIDE_OPS (default "decode prefill"; prefill_clean1, decode_clean1: with clean_logits=1)
#   adopt         scripts/gpu_adopt_checks.sh (ADOPT_STEPS, default "install wheel tune")
#   logits-dtype  mqajit bench --variant all --check on a few prefill shapes (clean_logits=0), once with
#                 float32 and once with bfloat16 logits: whether bf16 changes the fastest variant
#   host          the Python host time per call (python/benchmarks/host_time.py, issue 12's bar)
#   prefill-ab    mqajit bench --variant all --check (clean_logits=0) on issue 12's S >= 1024 rows:
#                 every registered variant's time per shape, to compare kernel changes
#   ncu-stalls    ncu's per-instruction stall samples of the served N=256 prefill kernels (H=32 r8,
#                 H=64 r4) at 4096 x 16384, summarized by scripts/device/ncu_stalls.py
#   pdl-chain     python/benchmarks/pdl_chain.py: CUDA graphs of back-to-back calls with programmatic
#                 dependent launch off and on, mqajit and DeepGEMM
# REQUIRE_H200=1 stops the call at once (exit 3) on any other GPU.
# The device call returns at most 8 files, so at the end everything but summary.txt is packed into
# $OUT/session_<time>.tgz.
# Tuned CSVs come back under $OUT; put them in .gpu-state/ (ignored, carried) when a later call
# may start bare, and they are restored before tuning resumes.
#   scripts/device/h200_session.sh STEP...
set -uo pipefail
out=${OUT:-$PWD/gpu-out}; mkdir -p "$out"
t0=$SECONDS; stamp() { echo "[$((SECONDS - t0))s] $*" | tee -a "$out/summary.txt"; }
export MQAJIT_CACHE_DIR=/tmp/mqajit-cache
deps=/tmp/mqajit-deps
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
mqajit=build/tools/mqajit
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader \
  | tee -a "$out/summary.txt"
# REQUIRE_H200=1: steps whose numbers count only on an H200 stop here, before anything is built.
source scripts/device/require_h200.sh
[ "${REQUIRE_H200:-0}" = 1 ] && require_h200 3

ensure_built() {
  [ -x "$mqajit" ] && return 0
  bash scripts/gpu_session.sh build > "$out/build_step.txt" 2>&1 || { cat "$out/build_step.txt"; exit 1; }
  stamp "built"
  mkdir -p build/decode-tune
  cp -n .gpu-state/*.csv build/decode-tune/ 2>/dev/null
  (bash scripts/device/deepgemm_build.sh warm > "$out/deepgemm_build.log" 2>&1; echo "exit $?" >> "$out/deepgemm_build.log") &
  true
}

gpu_tests() {
  timeout -k 10 300 ctest --test-dir build --output-on-failure -L gpu -E python_gpu ${GPU_TESTS:+-R "$GPU_TESTS"} \
    --timeout 240 > "$out/gpu_tests.log" 2>&1
  stamp "C++ GPU tests exit $?: $(grep -E 'tests passed|tests failed' "$out/gpu_tests.log")"
  grep -E "\*\*\*Failed|Timeout|\(Failed\)|Skipped" "$out/gpu_tests.log" | head -20 | tee -a "$out/summary.txt"
  timeout -k 10 240 ctest --test-dir build -V -R python_gpu --timeout 230 > "$out/python_gpu.log" 2>&1
  stamp "python GPU tests exit $?: $(grep -E '[0-9]+ (passed|failed|skipped)' "$out/python_gpu.log" | tail -1)"
}

for step in "$@"; do
  case $step in
    verify)
      ensure_built
      "$mqajit" aot --arch sm_90a --variants all -j 16 > "$out/aot.txt" 2>&1; stamp "prefill aot exit $?: $(tail -1 "$out/aot.txt")"
      bash scripts/h200_decode.sh aot | tee -a "$out/summary.txt"; stamp "decode aot"
      gpu_tests
      for shapes in glm5 deepseek; do
        timeout -k 10 120 "$mqajit" bench --shapes "$shapes" --check --runs 30 --json-file "$out/bench_$shapes.json" \
          > "$out/bench_$shapes.txt" 2>&1
        stamp "prefill bench $shapes exit $? ($(grep -c -i 'fail' "$out/bench_$shapes.txt") lines with 'fail')"
      done ;;
    gpu-tests)
      ensure_built
      gpu_tests ;;
    tune)
      ensure_built
      bash scripts/h200_decode.sh tune 2>&1 | tee -a "$out/summary.txt"; stamp "tune" ;;
    decode-bench)
      ensure_built
      bash scripts/h200_decode.sh bench recheck 2>&1 | tee -a "$out/summary.txt"; stamp "decode bench + recheck" ;;
    side-by-side)
      ensure_built
      wait  # DeepGEMM's build and JIT warm-up, if this call started them
      stamp "DeepGEMM: $(tail -2 "$out/deepgemm_build.log" 2>/dev/null | tr '\n' ' ')"
      bash scripts/device/deepgemm_build.sh > /dev/null 2>&1
      for op in ${SIDE_BY_SIDE_OPS:-decode prefill}; do
        mode=(); case $op in *_clean1) mode=(--clean-logits 1) ;; esac
        scripts/device/with_deepgemm.sh timeout -k 10 280 python3 python/benchmarks/side_by_side.py "${op%_clean1}" "${mode[@]}" ${SIDE_BY_SIDE_ARGS:-} \
          --json "$out/side_by_side_$op.json" > "$out/side_by_side_$op.txt" 2>&1
        stamp "side by side $op exit $?: $(tail -1 "$out/side_by_side_$op.txt")"
      done ;;
    adopt)
      ensure_built
      bash scripts/gpu_adopt_checks.sh ${ADOPT_STEPS:-install wheel tune} 2>&1 | tee -a "$out/summary.txt"; stamp "adopt" ;;
    logits-dtype)
      ensure_built
      printf 'seq_len,seq_len_kv,heads,head_dim,clean_logits\n1024,16384,32,128,0\n4096,16384,32,128,0\n256,32768,32,128,0\n2048,32768,64,128,0\n4096,8192,64,128,0\n' \
        > "$out/logits_dtype_shapes.csv"
      for dtype in float32 bfloat16; do
        timeout -k 10 150 "$mqajit" bench --shapes "$out/logits_dtype_shapes.csv" --variant all --check --runs 20 \
          --logits-dtype "$dtype" --json-file "$out/bench_logits_$dtype.json" > "$out/bench_logits_$dtype.txt" 2>&1
        stamp "bench --logits-dtype $dtype exit $?"
      done ;;
    prefill-ab)
      ensure_built
      { echo seq_len,seq_len_kv,heads,head_dim,clean_logits
        printf '%s\n' 1024,4096,32,128,0 2048,8192,32,128,0 4096,16384,32,128,0 8192,8192,32,128,0 \
          2048,32768,32,128,0 1024,60000,32,128,0 1024,8192,64,128,0 4096,16384,64,128,0 2048,32768,64,128,0
      } > "$out/prefill_ab_shapes.csv"
      timeout -k 10 240 "$mqajit" bench --shapes "$out/prefill_ab_shapes.csv" --variant all --check --runs 30 \
        --json-file "$out/prefill_ab.json" > "$out/prefill_ab.txt" 2>&1
      stamp "prefill A/B exit $? ($(grep -c -i 'fail' "$out/prefill_ab.txt") lines with 'fail')" ;;
    ncu-stalls)
      ensure_built
      # Where the served N=256 prefill kernels' warps wait, per instruction (ncu's source page).
      export MQAJIT_SYSTEM_DB=$(find "$PWD/build" -name system_tuning.db | head -1)
      for heads_rows in "32 r8" "64 r4"; do
        set -- $heads_rows
        printf 'seq_len,seq_len_kv,heads,head_dim,clean_logits\n4096,16384,%s,128,0\n' "$1" > "$out/ncu_shape_h$1.csv"
        timeout -k 10 150 ncu --clock-control none --section SourceCounters --section WarpStateStats --section SchedulerStats \
          -k "regex:wgmma64x256x32_bkv64_$2_w2" -c 1 -f -o "/tmp/ncu_h$1" "$mqajit" bench --shapes "$out/ncu_shape_h$1.csv" \
          --runs 3 --warmup 0 > "$out/ncu_h$1.txt" 2>&1
        ncu -i "/tmp/ncu_h$1.ncu-rep" --page source --csv --print-source sass > "$out/ncu_source_h$1.csv" 2>&1
        python3 scripts/device/ncu_stalls.py "$out/ncu_source_h$1.csv" 40 > "$out/ncu_stalls_h$1.txt" 2>&1
        stamp "ncu stalls H=$1: $(head -2 "$out/ncu_stalls_h$1.txt" | tr '\n' ' ')"
      done ;;
    pdl-chain)
      ensure_built
      wait  # DeepGEMM's build and JIT warm-up, if this call started them
      PYTHONPATH=python/benchmarks scripts/device/with_deepgemm.sh timeout -k 10 280 python3 python/benchmarks/pdl_chain.py \
        --json "$out/pdl_chain.json" > "$out/pdl_chain.txt" 2>&1
      stamp "pdl chain exit $?"; cat "$out/pdl_chain.txt" >> "$out/summary.txt" ;;
    host)
      ensure_built
      bash scripts/gpu_session.sh host > /dev/null 2>&1; stamp "host time: $(tail -1 "$out/host_time.txt" 2>/dev/null)" ;;
    *) echo "unknown step $step (verify gpu-tests tune decode-bench side-by-side adopt logits-dtype host prefill-ab ncu-stalls pdl-chain)"; exit 2 ;;
  esac
done
stamp done
if [ -n "${OUT:-}" ]; then  # one archive per run of this script (a call may run it more than once)
  archive=session_$(date +%s).tgz
  (cd "$out" && find . -type f ! -name summary.txt ! -name 'session_*.tgz' | tar -czf "/tmp/$archive" -T - &&
     find . -type f ! -name summary.txt ! -name 'session_*.tgz' -delete && mv "/tmp/$archive" .)
fi
