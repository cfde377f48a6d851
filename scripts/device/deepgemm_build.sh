#!/usr/bin/env bash
# Builds DeepGEMM's extension in place from the ignored .deepgemm checkout (fetched, never committed)
# on the device machine, so python/benchmarks/side_by_side.py can time it in the same process as
# mqajit, then compiles its decode and prefill kernels once (its JIT) so no timing pays for nvcc.
#   scripts/device/deepgemm_build.sh [warm]      (use with PYTHONPATH=.deepgemm and the LD_PRELOAD below)
set -uo pipefail
root=$PWD/.deepgemm
[ -d "$root/deep_gemm" ] || { echo "no .deepgemm checkout: fetch DeepGEMM there first"; exit 2; }
export DG_JIT_CACHE_DIR=/tmp/deepgemm-cache DG_USE_LOCAL_VERSION=0 MAX_JOBS=16
# NOTES: its JIT's std::regex crashes with the libstdc++ torch loads first; the system's one works.
export LD_PRELOAD=/lib/x86_64-linux-gnu/libstdc++.so.6
if ! ls "$root"/deep_gemm/_C*.so > /dev/null 2>&1; then
  ln -sfn "$root/third-party/cutlass/include/cutlass" "$root/deep_gemm/include/cutlass"
  ln -sfn "$root/third-party/cutlass/include/cute" "$root/deep_gemm/include/cute"
  (cd "$root" && python3 setup.py build_ext --inplace) || { echo "DeepGEMM build failed"; exit 1; }
fi
echo "DeepGEMM built: $(ls "$root"/deep_gemm/_C*.so)"
[ "${1:-}" = warm ] || exit 0
PYTHONPATH=$root${PYTHONPATH:+:$PYTHONPATH} python3 - <<'PY'
import time, torch, deep_gemm
t0 = time.time()
for heads in (32, 64):
    for next_n in (1, 2):
        batch, block_kv, D = 4, 64, 128
        kv_cache = torch.zeros(batch * 4, block_kv, 1, D + 4, dtype=torch.uint8, device="cuda")
        q = torch.zeros(batch, next_n, heads, D, device="cuda").to(torch.float8_e4m3fn)
        weights = torch.zeros(batch * next_n, heads, device="cuda")
        lens = torch.full((batch, next_n), 200, dtype=torch.int32, device="cuda")
        table = torch.arange(batch * 4, dtype=torch.int32, device="cuda").reshape(batch, 4)
        meta = deep_gemm.get_paged_mqa_logits_metadata(lens, block_kv, deep_gemm.get_num_sms())
        deep_gemm.fp8_paged_mqa_logits(q, kv_cache, weights, lens, table, meta, 256, False)
    S, N = 256, 4096
    q = torch.zeros(S, heads, 128, device="cuda").to(torch.float8_e4m3fn)
    kv = torch.zeros(N, 128, device="cuda").to(torch.float8_e4m3fn)
    deep_gemm.fp8_mqa_logits(q, (kv, torch.ones(N, device="cuda")), torch.zeros(S, heads, device="cuda"),
                             torch.zeros(S, dtype=torch.int32, device="cuda"),
                             torch.full((S,), N, dtype=torch.int32, device="cuda"), clean_logits=False)
torch.cuda.synchronize()
print(f"DeepGEMM kernels compiled in {time.time() - t0:.0f} s")
PY
