#!/usr/bin/env bash
# The H200 checks of issue 14 (one runtime for every vendor), run on the device machine from the
# repo root after scripts/gpu_session.sh build: the GPU tests of this tree, then `mqajit bench
# --check` on the GLM-5 and DeepSeek-V3.2 shapes and the host-cost benchmark, each alternated
# with the same run of a baseline build (main before the change), so both see the same clocks.
# No kernel should change speed: the generated sources are byte-identical.
#   scripts/h200_issue14.sh [BASELINE_BUILD_DIR]     (logs under $OUT, or ./gpu-out)
set -uo pipefail
out=${OUT:-$PWD/gpu-out}
mkdir -p "$out"
baseline=${1:-}
export MQAJIT_CACHE_DIR=/tmp/mqajit-cache

ctest --test-dir build --output-on-failure -L gpu --timeout 900 > "$out/issue14_gpu_tests.log" 2>&1
echo "GPU tests exit $?"; grep -E "tests passed|tests failed|\*\*\*Failed|Skipped" "$out/issue14_gpu_tests.log" | head -20
ctest --test-dir build --output-on-failure -R python_gpu > "$out/issue14_python_gpu.log" 2>&1; echo "python_gpu exit $?"

for round in 1 2; do
  for shapes in glm5 deepseek; do
    build/tools/mqajit bench --shapes "$shapes" --check --json-file "$out/issue14_bench_${shapes}_branch_$round.json" \
      > "$out/issue14_bench_${shapes}_branch_$round.txt" 2>&1; echo "bench $shapes branch round $round exit $?"
    if [ -n "$baseline" ]; then
      "$baseline/tools/mqajit" bench --shapes "$shapes" --check --json-file "$out/issue14_bench_${shapes}_main_$round.json" \
        > "$out/issue14_bench_${shapes}_main_$round.txt" 2>&1; echo "bench $shapes main round $round exit $?"
    fi
  done
done
build/tests/benchmarks/bench_dispatch --benchmark_repetitions=10 --benchmark_report_aggregates_only=true \
  > "$out/issue14_dispatch_branch.txt" 2>&1
[ -n "$baseline" ] && "$baseline/tests/benchmarks/bench_dispatch" --benchmark_repetitions=10 \
  --benchmark_report_aggregates_only=true > "$out/issue14_dispatch_main.txt" 2>&1

# Per shape: the chosen kernel's median on this branch against main's (best of the two rounds each).
if [ -n "$baseline" ]; then
  python3 - "$out" <<'PY'
import glob, json, sys
out = sys.argv[1]
for shapes in ("glm5", "deepseek"):
    best = {}
    for side in ("branch", "main"):
        for path in glob.glob(f"{out}/issue14_bench_{shapes}_{side}_*.json"):
            for row in json.load(open(path)):
                key = (row["heads"], row["seq_len"], row["seq_len_kv"])
                entry = best.setdefault(key, {})
                entry[side] = min(entry.get(side, float("inf")), row["us"])
                entry[side + "_kernel"] = row["kernel"]
    print(f"{shapes}: H S N kernel branch_us main_us ratio")
    for key, e in sorted(best.items()):
        if "branch" in e and "main" in e:
            print(f"  {key} {e['branch_kernel']} {e['branch']:.1f} {e['main']:.1f} {e['branch'] / e['main']:.3f}")
PY
fi
