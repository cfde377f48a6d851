#include "tools/common/paged_problem.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <thread>

#include "core/check.hpp"

namespace mqajit::tools {

int HostPagedProblem::visible_keys(int request, int token) const {
    const int keys = spec.context_lens_2d ? context_lens[static_cast<std::size_t>(request) * spec.next_n + token]
                                          : context_lens[request] - spec.next_n + token + 1;
    return std::clamp(keys, 0, max_context_len);
}

std::int64_t HostPagedProblem::keys_read() const {
    std::int64_t total = 0;
    for (int b = 0; b < spec.batch; ++b) {
        int keys = 0;
        for (int t = 0; t < spec.next_n; ++t) keys = std::max(keys, visible_keys(b, t));
        total += keys;
    }
    return total;
}

std::int64_t HostPagedProblem::visible_pairs() const {
    std::int64_t total = 0;
    for (int b = 0; b < spec.batch; ++b)
        for (int t = 0; t < spec.next_n; ++t) total += visible_keys(b, t);
    return total;
}

namespace {

// Random keys and scales for every cache block. NOTES: a timed decode cache runs to a GB, too
// slow to fill from one generator; chunks of blocks are filled on every core, each from its own
// generator seeded by (seed, chunk), so a seed gives the same bytes whatever the core count.
void fill_cache(HostPagedProblem& p, std::uint64_t seed) {
    constexpr int kBlocksPerChunk = 512;
    const PagedProblemSpec& spec = p.spec;
    p.kv_cache.resize(static_cast<std::size_t>(p.num_cache_blocks) * p.cache_block_bytes());
    const int chunks = (p.num_cache_blocks + kBlocksPerChunk - 1) / kBlocksPerChunk;
    std::atomic<int> next{0};
    auto work = [&] {
        for (int chunk = next++; chunk < chunks; chunk = next++) {
            std::mt19937_64 rng(seed + 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(chunk + 1));
            std::uniform_real_distribution<float> scale(0.25f, 2.0f);
            const int end = std::min(p.num_cache_blocks, (chunk + 1) * kBlocksPerChunk);
            for (int blk = chunk * kBlocksPerChunk; blk < end; ++blk) {
                std::uint8_t* block = p.kv_cache.data() + static_cast<std::size_t>(blk) * p.cache_block_bytes();
                for (int i = 0; i < spec.block_kv * spec.head_dim; ++i) block[i] = random_e4m3(rng);
                for (int slot = 0; slot < spec.block_kv; ++slot) {
                    const float s = scale(rng);
                    std::memcpy(block + static_cast<std::size_t>(spec.block_kv) * spec.head_dim + 4 * slot, &s, 4);
                }
            }
        }
    };
    const int workers = std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, std::max(1, chunks));
    std::vector<std::thread> threads;
    for (int i = 1; i < workers; ++i) threads.emplace_back(work);
    work();
    for (std::thread& t : threads) t.join();
}

}  // namespace

HostPagedProblem make_paged_problem(const PagedProblemSpec& spec) {
    MQAJIT_CHECK(spec.batch >= 1 && spec.next_n >= 1 && spec.heads >= 1 && spec.head_dim >= 1 && spec.block_kv >= 1 &&
                     spec.average_context >= 1,
                 "paged problem sizes must be positive (B={}, next_n={}, H={}, D={}, block_kv={}, context={})",
                 spec.batch, spec.next_n, spec.heads, spec.head_dim, spec.block_kv, spec.average_context);
    HostPagedProblem p;
    p.spec = spec;
    std::mt19937_64 rng(spec.seed);
    std::uniform_real_distribution<double> spread(0.7, 1.3);

    std::vector<int> contexts(spec.batch);
    for (int& c : contexts) c = std::max(1, static_cast<int>(std::lround(spec.average_context * spread(rng))));
    const int longest = *std::max_element(contexts.begin(), contexts.end());
    p.max_blocks = (longest + spec.block_kv - 1) / spec.block_kv;
    p.max_context_len = p.max_blocks * spec.block_kv;
    p.logits_row_stride = spec.logits_row_stride > 0 ? spec.logits_row_stride : (p.max_context_len + 31) / 32 * 32 + 32;
    MQAJIT_CHECK(p.logits_row_stride >= p.max_context_len, "logits row stride {} is below max_context_len {}",
                 p.logits_row_stride, p.max_context_len);

    if (spec.context_lens_2d) {
        // Token t sees what a causal decode step gives it; some tokens of short requests see nothing.
        p.context_lens.resize(static_cast<std::size_t>(spec.batch) * spec.next_n);
        for (int b = 0; b < spec.batch; ++b)
            for (int t = 0; t < spec.next_n; ++t)
                p.context_lens[static_cast<std::size_t>(b) * spec.next_n + t] = std::max(0, contexts[b] - spec.next_n + t + 1);
    } else {
        p.context_lens.assign(contexts.begin(), contexts.end());
    }

    // A request's blocks are in no order (what a paged allocator produces after a while).
    std::int64_t needed = 0;
    for (int c : contexts) needed += (c + spec.block_kv - 1) / spec.block_kv;
    MQAJIT_CHECK(needed <= std::numeric_limits<std::int32_t>::max(),
                 "the requests need {} cache blocks, more than a block table's int32 entries can name", needed);
    p.block_table.assign(static_cast<std::size_t>(spec.batch) * p.max_blocks, 0);
    if (spec.shared_blocks) {
        // Half as many cache blocks as the requests need, dealt at random: requests share blocks.
        p.num_cache_blocks = static_cast<int>(std::max<std::int64_t>(1, needed / 2 + 1));
        for (auto& entry : p.block_table)
            entry = static_cast<std::int32_t>(rng() % static_cast<std::uint64_t>(p.num_cache_blocks));
    } else {
        // Exactly the blocks the requests need, shuffled and dealt out once each; the columns past a
        // request's last block (never read) name block 0.
        p.num_cache_blocks = static_cast<int>(needed);
        std::vector<std::int32_t> order(static_cast<std::size_t>(needed));
        std::iota(order.begin(), order.end(), 0);
        std::shuffle(order.begin(), order.end(), rng);
        std::size_t next = 0;
        for (int b = 0; b < spec.batch; ++b) {
            const int blocks = (contexts[b] + spec.block_kv - 1) / spec.block_kv;
            for (int k = 0; k < blocks; ++k)
                p.block_table[static_cast<std::size_t>(b) * p.max_blocks + k] = order[next++];
        }
    }

    p.q.resize(static_cast<std::size_t>(p.rows()) * spec.heads * spec.head_dim);
    for (auto& byte : p.q) byte = random_e4m3(rng);
    fill_cache(p, rng());
    std::uniform_real_distribution<float> weight(-1.0f, 1.0f);
    p.weights.resize(static_cast<std::size_t>(p.rows()) * spec.heads);
    for (auto& w : p.weights) w = weight(rng);
    return p;
}

