#!/usr/bin/env bash
# Runs the fuzz targets longer than CI does, by hand: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
# (default 600 s each, every target). Builds them first (scripts/configs/fuzz.sh, into
# build/configs/fuzz); new inputs accumulate in build/configs/fuzz/corpus/, findings in
# build/configs/fuzz/findings/. Worth committing: a small input that reaches new code, into
# fuzz/corpus/<target>/, and a regression test for any finding.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
MQAJIT_FUZZ_SECONDS=$seconds MQAJIT_FUZZ_TARGETS="$*" exec bash scripts/configs/fuzz.sh build/configs/fuzz
