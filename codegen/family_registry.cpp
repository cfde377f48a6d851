// The one place that maps a variant's matrix op to the family that generates it.

#include "codegen/families.hpp"
#include "core/check.hpp"

namespace mqajit {

const KernelFamily& family_for(const Variant& variant) {
    switch (variant.op) {
        case MatrixOp::mma:
            return sm80_mma_family();
        case MatrixOp::wgmma:
            return sm90_wgmma_family();
        case MatrixOp::mfma:
            MQAJIT_FAIL(unsupported, "variant {}: AMD kernels are not generated yet; use an NVIDIA variant",
                        variant.name());
    }
    MQAJIT_FAIL(internal, "variant {} has an unknown matrix op", variant.name());
}

}  // namespace mqajit