std::vector<float> cpu_paged_reference(const HostPagedProblem& p, bool clean_logits) {
    const PagedProblemSpec& s = p.spec;
    const float masked = clean_logits ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
    std::vector<float> out(static_cast<std::size_t>(p.rows()) * p.logits_row_stride, masked);
    std::vector<double> q(p.q.size());
    std::transform(p.q.begin(), p.q.end(), q.begin(), decode_e4m3);
    for (int b = 0; b < s.batch; ++b) {
        for (int t = 0; t < s.next_n; ++t) {
            const std::int64_t row = std::int64_t{b} * s.next_n + t;
            const int visible = p.visible_keys(b, t);
            for (int j = 0; j < visible; ++j) {
                const int cache_block = p.block_table[static_cast<std::size_t>(b) * p.max_blocks + j / s.block_kv];
                const int slot = j % s.block_kv;
                const std::uint8_t* block = p.kv_cache.data() + static_cast<std::size_t>(cache_block) * p.cache_block_bytes();
                const std::uint8_t* key = block + static_cast<std::size_t>(slot) * s.head_dim;
                float key_scale;
                std::memcpy(&key_scale, block + static_cast<std::size_t>(s.block_kv) * s.head_dim + 4 * slot, 4);
                double sum = 0;
                for (int h = 0; h < s.heads; ++h) {
                    const double* q_row = q.data() + (row * s.heads + h) * s.head_dim;
                    double dot = 0;
                    for (int d = 0; d < s.head_dim; ++d) dot += q_row[d] * decode_e4m3(key[d]);
                    sum += p.weights[static_cast<std::size_t>(row) * s.heads + h] * std::max(dot, 0.0);
                }
                out[static_cast<std::size_t>(row * p.logits_row_stride + j)] = static_cast<float>(key_scale * sum);
            }
        }
    }
    return out;
}

Comparison compare_paged_logits(const HostPagedProblem& p, const std::vector<float>& got,
                                const std::vector<float>& expected, bool clean_logits) {
    Comparison c;
    for (int b = 0; b < p.spec.batch; ++b) {
        for (int t = 0; t < p.spec.next_n; ++t) {
            const std::int64_t row = std::int64_t{b} * p.spec.next_n + t;
            const int visible = p.visible_keys(b, t);
            for (int j = 0; j < p.max_context_len; ++j) {
                const std::size_t at = static_cast<std::size_t>(row * p.logits_row_stride + j);
                const float x = got[at];
                const bool poisoned = std::bit_cast<std::uint32_t>(x) == kPoisonBits;
                if (j < visible) {
                    const double y = expected[at];
                    if (poisoned) {
                        if (c.poisoned++ == 0 && c.first_problem.empty())
                            c.first_problem = fmt::format("row {} (request {}, token {}) key {} was never written", row, b, t, j);
                        continue;
                    }
                    if (std::isnan(x)) {
                        if (c.nan_count++ == 0 && c.first_problem.empty())
                            c.first_problem = fmt::format("row {} key {} is NaN", row, j);
                        continue;
                    }
                    if (std::isinf(x)) {
                        if (c.mask_mismatches++ == 0 && c.first_problem.empty())
                            c.first_problem = fmt::format("row {} key {} is {} inside what the token sees", row, j, x);
                        continue;
                    }
                    c.cross_sum += x * y;
                    c.square_sum += static_cast<double>(x) * x + y * y;
                    ++c.checked;
                } else if (clean_logits && !(std::isinf(x) && x < 0)) {
                    if (c.mask_mismatches++ == 0 && c.first_problem.empty())
                        c.first_problem = fmt::format("row {} key {} (past the {} keys its token sees) is {}, not -inf",
                                                      row, j, visible, x);
                }
            }
        }
    }
    c.calc_diff = c.square_sum > 0 ? 1.0 - 2.0 * c.cross_sum / c.square_sum : 0.0;
    return c;
}

}  // namespace mqajit::tools
