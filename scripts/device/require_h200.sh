# Sourced by device scripts whose numbers count only on an H200 (the issues' bars; kind nvidia-h200
# may lend an H100). Uses the caller's `stamp`.
#   require_h200 [STATUS]    ends the script with STATUS (default 0) unless the GPU is an H200
require_h200() {
  local name
  name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  [[ $name == *H200* ]] && return 0
  stamp "not an H200 ($name): this call's steps count only on an H200, so none runs"
  exit "${1:-0}"
}
