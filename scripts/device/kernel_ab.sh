#!/usr/bin/env bash
# A/B of kernel-source versions in one device call: the working tree is built once, then for each
# version the files it holds are laid over the tree, only the CLI is rebuilt (the kernel templates
# are embedded in the library), and that CLI is kept aside; the versions are then timed in turn,
# interleaved over rounds, with `mqajit bench --check` (every kernel checked against the reference
# kernel before it is timed). The tree's own build ("tree") is always in the comparison.
#   scripts/device/kernel_ab.sh VERSION...
# A version is a folder .gpu-state/versions/VERSION mirroring the repo's paths (make one here with
# scripts/device/kernel_ab_version.sh; .gpu-state is ignored, name it in the call's carry).
# Environment: AB_SHAPES (prefill rows "S,N,H,D,clean_logits", space-separated; "none" for none),
# AB_DECODE_SHAPES (decode rows "batch,next_n,H,context,D,block_kv,clean_logits", timed with
# `mqajit bench --op paged_mqa_logits`; none unless set), AB_ROUNDS (2), AB_RUNS (30),
# AB_DEADLINE (seconds after which no new bench starts, 480), AB_VARIANTS (prefill: a comma-separated
# list of variants each timed per shape, as `bench --variant`, instead of the tuned choice),
# AB_CUBINS (a folder of .cubin files to disassemble beside the timings, e.g. built here with nvcc
# -cubin).
# AB_PREBUILT=1: no build here; the CLIs come from .gpu-state/cli/ (scripts/device/prebuild_cli.sh
# made them where the kernel sources were edited; .gpu-deps unpacked for their libraries), which
# saves the 2-minute build of a bare machine.
# Everything comes back as $OUT/kernel_ab.tgz (the device call returns at most 8 files) and
# $OUT/summary.txt, whose last lines give each version's time over the tree's, per shape.
set -uo pipefail
final=${OUT:-$PWD/gpu-out}
work=/tmp/kernel-ab
# A warm machine keeps /tmp from the previous call: its results would be summarized with these.
rm -rf "$work/results"
mkdir -p "$final" "$work/results"
t0=$SECONDS
stamp() {
  echo "[$((SECONDS - t0))s] $*" | tee -a "$final/summary.txt"
  (cd "$work/results" && tar czf "$final/kernel_ab.tgz" .)
}
# gpu_session.sh build unpacks the carried packages there; the CLIs load spdlog and fmt from them.
export LD_LIBRARY_PATH=/tmp/mqajit-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv,noheader | tee -a "$final/summary.txt"

versions=("$@")
for v in "${versions[@]}"; do
  [ -d ".gpu-state/versions/$v" ] || { echo "no .gpu-state/versions/$v (see kernel_ab_version.sh)"; exit 2; }
done
if [ -n "${AB_CUBINS:-}" ]; then
  mkdir -p "$work/results/sass"
  for cubin in "$AB_CUBINS"/*.cubin; do cuobjdump -sass "$cubin" > "$work/results/sass/$(basename "$cubin" .cubin).txt" 2>&1; done
fi

if [ -n "${AB_PREBUILT:-}" ]; then
  source scripts/device/prebuilt_cli.sh
  for name in tree "${versions[@]}"; do
    [ -x ".gpu-state/cli/$name/mqajit" ] || { echo "no .gpu-state/cli/$name/mqajit (see prebuild_cli.sh)"; exit 2; }
    cp ".gpu-state/cli/$name/mqajit" "$work/$name"
  done
  export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
  stamp "prebuilt CLIs: tree ${versions[*]}"
  versions_to_build=()
else
  bash scripts/gpu_session.sh build > "$work/results/build.txt" 2>&1 || { tail -40 "$work/results/build.txt"; exit 1; }
  cp build/tools/mqajit "$work/tree"
  stamp "tree built"
  versions_to_build=("${versions[@]}")
  export MQAJIT_SYSTEM_DB=$(find "$PWD/build" -name system_tuning.db | head -1)
fi
source scripts/device/version_overlay.sh
for v in "${versions_to_build[@]}"; do
  version_overlay "$v" "$work/saved-$v"
  cmake --build build --target mqajit_cli --parallel "$(nproc)" > "$work/results/rebuild_$v.txt" 2>&1
  status=$?
  version_restore "$work/saved-$v"
  [ $status -eq 0 ] || { tail -40 "$work/results/rebuild_$v.txt"; exit 1; }
  cp build/tools/mqajit "$work/$v"
  stamp "$v built"
done

benches=()
prefill_shapes=${AB_SHAPES:-2048,8192,32,128,0 4096,16384,32,128,0 2048,32768,32,128,0 1024,60000,32,128,0 \
  1024,8192,64,128,0 4096,16384,64,128,0 2048,32768,64,128,0}
if [ "$prefill_shapes" != none ]; then
  { echo seq_len,seq_len_kv,heads,head_dim,clean_logits; printf '%s\n' $prefill_shapes; } > "$work/results/shapes.csv"
  benches+=(prefill)
fi
if [ -n "${AB_DECODE_SHAPES:-}" ]; then
  { echo batch,next_n,heads,context_len,head_dim,block_kv,clean_logits; printf '%s\n' $AB_DECODE_SHAPES; } \
    > "$work/results/decode_shapes.csv"
  benches+=(decode)
fi
for round in $(seq "${AB_ROUNDS:-2}"); do
  for v in tree "${versions[@]}"; do
    for bench in "${benches[@]}"; do
      [ $((SECONDS - t0)) -lt "${AB_DEADLINE:-480}" ] || { stamp "deadline: no more rounds"; break 3; }
      if [ "$bench" = prefill ]; then
        args=(--shapes "$work/results/shapes.csv" ${AB_VARIANTS:+--variant "$AB_VARIANTS"}) name=${v}_round$round
      else args=(--op paged_mqa_logits --shapes "$work/results/decode_shapes.csv") name=decode_${v}_round$round; fi
      MQAJIT_CACHE_DIR=$work/cache-$v timeout -k 10 200 "$work/$v" bench "${args[@]}" --check \
        --runs "${AB_RUNS:-30}" --json-file "$work/results/$name.json" > "$work/results/$name.txt" 2>&1
      stamp "round $round $v $bench: exit $? ($(grep -c -i fail "$work/results/$name.txt") lines with 'fail')"
    done
  done
done
python3 scripts/device/kernel_ab_summary.py "$work/results" | tee -a "$final/summary.txt"
stamp done
