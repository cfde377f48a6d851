#!/usr/bin/env bash
# Makes a version for scripts/device/kernel_ab.sh: a folder .gpu-state/versions/NAME that mirrors
# the repo's paths and holds only the files that differ (under codegen/ unless PATHS are given).
#   scripts/device/kernel_ab_version.sh NAME REF [PATHS...]   REF's copies of the files where the
#                                                              working tree differs from REF ("the old kernel")
#   scripts/device/kernel_ab_version.sh NAME --tree [PATHS...] the working tree's copies of the files
#                                                              it changed or added since HEAD ("this experiment")
# The device call then builds the working tree as "tree" and each version laid over it.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 2 ] || { sed -n 2,9p "$0"; exit 2; }
name=$1 source=$2; shift 2
paths=("$@"); [ ${#paths[@]} -gt 0 ] || paths=(codegen)
out=.gpu-state/versions/$name
rm -rf "$out"; mkdir -p "$out"
if [ "$source" = --tree ]; then
  mapfile -t files < <(git diff --name-only HEAD -- "${paths[@]}"; git ls-files --others --exclude-standard -- "${paths[@]}")
  for file in "${files[@]}"; do
    [ -e "$file" ] || { echo "skipped $file: deleted in the working tree"; continue; }
    mkdir -p "$out/$(dirname "$file")" && cp "$file" "$out/$file"
  done
else
  mapfile -t files < <(git diff --name-only "$source" -- "${paths[@]}")
  for file in "${files[@]}"; do
    if git cat-file -e "$source:$file" 2> /dev/null; then
      mkdir -p "$out/$(dirname "$file")" && git show "$source:$file" > "$out/$file"
    else
      echo "skipped $file: not in $source (a version can only replace files)"
    fi
  done
fi
echo "$out: $(find "$out" -type f | wc -l) files"
find "$out" -type f | sed 's/^/  /'
