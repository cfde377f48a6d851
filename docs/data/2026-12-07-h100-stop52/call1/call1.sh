#!/usr/bin/env bash
# Session 2026-12-07 (stop 52), call 1 (any GPU; prebuilt CLIs, nothing built here): the head sum on
# the tensor cores (docs/experiments/hmma-head-sum.patch, version "hmma") against main ("tree").
# First every timed variant checked against the reference kernel with the hmma CLI, then kernel_ab:
# prefill per variant (H=32: the served r8 as control and the r4 variants; H=64: r4 and r2 variants)
# and the tuned decode kernels, interleaved over rounds, `bench --check`.
set -u
source scripts/device/call_prelude.sh
source scripts/device/prebuilt_cli.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
h32=wgmma64x256x32_bkv64_r8_w2_lds4,wgmma64x128x32_bkv128_r4_w2_lds6,wgmma64x128x32_bkv64_r4_w2_lds4,wgmma64x128x32_bkv64_r4_w4_lds4,wgmma64x128x32_bkv128_r4_w2_lds4
h64=wgmma64x256x32_bkv64_r4_w2_lds4,wgmma64x256x32_bkv64_r4_w1_lds4,wgmma64x128x32_bkv64_r2_w2_lds4,wgmma64x128x32_bkv64_r2_w4_lds4
mkdir -p "$out/check" /tmp/kernel-ab
for hv in "32 $h32" "64 $h64"; do
  set -- $hv
  printf 'seq_len,seq_len_kv,heads,head_dim,clean_logits\n1024,4096,%s,128,0\n777,3000,%s,128,1\n' "$1" "$1" > /tmp/check_h$1.csv
  for v in ${2//,/ }; do
    MQAJIT_CACHE_DIR=/tmp/kernel-ab/cache-hmma timeout -k 5 60 .gpu-state/cli/hmma/mqajit bench --shapes /tmp/check_h$1.csv \
      --variant "$v" --check --runs 3 > "$out/check/h$1_$v.txt" 2>&1
    stamp "check hmma H=$1 $v exit $? ($(grep -c -i fail "$out/check/h$1_$v.txt") lines with 'fail')"
  done
done
export AB_PREBUILT=1 AB_ROUNDS=2 AB_RUNS=30
mkdir -p "$out/ab32" "$out/ab64"
AB_SHAPES="1024,4096,32,128,0 2048,4096,32,128,0 1024,8192,32,128,0 4096,16384,32,128,0 2048,32768,32,128,0" \
  AB_VARIANTS=$h32 AB_DEADLINE=150 OUT=$out/ab32 bash scripts/device/kernel_ab.sh hmma > "$out/ab32/run.txt" 2>&1
stamp "kernel_ab H=32 exit $?"
AB_SHAPES="1024,8192,64,128,0 4096,16384,64,128,0 2048,32768,64,128,0 256,32768,64,128,0" AB_VARIANTS=$h64 \
  AB_DECODE_SHAPES="2048,1,64,4096,128,64,0 512,1,64,32768,128,64,0 512,2,64,32768,128,64,0 128,2,64,32768,128,64,0 32,2,64,32768,128,64,0 32,1,32,32768,128,64,0 128,4,64,32768,128,64,0 512,1,32,4096,128,64,0 1,1,64,32768,128,64,0" \
  AB_DEADLINE=220 OUT=$out/ab64 bash scripts/device/kernel_ab.sh hmma > "$out/ab64/run.txt" 2>&1
stamp "kernel_ab H=64 + decode exit $?"
for d in ab32 ab64; do sed -n '/^H /,$p' "$out/$d/summary.txt" >> "$out/call.txt"; done
pack_out call1
stamp done
