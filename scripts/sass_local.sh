#!/usr/bin/env bash
# SASS of an sm_90a kernel variant without a GPU: the variant's generated source compiled with the
# toolkit's nvcc into a cubin, disassembled with an nvdisasm, then its wgmma loop counted
# (scripts/device/sass_loop.py: instructions and static stalls per tile).
#   scripts/sass_local.sh VARIANT HEADS [HEAD_DIM] [--list]
# Environment: NVCC (default /usr/local/cuda/bin/nvcc), NVDISASM (default: nvdisasm on PATH, else
# /opt/cuda118/usr/bin/nvdisasm), OUT (where k.cu, k.cubin and k.sass go; default a temporary folder).
# Any nvdisasm from CUDA 11.8 on reads sm_90 code, but those older than the compiler do not know
# its ELF header, so a copy of the cubin gets the header they know (the code is untouched). Debian
# ships 11.8's in non-free: `apt-get download nvidia-cuda-toolkit` from bookworm's non-free
# component and `dpkg -x` it into /opt/cuda118. Wgmma instructions print without a mnemonic there.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n 2,12p "$0"; exit 2; }
variant=$1 heads=$2 head_dim=${3:-128}
list=(); [ "${4:-}" = --list ] && list=(--list)
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
nvdisasm=${NVDISASM:-$(command -v nvdisasm || echo /opt/cuda118/usr/bin/nvdisasm)}
[ -x "$nvdisasm" ] || { echo "no nvdisasm at $nvdisasm (see the comment at the top of $0)"; exit 2; }
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
build/tools/mqajit codegen "$variant" --arch sm_90a --heads "$heads" --head-dim "$head_dim" > "$out/k.cu"
includes=(-Icodegen/templates -Icodegen/families/sm90_mqa_logits)
[[ $variant == pwgmma* ]] && includes+=(-Icodegen/families/sm90_paged_mqa_logits)
[[ $variant == twgmma* ]] && includes+=(-Icodegen/families/sm90_mqa_topk)
"$nvcc" -std=c++17 -DNDEBUG -arch=sm_90a -cubin "${includes[@]}" "$out/k.cu" -o "$out/k.cubin"
python3 - "$out/k.cubin" "$out/k.old-header.cubin" <<'PY'
import struct, sys
elf = bytearray(open(sys.argv[1], "rb").read())
elf[7], elf[8] = 0x33, 7                        # the CUDA OS/ABI bytes older tools expect
struct.pack_into("<I", elf, 0x30, 0x5A055A)     # e_flags: sm_90, virtual sm_90, 64-bit addresses
open(sys.argv[2], "wb").write(elf)
PY
"$nvdisasm" -hex "$out/k.old-header.cubin" > "$out/k.sass"
kernel=$(grep -o '^\.text\.[A-Za-z0-9_]*:' "$out/k.sass" | head -1 | sed 's/^\.text\.//; s/:$//')
echo "$out/k.sass: $kernel"
python3 scripts/device/sass_loop.py "$out/k.sass" "$kernel" "${list[@]}"
