#!/usr/bin/env bash
# The fused top-k branch on the device: build, the topk GPU tests (C++ and Python, both paths) and
# python/benchmarks/topk_time.py (both paths against the bar). Run as: bash scripts/device/fused_topk_session.sh
# with carry [".gpu-deps"]; logs under $OUT. TOPK_ROUNDS=N: rounds of topk_time.py; TOPK_LONG=1: its --long.
set -u
t0=$SECONDS
# Seconds left of the device call's 600, less a margin for the logs to come back.
left() { echo $((570 - SECONDS + t0)); }
bash scripts/gpu_session.sh build > $OUT/build_step.txt 2>&1; echo "[$((SECONDS-t0))s] build exit $?"; tail -5 $OUT/build_step.txt
export LD_LIBRARY_PATH=/tmp/mqajit-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export MQAJIT_CACHE_DIR=/tmp/mqajit-cache MQAJIT_SYSTEM_DB=$(find "$PWD/build" -name system_tuning.db | head -1)
timeout -k 10 $(( $(left) < 200 ? $(left) : 200 )) ctest --test-dir build -L gpu -R "topk" --output-on-failure > $OUT/ctest_topk.txt 2>&1
echo "[$((SECONDS-t0))s] ctest topk exit $?"; grep -E "tests passed|FAILED|Failed|ERROR|CHECK|row " $OUT/ctest_topk.txt | head -30
(cd python/tests && PYTHONPATH=../../build/python timeout -k 10 $(( $(left) < 120 ? $(left) : 120 )) python3 -m pytest -q -x test_gpu_topk.py > $OUT/py_topk.txt 2>&1)
echo "[$((SECONDS-t0))s] pytest exit $?"; tail -15 $OUT/py_topk.txt
PYTHONPATH=build/python timeout -k 10 $(left) python3 python/benchmarks/topk_time.py --rounds ${TOPK_ROUNDS:-1} --profile ${TOPK_LONG:+--long} --json $OUT/topk.json > $OUT/topk_time.txt 2>&1
echo "[$((SECONDS-t0))s] bench exit $?"; cat $OUT/topk_time.txt | tail -50
# TOPK_NCU=1: an ncu profile of one fused call at H=32 S=4096 N=32768 (the helper kernels and the twgmma
# kernel), and of one unfused call's select kernel, for where their time goes.
if [ "${TOPK_NCU:-0}" = 1 ] && [ "$(left)" -gt 60 ]; then
  cat > /tmp/topk_once.py <<'PY'
import sys, torch, mqajit
s, n, h, path = 4096, 32768, 32, sys.argv[1]
q = torch.randn(s, h, 128, device="cuda").to(torch.float8_e4m3fn)
kv = torch.randn(n, 128, device="cuda").to(torch.float8_e4m3fn)
scales, w = torch.rand(n, device="cuda") + 0.5, torch.randn(s, h, device="cuda")
starts = torch.zeros(s, dtype=torch.int32, device="cuda"); ends = (n - s + 1 + torch.arange(s, device="cuda")).int()
for _ in range(2): mqajit.mqa_topk(q, (kv, scales), w, starts, ends, k=2048, path=path)
torch.cuda.synchronize()
PY
  for path in fused unfused; do
    PYTHONPATH=build/python timeout -k 10 $(( $(left) / 2 )) ncu --kernel-name regex:"mqa_topk|twgmma" --launch-skip 0 \
      --launch-count 8 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
      --section MemoryWorkloadAnalysis python3 /tmp/topk_once.py $path > $OUT/ncu_$path.txt 2>&1
    echo "[$((SECONDS-t0))s] ncu $path exit $?"
    grep -E "^  [a-z_]+.*\(|Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Memory Throughput|Compute \(SM\)|Stall" $OUT/ncu_$path.txt | head -60
  done
fi
