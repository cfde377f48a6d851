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
            return gfx9_mfma_family();
    }
    MQAJIT_FAIL(internal, "variant {} has an unknown matrix op", variant.name());
}

}  // namespace mqajit
