// The gfx9_paged_mqa_logits family's rules: paged_mqa_logits (decode) on AMD gfx942 and gfx950.
//   pmfma<M>x<N>x<K>_bkv<B>_r<next_n>_w<W>_lds<S>
//   M x N x K = an fp8 MFMA of the arch (as for mfma), B = the cache's tokens per block (one block per
//   pipeline step), next_n = query tokens per request, W = waves of 64 lanes sharing each block's
//   (token, column tile) pairs, S = LDS buffers for cache blocks.

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "codegen/families/gfx9_mqa_logits/family.hpp"
#include "codegen/families/gfx9_paged_mqa_logits/family.hpp"
#include "codegen/families/gfx9_paged_mqa_logits/gfx9_paged_mqa_logits.cuh"

namespace mqajit::variant_rules {
namespace {

constexpr std::initializer_list<int> kBlockSizes = {64, 128};
constexpr std::initializer_list<int> kWaves = {1, 2, 4};
constexpr std::initializer_list<int> kLdsBuffers = {2, 3, 4};
// NOTES: the architected VGPRs one lane of a wave can address on CDNA3/CDNA4; past them clang must
// keep values in AGPRs or scratch.
constexpr int kMaxVgprs = 256;

bool runs_pmfma(const Arch& arch) { return !gfx9_mfma_shapes(arch).empty(); }

struct RegisteredShape {
    int bkv, waves, stages;
};

// Per next_n and MFMA tile: for 32 x 32, two waves over 64-token blocks with two or three buffers and
// four waves over 128-token blocks; for 16 x 16, four waves over 64- or 128-token blocks.
constexpr RegisteredShape kRegistered32[] = {{64, 2, 2}, {64, 2, 3}, {128, 4, 2}};
constexpr RegisteredShape kRegistered16[] = {{64, 4, 2}, {128, 4, 3}};

class PagedMfmaRules final : public FamilyRules {
public:
    std::vector<std::string> archs() const override { return {"gfx942", "gfx950"}; }

    std::vector<Variant> registered(const Arch& arch) const override {
        std::vector<Variant> all;
        for (const MfmaShape& shape : gfx9_mfma_shapes(arch)) {
            for (int next_n = 1; next_n <= 4; ++next_n) {
                for (const RegisteredShape& r : shape.m == 32 ? std::span<const RegisteredShape>(kRegistered32)
                                                              : std::span<const RegisteredShape>(kRegistered16)) {
                    all.push_back(Variant{.op = MatrixOp::pmfma, .m = shape.m, .n = shape.n, .k = shape.k, .bkv = r.bkv,
                                          .rows = next_n, .warps = r.waves, .stages = r.stages});
                }
            }
        }
        return all;
    }

    Support check(const Arch& arch, int heads, int head_dim, const Variant& v) const override {
        if (!runs_pmfma(arch)) {
            return unsupported("paged_mqa_logits kernels for AMD (pmfma) need gfx942 or gfx950; this device is {}",
                               arch.name);
        }
        if (Support size = check_problem_size("pmfma", heads, {32, 64}, head_dim, {64, 128}); !size) return size;
        const auto shapes = gfx9_mfma_shapes(arch);
        if (std::ranges::none_of(shapes, [&](const MfmaShape& s) { return s.m == v.m && s.n == v.n && s.k == v.k; })) {
            return unsupported("pmfma{}x{}x{} is not an fp8 MFMA of {}; it runs {}", v.m, v.n, v.k, arch.name,
                               gfx9_mfma_shape_list(arch, "pmfma"));
        }
        if (v.rows < 1 || v.rows > 4) return unsupported("r (tokens per request, next_n) must be 1 to 4; got {}", v.rows);
        if (!contains(kBlockSizes, v.bkv)) {
            return unsupported("bkv (the cache's tokens per block) must be {}; got {}", join(kBlockSizes), v.bkv);
        }
        if (!contains(kWaves, v.warps)) return unsupported("w (waves per workgroup) must be {}; got {}", join(kWaves), v.warps);
        if (v.stages == 0) return unsupported("pmfma needs _lds<S> (LDS buffers for cache blocks, {})", join(kLdsBuffers));
        if (!contains(kLdsBuffers, v.stages)) {
            return unsupported("lds (LDS buffers for cache blocks) must be {}; got {}", join(kLdsBuffers), v.stages);
        }
        // NOTES: heads and head_dim must split into whole MFMA tiles; 16x16x128 fits D = 128 only.
        if (heads % v.m != 0 || head_dim % v.k != 0) {
            return unsupported("pmfma{}x{}x{} needs heads a multiple of {} and head_dim a multiple of {}; got heads={} "
                               "head_dim={}", v.m, v.n, v.k, v.m, v.k, heads, head_dim);
        }
        const int pairs = mqa_gfx9_paged::block_pairs(v.rows, v.bkv, v.m);
        if (pairs % v.warps != 0) {
            return unsupported("a block's r x bkv/M = {} (token, column tile) pairs must split evenly over w={} waves; "
                               "use fewer waves", pairs, v.warps);
        }
        if ((std::int64_t{v.bkv} * head_dim / 16) % (std::int64_t{v.warps} * 64) != 0) {
            return unsupported("a cache block's {} 16-byte chunks of keys must split evenly over w x 64 = {} threads; "
                               "use fewer waves", v.bkv * head_dim / 16, v.warps * 64);
        }
        if (const int vgprs = pmfma_vgpr_estimate(v, heads, head_dim); vgprs > kMaxVgprs) {
            return unsupported("a lane needs about {} VGPRs (Q operands, accumulators, weights, a staged block), over "
                               "the {} a wave can address; use more waves or a smaller bkv", vgprs, kMaxVgprs);
        }
        const std::int64_t lds = pmfma_lds_bytes(v, heads, head_dim);
        if (const auto limit = static_cast<std::int64_t>(gfx9_max_lds_bytes(arch)); lds > limit) {
            return unsupported("LDS {} B exceeds {} B ({} KiB on {}); lower lds or bkv", lds, limit, limit / 1024,
                               arch.name);
        }
        return supported();
    }
};

}  // namespace
}  // namespace mqajit::variant_rules

namespace mqajit {

std::int64_t pmfma_lds_bytes(const Variant& v, int heads, int head_dim) {
    return mqa_gfx9_paged::paged_lds_bytes(heads, head_dim, v.rows, v.bkv, v.stages);
}

int pmfma_vgpr_estimate(const Variant& v, int heads, int head_dim) {
    const int m_tiles = heads / v.m;
    const int q_operands = m_tiles * (head_dim / v.k) * mqa_gfx9::operand_bytes_per_lane(v.m, v.k) / 4;
    const int accumulators_and_weights = 2 * m_tiles * mqa_gfx9::accumulators_per_lane(v.m);
    const int staged = 4 * (v.bkv * head_dim / 16 / (v.warps * 64)) + 4;
    return q_operands + accumulators_and_weights + staged + 36;
}

const FamilyRules& gfx9_paged_mqa_logits_rules() {
    static const variant_rules::PagedMfmaRules rules;
    return rules;
}

}  // namespace mqajit
