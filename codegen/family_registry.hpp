#pragma once
// The kernel families this build knows. family_registry.cpp maps a Variant's MatrixOp to one.

#include "codegen/kernel_family.hpp"

namespace mqajit {

const KernelFamily& sm80_mma_family();    // codegen/sm80_family.cpp: mma.sync, sm_80 and newer
const KernelFamily& sm90_wgmma_family();  // codegen/sm90_family.cpp: wgmma + TMA, sm_90a
const KernelFamily& gfx9_mfma_family();   // codegen/gfx9_family.cpp: fp8 MFMA, gfx942 and gfx950

}  // namespace mqajit
