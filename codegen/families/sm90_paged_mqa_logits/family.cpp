// The paged_mqa_logits family for sm_90a (sm90_paged_mqa_logits.cuh): generator and launch plan.

#include "codegen/families/sm90_paged_mqa_logits/family.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>

#include "codegen/family_support.hpp"
#include "codegen/templates/paged_mqa_logits_params.cuh"
#include "core/check.hpp"

namespace mqajit {
namespace {

// (d, next_n * H rows of one request, request): one box is one request's Q.
TensorMapRequest q_tensor_map(const PagedProblemShape& shape, const PagedMqaLogitsParams& params) {
    const auto d = static_cast<std::uint64_t>(shape.head_dim);
    TensorMapRequest q;
    q.base = params.q;
    q.rank = 3;
    q.dims[0] = d;
    q.dims[1] = static_cast<std::uint64_t>(shape.next_n) * static_cast<std::uint64_t>(shape.heads);
    q.dims[2] = static_cast<std::uint64_t>(shape.batch);
    q.strides_bytes[0] = d;  // the tokens and heads of one request are dense
    q.strides_bytes[1] = static_cast<std::uint64_t>(params.q_stride_b);
    q.box[0] = static_cast<std::uint32_t>(d);
    q.box[1] = static_cast<std::uint32_t>(q.dims[1]);
    q.box[2] = 1;
    q.element_bytes = 1;
    q.swizzle_bytes = shape.head_dim;
    return q;
}

// (d, slot, cache block): one box is one cache block's keys. A block index outside the cache
// reads as zeros.
TensorMapRequest keys_tensor_map(const PagedProblemShape& shape, const PagedMqaLogitsParams& params) {
    const auto d = static_cast<std::uint64_t>(shape.head_dim);
    TensorMapRequest keys;
    keys.base = params.kv_cache;
    keys.rank = 3;
    keys.dims[0] = d;
    keys.dims[1] = static_cast<std::uint64_t>(shape.block_kv);
    keys.dims[2] = static_cast<std::uint64_t>(shape.num_cache_blocks);
    keys.strides_bytes[0] = d;
    keys.strides_bytes[1] = static_cast<std::uint64_t>(params.cache_block_bytes);
    keys.box[0] = static_cast<std::uint32_t>(d);
    keys.box[1] = static_cast<std::uint32_t>(shape.block_kv);
    keys.box[2] = 1;
    keys.element_bytes = 1;
    keys.swizzle_bytes = shape.head_dim;
    return keys;
}

// (slot, cache block) over the fp32 scales behind each block's keys: one box is one block's.
TensorMapRequest scales_tensor_map(const PagedProblemShape& shape, const PagedMqaLogitsParams& params) {
    TensorMapRequest scales;
    scales.base = params.kv_cache + static_cast<std::ptrdiff_t>(shape.block_kv) * shape.head_dim;
    scales.rank = 2;
    scales.dims[0] = static_cast<std::uint64_t>(shape.block_kv);
    scales.dims[1] = static_cast<std::uint64_t>(shape.num_cache_blocks);
    scales.strides_bytes[0] = static_cast<std::uint64_t>(params.cache_block_bytes);
    scales.box[0] = static_cast<std::uint32_t>(shape.block_kv);
    scales.box[1] = 1;
    scales.element_bytes = 4;
    scales.swizzle_bytes = 0;
    return scales;
}

class Sm90PagedMqaLogitsFamily final : public PagedMqaLogitsFamily {
public:
    std::string name() const override { return "sm90_paged_mqa_logits"; }
    MatrixOp op() const override { return MatrixOp::pwgmma; }
    const FamilyRules& rules() const override { return sm90_paged_mqa_logits_rules(); }

    GeneratedKernel generate(const Variant& v, int heads, int head_dim, const Arch& arch) const override {
        check_generatable(*this, v, heads, head_dim, arch);
        return generated_unit(v, heads, head_dim, arch, "sm90_paged_mqa_logits.cuh", "MQA_SM90_PAGED_KERNEL",
                              fmt::format("{}, {}, {}, {}, {}, {}, 1", heads, head_dim, v.bkv, v.rows, v.warps, v.stages));
    }

    std::size_t shared_bytes(const Variant& v, int heads, int head_dim) const override {
        return static_cast<std::size_t>(paged_shared_bytes(v, heads, head_dim));
    }

    Support fits(const Variant& v, const PagedProblemShape& shape) const override { return fits_paged_call(v, shape); }

    LaunchPlan plan(const Variant& v, const PagedProblemShape& shape, const DeviceLimits& device,
                    const PagedMqaLogitsParams& params) const override {
        const Support fit = fits(v, shape);
        MQAJIT_CHECK_KIND(unsupported, fit.ok, "{}", fit.reason);
        const std::size_t smem = shared_bytes(v, shape.heads, shape.head_dim);
        check_shared_bytes(v, smem, device, "shared memory", "lower lds");
        // NOTES: the kernel splits the blocks its requests need over the grid on the device; bounded
        // on the host, so no CTA is started that could never get work.
        const std::int64_t blocks_bound = shape.cache_blocks_bound();
        LaunchPlan plan;
        plan.add_tensor_map(q_tensor_map(shape, params), offsetof(PagedMqaLogitsParams, tma_q));
        plan.add_tensor_map(keys_tensor_map(shape, params), offsetof(PagedMqaLogitsParams, tma_keys));
        plan.add_tensor_map(scales_tensor_map(shape, params), offsetof(PagedMqaLogitsParams, tma_scales));
        const int sms = shape.num_sms > 0 ? std::min(shape.num_sms, device.multiprocessors) : device.multiprocessors;
        plan.config.grid_x = static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>(blocks_bound, sms)));
        plan.config.block_x = static_cast<unsigned>((v.warps + 1) * 128);
        plan.config.dynamic_shared_bytes = smem;
        return plan;
    }
};

}  // namespace

const PagedMqaLogitsFamily& sm90_paged_mqa_logits_family() {
    static const Sm90PagedMqaLogitsFamily family;
    return family;
}

}  // namespace mqajit
