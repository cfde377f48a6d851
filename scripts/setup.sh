#!/usr/bin/env bash
# Installs mqajit's build dependencies from Debian's packages, then configures and builds into
# ./build. Run as root on Debian 12 (or with sudo). The CUDA toolkit (nvcc, NVRTC headers) is
# looked for in /usr/local/cuda or on PATH; it is not a Debian package. Without it the build has no
# NVIDIA backend (MQAJIT_WITH_CUDA=OFF): AMD devices, the tuning tables and AMD ahead-of-time
# compiles still work.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build pkg-config
          libspdlog-dev libfmt-dev libsqlite3-dev sqlite3 doctest-dev libcli11-dev
          libbenchmark-dev nlohmann-json3-dev pybind11-dev python3-dev python3-pytest
          python3-build python3-setuptools python3-wheel python3-venv patchelf  # the pip wheel (setup.py)
          clang-22 lld-22  # AMD code objects ahead of time (mqajit aot --arch gfx950|gfx942)
          libclang-rt-22-dev)  # libFuzzer and the sanitizer runtimes for the fuzz targets (docs/testing.md)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
cuda_args=()
if command -v nvcc >/dev/null; then
  cuda_args=(-DCMAKE_CUDA_COMPILER="$(command -v nvcc)")
else
  echo "setup: nvcc not found: building without the NVIDIA backend (install the CUDA toolkit 12.8 or newer in /usr/local/cuda for it)"
  cuda_args=(-DMQAJIT_WITH_CUDA=OFF)
fi

build_type=${MQAJIT_BUILD_TYPE:-RelWithDebInfo}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="$build_type" "${cuda_args[@]}" ${MQAJIT_CMAKE_ARGS:-}
cmake --build build --parallel "$(nproc)"
