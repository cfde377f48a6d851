// The sm80_mqa_logits family's rules: warp-level mma.sync with cp.async stages, any sm_80 or newer GPU.
//   mma16x8x16_...: fp8 widened to f16 in registers (sm_80+)
//   mma16x8x32_...: native e4m3 mma.sync (sm_89+)
//   B = KV rows per CTA tile, R = query rows per CTA, W = warps (each owns B/W KV rows), S = cp.async stages.

#include <cstdint>

#include "codegen/families/sm80_mqa_logits/family.hpp"
#include "codegen/families/sm80_mqa_logits/sm80_mqa_logits.cuh"
#include "core/check.hpp"

namespace mqajit::variant_rules {
namespace {

constexpr int kOldestArch = 80;
constexpr int kOldestNativeFp8Arch = 89;
constexpr int kMaxAccumulatorFloats = 128;
constexpr int kMaxAccumulatorsPerPass = 64;  // the template's static_assert
// NOTES: 99 KiB is the opt-in per-block limit of sm_86/sm_89, the lowest of the archs listed; sm_80
// and sm_90 allow more, but one limit keeps a variant portable across every sm_80+ GPU.
constexpr std::int64_t kMaxSharedMemoryBytes = 99 * 1024;

class MmaRules final : public FamilyRules {
public:
    MmaRules()
        : f16_for_32_heads_(parse_all({"mma16x8x16_bkv64_r4_w4_lds2"})),
          e4m3_for_32_heads_(parse_all({
              "mma16x8x32_bkv64_r4_w4_lds2",
              "mma16x8x32_bkv128_r4_w4_lds3",
              "mma16x8x32_bkv64_r2_w4_lds3",
              "mma16x8x32_bkv128_r4_w8_lds2",
              "mma16x8x32_bkv64_r4_w2_lds3",
          })) {}

    std::vector<std::string> archs() const override {
        return {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_120"};
    }

    std::vector<Variant> registered(const Arch& arch) const override {
        if (!runs_mma(arch)) return {};
        std::vector<Variant> for_32_heads = f16_for_32_heads_;
        if (arch.number >= kOldestNativeFp8Arch) {
            for_32_heads.insert(for_32_heads.end(), e4m3_for_32_heads_.begin(), e4m3_for_32_heads_.end());
        }
        std::vector<Variant> all = for_32_heads;
        const std::vector<Variant> for_64_heads = with_rows_halved(for_32_heads);
        all.insert(all.end(), for_64_heads.begin(), for_64_heads.end());
        return all;
    }

    Support check(const Arch& arch, int heads, int head_dim, const Variant& v) const override {
        if (!runs_mma(arch)) return unsupported("mma needs an NVIDIA GPU of sm_80 or newer; this device is {}", arch.name);
        if (Support size = check_problem_size("mma", heads, {32, 64}, head_dim, {64, 128}); !size) return size;
        if (v.m != 16 || v.n != 8 || (v.k != 16 && v.k != 32)) {
            return unsupported("mma runs m16n8k16 (fp8 widened to f16) or m16n8k32 (native e4m3); got {}x{}x{}",
                               v.m, v.n, v.k);
        }
        if (v.k == 32 && arch.number < kOldestNativeFp8Arch) {
            return unsupported("mma16x8x32 (native e4m3 mma.sync) needs sm_89 or newer; this device is {} "
                               "(use mma16x8x16)", arch.name);
        }
        if (v.stages == 0) return unsupported("mma needs _lds<S> (cp.async stages, 1..4)");
        if (v.stages > 4) return unsupported("lds (cp.async stages) must be 1..4; got {}", v.stages);
        if (v.bkv % v.warps != 0 || (v.bkv / v.warps) % 16 != 0) {
            return unsupported("each warp owns bkv / w = {} / {} KV rows, which must be a positive multiple of 16",
                               v.bkv, v.warps);
        }

        const std::int64_t accumulator_floats =
            std::int64_t{v.bkv / v.warps / 16} * (std::int64_t{v.rows} * heads / 8) * 4;
        if (accumulator_floats > kMaxAccumulatorFloats) {
            return unsupported("accumulators take (bkv/w/16) x (r x heads/8) x 4 = {} floats per thread, over the "
                               "{} limit; lower r or raise w", accumulator_floats, kMaxAccumulatorFloats);
        }
        // NOTES: the template multiplies the N side in passes of whole query rows; a variant whose
        // rows cannot be split so that a pass keeps at most 64 accumulators does not compile.
        const int passes = mqa_sm80::column_passes(heads, v.bkv, v.rows, v.warps);
        if (accumulator_floats / passes > kMaxAccumulatorsPerPass) {
            return unsupported("at heads={} a pass of r={} rows keeps {} accumulators per thread, over {}; raise w or "
                               "lower r", heads, v.rows, accumulator_floats / passes, kMaxAccumulatorsPerPass);
        }
        const auto shared_memory_bytes = static_cast<std::int64_t>(sm80_shared_bytes(v, heads, head_dim));
        if (shared_memory_bytes > kMaxSharedMemoryBytes) {
            return unsupported("shared memory {} B exceeds {} B (99 KiB); lower lds, bkv or r", shared_memory_bytes,
                               kMaxSharedMemoryBytes);
        }
        return supported();
    }

private:
    static bool runs_mma(const Arch& arch) { return arch.vendor == Vendor::nvidia && arch.number >= kOldestArch; }

    std::vector<Variant> f16_for_32_heads_;
    std::vector<Variant> e4m3_for_32_heads_;
};

}  // namespace

}  // namespace mqajit::variant_rules

namespace mqajit {

const FamilyRules& sm80_mqa_logits_rules() {
    static const variant_rules::MmaRules rules;
    return rules;
}

Variant baseline_variant(int heads) {
    // NOTES: the pre-built kernel is compiled from exactly these names; keep them in the registered lists above.
    if (heads == 32) return Variant::parse("mma16x8x16_bkv64_r4_w4_lds2");
    if (heads == 64) return Variant::parse("mma16x8x16_bkv64_r2_w4_lds2");
    MQAJIT_FAIL(unsupported, "no baseline kernel for heads={}; the baseline is built for heads 32 and 64", heads);
}

}  // namespace mqajit
