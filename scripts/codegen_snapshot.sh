#!/usr/bin/env bash
# Writes `mqajit codegen` output for every variant each sample arch runs at H = 32, 64 and
# D = 64, 128, for both operators (mqa_logits and paged_mqa_logits), into DIR, one file per
# kernel, so two trees can be compared with `diff -r`: a refactoring of codegen must leave every
# generated source byte-identical. With --expand each file is the whole translation unit the
# compiler sees (`mqajit codegen --expand`: the templates inlined), so template edits show too.
#   scripts/codegen_snapshot.sh [--expand] build/tools/mqajit /tmp/before
set -euo pipefail
shopt -s inherit_errexit
usage="usage: codegen_snapshot.sh [--expand] path/to/mqajit DIR (DIR new or empty)"
expand=()
if [[ ${1:-} == --expand ]]; then
  expand=(--expand)
  shift
fi
mqajit=${1:?$usage}
out=${2:?$usage}
[[ -x $mqajit ]] || { echo "codegen_snapshot: $mqajit is not an executable; $usage" >&2; exit 2; }
# NOTES: a file left from an earlier snapshot would show in `diff -r` as a source still generated.
if [[ -e $out && -n $(ls -A "$out") ]]; then
  echo "codegen_snapshot: $out is not empty; give a new or empty folder" >&2
  exit 2
fi
mkdir -p "$out"

# The variants `mqajit variants` says run at the shape, found by the header's column names
# (ARCH VARIANT RUNS REASON) rather than by position; a table without them stops the script.
runnable_variants() {
  local table
  table=$("$mqajit" variants "$@")
  awk '
    NR == 1 {
      for (i = 1; i <= NF; ++i) { if ($i == "VARIANT") v = i; if ($i == "RUNS") r = i }
      if (!v || !r) { print "codegen_snapshot: `mqajit variants` printed no VARIANT and RUNS columns: " $0 > "/dev/stderr"; exit 3 }
      next
    }
    $r == "yes" { print $v }' <<< "$table"
}

# The sample archs of each operator: those with registered variants (decode has none on sm_89, sm_80).
declare -A archs_of=([mqa_logits]="sm_90a sm_89 sm_80 gfx950 gfx942" [paged_mqa_logits]="sm_90a gfx950 gfx942")
count=0
for op in mqa_logits paged_mqa_logits; do
  prefix=""
  [[ $op == paged_mqa_logits ]] && prefix="paged_"
  for arch in ${archs_of[$op]}; do
    for heads in 32 64; do
      for head_dim in 64 128; do
        variants=$(runnable_variants --op "$op" --arch "$arch" --heads "$heads" --head-dim "$head_dim")
        for variant in $variants; do
          file="$out/${prefix}${arch}_${variant}_h${heads}_d${head_dim}.cu"
          # NOTES: a refusal is kept too (its message and exit code), so a changed rule shows in the diff.
          "$mqajit" codegen "$variant" "${expand[@]}" --arch "$arch" --heads "$heads" --head-dim "$head_dim" \
            > "$file" 2>&1 || echo "exit $?" >> "$file"
          count=$((count + 1))
        done
      done
    done
  done
done
if ((count == 0)); then
  echo "codegen_snapshot: no runnable variant at any sample shape; check \`$mqajit variants\`" >&2
  exit 1
fi
echo "codegen_snapshot: $count sources in $out"
