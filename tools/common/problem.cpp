#include "tools/common/problem.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <exception>
#include <limits>
#include <random>
#include <thread>

#include "core/check.hpp"

namespace mqajit::tools {
namespace {

void make_masks(HostProblem& p, MaskKind mask, std::mt19937_64& rng) {
    const int s = p.seq_len, n = p.seq_len_kv;
    p.cu_starts.assign(s, 0);
    p.cu_ends.assign(s, n);
    switch (mask) {
        case MaskKind::full: break;
        case MaskKind::causal:
            for (int i = 0; i < s; ++i) p.cu_ends[i] = n - s + i + 1;  // may be <= 0 when S > N: empty rows
            break;
        case MaskKind::random_windows:
            for (int i = 0; i < s; ++i) {
                const int a = static_cast<int>(rng() % (n + 3)) - 1;  // sometimes -1 or past N: clamped
                const int b = static_cast<int>(rng() % (n + 3)) - 1;
                p.cu_starts[i] = std::min(a, b);
                p.cu_ends[i] = (rng() % 8 == 0) ? std::min(a, b) : std::max(a, b) + 1;  // some empty
            }
            break;
        case MaskKind::packed: {
            // Requests of random context length packed into the gathered K; each request's query rows
            // see [offset, offset + context + position + 1).
            int row = 0, offset = 0;
            while (row < s) {
                const int rows = std::min(s - row, 1 + static_cast<int>(rng() % std::max(1, s / 3 + 1)));
                const int room = std::max(rows, n - offset);
                const int context = std::max(0, room - rows - static_cast<int>(rng() % std::max(1, room / 4 + 1)));
                for (int k = 0; k < rows; ++k, ++row) {
                    p.cu_starts[row] = std::min(offset, n);
                    p.cu_ends[row] = std::min(n, offset + context + k + 1);
                }
                offset = std::min(n, offset + context + rows);
            }
            break;
        }
    }
}

int clamp_to(int v, int lo, int hi) { return std::max(lo, std::min(v, hi)); }

}  // namespace

MaskKind parse_mask_kind(std::string_view text) {
    if (text == "causal") return MaskKind::causal;
    if (text == "random") return MaskKind::random_windows;
    if (text == "packed") return MaskKind::packed;
    if (text == "full") return MaskKind::full;
    MQAJIT_FAIL(invalid_argument, "mask '{}' is unknown; use causal, random, packed or full", text);
}

std::string to_string(MaskKind kind) {
    switch (kind) {
        case MaskKind::causal: return "causal";
        case MaskKind::random_windows: return "random";
        case MaskKind::packed: return "packed";
        case MaskKind::full: return "full";
    }
    return "?";
}

std::int64_t HostProblem::unmasked_pairs() const {
    std::int64_t total = 0;
    for (int i = 0; i < seq_len; ++i) {
        const int start = clamp_to(cu_starts[i], 0, seq_len_kv), end = clamp_to(cu_ends[i], 0, seq_len_kv);
        total += std::max(0, end - start);
    }
    return total;
}

HostProblem make_problem(int seq_len, int seq_len_kv, int heads, int head_dim, MaskKind mask, std::uint64_t seed,
                         std::int64_t logits_row_stride) {
    MQAJIT_CHECK(seq_len >= 1 && seq_len_kv >= 1 && heads >= 1 && head_dim >= 1,
                 "problem sizes must be positive (S={}, N={}, H={}, D={})", seq_len, seq_len_kv, heads, head_dim);
    HostProblem p;
    p.seq_len = seq_len;
    p.seq_len_kv = seq_len_kv;
    p.heads = heads;
    p.head_dim = head_dim;
    p.logits_row_stride = logits_row_stride > 0 ? logits_row_stride : seq_len_kv;
    MQAJIT_CHECK(p.logits_row_stride >= seq_len_kv, "logits row stride {} is below N={}", p.logits_row_stride,
                 seq_len_kv);
    std::mt19937_64 rng(seed);
    p.q.resize(static_cast<std::size_t>(seq_len) * heads * head_dim);
    p.kv.resize(static_cast<std::size_t>(seq_len_kv) * head_dim);
    for (auto& b : p.q) b = random_e4m3(rng);
    for (auto& b : p.kv) b = random_e4m3(rng);
    std::uniform_real_distribution<float> scale(0.25f, 2.0f), weight(-1.0f, 1.0f);
    p.kv_scales.resize(seq_len_kv);
    for (auto& v : p.kv_scales) v = scale(rng);
    p.weights.resize(static_cast<std::size_t>(seq_len) * heads);
    for (auto& v : p.weights) v = weight(rng);
    make_masks(p, mask, rng);
    return p;
}

// A random e4m3 byte with magnitude in [2^-3, 2^3): varied exponents, no NaN, no tiny subnormals.
std::uint8_t random_e4m3(std::mt19937_64& rng) {
    const std::uint32_t bits = static_cast<std::uint32_t>(rng());
    const std::uint8_t sign = (bits & 1u) << 7;
    const std::uint8_t exponent = static_cast<std::uint8_t>(4 + (bits >> 1) % 6);  // 2^-3 .. 2^2
    const std::uint8_t mantissa = static_cast<std::uint8_t>((bits >> 8) & 7u);
    return static_cast<std::uint8_t>(sign | (exponent << 3) | mantissa);
}

double decode_e4m3(std::uint8_t byte) {
    const int sign = byte >> 7, exponent = (byte >> 3) & 15, mantissa = byte & 7;
    if (exponent == 15 && mantissa == 7) return std::numeric_limits<double>::quiet_NaN();
    const double magnitude = exponent == 0 ? std::ldexp(mantissa / 8.0, -6)
                                           : std::ldexp(1.0 + mantissa / 8.0, exponent - 7);
    return sign ? -magnitude : magnitude;
}

std::vector<float> cpu_reference(const HostProblem& p, bool clean_logits) {
    std::vector<double> kv(p.kv.size()), q(p.q.size());
    std::transform(p.kv.begin(), p.kv.end(), kv.begin(), decode_e4m3);
    std::transform(p.q.begin(), p.q.end(), q.begin(), decode_e4m3);
    std::vector<float> out(static_cast<std::size_t>(p.seq_len) * p.logits_row_stride,
                           std::bit_cast<float>(kPoisonBits));
    const float negative_infinity = -std::numeric_limits<float>::infinity();
    for (int i = 0; i < p.seq_len; ++i) {
        const int start = clamp_to(p.cu_starts[i], 0, p.seq_len_kv), end = clamp_to(p.cu_ends[i], 0, p.seq_len_kv);
        for (int j = 0; j < p.seq_len_kv; ++j) {
            float& cell = out[static_cast<std::size_t>(i) * p.logits_row_stride + j];
            if (clean_logits && (j < start || j >= end)) {
                cell = negative_infinity;
                continue;
            }
            double sum = 0;
            for (int h = 0; h < p.heads; ++h) {
                const double* qh = &q[(static_cast<std::size_t>(i) * p.heads + h) * p.head_dim];
                const double* kj = &kv[static_cast<std::size_t>(j) * p.head_dim];
                double dot = 0;
                for (int d = 0; d < p.head_dim; ++d) dot += qh[d] * kj[d];
                sum += p.weights[static_cast<std::size_t>(i) * p.heads + h] * std::max(dot, 0.0);
            }
            cell = static_cast<float>(sum * p.kv_scales[j]);
        }
    }
    return out;
}

std::string Comparison::summary() const {
    return fmt::format("calc_diff {:.3g} over {} entries, {} NaN, {} mask mismatches, {} unwritten{}{}", calc_diff,
                       checked, nan_count, mask_mismatches, poisoned, first_problem.empty() ? "" : "; first: ",
                       first_problem);
}

namespace {

// compare_logits over the query rows [row_begin, row_end).
Comparison compare_rows(const HostProblem& p, const std::vector<float>& got, const std::vector<float>& expected,
                        bool clean_logits, int row_begin, int row_end) {
    Comparison c;
    double cross = 0, squares = 0;
    auto note = [&](std::string what) {
        if (c.first_problem.empty()) c.first_problem = std::move(what);
    };
    for (int i = row_begin; i < row_end; ++i) {
        const int start = clamp_to(p.cu_starts[i], 0, p.seq_len_kv), end = clamp_to(p.cu_ends[i], 0, p.seq_len_kv);
        for (int j = 0; j < p.seq_len_kv; ++j) {
            const std::size_t at = static_cast<std::size_t>(i) * p.logits_row_stride + j;
            const float x = got[at];
            const bool in_window = j >= start && j < end;
            if (std::bit_cast<std::uint32_t>(x) == kPoisonBits) {
                if (in_window || clean_logits) {
                    ++c.poisoned;
                    note(fmt::format("[{}, {}] never written", i, j));
                }
                continue;
            }
            if (std::isnan(x)) {
                ++c.nan_count;
                note(fmt::format("[{}, {}] is NaN", i, j));
                continue;
            }
            if (!in_window) {
                if (clean_logits && !(std::isinf(x) && x < 0)) {
                    ++c.mask_mismatches;
                    note(fmt::format("[{}, {}] = {} outside window [{}, {}) (want -inf)", i, j, x, start, end));
                }
                continue;
            }
            if (std::isinf(x)) {
                ++c.mask_mismatches;
                note(fmt::format("[{}, {}] = {} inside window [{}, {})", i, j, x, start, end));
                continue;
            }
            const double y = expected[at];
            cross += static_cast<double>(x) * y;
            squares += static_cast<double>(x) * x + y * y;
            ++c.checked;
        }
    }
    c.cross_sum = cross;
    c.square_sum = squares;
    c.calc_diff = squares > 0 ? 1.0 - 2.0 * cross / squares : 0.0;
    return c;
}

// NOTES: below this many logits a thread costs more to start than it saves.
constexpr std::int64_t kLogitsPerThread = std::int64_t{1} << 20;

}  // namespace

Comparison compare_logits(const HostProblem& p, const std::vector<float>& got, const std::vector<float>& expected,
                          bool clean_logits) {
    const std::size_t needed = static_cast<std::size_t>(p.seq_len) * p.logits_row_stride;
    MQAJIT_CHECK_KIND(internal, got.size() >= needed && expected.size() >= needed,
                      "compare_logits needs {} logits ({} x {}), got {} and expected {}", needed, p.seq_len,
                      p.logits_row_stride, got.size(), expected.size());
    const std::int64_t logits = static_cast<std::int64_t>(p.seq_len) * p.seq_len_kv;
    const std::int64_t by_size = std::max<std::int64_t>(1, logits / kLogitsPerThread);
    const int num_threads = static_cast<int>(std::min<std::int64_t>(
        {by_size, std::max(1u, std::thread::hardware_concurrency()), std::max(1, p.seq_len)}));
    if (num_threads == 1) return compare_rows(p, got, expected, clean_logits, 0, p.seq_len);

    // NOTES: each thread takes a contiguous block of rows; merging the blocks in row order keeps the
    // first offending element the one a single pass would name.
    std::vector<Comparison> parts(num_threads);
    std::vector<std::exception_ptr> failures(num_threads);
    std::vector<std::thread> threads;
    threads.reserve(num_threads);
    for (int t = 0; t < num_threads; ++t) {
        const int begin = static_cast<int>(static_cast<std::int64_t>(p.seq_len) * t / num_threads);
        const int end = static_cast<int>(static_cast<std::int64_t>(p.seq_len) * (t + 1) / num_threads);
        threads.emplace_back([&, t, begin, end] {
            try {
                parts[t] = compare_rows(p, got, expected, clean_logits, begin, end);
            } catch (...) {
                failures[t] = std::current_exception();
            }
        });
    }
    for (std::thread& thread : threads) thread.join();
    for (const std::exception_ptr& failure : failures)
        if (failure) std::rethrow_exception(failure);
    Comparison total;
    for (const Comparison& part : parts) total.merge(part);
    return total;
}

void Comparison::merge(const Comparison& other) {
    checked += other.checked;
    nan_count += other.nan_count;
    mask_mismatches += other.mask_mismatches;
    poisoned += other.poisoned;
    if (first_problem.empty()) first_problem = other.first_problem;
    cross_sum += other.cross_sum;
    square_sum += other.square_sum;
    calc_diff = square_sum > 0 ? 1.0 - 2.0 * cross_sum / square_sum : 0.0;
}

}  // namespace mqajit::tools
