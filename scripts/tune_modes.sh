#!/usr/bin/env bash
# Tunes and ships both clean_logits modes of the sm_90a GLM-5 and DeepSeek-V3.2 tables (issue 12,
# point 1), on the device machine, after `scripts/gpu_session.sh build`. From the repo root:
#   scripts/tune_modes.sh [STEP...]
#   steps: before tune0 tune1 check after report (default: all of them in that order)
#   before  bench both modes with the tables as shipped (clean_logits=0 served by the mode-1 rows)
#   tune0   tune the clean_logits=0 rows (new keys: appended to the shipped CSVs)
#   tune1   retune the clean_logits=1 rows (--force: same compiler and driver, new kernels)
#   tunebf16  tune clean_logits=0 rows with bfloat16 logits (issue 17: the dtype changes the best variant)
#   check   --run-config every shipped row, both modes
#   after   rebuild the system database from the new CSVs, bench both modes again
#   report  the markdown tables per model and mode, from the tuner's JSON
# DEVICES (default: every GPU nvidia-smi lists) picks the GPUs; logs and JSON go to $OUT (or ./gpu-out).
set -uo pipefail
out=${OUT:-$PWD/gpu-out}
mkdir -p "$out"
devices=${DEVICES:-$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | paste -sd, -)}
devices=${devices:-0}
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(before tune0 tune1 check after report)
export MQAJIT_CACHE_DIR=${MQAJIT_CACHE_DIR:-/tmp/mqajit-cache}
mqajit=build/tools/mqajit
configs=tuning_db/configs/model_configs
models=(glm5 deepseek_v32)
bench_shapes() { [ "$1" = glm5 ] && echo glm5 || echo deepseek; }

for step in "${steps[@]}"; do
  case $step in
    before|after)
      if [ "$step" = after ]; then
        cmake --build build --target mqajit_system_db > "$out/system_db.log" 2>&1 || { tail -20 "$out/system_db.log"; exit 1; }
      fi
      for model in "${models[@]}"; do
        $mqajit bench --shapes "$(bench_shapes "$model")" --clean-logits 0,1 --json-file "$out/${model}_bench_$step.json" \
          2>&1 | tee "$out/${model}_bench_$step.txt"
      done ;;
    tune0|tune1)
      mode=${step#tune}
      force=(); [ "$mode" = 1 ] && force=(--force)
      for model in "${models[@]}"; do
        $mqajit tune -i "$configs/${model}_untuned_mqa_logits.csv" -o "$configs/${model}_tuned_mqa_logits.csv" \
          --clean-logits "$mode" "${force[@]}" --devices "$devices" --db "$out/tuning.db" \
          --json-file "$out/${model}_tune$mode.json" > "$out/${model}_tune$mode.log" 2>&1
        echo "$model clean_logits=$mode: tune exit $?"; tail -3 "$out/${model}_tune$mode.log"
      done ;;
    tunebf16)
      for model in "${models[@]}"; do
        $mqajit tune -i "$configs/${model}_untuned_mqa_logits.csv" -o "$configs/${model}_tuned_mqa_logits.csv" \
          --clean-logits 0 --logits-dtype bfloat16 --devices "$devices" --db "$out/tuning.db" \
          --json-file "$out/${model}_tune0_bf16.json" > "$out/${model}_tune0_bf16.log" 2>&1
        echo "$model clean_logits=0 bfloat16: tune exit $?"; tail -3 "$out/${model}_tune0_bf16.log"
      done ;;
    check)
      for model in "${models[@]}"; do
        $mqajit tune --run-config "$configs/${model}_tuned_mqa_logits.csv" > "$out/${model}_run_config.log" 2>&1
        echo "$model: --run-config exit $?"; tail -1 "$out/${model}_run_config.log"
      done ;;
    report)
      for model in "${models[@]}"; do
        for mode in 0 1; do
          [ -f "$out/${model}_tune$mode.json" ] || continue
          $mqajit report --tuned "$configs/${model}_tuned_mqa_logits.csv" --arch sm_90a --clean-logits "$mode" \
            --bench "$out/${model}_tune$mode.json" --markdown "$out/${model}_report_clean$mode.md"
        done
      done
      $mqajit report --tuned "$configs/glm5_tuned_mqa_logits.csv" --arch sm_90a --clean-logits 0 \
        -o "$out/tuning_report_sm90a_glm5_clean0.svg" ;;
  esac
done
