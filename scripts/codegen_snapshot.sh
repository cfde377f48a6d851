#!/usr/bin/env bash
# Writes `mqajit codegen` output for every variant each sample arch runs at H = 32, 64 and
# D = 64, 128 into DIR, one file per kernel, so two trees can be compared with `diff -r`: a
# refactoring of codegen must leave every generated source byte-identical.
#   scripts/codegen_snapshot.sh build/tools/mqajit /tmp/before
set -euo pipefail
mqajit=${1:?usage: codegen_snapshot.sh path/to/mqajit DIR}
out=${2:?usage: codegen_snapshot.sh path/to/mqajit DIR}
mkdir -p "$out"
count=0
for arch in sm_90a sm_89 sm_80 gfx950 gfx942; do
  for heads in 32 64; do
    for head_dim in 64 128; do
      # `variants` prints "ARCH VARIANT RUNS ..." rows; keep the runnable ones.
      for variant in $("$mqajit" variants --arch "$arch" --heads "$heads" --head-dim "$head_dim" |
                       awk 'NR > 1 && $3 == "yes" { print $2 }'); do
        # NOTES: a refusal is kept too (its message and exit code), so a changed rule shows in the diff.
        "$mqajit" codegen "$variant" --arch "$arch" --heads "$heads" --head-dim "$head_dim" \
          > "$out/${arch}_${variant}_h${heads}_d${head_dim}.cu" 2>&1 || echo "exit $?" >> "$out/${arch}_${variant}_h${heads}_d${head_dim}.cu"
        count=$((count + 1))
      done
    done
  done
done
echo "codegen_snapshot: $count sources in $out"
