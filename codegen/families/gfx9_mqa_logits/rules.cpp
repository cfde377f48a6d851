// The gfx9_mqa_logits family's rules (AMD CDNA3/CDNA4 fp8 MFMA): gfx950 uses the scaled e4m3fn
// instructions, gfx942 e4m3fnuz.
//   mfma<M>x<N>x<K>_bkv<B>_r<R>_w<W>_lds<S>
//   B = KV columns per tile, R = query rows per wave, W = waves of 64 lanes per block (block rows = R x W),
//   S = LDS buffers for the KV tile (the prefetch depth is fixed at 2).

#include <algorithm>
#include <array>
#include <cstdint>

#include "codegen/families/gfx9_mqa_logits/family.hpp"

namespace mqajit::variant_rules {
namespace {

struct MfmaTarget {
    std::string_view arch;
    int number;
    std::array<MfmaShape, 2> shapes;
    std::int64_t max_lds_bytes;
    std::string_view lds_size;  // for messages
};

constexpr std::array kTargets = {
    MfmaTarget{"gfx942", 942, {MfmaShape{32, 32, 16}, MfmaShape{16, 16, 32}}, 64 * 1024, "64 KiB"},
    MfmaTarget{"gfx950", 950, {MfmaShape{32, 32, 64}, MfmaShape{16, 16, 128}}, 160 * 1024, "160 KiB"},
};

// NOTES: what CDNA GPUs before gfx950 give one workgroup.
constexpr std::int64_t kDefaultMaxLdsBytes = 64 * 1024;

constexpr std::initializer_list<int> kKvColumns = {64, 128};
constexpr std::initializer_list<int> kRowsPerWave = {1, 2, 4};
constexpr std::initializer_list<int> kWavesPerBlock = {1, 2, 4};
constexpr std::initializer_list<int> kLdsBuffers = {2, 3};

const MfmaTarget* find_target(const Arch& arch) {
    if (arch.vendor != Vendor::amd) return nullptr;
    const auto found = std::ranges::find(kTargets, arch.number, &MfmaTarget::number);
    return found == kTargets.end() ? nullptr : &*found;
}

class MfmaRules final : public FamilyRules {
public:
    std::vector<std::string> archs() const override {
        std::vector<std::string> names;
        for (const MfmaTarget& target : kTargets) names.emplace_back(target.arch);
        return names;
    }

    // The full product of the fields; check() leaves out what does not fit LDS at a given (heads, head_dim).
    std::vector<Variant> registered(const Arch& arch) const override {
        const MfmaTarget* target = find_target(arch);
        if (target == nullptr) return {};
        std::vector<Variant> all;
        for (const MfmaShape& shape : target->shapes) {
            for (int bkv : kKvColumns) {
                for (int rows : kRowsPerWave) {
                    for (int warps : kWavesPerBlock) {
                        for (int stages : kLdsBuffers) {
                            all.push_back(Variant{.op = MatrixOp::mfma, .m = shape.m, .n = shape.n, .k = shape.k,
                                                  .bkv = bkv, .rows = rows, .warps = warps, .stages = stages});
                        }
                    }
                }
            }
        }
        return all;
    }

    Support check(const Arch& arch, int heads, int head_dim, const Variant& v) const override {
        const MfmaTarget* target = find_target(arch);
        if (target == nullptr) return unsupported("mfma fp8 kernels need gfx942 or gfx950; this device is {}", arch.name);
        if (Support size = check_problem_size("mfma", heads, {32, 64}, head_dim, {64, 128}); !size) return size;
        const bool known_shape = std::ranges::any_of(
            target->shapes, [&](const MfmaShape& s) { return s.m == v.m && s.n == v.n && s.k == v.k; });
        if (!known_shape) {
            return unsupported("mfma{}x{}x{} is not an fp8 MFMA of {}; it runs {}", v.m, v.n, v.k, target->arch,
                               gfx9_mfma_shape_list(arch, "mfma"));
        }
        if (!contains(kKvColumns, v.bkv)) return unsupported("bkv (KV columns per tile) must be {}; got {}", join(kKvColumns), v.bkv);
        if (!contains(kRowsPerWave, v.rows)) return unsupported("r (query rows per wave) must be {}; got {}", join(kRowsPerWave), v.rows);
        if (!contains(kWavesPerBlock, v.warps)) return unsupported("w (waves per block) must be {}; got {}", join(kWavesPerBlock), v.warps);
        if (v.stages == 0) return unsupported("mfma needs _lds<S> (LDS buffers, {})", join(kLdsBuffers));
        if (!contains(kLdsBuffers, v.stages)) return unsupported("lds (LDS buffers) must be {}; got {}", join(kLdsBuffers), v.stages);

        // NOTES: heads and head_dim must split into whole MFMA tiles; 16x16x128 fits D = 128 only.
        if (heads % v.m != 0 || head_dim % v.k != 0) {
            return unsupported("mfma{}x{}x{} needs heads a multiple of {} and head_dim a multiple of {}; got heads={} "
                               "head_dim={}", v.m, v.n, v.k, v.m, v.k, heads, head_dim);
        }
        if ((std::int64_t{v.bkv} * head_dim / 16) % (std::int64_t{v.warps} * 64) != 0 || v.bkv % v.m != 0) {
            return unsupported("bkv={} must be a multiple of {} whose tile of 16-byte chunks splits evenly over w x 64 = "
                               "{} threads", v.bkv, v.m, v.warps * 64);
        }
        const auto lds_bytes = static_cast<std::int64_t>(gfx9_lds_bytes(v, heads, head_dim));
        if (lds_bytes > target->max_lds_bytes) {
            return unsupported("LDS {} B exceeds {} B ({} on {}); lower lds, bkv, r or w", lds_bytes,
                               target->max_lds_bytes, target->lds_size, target->arch);
        }
        return supported();
    }
};

}  // namespace

}  // namespace mqajit::variant_rules

namespace mqajit {

const FamilyRules& gfx9_mqa_logits_rules() {
    static const variant_rules::MfmaRules rules;
    return rules;
}

std::span<const MfmaShape> gfx9_mfma_shapes(const Arch& arch) {
    const variant_rules::MfmaTarget* target = variant_rules::find_target(arch);
    if (target == nullptr) return {};
    return target->shapes;
}

std::string gfx9_mfma_shape_list(const Arch& arch, std::string_view op) {
    std::vector<std::string> names;
    for (const MfmaShape& s : gfx9_mfma_shapes(arch)) names.push_back(fmt::format("{}{}x{}x{}", op, s.m, s.n, s.k));
    return fmt::format("{}", fmt::join(names, " or "));
}

std::size_t gfx9_max_lds_bytes(const Arch& arch) {
    const variant_rules::MfmaTarget* target = variant_rules::find_target(arch);
    return static_cast<std::size_t>(target != nullptr ? target->max_lds_bytes : variant_rules::kDefaultMaxLdsBytes);
}

}  // namespace mqajit
