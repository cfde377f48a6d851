#!/usr/bin/env bash
# Stop 57's device call (carry .gpu-deps .deepgemm .gpu-state; .gpu-state from
# `scripts/device/kernel_ab_version.sh flushlean wip/topk-flush-lean codegen` and
# `scripts/device/prebuild_cli.sh flushlean`). On an H200: the owed decode side by side with
# DeepGEMM (scripts/device/decode_h200_call.sh). On any other card (kind nvidia-h200 may lend an
# H100): the A/B of docs/experiments/topk-flush-lean.patch against the tree with the prebuilt CLIs;
# then the tree is built (with the patch laid over it if it gains 1% or more), test_gpu.py's
# one-row and reference cases run (the strides of size-1 dimensions), and with the patch its top-k
# GPU tests (ctest -L gpu -R topk, test_gpu_topk.py). Everything comes back as $OUT/*.tgz and
# $OUT/call.txt. AB_ONLY=1: the A/B and tests on an H200 too (a second call on a warm machine).
set -u
if [ -z "${AB_ONLY:-}" ] && [[ $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) == *H200* ]]; then
  exec bash scripts/device/decode_h200_call.sh
fi
source scripts/device/call_prelude.sh
OUT=$out/ab ROUNDS=3 timeout -k 5 200 bash scripts/device/topk_prebuilt_ab.sh flushlean > "$out/ab_run.txt" 2>&1
stamp "A/B exit $?"
sed -n '/^|/p;/geometric mean/p' "$out/ab/summary.txt" | tee -a "$out/call.txt"
# The tests are what landing it needs: only when it gains 1% or more is the patch in the build.
geomean=$(sed -n 's/^flushlean: geometric mean over the tree \([0-9.]*\).*/\1/p' "$out/ab/summary.txt")
flushlean=0
awk -v g="${geomean:-9}" 'BEGIN { exit !(g < 0.99) }' && flushlean=1
stamp "flushlean geometric mean ${geomean:-none}: in the build $flushlean"
if [ $((${CALL_BUDGET:-560} - SECONDS + t0)) -lt 280 ]; then
  stamp "too little of CALL_BUDGET left for the build and tests"
  pack_out flushlean_ab
  exit 0
fi
source scripts/device/version_overlay.sh
[ $flushlean = 1 ] && version_overlay flushlean /tmp/saved-tree
OUT=/tmp/build-logs bash scripts/gpu_session.sh build > "$out/build_step.txt" 2>&1
stamp "build: $(tail -1 "$out/build_step.txt")"
export MQAJIT_SYSTEM_DB=$(find "$PWD/build" -name system_tuning.db | head -1)
# This stop's argument checks: one-row calls with the strides torch leaves free on size-1 dimensions.
(cd python/tests && PYTHONPATH=../../build/python timeout -k 10 120 python3 -m pytest -q test_gpu.py \
  -k "one_row or matches_the_torch" > "$out/py_gpu_strides.txt" 2>&1)
stamp "pytest test_gpu.py one_row/matches exit $?: $(tail -1 "$out/py_gpu_strides.txt")"
if [ $flushlean = 1 ]; then
  timeout -k 10 150 ctest --test-dir build -L gpu -R topk --output-on-failure > "$out/ctest_topk.txt" 2>&1
  stamp "ctest topk exit $?: $(grep -E 'tests passed|tests failed' "$out/ctest_topk.txt")"
  (cd python/tests && PYTHONPATH=../../build/python timeout -k 10 150 python3 -m pytest -q test_gpu_topk.py > "$out/py_topk.txt" 2>&1)
  stamp "pytest test_gpu_topk.py exit $?: $(tail -1 "$out/py_topk.txt")"
  version_restore /tmp/saved-tree
fi
pack_out flushlean_ab
stamp done
