#!/usr/bin/env bash
# Builds the mqajit CLI here (no GPU needed: NVRTC compiles on the device at run time) for the
# working tree and for each kernel_ab version, and keeps stripped, gzipped copies (about 2 MB each) with the
# system tuning database in .gpu-state/cli/, so a device call can time them without building there:
#   scripts/device/prebuild_cli.sh [VERSION...]      then, on the device:
#   AB_PREBUILT=1 scripts/device/kernel_ab.sh [VERSION...]    (carry .gpu-deps and .gpu-state)
# A version is a folder .gpu-state/versions/VERSION (scripts/device/kernel_ab_version.sh); its files
# are laid over the tree for its build and the tree's copies put back after. "tree" is the working
# tree as it is: an experiment made into a version with `kernel_ab_version.sh NAME --tree` must be
# taken out of the tree (commit it on a branch, check out the base) before this runs. Uses the
# build folder `build` (configured by the README's commands), or BUILD_DIR.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD_DIR:-build}
out=.gpu-state/cli
[ -f "$build/CMakeCache.txt" ] || { echo "no configured build in $build: run the README's commands first"; exit 2; }
for v in "$@"; do
  [ -d ".gpu-state/versions/$v" ] || { echo "no .gpu-state/versions/$v (see kernel_ab_version.sh)"; exit 2; }
done

build_into() {
  cmake --build "$build" --target mqajit_cli mqajit_system_db > "/tmp/prebuild_cli_$1.log" 2>&1 ||
    { tail -30 "/tmp/prebuild_cli_$1.log"; return 1; }
  mkdir -p "$out/$1"
  strip -o "$out/$1/mqajit" "$build/tools/mqajit"
  # NOTES: gzipped (5.6 MB -> 2.2 MB) so that four CLIs, the packages and .deepgemm fit the device
  # call's 64 MiB; scripts/device/prebuilt_cli.sh unpacks them there.
  gzip -f "$out/$1/mqajit"
  echo "$out/$1/mqajit.gz ($(du -h "$out/$1/mqajit.gz" | cut -f1))"
}

rm -rf "$out" && mkdir -p "$out"
build_into tree
cp "$(find "$build/share" -name system_tuning.db | head -1)" "$out/system_tuning.db"
source scripts/device/version_overlay.sh
for v in "$@"; do
  saved=$(mktemp -d)
  version_overlay "$v" "$saved"
  status=0
  build_into "$v" || status=$?
  version_restore "$saved"
  [ $status -eq 0 ] || exit $status
done
# Leave the build matching the tree again.
cmake --build "$build" --target mqajit_cli > /dev/null 2>&1 || echo "note: rebuilding $build for the tree failed"
