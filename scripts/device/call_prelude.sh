# Sourced first by a device call's own script (.gpu-state/callN.sh, run from the repo root on the
# device machine): what every call does before and after its own steps.
#   source scripts/device/call_prelude.sh      sets out ($OUT) and t0, logs the GPU to $out/call.txt,
#                                              unpacks the carried packages (.gpu-deps) into /tmp/mqajit-deps
#   stamp MESSAGE                              a line with the seconds since the start, to $out/call.txt
#   require_h200                               ends the call (exit 0) unless the GPU is an H200
#                                              (require_h200.sh)
#   start_builds                               the tree (scripts/gpu_session.sh build) and DeepGEMM's
#                                              extension (deepgemm_build.sh warm) in the background
#   wait_builds                                waits for both, stamps their exits, keeps their logs
#   pack_out NAME                              everything under $out but call.txt into $out/NAME.tgz
#                                              (a call returns at most 8 files)
# Archived call scripts under docs/data/ are the record of what ran; new ones source this.
out=${OUT:?OUT names the folder the device call returns}
t0=$SECONDS
mkdir -p "$out"

stamp() { echo "[$((SECONDS - t0))s] $*" | tee -a "$out/call.txt"; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader |
  tee -a "$out/call.txt"
source scripts/device/require_h200.sh

source scripts/device/unpack_gpu_deps.sh
unpack_gpu_deps /tmp/mqajit-deps
export LD_LIBRARY_PATH=/tmp/mqajit-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-} MQAJIT_CACHE_DIR=/tmp/mqajit-cache

build_logs=/tmp/build-logs
start_builds() {
  mkdir -p "$build_logs"
  (bash scripts/device/deepgemm_build.sh warm > "$build_logs/deepgemm_build.log" 2>&1
   echo "exit $?" >> "$build_logs/deepgemm_build.log") &
  (OUT=$build_logs bash scripts/gpu_session.sh build > "$build_logs/build_step.txt" 2>&1
   echo "exit $?" >> "$build_logs/build_step.txt") &
}

wait_builds() {
  wait
  stamp "build $(tail -1 "$build_logs/build_step.txt"), DeepGEMM $(tail -1 "$build_logs/deepgemm_build.log")"
  cp "$build_logs"/*.txt "$build_logs"/*.log "$out/" 2> /dev/null
  true
}

# Only the top call.txt stays out of the archive: a nested step's own call.txt (a script run with
# OUT=$out/sub) goes in, since a folder left holding it made find's -delete fail and the archive
# was never moved back (stop 56 lost a call's data that way).
pack_out() {
  (cd "$out" || exit 1
   tar czf "/tmp/$1.tgz" --exclude ./call.txt --exclude "./$1.tgz" . || exit 1
   find . -mindepth 1 ! -type d ! -path ./call.txt -delete
   find . -mindepth 1 -type d -empty -delete
   mv "/tmp/$1.tgz" .)
}
