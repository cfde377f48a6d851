#!/usr/bin/env bash
# Downloads (here, not on the device machine, which reaches no registry) the Debian packages a
# device build needs into the ignored .gpu-deps/, to be named in the device call's `carry`;
# scripts/gpu_session.sh unpacks them there. A fresh checkout has none, so run this first.
#   scripts/device/fetch_gpu_deps.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .gpu-deps
cd .gpu-deps
apt-get download libspdlog-dev libspdlog1.10 libfmt-dev libfmt9 libsqlite3-dev libsqlite3-0 sqlite3 doctest-dev \
  libcli11-dev libbenchmark-dev libbenchmark1debian nlohmann-json3-dev pybind11-dev patchelf
echo "$(ls ./*.deb | wc -l) packages in .gpu-deps/"
