#!/usr/bin/env bash
# Where mqa_topk's twgmma kernel spends the time its wgmma twin does not (issue 16): builds the tree,
# then for each shape profiles (ncu --set full, one launch) the fused call's twgmma kernel and an
# mqa_logits call pinned to its twin, same inputs, and summarizes both (details, stall reasons,
# the instructions holding the most samples; scripts/device/ncu_stalls.py). Works on any sm_90 card.
# Run from the repo root on the device machine (carry .gpu-deps):
#   TWGMMA_NCU_SHAPES="32 2048 32768;64 4096 32768" scripts/device/twgmma_ncu.sh
# TWGMMA_NCU_METRICS="m1,m2,..." collects just those metrics (ncu's raw page) instead of the full
# set: e.g. sm__cycles_active.min,sm__cycles_active.max,sm__cycles_active.avg for how evenly the
# SMs are kept busy. Only the asked-for metrics' lines (and the grid and block sizes) reach
# call.txt: ncu's raw page also lists some 200 device attributes a launch.
# Everything comes back as $OUT/twgmma_ncu.tgz and $OUT/call.txt.
set -u
source scripts/device/call_prelude.sh
OUT=/tmp/build-logs bash scripts/gpu_session.sh build > /tmp/build_step.txt 2>&1
stamp "build: $(tail -1 /tmp/build_step.txt)"
export MQAJIT_SYSTEM_DB=$(find "$PWD/build" -name system_tuning.db | head -1)

cat > /tmp/twgmma_ncu_call.py <<'PY'
import sys
import torch
import mqajit

sys.path.insert(0, "python/benchmarks")
from topk_time import problem  # the causal problem issue 16's timings use

which, heads, rows, keys = sys.argv[1], *map(int, sys.argv[2:5])
torch.manual_seed(1)  # the same inputs in the twin's process and the fused call's
q, (kv, scales), w, starts, ends = problem(rows, keys, heads)
plan = mqajit.explain_topk(heads=heads, head_dim=128, seq_len=rows, seq_len_kv=keys, path="fused")
print(f"fused kernel {plan.kernel}, twin {plan.logits_kernel}", flush=True)
for _ in range(2):
    if which == "twin":
        mqajit.mqa_logits(q, (kv, scales), w, starts, ends, clean_logits=False, variant=plan.logits_kernel)
    else:
        mqajit.mqa_topk(q, (kv, scales), w, starts, ends, k=2048, path="fused", variant=plan.kernel)
torch.cuda.synchronize()
PY

IFS=';' read -r -a shapes <<< "${TWGMMA_NCU_SHAPES:-32 2048 32768;32 1024 8192;64 4096 32768}"
for shape in "${shapes[@]}"; do
  read -r heads rows keys <<< "$shape"
  for which in twin fused; do
    name=h${heads}_${rows}x${keys}_$which
    regex=$([ "$which" = twin ] && echo 'regex:mqa_logits_wgmma' || echo 'regex:mqa_logits_twgmma')
    if [ -n "${TWGMMA_NCU_METRICS:-}" ]; then
      what=(--metrics "$TWGMMA_NCU_METRICS" --page raw)
    else
      what=(--set full --import-source no -o "$out/$name" -f)
    fi
    PYTHONPATH=build/python timeout -k 10 150 ncu --clock-control none "${what[@]}" -k "$regex" -s 1 -c 1 \
      python3 /tmp/twgmma_ncu_call.py "$which" "$heads" "$rows" "$keys" > "$out/$name.log" 2>&1
    stamp "ncu $name exit $?: $(grep -m1 'fused kernel' "$out/$name.log")"
    if [ -n "${TWGMMA_NCU_METRICS:-}" ]; then
      asked=$(tr ',' '\n' <<< "$TWGMMA_NCU_METRICS" | sed 's/\..*//' | sort -u | paste -sd'|')
      grep -E "^ +(launch__grid_size|launch__block_size|$asked)[. ]" "$out/$name.log" | tee -a "$out/call.txt"
      continue
    fi
    ncu -i "$out/$name.ncu-rep" --page details > "$out/${name}_details.txt" 2>&1
    ncu -i "$out/$name.ncu-rep" --page source --csv --print-source sass > "$out/${name}_source.csv" 2> /dev/null
    python3 scripts/device/ncu_stalls.py "$out/${name}_source.csv" 30 > "$out/${name}_stalls.txt" 2>&1
    grep -E "^ +(Duration|Issue Slots Busy|Eligible Warps Per Scheduler|No Eligible|Registers Per Thread|Executed Instructions) " \
      "$out/${name}_details.txt" | head -8 | tee -a "$out/call.txt"
    head -14 "$out/${name}_stalls.txt" | tee -a "$out/call.txt"
    rm -f "$out/$name.ncu-rep"
  done
done
pack_out twgmma_ncu
stamp done
