#!/usr/bin/env bash
# Writes .gpu-state/topk-base (the base that scripts/device/topk_ab_session.sh times beside the
# tree) from a git ref: that ref's copy of every file under codegen/ and runtime/ that differs
# between the ref and the working tree. Run it here, before the device call that carries .gpu-state.
#   scripts/device/topk_base_from.sh REF        e.g. main, when the tree is a wip branch
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -eq 1 ] || { sed -n 2,5p "$0"; exit 2; }
ref=$1
git rev-parse --verify --quiet "$ref^{commit}" > /dev/null || { echo "no commit named '$ref'"; exit 2; }
rm -rf .gpu-state/topk-base
mkdir -p .gpu-state/topk-base
count=0
while IFS= read -r file; do
  if git cat-file -e "$ref:$file" 2> /dev/null; then
    mkdir -p ".gpu-state/topk-base/$(dirname "$file")"
    git show "$ref:$file" > ".gpu-state/topk-base/$file"
    count=$((count + 1))
  else
    echo "skipped $file: the tree has it and $ref does not (the base build would still see the tree's copy)"
  fi
done < <(git diff --name-only "$ref" -- codegen runtime)
echo "$count files of $ref in .gpu-state/topk-base"
