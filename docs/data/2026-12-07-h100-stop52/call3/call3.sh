#!/usr/bin/env bash
# Session 2026-12-07 (stop 52), call 3 (any GPU; on an H200 it runs call 2, the owed H200 call,
# instead). The decode scan's thread loading the run's first blocks (up to 8; branch
# wip/preload-run, version "preload") against main ("tree"): the branch's paged GPU test cases (the
# test binary built here), then kernel_ab (prebuilt CLIs, `bench --check`) over decode rows from
# batch 1 to 2048.
set -u
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then exec bash .gpu-state/call2.sh; fi
source scripts/device/call_prelude.sh
source scripts/device/prebuilt_cli.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
gunzip -c .gpu-state/tests/mqajit_tests.gz > /tmp/mqajit_tests && chmod +x /tmp/mqajit_tests
MQAJIT_CACHE_DIR=/tmp/tests-cache timeout -k 5 200 /tmp/mqajit_tests \
  -sf='*test_paged_mqa_logits_gpu.cpp,*test_cuda_pdl_gpu.cpp' > "$out/gpu_paged_tests.txt" 2>&1
stamp "branch's paged GPU test cases exit $?: $(grep -E 'test cases:|assertions:' "$out/gpu_paged_tests.txt" | tr -s ' ' | tr '\n' ' ')"
mkdir -p "$out/ab"
AB_PREBUILT=1 AB_SHAPES=none AB_ROUNDS=3 AB_RUNS=50 AB_DEADLINE=240 \
  AB_DECODE_SHAPES="1,1,64,4096,128,64,0 1,1,64,32768,128,64,0 1,2,64,32768,128,64,0 1,1,64,131072,128,64,0 1,1,32,32768,128,64,0 32,1,64,4096,128,64,0 32,1,64,32768,128,64,0 32,2,64,32768,128,64,0 32,1,32,32768,128,64,0 128,1,64,32768,128,64,0 512,2,64,32768,128,64,0 2048,1,64,4096,128,64,0" \
  OUT=$out/ab timeout -k 5 300 bash scripts/device/kernel_ab.sh preload > "$out/ab/run.txt" 2>&1
stamp "kernel_ab exit $?"
sed -n '/^H /,$p' "$out/ab/summary.txt" >> "$out/call.txt"
pack_out call3
stamp done
