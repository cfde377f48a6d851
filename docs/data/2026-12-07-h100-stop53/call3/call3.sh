#!/usr/bin/env bash
# Session 2026-12-07 (stop 53), call 3: the filter warps (tree = wip/topk-filter-warps v2: 4 tile
# buffers, 512 stage entries a row) against main's topk family (topk-base), with 8 tile buffers
# (buf8) and with 8 buffers and 1024 entries (big): prebuilt CLIs only, nothing built here.
set -u
out=$OUT; t0=$SECONDS
stamp() { echo "[$((SECONDS - t0))s] $*" | tee -a "$out/call.txt"; }
source scripts/device/unpack_gpu_deps.sh; unpack_gpu_deps /tmp/mqajit-deps
mkdir -p "$out/topk_ab"
OUT=$out/topk_ab ROUNDS=${ROUNDS:-3} bash scripts/device/topk_prebuilt_ab.sh topk-base buf8 big > "$out/topk_ab/run.txt" 2>&1
stamp "topk prebuilt A/B exit $?"; cat "$out/topk_ab/summary.txt" >> "$out/call.txt"
(cd "$out" && tar czf /tmp/call3.tgz --exclude call.txt . && find . -mindepth 1 ! -name call.txt -delete && mv /tmp/call3.tgz .)
stamp done
