// The sm90_mqa_logits family's rules: warpgroup MMA (wgmma) fed by TMA, sm_90a only.
//   wgmma64x<N>x32_bkv<B>_r<R>_w<W>_lds<S>
//   N = R x heads (query rows x heads form the wgmma N), B = KV rows per pipeline stage,
//   W = math warpgroups taking whole stages in turn, S = pipeline stages.

#include <cstdint>

#include "codegen/families/sm90_mqa_logits/family.hpp"
#include "codegen/families/sm90_mqa_logits/resources.hpp"

namespace mqajit::variant_rules {
namespace {

constexpr int kMaxAccumulatorRegisters = 128;
// NOTES: the kernel rounds its shared-memory base up to 1024 bytes, which the 128B swizzle needs.
constexpr std::int64_t kSharedMemoryAlignmentBytes = 1024;

class WgmmaRules final : public FamilyRules {
public:
    WgmmaRules()
        : for_32_heads_(parse_all({
              "wgmma64x128x32_bkv64_r4_w2_lds4",
              "wgmma64x128x32_bkv128_r4_w2_lds6",
              "wgmma64x128x32_bkv128_r4_w2_lds4",
              "wgmma64x128x32_bkv64_r4_w3_lds6",
              "wgmma64x128x32_bkv128_r4_w1_lds4",
              "wgmma64x64x32_bkv128_r2_w2_lds4",
              "wgmma64x64x32_bkv64_r2_w3_lds6",
              "wgmma64x256x32_bkv64_r8_w2_lds4",
              "wgmma64x256x32_bkv64_r8_w1_lds4",
              "wgmma64x128x32_bkv64_r4_w4_lds4",
              "wgmma64x128x32_bkv64_r4_w4_lds8",
              // pipelined (two accumulator sets): a warpgroup holds two stages, so more stages
              "wgmma64x128x32_bkv64_r4_w2_lds6",
              "wgmma64x128x32_bkv64_r4_w2_lds8",
              "wgmma64x64x32_bkv128_r2_w2_lds6",
          })),
          for_64_heads_(with_rows_halved(for_32_heads_)) {}

    std::vector<std::string> archs() const override { return {"sm_90a"}; }

    std::vector<Variant> registered(const Arch& arch) const override {
        if (!runs_wgmma(arch)) return {};
        std::vector<Variant> all = for_32_heads_;
        all.insert(all.end(), for_64_heads_.begin(), for_64_heads_.end());
        return all;
    }

    Support check(const Arch& arch, int heads, int head_dim, const Variant& v) const override {
        if (!runs_wgmma(arch)) return unsupported("wgmma needs sm_90a; this device is {} (use an mma variant)", arch.name);
        if (Support size = check_problem_size("wgmma", heads, {32, 64}, head_dim, {64, 128}); !size) return size;
        if (v.m != 64 || v.k != 32) {
            return unsupported("wgmma runs the fp8 shape 64x<N>x32; got M={} K={}", v.m, v.k);
        }
        if (v.n != v.rows * heads) {
            return unsupported("N={} must equal r x heads = {} x {} = {}", v.n, v.rows, heads, v.rows * heads);
        }
        if (!contains({64, 128}, v.bkv)) return unsupported("bkv (KV rows per stage) must be 64 or 128; got {}", v.bkv);
        if (v.warps < 1 || v.warps > 4) return unsupported("w (math warpgroups) must be 1..4; got {}", v.warps);
        if (v.warps == 4 && (v.n != 128 || v.bkv != 64)) {
            return unsupported("w4 (112 registers per math thread) needs N=128 and bkv=64; got N={} bkv={}", v.n,
                               v.bkv);
        }
        if (v.stages == 0) return unsupported("wgmma needs _lds<S> (pipeline stages, 2..8)");
        if (v.stages < 2 || v.stages > 8) return unsupported("lds (pipeline stages) must be 2..8; got {}", v.stages);
        // NOTES: stage s serves tiles s, s+S, ... and math warpgroups take tiles in turn; with S a multiple
        // of W every stage always goes to the same warpgroup, which the mbarrier parity waits need (a
        // warpgroup must never wait on a stage's phase two ahead of the one it last saw complete).
        if (v.stages % v.warps != 0) {
            return unsupported("lds {} must be a multiple of w {} (each stage serves one math warpgroup)", v.stages,
                               v.warps);
        }

        const int accumulator_registers = (v.bkv / 64) * v.n / 2;
        if (accumulator_registers > kMaxAccumulatorRegisters) {
            return unsupported("accumulators take (bkv/64) x N/2 = {} registers per thread, over the {} limit; "
                               "lower bkv or r", accumulator_registers, kMaxAccumulatorRegisters);
        }
        const std::int64_t shared_memory_bytes = wgmma_shared_bytes(v, heads, head_dim);
        if (shared_memory_bytes > kSm90MaxSharedBytes) {
            return unsupported("shared memory {} B exceeds {} B (227 KiB on sm_90a); lower lds or bkv",
                               shared_memory_bytes, kSm90MaxSharedBytes);
        }
        return supported();
    }

private:
    static bool runs_wgmma(const Arch& arch) {
        return arch.vendor == Vendor::nvidia && arch.number == 90 && arch.arch_specific;
    }

    std::vector<Variant> for_32_heads_;
    std::vector<Variant> for_64_heads_;
};

}  // namespace

}  // namespace mqajit::variant_rules

namespace mqajit {

std::int64_t wgmma_shared_bytes(const Variant& v, int heads, int head_dim) {
    constexpr std::int64_t kQBuffers = 2;
    const std::int64_t barriers = 8 * (2 * std::int64_t{v.stages} + 2 * kQBuffers);
    const std::int64_t weights = wgmma_weights_in_shared(v) ? std::int64_t{v.warps} * v.n * 4 : 0;
    return variant_rules::kSharedMemoryAlignmentBytes + std::int64_t{v.stages} * v.bkv * head_dim +
           kQBuffers * std::int64_t{v.rows} * heads * head_dim + barriers + weights;
}

const FamilyRules& sm90_mqa_logits_rules() {
    static const variant_rules::WgmmaRules rules;
    return rules;
}

}  // namespace mqajit
