#!/usr/bin/env bash
# Session 2026-12-07 (stop 50), lean call: only call 2's kernel_ab (prebuilt CLIs, nothing built).
set -u
for cli in .gpu-state/cli/*/mqajit.gz; do gunzip -f "$cli"; done
export AB_PREBUILT=1 AB_SHAPES=none AB_ROUNDS=${AB_ROUNDS:-2} AB_RUNS=${AB_RUNS:-30} AB_DEADLINE=${AB_DEADLINE:-150}
export AB_DECODE_SHAPES="128,1,32,131072,128,64,0 512,1,32,32768,128,64,0 2048,1,32,4096,128,64,0 512,1,64,32768,128,64,0 512,2,64,32768,128,64,0 32,1,32,32768,128,64,0 128,1,64,32768,128,64,0"
bash scripts/device/kernel_ab.sh plain allfirst noprefetch
