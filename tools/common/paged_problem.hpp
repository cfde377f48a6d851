#pragma once
// Host-side paged_mqa_logits (decode) problems: random fp8 queries and cache, context lengths
// spread around an average, a shuffled block table (whose requests may share cache blocks), an
// fp64 CPU reference and the comparison every tool applies.

#include <cstdint>
#include <vector>

#include "tools/common/problem.hpp"

namespace mqajit::tools {

struct PagedProblemSpec {
    int batch = 1;
    int next_n = 1;
    int heads = 64;
    int head_dim = 128;
    int block_kv = 64;
    int average_context = 4096;   // each request's context is uniform in [0.7, 1.3] x this, at least 1
    bool context_lens_2d = true;  // [B, next_n] (token t sees lens[b, t]) or [B]
    // true: half as many cache blocks as the requests need, so requests share blocks (checks);
    // false: every request's blocks are its own, each read once (timings: the bytes floor and
    // engines' decode, whose requests share no blocks, count every block once).
    bool shared_blocks = true;
    std::int64_t logits_row_stride = 0;  // 0: max_context_len rounded up to 32 columns, plus 32
    std::uint64_t seed = 1;
};

struct HostPagedProblem {
    PagedProblemSpec spec;
    int max_context_len = 0;  // logits columns: the longest context, rounded up to a block
    int max_blocks = 0;       // block_table columns
    int num_cache_blocks = 0;
    std::int64_t logits_row_stride = 0;
    std::vector<std::uint8_t> q;               // e4m3 [B, next_n, H, D]
    std::vector<std::uint8_t> kv_cache;        // [blocks][block_kv * D keys, block_kv fp32 scales]
    std::vector<float> weights;                // [B * next_n, H]
    std::vector<std::int32_t> context_lens;    // [B] or [B, next_n]
    std::vector<std::int32_t> block_table;     // [B, max_blocks]

    std::int64_t cache_block_bytes() const { return std::int64_t{spec.block_kv} * (spec.head_dim + 4); }
    std::int64_t rows() const { return std::int64_t{spec.batch} * spec.next_n; }
    // How many keys token t of request b sees (clamped to [0, max_context_len]).
    int visible_keys(int request, int token) const;
    // Sum over requests of the keys the last-seeing token reads, and of the (row, key) pairs seen.
    std::int64_t keys_read() const;
    std::int64_t visible_pairs() const;
};

// Fresh random inputs; pass a different seed for every check.
HostPagedProblem make_paged_problem(const PagedProblemSpec& spec);

// fp64 reference on the CPU, [B * next_n, logits_row_stride]; columns a token does not see are -inf
// when clean and NaN otherwise (never compared). Small problems only.
std::vector<float> cpu_paged_reference(const HostPagedProblem& problem, bool clean_logits);

// Compares `got` with `expected` over [B * next_n, max_context_len]: what each token sees by value,
// the rest (when clean) for exactly -inf.
Comparison compare_paged_logits(const HostPagedProblem& problem, const std::vector<float>& got,
                                const std::vector<float>& expected, bool clean_logits);

}  // namespace mqajit::tools
