#!/usr/bin/env bash
# The H200 steps of issue 13's decode op (paged_mqa_logits), run on the device machine from the
# repo root. Steps (default: all, in this order; one device call holds 10 minutes, so give a few
# per call, e.g. `build aot test`, then `tune`, then `tune bench`):
#   build   scripts/gpu_session.sh build (cmake + ninja with the carried packages)
#   aot     every registered paged variant compiled into the kernel cache, 16 at a time (the
#           tuner and bench would otherwise compile them one by one; fails on a spill)
#   test    ctest -L gpu -R paged (the decode GPU tests), then the stand-alone paged harness
#   tune    mqajit tune --op paged_mqa_logits on the GLM-5 then the DeepSeek-V3.2 decode shapes
#           (with TUNE_BAR_BATCHES=1 only the bar's batches, those the bench step times),
#           for at most TUNE_BUDGET_S seconds (default 420); rows land in build/decode-tune/ as
#           they finish, so a later call's `tune` resumes where this one stopped
#   bench   mqajit bench --op paged_mqa_logits --check on the bar's batches (1, 32, 128, 512,
#           2048; every next_n) of both models, with the tuned rows imported (tuned vs baseline)
#   recheck mqajit tune --op paged_mqa_logits --run-config on the tuned CSVs
# Logs, the tuned CSVs and the JSON files are copied to $OUT (or ./gpu-out) at the end of every call.
#   scripts/h200_decode.sh [STEP...]
set -uo pipefail
out=${OUT:-$PWD/gpu-out}
mkdir -p "$out"
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(build aot test tune bench recheck)
export MQAJIT_CACHE_DIR=/tmp/mqajit-cache
# NOTES: the tuner's user database, kept with the tuned CSVs between calls on a warm machine.
state=$PWD/build/decode-tune
mkdir -p "$state"
export MQAJIT_TUNING_DB=$state/user_tuning.db
mqajit=build/tools/mqajit
configs=tuning_db/configs/model_configs
models=(${TUNE_MODELS:-glm5 deepseek_v32})  # TUNE_MODELS: another order or one of them

# The untuned rows of `model` at issue 13's bar batches (1, 32, 128, 512, 2048), as a CSV in $state.
bar_rows() {
  awk -F, 'NR == 1 || $8 == 1 || $8 == 32 || $8 == 128 || $8 == 512 || $8 == 2048' \
    "$configs/paged_mqa_logits_untuned_$1.csv" > "$state/bar_$1.csv"
  echo "$state/bar_$1.csv"
}

copy_results() {
  cp -f "$state"/*.csv "$state"/*.json "$out"/ 2>/dev/null
  true
}
trap copy_results EXIT

for step in "${steps[@]}"; do
  case $step in
    build)
      bash scripts/gpu_session.sh build || exit 1 ;;
    aot)
      names=$("$mqajit" variants --op paged_mqa_logits --arch sm_90a --json |
              python3 -c 'import json,sys; print(" ".join(v["variant"] for v in json.load(sys.stdin)))')
      "$mqajit" aot --arch sm_90a --variants $names --heads 32 64 -j 16 > "$out/decode_aot.log" 2>&1
      echo "aot exit $? ($(echo $names | wc -w) paged variants)"; tail -2 "$out/decode_aot.log" ;;
    test)
      ctest --test-dir build --output-on-failure -L gpu -R paged --timeout 600 > "$out/decode_gpu_tests.log" 2>&1
      echo "paged GPU tests exit $?"; grep -E "tests passed|tests failed|\*\*\*Failed|Skipped|Not Run" "$out/decode_gpu_tests.log" | head -20
      nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -Icodegen/templates -Icodegen/families/sm90_mqa_logits \
        -Icodegen/families/sm90_paged_mqa_logits scripts/device/paged_harness.cu -lcuda -o /tmp/paged_harness \
        > "$out/decode_harness.log" 2>&1 && /tmp/paged_harness >> "$out/decode_harness.log" 2>&1
      echo "paged harness exit $?"; tail -5 "$out/decode_harness.log" ;;
    tune)
      deadline=$((SECONDS + ${TUNE_BUDGET_S:-420}))
      for model in "${models[@]}"; do
        input=$configs/paged_mqa_logits_untuned_$model.csv
        [ "${TUNE_BAR_BATCHES:-0}" = 1 ] && input=$(bar_rows "$model")
        left=$((deadline - SECONDS))
        [ "$left" -gt 30 ] || { echo "tune $model: no time left this call; run the tune step again"; continue; }
        # NOTES: SIGINT stops the tuner between candidates with every finished row written (exit 130).
        timeout --signal=INT --kill-after=60 "$left" "$mqajit" tune --op paged_mqa_logits \
          -i "$input" -o "$state/paged_mqa_logits_tuned_$model.csv" \
          --json-file "$state/decode_tune_$model.json" >> "$out/decode_tune_$model.log" 2>&1
        code=$?
        echo "tune $model exit $code: $(($(wc -l < "$state/paged_mqa_logits_tuned_$model.csv" 2>/dev/null || echo 1) - 1))" \
             "of $(($(wc -l < "$input") - 1)) row(s) in build/decode-tune (130: stopped by the budget, resumes next call)"
        tail -2 "$out/decode_tune_$model.log"
      done ;;
    bench)
      for model in "${models[@]}"; do
        tuned=$state/paged_mqa_logits_tuned_$model.csv
        [ -f "$tuned" ] && "$mqajit" db import --op paged_mqa_logits "$tuned" > "$out/decode_import_$model.log" 2>&1
        bar=$(bar_rows "$model")
        "$mqajit" bench --op paged_mqa_logits --shapes "$bar" --check --json-file "$state/decode_bench_$model.json" \
          > "$out/decode_bench_$model.txt" 2>&1
        echo "bench $model exit $? ($(grep -c 'CHECK FAILED' "$out/decode_bench_$model.txt") failed check(s))"
      done ;;
    recheck)
      for model in "${models[@]}"; do
        tuned=$state/paged_mqa_logits_tuned_$model.csv
        [ -f "$tuned" ] || { echo "recheck $model: no tuned CSV yet"; continue; }
        "$mqajit" tune --op paged_mqa_logits --run-config "$tuned" > "$out/decode_recheck_$model.log" 2>&1
        echo "recheck $model exit $?: $(tail -1 "$out/decode_recheck_$model.log")"
      done ;;
    *)
      echo "unknown step $step (build aot test tune bench recheck)"; exit 2 ;;
  esac
done
