#!/usr/bin/env bash
# Runs a command (from the repo root on the device machine) where it can import both mqajit
# (build/python) and DeepGEMM (the ignored .deepgemm checkout, built by deepgemm_build.sh), with
# DeepGEMM's JIT cache in /tmp; the caller's PYTHONPATH follows theirs.
#   scripts/device/with_deepgemm.sh COMMAND...
# NOTES: DeepGEMM's JIT (std::regex) crashes with the libstdc++ torch loads first; the system's works.
export PYTHONPATH=build/python:.deepgemm${PYTHONPATH:+:$PYTHONPATH}
export DG_JIT_CACHE_DIR=/tmp/deepgemm-cache
export LD_PRELOAD=/lib/x86_64-linux-gnu/libstdc++.so.6
exec "$@"
