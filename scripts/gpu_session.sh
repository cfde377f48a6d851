#!/usr/bin/env bash
# One device-machine session: unpack the carried Debian packages, build, run the whole test suite
# (GPU tests for real), check the SASS for QGMMA, AOT-compile every variant and run the benchmark.
# The packages come from scripts/device/fetch_gpu_deps.sh (.gpu-deps/, carried).
# Usage (on the device machine, from the repo root): scripts/gpu_session.sh [STEP...]
#   steps: build test sass aot bench micro demo (default: all of them in that order), and host:
#   the Python host time per call (python/benchmarks/host_time.py, issue #12's bar)
# Logs go to $OUT (or ./gpu-out when OUT is unset).
set -uo pipefail
out=${OUT:-$PWD/gpu-out}
mkdir -p "$out"
deps=/tmp/mqajit-deps
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(build test sass aot bench micro demo)
export MQAJIT_CACHE_DIR=/tmp/mqajit-cache

source scripts/device/unpack_gpu_deps.sh
unpack_gpu_deps "$deps" || { echo "could not unpack .gpu-deps into $deps"; exit 1; }
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$out/gpu.txt" 2>&1

for step in "${steps[@]}"; do
  case $step in
    build)
      # NOTES: the python3 on PATH is the one with torch there; FindPython3 would take /usr/bin/python3.
      cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$deps/usr" \
            -DMQAJIT_CUDA_ARCHS="90" -DPython3_EXECUTABLE="$(command -v python3)" > "$out/build.log" 2>&1 &&
      cmake --build build --parallel 16 >> "$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 1; }
      echo "build ok" ;;
    test)
      # NOTES: the other build configurations (label config) need no GPU: CI runs them.
      ctest --test-dir build --output-on-failure -j4 --timeout 900 -LE config ${CTEST_ARGS:-} > "$out/ctest.log" 2>&1
      echo "ctest exit $?"; grep -E "tests passed|tests failed|\*\*\*Failed|SKIPPED" "$out/ctest.log" | head -30 ;;
    sass)
      build/tools/mqajit codegen wgmma64x128x32_bkv128_r4_w2_lds4 --arch sm_90a > /tmp/k.cu &&
      nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -Icodegen/templates -Icodegen/families/sm90_mqa_logits -cubin -o /tmp/k.cubin /tmp/k.cu &&
      cuobjdump --dump-sass /tmp/k.cubin > "$out/sass.txt" 2>&1
      echo "QGMMA instructions in the sm90 kernel: $(grep -c QGMMA "$out/sass.txt")" ;;
    aot)
      build/tools/mqajit aot --arch sm_90a --variants all > "$out/aot.txt" 2>&1; echo "aot exit $?"; tail -3 "$out/aot.txt" ;;
    bench)
      build/tools/mqajit bench --runs "${BENCH_RUNS:-50}" ${BENCH_ARGS:-} 2>&1 | tee "$out/bench.txt" ;;
    micro)
      build/tests/benchmarks/bench_dispatch --benchmark_min_time=0.2 --benchmark_repetitions=10 --benchmark_report_aggregates_only=true 2>&1 | tee "$out/bench_dispatch.txt" ;;
    demo)
      build/tools/mqajit demo 2>&1 | tee "$out/demo.txt" ;;
    host)
      python=$(sed -n 's/^Python3_EXECUTABLE:[A-Z]*=//p' build/CMakeCache.txt)
      PYTHONPATH=build/python OUT="$out" "${python:-python3}" python/benchmarks/host_time.py 2>&1 |
        tee "$out/host_time.txt" ;;
  esac
done
