#!/usr/bin/env bash
# Where the fused path's select kernels wait: build, then one fused mqa_topk call (H=64, S=4096,
# N=32768 by default; TOPK_NCU_SHAPE="H S N") under Nsight Compute, the candidate select and the
# thresholds kernel profiled (--set full), and scripts/device/ncu_stalls.py's summary of each.
# Run as: bash scripts/device/topk_ncu.sh; reports and summaries land in $OUT.
set -u
t0=$SECONDS
OUT=/tmp/topk-ncu-build bash scripts/gpu_session.sh build > /tmp/build_step.txt 2>&1; echo "[$((SECONDS - t0))s] build exit $?"
export LD_LIBRARY_PATH=/tmp/mqajit-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export MQAJIT_CACHE_DIR=/tmp/mqajit-cache MQAJIT_SYSTEM_DB=$(find "$PWD/build" -name system_tuning.db | head -1)
read -r heads rows keys <<< "${TOPK_NCU_SHAPE:-64 4096 32768}"
cat > /tmp/topk_ncu_call.py <<PY
import torch, mqajit
s, n, h = $rows, $keys, $heads
q = torch.randn(s, h, 128, device="cuda").to(torch.float8_e4m3fn)
kv = torch.randn(n, 128, device="cuda").to(torch.float8_e4m3fn)
scales, w = torch.rand(n, device="cuda") + 0.5, torch.randn(s, h, device="cuda")
starts = torch.zeros(s, dtype=torch.int32, device="cuda")
ends = (n - s + 1 + torch.arange(s, device="cuda")).int()
for _ in range(2):
    mqajit.mqa_topk(q, (kv, scales), w, starts, ends, k=2048, path="fused")
torch.cuda.synchronize()
PY
for kernel in mqa_topk_candidates mqa_topk_thresholds; do
  PYTHONPATH=build/python timeout -k 10 200 ncu --clock-control none --set full -k regex:$kernel -s 1 -c 1 \
    -o $OUT/$kernel -f python3 /tmp/topk_ncu_call.py > /tmp/ncu_$kernel.log 2>&1
  echo "[$((SECONDS - t0))s] ncu $kernel exit $?"; tail -3 /tmp/ncu_$kernel.log
  ncu -i $OUT/$kernel.ncu-rep --page details > $OUT/${kernel}_details.txt 2>&1
  ncu -i $OUT/$kernel.ncu-rep --page source --csv --print-source sass > /tmp/${kernel}_source.csv 2>/dev/null
  python3 scripts/device/ncu_stalls.py /tmp/${kernel}_source.csv 25 > $OUT/${kernel}_stalls.txt 2>&1
  grep -E "Duration|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|Eligible Warps|No Eligible|Block Limit" \
    $OUT/${kernel}_details.txt | head -12
  head -20 $OUT/${kernel}_stalls.txt
done
