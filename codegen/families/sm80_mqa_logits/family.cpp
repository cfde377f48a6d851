// The mma family (codegen/templates/sm80_mqa_logits.cuh): mma.sync with cp.async, sm_80 and newer.

#include "codegen/sm80_family.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "codegen/families.hpp"
#include "codegen/family_support.hpp"
#include "codegen/grid_plan.hpp"
#include "codegen/templates/sm80_mqa_logits.cuh"
#include "core/check.hpp"

namespace mqajit {
namespace {

constexpr int kOldestArch = 80;
constexpr int kOldestNativeFp8Arch = 89;
constexpr int kMaxStages = 4;
constexpr int kMaxAccumulatorsPerPass = 64;  // the template's static_assert
constexpr int kUnitsPerMultiprocessor = 2;   // (q-block, KV split) CTAs the split rule aims for
constexpr std::int64_t kMaxGridY = 65535;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// The template's compile-time rules, as errors that say what to change instead of NVRTC's.
void check_generatable(const Variant& v, int heads, int head_dim, const Arch& arch) {
    MQAJIT_CHECK_KIND(internal, v.op == MatrixOp::mma, "the mma family was asked to generate {}", v.name());
    MQAJIT_CHECK_KIND(unsupported, arch.vendor == Vendor::nvidia && arch.number >= kOldestArch,
                      "variant {} uses mma.sync, which needs an NVIDIA GPU of sm_80 or newer; the target is {}",
                      v.name(), arch.name);
    MQAJIT_CHECK_KIND(unsupported, v.m == 16 && v.n == 8 && (v.k == 16 || v.k == 32),
                      "variant {}: the mma family runs m16n8k16 (fp8 widened to f16) or m16n8k32 (native e4m3)",
                      v.name());
    MQAJIT_CHECK_KIND(unsupported, v.k == 16 || arch.number >= kOldestNativeFp8Arch,
                      "variant {} uses native e4m3 mma.sync, which needs sm_89 or newer; the target is {} "
                      "(use an mma16x8x16 variant)",
                      v.name(), arch.name);
    MQAJIT_CHECK_KIND(unsupported, v.stages >= 1 && v.stages <= kMaxStages,
                      "variant {}: _lds<S> (cp.async stages) must be 1..{}", v.name(), kMaxStages);
    MQAJIT_CHECK_KIND(unsupported, v.warps >= 1 && v.bkv % v.warps == 0 && (v.bkv / v.warps) % 16 == 0,
                      "variant {}: each warp owns bkv / w = {} / {} KV rows, which must be a multiple of 16",
                      v.name(), v.bkv, v.warps);
    MQAJIT_CHECK_KIND(unsupported, heads % 8 == 0 && head_dim % 32 == 0 && head_dim <= 128,
                      "the mma family needs heads a multiple of 8 and head_dim 32..128 in steps of 32; got "
                      "heads={} head_dim={}",
                      heads, head_dim);
    MQAJIT_CHECK_KIND(unsupported, v.rows >= 1 && (v.rows * heads) % 16 == 0,
                      "variant {}: r x heads = {} x {} must be a multiple of 16", v.name(), v.rows, heads);
    const int passes = mqa_sm80::column_passes(heads, v.bkv, v.rows, v.warps);
    const int accumulators = (v.bkv / v.warps / 16) * (v.rows * heads / 8) * 4 / passes;
    MQAJIT_CHECK_KIND(unsupported, accumulators <= kMaxAccumulatorsPerPass,
                      "variant {} at heads={} keeps {} accumulators per thread, over {}; raise w or lower r",
                      v.name(), heads, accumulators, kMaxAccumulatorsPerPass);
}

class Sm80MmaFamily final : public KernelFamily {
public:
    std::string name() const override { return "sm80_mqa_logits"; }
    MatrixOp op() const override { return MatrixOp::mma; }

    GeneratedKernel generate(const Variant& v, int heads, int head_dim, const Arch& arch) const override {
        check_generatable(v, heads, head_dim, arch);
        return generated_unit(v, heads, head_dim, arch, "sm80_mqa_logits.cuh", "MQA_SM80_MQA_LOGITS_KERNEL",
                              fmt::format("{}, {}, {}, {}, {}, {}, {}", heads, head_dim, v.bkv, v.rows, v.warps,
                                          v.stages, v.k == 32 ? "true" : "false"));
    }

    std::size_t shared_bytes(const Variant& v, int heads, int head_dim) const override {
        return sm80_shared_bytes(v, heads, head_dim);
    }

    LaunchPlan plan(const Variant& v, const ProblemShape& shape, Device& device,
                    MqaLogitsParams& params) const override {
        check_row_alignment(params, "mma");
        const std::size_t smem = sm80_shared_bytes(v, shape.heads, shape.head_dim);
        MQAJIT_CHECK_KIND(unsupported, smem <= device.max_shared_bytes_per_block(),
                          "variant {} needs {} B of shared memory; the device allows {} B per block (lower lds, "
                          "bkv or r)",
                          v.name(), smem, device.max_shared_bytes_per_block());
        const std::int64_t num_q_blocks = std::max<std::int64_t>(1, ceil_div(shape.seq_len, v.rows));
        MQAJIT_CHECK(num_q_blocks <= std::numeric_limits<int>::max(),
                     "seq_len {} makes {} q-blocks, over the grid limit; split the call along seq_len",
                     shape.seq_len, num_q_blocks);
        const std::int64_t num_tiles = ceil_div(shape.seq_len_kv, v.bkv);
        const int num_splits = sm80_kv_splits(num_q_blocks, num_tiles, device.multiprocessor_count());

        return unit_grid_plan(params, num_q_blocks, num_splits, static_cast<unsigned>(v.warps * 32), smem);
    }
};

}  // namespace

std::size_t sm80_shared_bytes(const Variant& v, int heads, int head_dim) {
    return static_cast<std::size_t>(
        mqa_sm80::shared_layout(heads, head_dim, v.bkv, v.rows, v.warps, v.stages).total_bytes);
}

int sm80_kv_splits(std::int64_t num_q_blocks, std::int64_t num_kv_tiles, int num_multiprocessors) {
    if (num_kv_tiles <= 0 || num_q_blocks <= 0) return 1;
    const std::int64_t wanted = std::clamp<std::int64_t>(
        ceil_div(std::int64_t{kUnitsPerMultiprocessor} * num_multiprocessors, num_q_blocks), 1, num_kv_tiles);
    // NOTES: the kernel hands split y the tiles [y*T, (y+1)*T) with T = ceil(tiles / splits). Picking T
    // first (the most tiles per split that still gives `wanted` splits) and then splits = ceil(tiles / T)
    // leaves no split empty: 10 tiles in 6 splits would give T = 2 and an idle sixth split.
    const std::int64_t tiles_per_split =
        std::max({std::int64_t{1}, num_kv_tiles / wanted, ceil_div(num_kv_tiles, kMaxGridY)});
    return static_cast<int>(ceil_div(num_kv_tiles, tiles_per_split));
}

const KernelFamily& sm80_mma_family() {
    static const Sm80MmaFamily family;
    return family;
}

}  // namespace mqajit
