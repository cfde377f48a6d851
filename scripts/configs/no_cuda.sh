#!/usr/bin/env bash
# The build without CUDA (docs/amd.md): configures, builds and tests mqajit with
# -DMQAJIT_WITH_CUDA=OFF and the CUDA toolkit hidden, as an AMD machine without it would. The
# library, the CLI and the tests are built (no Python binding, no benchmarks), then every test of
# that build runs (GPU tests report skipped; the installed-package test installs this build and
# consumes it from another project) except the two AMD ahead-of-time sweeps, which the main build
# runs identically.
#   scripts/configs/no_cuda.sh BUILD_DIR    (the `config_no_cuda` ctest test runs it)
set -euo pipefail
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
build_dir=${1:?usage: scripts/configs/no_cuda.sh BUILD_DIR}
jobs=${MQAJIT_CONFIG_JOBS:-2}

# Hide the toolkit: no nvcc on PATH, none of the variables FindCUDAToolkit reads, /usr/local/cuda
# ignored by every find_*, and CUDAToolkit not looked for at all.
PATH=$(printf '%s' "$PATH" | tr ':' '\n' | grep -v -i cuda | paste -sd: -)
export PATH
unset CUDA_PATH CUDA_HOME CUDA_ROOT CUDACXX CUDAToolkit_ROOT NVCC_PREPEND_FLAGS NVCC_APPEND_FLAGS || true
export MQAJIT_CUDA_DRIVER_LIBRARY=/nonexistent/libcuda.so.1 MQAJIT_NVRTC_LIBRARY=/nonexistent/libnvrtc.so

cmake -S "$source_dir" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DMQAJIT_WITH_CUDA=OFF -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON \
      -DCMAKE_IGNORE_PREFIX_PATH=/usr/local/cuda -DCMAKE_IGNORE_PATH="/usr/local/cuda/bin;/usr/local/cuda/include" \
      -DMQAJIT_BUILD_PYTHON=OFF -DMQAJIT_BUILD_BENCHMARKS=OFF -DMQAJIT_CONFIG_TESTS=OFF
cmake --build "$build_dir" --parallel "$jobs"

# The toolkit stayed out: no compile command names it, and the library has no NVIDIA backend.
# NOTES: the build folder's own paths are taken out first: its name (no_cuda) followed by /include
# (the generated version.hpp) would read as a toolkit's include folder.
commands=$(sed "s|$build_dir||g" "$build_dir/compile_commands.json")
if grep -q -i "cuda/include\|/usr/local/cuda" <<< "$commands"; then
  echo "no_cuda: a compile command uses the CUDA toolkit:" >&2
  grep -i -m3 "cuda/include\|/usr/local/cuda" <<< "$commands" >&2
  exit 1
fi
# NOTES: libmqajit.so exports only the API (hidden visibility), so the archive it is made of, where
# every symbol is, is what shows whether the backend's code was compiled in.
archive="$build_dir/libmqajit_internal.a"
[ -f "$archive" ] || { echo "no_cuda: $archive (the library's code) not found" >&2; exit 1; }
if nm -C --defined-only "$archive" | grep -q "CudaBackend\|NvrtcCompiler"; then
  echo "no_cuda: $archive defines the NVIDIA backend" >&2
  exit 1
fi
echo "no_cuda: built without the CUDA toolkit ($archive has no NVIDIA backend)"

ctest --test-dir "$build_dir" --output-on-failure -j "$jobs" -E "^amd aot: gfx9(42|50) builds every mfma variant"
