// The sm90_mqa_logits family: wgmma fed by TMA, sm_90a (sm90_mqa_logits.cuh in this folder).

#include "codegen/families/sm90_mqa_logits/family.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstddef>

#include "codegen/family_support.hpp"
#include "codegen/families/sm90_mqa_logits/resources.hpp"
#include "codegen/templates/mqa_logits_params.cuh"
#include "core/check.hpp"

namespace mqajit {
namespace {

std::size_t sm90_shared_bytes(const Variant& v, int heads, int head_dim) {
    return static_cast<std::size_t>(wgmma_shared_bytes(v, heads, head_dim));
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// NOTES: sm90_kv_splits is pure but takes up to half a microsecond for a few queries over long rows,
// on every call; an engine calls with a handful of shapes, so each thread keeps its last answers.
int remembered_kv_splits(std::int64_t num_q_blocks, std::int64_t num_kv_tiles, int num_multiprocessors) {
    struct Answer {
        std::int64_t num_q_blocks = -1, num_kv_tiles = -1;
        int num_multiprocessors = -1, splits = 1;
    };
    thread_local std::array<Answer, 16> answers;
    Answer& slot = answers[static_cast<std::size_t>(num_q_blocks * 31 + num_kv_tiles) % answers.size()];
    if (slot.num_q_blocks != num_q_blocks || slot.num_kv_tiles != num_kv_tiles ||
        slot.num_multiprocessors != num_multiprocessors) {
        slot = {num_q_blocks, num_kv_tiles, num_multiprocessors,
                sm90_kv_splits(num_q_blocks, num_kv_tiles, num_multiprocessors)};
    }
    return slot.splits;
}

int usable_multiprocessors(int device_multiprocessors, int cap) {
    return cap > 0 ? std::min(cap, device_multiprocessors) : device_multiprocessors;
}

// The 3-D map over q (d, h, s) whose box is one q-block, and the 2-D map over kv (d, n) whose box is one tile.
TensorMapRequest q_tensor_map(const Variant& v, const ProblemShape& shape, const MqaLogitsParams& params) {
    const auto d = static_cast<std::uint64_t>(shape.head_dim);
    TensorMapRequest q;
    q.base = params.q;
    q.rank = 3;
    q.dims[0] = d;
    q.dims[1] = static_cast<std::uint64_t>(shape.heads);
    q.dims[2] = static_cast<std::uint64_t>(shape.seq_len);
    q.strides_bytes[0] = d;  // h stride: rows of one query are dense
    q.strides_bytes[1] = static_cast<std::uint64_t>(params.q_stride_s);
    q.box[0] = static_cast<std::uint32_t>(d);
    q.box[1] = static_cast<std::uint32_t>(shape.heads);
    q.box[2] = static_cast<std::uint32_t>(v.rows);
    q.element_bytes = 1;
    q.swizzle_bytes = shape.head_dim;
    return q;
}

TensorMapRequest kv_tensor_map(const Variant& v, const ProblemShape& shape, const MqaLogitsParams& params) {
    const auto d = static_cast<std::uint64_t>(shape.head_dim);
    TensorMapRequest kv;
    kv.base = params.kv;
    kv.rank = 2;
    kv.dims[0] = d;
    kv.dims[1] = static_cast<std::uint64_t>(shape.seq_len_kv);
    kv.strides_bytes[0] = static_cast<std::uint64_t>(params.kv_stride_n);
    kv.box[0] = static_cast<std::uint32_t>(d);
    kv.box[1] = static_cast<std::uint32_t>(v.bkv);
    kv.element_bytes = 1;
    kv.swizzle_bytes = shape.head_dim;
    return kv;
}

class Sm90MqaLogitsFamily final : public MqaLogitsFamily {
public:
    std::string name() const override { return "sm90_mqa_logits"; }
    MatrixOp op() const override { return MatrixOp::wgmma; }
    const FamilyRules& rules() const override { return sm90_mqa_logits_rules(); }

    GeneratedKernel generate(const Variant& v, int heads, int head_dim, const Arch& arch) const override {
        check_generatable(*this, v, heads, head_dim, arch);
        return generated_unit(v, heads, head_dim, arch, "sm90_mqa_logits.cuh", "MQA_SM90_KERNEL",
                              fmt::format("{}, {}, {}, {}, {}, {}", heads, head_dim, v.bkv, v.rows, v.warps, v.stages));
    }

    std::size_t shared_bytes(const Variant& v, int heads, int head_dim) const override {
        return sm90_shared_bytes(v, heads, head_dim);
    }

    LaunchPlan plan(const Variant& v, const ProblemShape& shape, const DeviceLimits& device,
                    const MqaLogitsParams& params) const override {
        const std::size_t smem = sm90_shared_bytes(v, shape.heads, shape.head_dim);
        check_shared_bytes(v, smem, device, "shared memory", "");
        const int sms = usable_multiprocessors(device.multiprocessors, shape.num_sms);
        const std::int64_t num_q_blocks = ceil_div(shape.seq_len, v.rows);
        const std::int64_t num_tiles = ceil_div(shape.seq_len_kv, v.bkv);
        const std::int64_t num_splits = params.num_kv_splits > 0
                                            ? whole_kv_splits(num_tiles, params.num_kv_splits)
                                            : remembered_kv_splits(num_q_blocks, num_tiles, sms);

        LaunchPlan plan;
        plan.num_q_blocks = static_cast<int>(num_q_blocks);
        plan.num_kv_splits = static_cast<int>(num_splits);
        plan.add_tensor_map(q_tensor_map(v, shape, params), offsetof(MqaLogitsParams, tma_q));
        plan.add_tensor_map(kv_tensor_map(v, shape, params), offsetof(MqaLogitsParams, tma_kv));
        plan.config.grid_x = static_cast<unsigned>(std::min<std::int64_t>(num_q_blocks * num_splits, sms));
        plan.config.block_x = static_cast<unsigned>((v.warps + 1) * 128);
        plan.config.dynamic_shared_bytes = smem;
        return plan;
    }
};

}  // namespace

std::int64_t whole_kv_splits(std::int64_t num_kv_tiles, std::int64_t wanted) {
    if (num_kv_tiles <= 0) return 1;
    // NOTES: the kernel gives split y the tiles [y*T, (y+1)*T) with T = ceil(tiles / splits); taking
    // T first and then splits = ceil(tiles / T) leaves no split empty (10 tiles in 6 splits: T = 2
    // would leave the sixth idle, so 5 splits).
    const std::int64_t tiles_per_split = ceil_div(num_kv_tiles, std::clamp<std::int64_t>(wanted, 1, num_kv_tiles));
    return ceil_div(num_kv_tiles, tiles_per_split);
}
int sm90_kv_splits(std::int64_t num_q_blocks, std::int64_t num_kv_tiles, int num_multiprocessors) {
    if (num_q_blocks <= 0 || num_kv_tiles <= 0 || num_multiprocessors <= 0) return 1;
    // NOTES: the masks are in device memory, so the model assumes full windows: every unit costs its
    // tiles plus a start-up (weights, Q wait, pipeline drain) of kUnitStartTiles, and the block that
    // gets the most units sets the time. Causal masks make units unequal; the kernel's snake order
    // evens those out, so more splits than this model wants buy little and cost start-ups.
    constexpr std::int64_t kUnitStartTiles = 2;
    const std::int64_t max_splits = std::min<std::int64_t>(num_kv_tiles, 4 * std::int64_t{num_multiprocessors});
    std::int64_t best_splits = 1, best_cost = -1;
    // NOTES: only counts that leave no split empty are tried, each once, by walking tiles-per-split
    // down: tens of steps even for long rows, since this runs on every call.
    for (std::int64_t tiles_per_split = num_kv_tiles; tiles_per_split >= 1;) {
        const std::int64_t splits = ceil_div(num_kv_tiles, tiles_per_split);
        if (splits > max_splits) break;
        // No count from here on can beat the best: even perfectly balanced, `splits` splits cost
        // (q-blocks x (tiles + splits x start-up)) / SMs, which only grows with `splits`.
        const std::int64_t lower_bound = num_q_blocks * (num_kv_tiles + splits * kUnitStartTiles) / num_multiprocessors;
        if (best_cost >= 0 && lower_bound >= best_cost) break;
        const std::int64_t rounds = ceil_div(num_q_blocks * splits, num_multiprocessors);
        const std::int64_t cost = rounds * (ceil_div(num_kv_tiles, splits) + kUnitStartTiles);
        if (best_cost < 0 || cost < best_cost) {
            best_cost = cost;
            best_splits = splits;
        }
        tiles_per_split = ceil_div(num_kv_tiles, splits) - 1;  // the next larger count's
    }
    return static_cast<int>(best_splits);
}

const MqaLogitsFamily& sm90_mqa_logits_family() {
    static const Sm90MqaLogitsFamily family;
    return family;
}

}  // namespace mqajit
