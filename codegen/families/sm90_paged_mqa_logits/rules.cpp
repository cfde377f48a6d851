// The sm90_paged_mqa_logits family's rules: paged_mqa_logits (decode) on sm_90a.
//   pwgmma64x<N>x32_bkv<B>_r<next_n>_w<W>_lds<S>
//   N = next_n x heads (the tokens and heads of one request form the wgmma N), B = the cache's
//   tokens per block (one block per pipeline stage), W = math warpgroups taking blocks in turn,
//   S = pipeline stages.

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "codegen/families/sm90_mqa_logits/resources.hpp"
#include "codegen/families/sm90_paged_mqa_logits/family.hpp"

namespace mqajit::variant_rules {
namespace {

constexpr int kMaxAccumulatorRegisters = 128;

bool runs_wgmma(const Arch& arch) { return arch.vendor == Vendor::nvidia && arch.number == 90 && arch.arch_specific; }

class PagedWgmmaRules final : public FamilyRules {
public:
    std::vector<std::string> archs() const override { return {"sm_90a"}; }

    // For each head count and next_n: two warpgroups with 8 or 16 stages, one with 8 or 16, and
    // where the math fits their registers three with 12 stages and four with 16.
    std::vector<Variant> registered(const Arch& arch) const override {
        if (!runs_wgmma(arch)) return {};
        std::vector<Variant> all;
        for (int heads : {32, 64}) {
            for (int next_n = 1; next_n <= 4; ++next_n) {
                for (const auto& [warps, stages] : {std::pair{2, 8}, {2, 16}, {1, 8}, {1, 16}, {3, 12}, {4, 16}}) {
                    const Variant v{.op = MatrixOp::pwgmma, .m = 64, .n = next_n * heads, .k = 32, .bkv = 64,
                                    .rows = next_n, .warps = warps, .stages = stages};
                    if (check(arch, heads, 128, v)) all.push_back(v);
                }
            }
        }
        return all;
    }

    Support check(const Arch& arch, int heads, int head_dim, const Variant& v) const override {
        if (!runs_wgmma(arch))
            return unsupported("paged_mqa_logits kernels (pwgmma) need sm_90a; this device is {}", arch.name);
        if (v.op != MatrixOp::pwgmma) {
            return unsupported("paged_mqa_logits runs pwgmma variants; {} is an mqa_logits ({}) kernel", v.name(),
                               to_string(v.op));
        }
        if (Support size = check_problem_size("pwgmma", heads, {32, 64}, head_dim, {64, 128}); !size) return size;
        if (v.m != 64 || v.k != 32) return unsupported("pwgmma runs the fp8 shape 64x<N>x32; got M={} K={}", v.m, v.k);
        if (v.rows < 1 || v.rows > 4) return unsupported("r (tokens per request, next_n) must be 1 to 4; got {}", v.rows);
        if (v.n != v.rows * heads) {
            return unsupported("N={} must equal r x heads = {} x {} = {}", v.n, v.rows, heads, v.rows * heads);
        }
        if (v.n < 32 || v.n > 256 || v.n % 32 != 0)
            return unsupported("N={} must be a multiple of 32 from 32 to 256 (the wgmma N of all tokens and heads)", v.n);
        if (!contains({64, 128}, v.bkv))
            return unsupported("bkv (the cache's tokens per block, keys per stage) must be 64 or 128; got {}", v.bkv);
        // NOTES: warpgroup 0's four warps are the producers, one per math warpgroup.
        if (v.warps < 1 || v.warps > 4) return unsupported("w (math warpgroups) must be 1 to 4; got {}", v.warps);
        if (v.stages == 0) return unsupported("pwgmma needs _lds<S> (pipeline stages, 2..16)");
        if (v.stages < 2 || v.stages > 16) return unsupported("lds (pipeline stages) must be 2..16; got {}", v.stages);
        if (v.stages % v.warps != 0) {
            return unsupported("lds={} must be a multiple of w={}: each stage always serves the same warpgroup", v.stages,
                               v.warps);
        }
        const int accumulators = v.bkv / 64 * v.n / 2;
        if (accumulators > kMaxAccumulatorRegisters) {
            return unsupported("accumulators take (bkv/64) x N/2 = {} registers per thread, over the {} limit; lower "
                               "bkv", accumulators, kMaxAccumulatorRegisters);
        }
        if (paged_registers_needed(v) > paged_math_thread_registers(v)) {
            return unsupported("a math thread needs {} registers (accumulators, weights, the rest) and has {} with w={} "
                               "(({} + 1) x 128 threads); use fewer warpgroups",
                               paged_registers_needed(v), paged_math_thread_registers(v), v.warps, v.warps);
        }
        const std::int64_t shared_memory_bytes = paged_shared_bytes(v, heads, head_dim);
        if (shared_memory_bytes > kSm90MaxSharedBytes) {
            return unsupported("shared memory {} B exceeds {} B (227 KiB on sm_90a); lower lds", shared_memory_bytes,
                               kSm90MaxSharedBytes);
        }
        return supported();
    }
};

}  // namespace
}  // namespace mqajit::variant_rules

namespace mqajit {

std::int64_t paged_shared_bytes(const Variant& v, int heads, int head_dim) {
    constexpr std::int64_t kQBuffers = 2;
    const std::int64_t threads = (std::int64_t{v.warps} + 1) * 128;
    const std::int64_t stages = v.stages;
    return 1024 + stages * v.bkv * head_dim + kQBuffers * std::int64_t{v.rows} * heads * head_dim + stages * v.bkv * 4 +
           8 * (2 * stages + 2 * kQBuffers) + 4 * (threads + 4);
}

int paged_math_thread_registers(const Variant& v) {
    const int threads = (v.warps + 1) * 128;
    const int entry = 65536 / threads / 8 * 8;
    if (v.warps != 2 || entry >= 232) return std::min(255, entry);  // only two warpgroups reallocate
    const int producer = entry >= 160 ? 40 : 24;
    return std::min(232, (entry * (v.warps + 1) - producer) / v.warps / 8 * 8);
}

int paged_registers_needed(const Variant& v) { return v.bkv / 64 * v.n / 2 + v.n / 4 + 24; }

Variant paged_baseline_variant(int heads, int next_n) {
    return Variant{.op = MatrixOp::pwgmma, .m = 64, .n = next_n * heads, .k = 32, .bkv = 64, .rows = next_n,
                   .warps = 2, .stages = 8};
}

const FamilyRules& sm90_paged_mqa_logits_rules() {
    static const variant_rules::PagedWgmmaRules rules;
    return rules;
}

}  // namespace mqajit
