# Sourced by the device scripts that run the CLI and test binary prebuilt here
# (scripts/device/prebuild_cli.sh; carry .gpu-deps and .gpu-state): the carried packages the
# binaries load, the system tuning database built beside them, and `variants_except`. The CLIs
# travel gzipped (the carried tree is limited to 64 MiB); they are unpacked here.
for packed in .gpu-state/cli/*/mqajit.gz; do
  if [ -e "$packed" ]; then gunzip -f "$packed" || return 1; fi
done
deps=/tmp/mqajit-deps
source scripts/device/unpack_gpu_deps.sh
unpack_gpu_deps $deps || { echo "could not unpack .gpu-deps into $deps"; return 1; }
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export MQAJIT_SYSTEM_DB=$PWD/.gpu-state/cli/system_tuning.db
prebuilt=.gpu-state/cli/tree

# Every sm_90a variant of operator $1 (mqa_logits, mqa_topk) but the comma-separated $2, as one
# comma-separated list for `--exclude`.
variants_except() {
  "$prebuilt/mqajit" variants --arch sm_90a --op "$1" | awk 'NR > 1 {print $2}' |
    grep -v -x -F -f <(tr , '\n' <<< "$2") | paste -sd,
}
