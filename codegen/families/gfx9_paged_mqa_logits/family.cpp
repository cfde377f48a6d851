// The paged_mqa_logits family for AMD gfx942 and gfx950 (gfx9_paged_mqa_logits.cuh): generator and
// launch plan. Compiled as HIP by clang ahead of time (runtime/compiler_clang_hip.cpp) or by hiprtc.

#include "codegen/families/gfx9_paged_mqa_logits/family.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "codegen/family_support.hpp"
#include "codegen/grid_plan.hpp"
#include "codegen/templates/paged_mqa_logits_params.cuh"
#include "core/check.hpp"

namespace mqajit {
namespace {

bool aligned16(const void* pointer) { return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0; }

class Gfx9PagedMqaLogitsFamily final : public PagedMqaLogitsFamily {
public:
    std::string name() const override { return "gfx9_paged_mqa_logits"; }
    MatrixOp op() const override { return MatrixOp::pmfma; }
    const FamilyRules& rules() const override { return gfx9_paged_mqa_logits_rules(); }

    GeneratedKernel generate(const Variant& v, int heads, int head_dim, const Arch& arch) const override {
        check_generatable(*this, v, heads, head_dim, arch);
        return generated_unit(v, heads, head_dim, arch, "gfx9_paged_mqa_logits.cuh", "MQA_GFX9_PAGED_KERNEL",
                              fmt::format("{}, {}, {}, {}, {}, {}, {}, {}", heads, head_dim, v.m, v.k, v.bkv, v.rows,
                                          v.warps, v.stages));
    }

    std::size_t shared_bytes(const Variant& v, int heads, int head_dim) const override {
        return static_cast<std::size_t>(pmfma_lds_bytes(v, heads, head_dim));
    }

    Support fits(const Variant& v, const PagedProblemShape& shape) const override { return fits_paged_call(v, shape); }

    // Grid (batch, splits): workgroup (b, y) takes split y of request b's cache blocks, found on the
    // device from its context lengths (gfx9_paged_mqa_logits.cuh); the split count is the host's.
    LaunchPlan plan(const Variant& v, const PagedProblemShape& shape, const DeviceLimits& device,
                    const PagedMqaLogitsParams& params) const override {
        const Support fit = fits(v, shape);
        MQAJIT_CHECK_KIND(unsupported, fit.ok, "{}", fit.reason);
        MQAJIT_CHECK(aligned16(params.q) && params.q_stride_b % 16 == 0,
                     "q must start on a 16-byte boundary with a request stride that is a multiple of 16 bytes for "
                     "the pmfma kernels (stride {}); pad or copy q",
                     params.q_stride_b);
        MQAJIT_CHECK(aligned16(params.kv_cache) && params.cache_block_bytes % 16 == 0,
                     "kv_cache must start on a 16-byte boundary with a block stride that is a multiple of 16 bytes "
                     "for the pmfma kernels (stride {}); pad the cache blocks",
                     params.cache_block_bytes);
        const std::size_t lds = shared_bytes(v, shape.heads, shape.head_dim);
        check_shared_bytes(v, lds, device, "LDS", "(lower lds or bkv)");
        const int compute_units =
            shape.num_sms > 0 ? std::min(shape.num_sms, device.multiprocessors) : device.multiprocessors;
        const int batch = std::max(1, shape.batch);
        return unit_grid_plan(batch, pmfma_splits(batch, shape.max_context_len, v.bkv, compute_units),
                              static_cast<unsigned>(v.warps * 64), lds);
    }
};

}  // namespace

int pmfma_splits(int batch, int max_context_len, int block_kv, int compute_units) {
    const std::int64_t max_blocks = (std::int64_t{std::max(0, max_context_len)} + block_kv - 1) / block_kv;
    return unit_kv_splits(std::max(1, batch), std::max<std::int64_t>(1, max_blocks), std::max(1, compute_units));
}

const PagedMqaLogitsFamily& gfx9_paged_mqa_logits_family() {
    static const Gfx9PagedMqaLogitsFamily family;
    return family;
}

}  // namespace mqajit
