#!/usr/bin/env bash
# Issue 17's end-to-end checks on the device machine, after `scripts/gpu_session.sh build`:
#   install    install, move the prefix, build examples/ against it (shared and a static build) and
#              run it on the GPU: the tuned row from the moved prefix serves the call
#   wheel      build the wheel from ./build, install it into a virtualenv that sees the system's
#              torch, and check mqajit.mqa_logits against mqa_logits_reference (exact in the windows)
#   aot        `mqajit aot -j 16` and `-j 1` give every kernel the same resources
#   tune       `mqajit tune` on one small shape through a pipe: a line per candidate with an ETA
# Usage (repo root): scripts/gpu_adopt_checks.sh [STEP...] (default: all). Logs go to $OUT.
set -uo pipefail
out=${OUT:-$PWD/gpu-out}
mkdir -p "$out"
deps=/tmp/mqajit-deps
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export PATH=$deps/usr/bin:$PATH  # patchelf for the wheel, from the carried Debian packages
export MQAJIT_CACHE_DIR=/tmp/mqajit-adopt-cache
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(install wheel aot tune)
row=(--arch sm_90a --cu-num 132 --heads 32 --head-dim 128 --seq-len 4096 --seq-len-kv 8192 --clean-logits 1)

for step in "${steps[@]}"; do
  case $step in
    install)
      rm -rf /tmp/mq-staged /tmp/mq-moved /tmp/mq-example /tmp/mq-static
      cmake --install build --prefix /tmp/mq-staged > "$out/install.log" 2>&1 && mv /tmp/mq-staged /tmp/mq-moved
      /tmp/mq-moved/bin/mqajit db lookup "${row[@]}" > "$out/install_lookup.txt" 2>&1
      cmake -S examples -B /tmp/mq-example -G Ninja -DCMAKE_PREFIX_PATH="/tmp/mq-moved;$deps/usr" >> "$out/install.log" 2>&1 &&
        cmake --build /tmp/mq-example >> "$out/install.log" 2>&1 &&
        /tmp/mq-example/indexer_example > "$out/example_shared.txt" 2>&1
      echo "shared example exit $?: $(tr '\n' ' ' < "$out/example_shared.txt")"
      cmake -S . -B /tmp/mq-static/build -G Ninja -DBUILD_SHARED_LIBS=OFF -DCMAKE_BUILD_TYPE=Release \
            -DCMAKE_PREFIX_PATH="$deps/usr" -DCMAKE_INSTALL_PREFIX=/tmp/mq-static/prefix -DMQAJIT_CUDA_ARCHS=90 \
            -DMQAJIT_BUILD_TESTS=OFF -DMQAJIT_BUILD_BENCHMARKS=OFF -DMQAJIT_BUILD_PYTHON=OFF > "$out/static.log" 2>&1 &&
        cmake --build /tmp/mq-static/build --parallel 16 >> "$out/static.log" 2>&1 &&
        cmake --install /tmp/mq-static/build >> "$out/static.log" 2>&1 &&
        cmake -S examples -B /tmp/mq-static/example -G Ninja -DCMAKE_PREFIX_PATH="/tmp/mq-static/prefix;$deps/usr" >> "$out/static.log" 2>&1 &&
        cmake --build /tmp/mq-static/example >> "$out/static.log" 2>&1 &&
        /tmp/mq-static/example/indexer_example > "$out/example_static.txt" 2>&1
      echo "static example exit $?: $(tr '\n' ' ' < "$out/example_static.txt")" ;;
    wheel)
      rm -rf /tmp/mq-wheel /tmp/mq-venv
      # python3-build where it is installed, else pip's own front end (both offline, no isolation)
      { MQAJIT_CMAKE_BUILD_DIR=build python3 -m build --no-isolation --wheel --outdir /tmp/mq-wheel . ||
        MQAJIT_CMAKE_BUILD_DIR=build python3 -m pip wheel --no-build-isolation --no-deps -w /tmp/mq-wheel .; } \
        > "$out/wheel.log" 2>&1 ||
        { echo "wheel build failed (setuptools, wheel or patchelf missing?): see $out/wheel.log"; continue; }
      python3 -m venv --system-site-packages /tmp/mq-venv >> "$out/wheel.log" 2>&1 &&
        # NOTES: the device's python3 is itself a virtualenv holding torch; a venv made from it sees
        # the base interpreter's packages only, so point it at torch's site-packages too.
        python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' > \
          "$(/tmp/mq-venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/device_torch.pth" &&
        /tmp/mq-venv/bin/python -m pip install --no-index /tmp/mq-wheel/*.whl >> "$out/wheel.log" 2>&1
      # NOTES: -X faulthandler -u: an abort (free(): invalid pointer, seen 2026-12-02) still leaves
      # the lines before it and a Python backtrace; LD_DEBUG=libs says which copy of each library loaded.
      (cd /tmp && env -u PYTHONPATH LD_DEBUG=libs LD_DEBUG_OUTPUT="$out/wheel_ld_debug" \
        /tmp/mq-venv/bin/python -X faulthandler -u - > "$out/wheel_gpu.txt" 2>&1 <<'EOF'
import mqajit, torch
print("mqajit", mqajit.__version__, "from", mqajit.__file__)
print(mqajit.runtime_status())
S, H, D, N = 512, 32, 128, 8192
g = torch.Generator(device="cpu").manual_seed(1)
q = torch.randn(S, H, D, generator=g).cuda().to(torch.float8_e4m3fn)
kv = torch.randn(N, D, generator=g).cuda().to(torch.float8_e4m3fn)
scales = (torch.rand(N, generator=g) + 0.5).cuda()
w = torch.randn(S, H, generator=g).cuda()
starts = torch.zeros(S, dtype=torch.int32).cuda()
ends = (N - S + 1 + torch.arange(S, dtype=torch.int32)).cuda()
report = {}
got = mqajit.mqa_logits(q, (kv, scales), w, starts, ends, clean_logits=True, report=report)
ref = mqajit.mqa_logits_reference(q, (kv, scales), w, starts, ends, clean_logits=True)
torch.cuda.synchronize()
inside = torch.arange(N, device="cuda")[None, :] < ends[:, None].long()
diff = (got - ref)[inside].abs().max().item()
print("kernel", report, "max |diff| in windows", diff, "relative to max |ref|",
      diff / ref[inside].abs().max().item(), "masked all -inf", bool(torch.isneginf(got[~inside]).all()))
EOF
      )
      echo "wheel on the GPU: $(tr '\n' ' ' < "$out/wheel_gpu.txt")" ;;
    aot)
      rm -rf /tmp/mq-aot16 /tmp/mq-aot1
      MQAJIT_CACHE_DIR=/tmp/mq-aot16 build/tools/mqajit aot --arch sm_90a --variants all -j 16 --json > "$out/aot_j16.json" 2> "$out/aot_j16.txt"
      MQAJIT_CACHE_DIR=/tmp/mq-aot1 build/tools/mqajit aot --arch sm_90a --variants all -j 1 --json > "$out/aot_j1.json" 2> "$out/aot_j1.txt"
      python3 - "$out/aot_j16.json" "$out/aot_j1.json" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
keys = ("registers", "shared_bytes", "spill_store_bytes", "spill_load_bytes", "status")
diff = [(x["variant"], x["heads"]) for x, y in zip(a, b) if any(x.get(k) != y.get(k) for k in keys)]
print(f"aot -j 16 vs -j 1: {len(a)} kernels, {len(diff)} differ {diff[:5]}")
EOF
      tail -2 "$out/aot_j16.txt" ;;
    tune)
      printf 'seq_len,seq_len_kv\n256,4096\n' > /tmp/mq-tune-in.csv
      rm -f /tmp/mq-tune-out.csv
      build/tools/mqajit tune -i /tmp/mq-tune-in.csv -o /tmp/mq-tune-out.csv --db /tmp/mq-tune.db 2>&1 | cat > "$out/tune_progress.txt"
      echo "tune exit ${PIPESTATUS[0]}: $(grep -c '^\[' "$out/tune_progress.txt") candidate lines"; tail -3 "$out/tune_progress.txt" ;;
  esac
done
