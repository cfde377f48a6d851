#pragma once
// Host-side MQA-logits problems: random fp8 inputs, the window masks callers use, an fp64 CPU
// reference, and the comparison the tests, demo, bench and tuner all apply.

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace mqajit::tools {

enum class MaskKind {
    causal,          // ks = 0, ke = N - S + i + 1 (the benchmark's shape)
    random_windows,  // arbitrary windows, some empty, some out of range (clamped)
    packed,          // several requests packed the way vLLM packs a prefill chunk
    full,            // every row sees [0, N)
};

MaskKind parse_mask_kind(std::string_view text);
std::string to_string(MaskKind kind);

struct HostProblem {
    int seq_len = 0;      // S
    int seq_len_kv = 0;   // N
    int heads = 0;        // H
    int head_dim = 0;     // D
    std::int64_t logits_row_stride = 0;  // >= N
    std::vector<std::uint8_t> q;         // e4m3 [S, H, D]
    std::vector<std::uint8_t> kv;        // e4m3 [N, D]
    std::vector<float> kv_scales;        // [N], positive
    std::vector<float> weights;          // [S, H], both signs
    std::vector<std::int32_t> cu_starts; // [S]
    std::vector<std::int32_t> cu_ends;   // [S]

    // Unmasked (row, column) pairs after clamping: what the FLOP count uses.
    std::int64_t unmasked_pairs() const;
    double flops() const { return 2.0 * heads * head_dim * static_cast<double>(unmasked_pairs()); }
};

// Fresh random inputs; pass a different seed for every check.
HostProblem make_problem(int seq_len, int seq_len_kv, int heads, int head_dim, MaskKind mask, std::uint64_t seed,
                         std::int64_t logits_row_stride = 0);

double decode_e4m3(std::uint8_t byte);
// A random e4m3 byte with magnitude in [2^-3, 2^3): varied exponents, no NaN, no tiny subnormals.
std::uint8_t random_e4m3(std::mt19937_64& rng);

// fp64 reference on the CPU (row-major [S, row_stride]); masked entries -inf when clean. Small shapes only.
std::vector<float> cpu_reference(const HostProblem& problem, bool clean_logits);

struct Comparison {
    double calc_diff = 0;              // 1 - 2*sum(xy)/sum(x^2+y^2) over in-window entries
    std::int64_t checked = 0;          // in-window entries compared
    std::int64_t nan_count = 0;        // NaN anywhere in [S, N)
    std::int64_t mask_mismatches = 0;  // -inf where a value belongs, or a value where -inf belongs
    std::int64_t poisoned = 0;         // entries still holding the poison pattern (never written)
    std::string first_problem;         // the first offending element, for the message
    double cross_sum = 0;              // sum(x*y), kept so comparisons of several problems combine
    double square_sum = 0;             // sum(x^2 + y^2)

    // Folds another comparison in: calc_diff then covers the entries of both.
    void merge(const Comparison& other);
    bool passed(double max_calc_diff) const {
        return calc_diff <= max_calc_diff && nan_count == 0 && mask_mismatches == 0 && poisoned == 0;
    }
    std::string summary() const;
};

// The bit pattern outputs are filled with before a run, so unwritten elements show.
inline constexpr std::uint32_t kPoisonBits = 0x7fbadbadu;  // a NaN no kernel produces

// Compares `got` with `expected` over [S, N) (both with the problem's row stride). When clean,
// out-of-window entries must be exactly -inf in `got`; otherwise they are not checked.
Comparison compare_logits(const HostProblem& problem, const std::vector<float>& got,
                          const std::vector<float>& expected, bool clean_logits);

}  // namespace mqajit::tools
