#!/usr/bin/env bash
# Prefill variants raced in one device call without building there: the CLI and the test binary
# come prebuilt from .gpu-state/cli/tree (scripts/device/prebuild_cli.sh, then
# `strip -o .gpu-state/cli/tree/mqajit_tests build/tests/mqajit_tests`; carry .gpu-deps and .gpu-state).
#   1. per heads, each variant checked on a small shape in both modes (60 s; one that fails or hangs
#      is left out), then `mqajit bench --variant A,B,... --check` on RACE_SHAPES_<H> (rows "S,N" timed in
#      clean_logits=0): every listed variant timed in turn with the others, run by run, L2 flushed,
#      median; the fastest checked against the reference kernel;
#   2. the GPU correctness cases of mqa_logits (every registered variant, both output kinds; or the
#      doctest -tc filter RACE_TESTS) until RACE_DEADLINE (seconds from the start, 540), or for
#      RACE_TESTS_S seconds (240) when a tune follows;
#   3. (RACE_TUNE_KEEP, below) a tune of both models' tables over a few variants, until the deadline.
# Environment: RACE_VARIANTS_32, RACE_VARIANTS_64 (comma-separated), RACE_SHAPES_32, RACE_SHAPES_64
# (space-separated "S,N"; empty: none), RACE_RUNS (50). Logs and JSON in $OUT.
set -u
t0=$SECONDS
out=${OUT:-$PWD/gpu-out}
mkdir -p "$out"
source scripts/device/prebuilt_cli.sh
export MQAJIT_CACHE_DIR=/tmp/mqajit-cache
cli=$prebuilt/mqajit
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader | tee "$out/gpu.txt"
for heads in 32 64; do
  variants_var=RACE_VARIANTS_$heads shapes_var=RACE_SHAPES_$heads
  [ -n "${!shapes_var:-}" ] && [ -n "${!variants_var:-}" ] || continue
  # A variant that fails its check or hangs on a small shape (both modes, 60 s) leaves the race.
  smoke=/tmp/race_smoke_$heads.csv raced=()
  printf "seq_len,seq_len_kv,heads,head_dim,clean_logits\n1021,4096,$heads,128,0\n1021,4096,$heads,128,1\n" > $smoke
  for variant in ${!variants_var//,/ }; do
    timeout -k 5 60 $cli bench --shapes $smoke --variant "$variant" --runs 3 --check > "$out/smoke_h${heads}_$variant.txt" 2>&1
    status=$?
    echo "[$((SECONDS - t0))s] smoke H=$heads $variant exit $status"
    if [ $status = 0 ]; then raced+=("$variant"); else tail -5 "$out/smoke_h${heads}_$variant.txt"; fi
  done
  [ ${#raced[@]} -gt 0 ] || continue
  shapes=/tmp/race_shapes_$heads.csv
  echo "seq_len,seq_len_kv,heads,head_dim,clean_logits" > $shapes
  for row in ${!shapes_var}; do echo "$row,$heads,128,0" >> $shapes; done
  timeout -k 5 $((${RACE_DEADLINE:-540} - SECONDS + t0)) $cli bench --shapes $shapes --variant "$(IFS=,; echo "${raced[*]}")" \
    --runs "${RACE_RUNS:-50}" --check --json-file "$out/race_h$heads.json" > "$out/race_h$heads.txt" 2>&1
  echo "[$((SECONDS - t0))s] race H=$heads exit $?"; tail -n +1 "$out/race_h$heads.txt" | grep -v "^\[" | tail -30
done
# NOTES: the tables key on (arch, SM count), which an H100 SXM shares with the H200: rows tuned on
# an H100 must not pass for the H200's, so other GPUs tune only with RACE_TUNE_ANY=1.
tuning=0
[ -n "${RACE_TUNE_KEEP:-}" ] && { grep -q H200 "$out/gpu.txt" || [ "${RACE_TUNE_ANY:-0}" = 1 ]; } && tuning=1
left=$((${RACE_DEADLINE:-540} - SECONDS + t0))
[ $tuning = 1 ] && [ $left -gt ${RACE_TESTS_S:-240} ] && left=${RACE_TESTS_S:-240}
if [ $left -gt 30 ]; then
  timeout -k 5 $left $prebuilt/mqajit_tests \
    -tc="${RACE_TESTS:-gpu: every registered variant*,gpu: clean_logits=false*,gpu: the baseline kernel*}" > "$out/gpu_tests.txt" 2>&1
  echo "[$((SECONDS - t0))s] GPU tests exit $?"; tail -4 "$out/gpu_tests.txt"
fi
# RACE_TUNE_KEEP (comma-separated): `mqajit tune --force` of both models' shapes in both modes over
# these variants and the baseline only (every other registered one --exclude'd).
if [ $tuning = 1 ]; then
  exclude=$(variants_except mqa_logits "$RACE_TUNE_KEEP")
  mkdir -p -m 700 /tmp/race-db
  for model in glm5 deepseek_v32; do
    left=$((${RACE_DEADLINE:-540} - SECONDS + t0)); [ $left -gt 30 ] || break
    MQAJIT_TUNING_DB=/tmp/race-db/user.db timeout -k 5 $left $cli tune --force --clean-logits 0,1 --exclude "$exclude" \
      -i tuning_db/configs/model_configs/${model}_untuned_mqa_logits.csv -o "$out/tune_$model.csv" \
      --json-file "$out/tune_$model.json" > "$out/tune_$model.log" 2>&1
    echo "[$((SECONDS - t0))s] tune $model exit $?"; grep -c "^shape" "$out/tune_$model.log"
  done
fi
