# Call 1 (run from the repo root on the device machine; carry .gpu-deps, .deepgemm, .gpu-state with
# the prebuilt CLIs of main (tree) and of the versions flushA, flushB, flushD):
n=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$n"; OUT=$OUT/ab ROUNDS=3 bash scripts/device/topk_prebuilt_ab.sh flushA flushB flushD > /tmp/ab.txt 2>&1; tail -16 /tmp/ab.txt; TWGMMA_NCU_SHAPES="32 1024 8192" bash scripts/device/twgmma_ncu.sh
