// The host side of the decode op's checks: the random paged problems, their fp64 CPU reference
// (checked against the prefill reference on the same keys gathered by hand) and the comparison.

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "tools/common/paged_problem.hpp"
#include "tools/common/problem.hpp"

using namespace mqajit::tools;

TEST_CASE("paged problem: contexts, block table and cache are what the op expects") {
    for (bool lens_2d : {false, true}) {
        const PagedProblemSpec spec{.batch = 9, .next_n = 3, .heads = 32, .head_dim = 64, .block_kv = 64,
                                    .average_context = 300, .context_lens_2d = lens_2d, .seed = 7};
        const HostPagedProblem p = make_paged_problem(spec);
        CHECK(p.max_context_len % 64 == 0);
        CHECK(p.max_blocks * 64 == p.max_context_len);
        CHECK(p.logits_row_stride >= p.max_context_len);
        CHECK(p.q.size() == 27u * 32 * 64);
        CHECK(p.weights.size() == 27u * 32);
        CHECK(p.context_lens.size() == (lens_2d ? 27u : 9u));
        CHECK(p.kv_cache.size() == static_cast<std::size_t>(p.num_cache_blocks) * 64 * 68);
        std::set<int> used;
        bool shared = false;
        for (int b = 0; b < 9; ++b) {
            int previous = -1;
            for (int t = 0; t < 3; ++t) {
                const int keys = p.visible_keys(b, t);
                CHECK(keys >= 0);
                CHECK(keys <= p.max_context_len);
                CHECK(keys >= previous);  // later tokens see at least as much
                previous = keys;
            }
            const int blocks = (p.visible_keys(b, 2) + 63) / 64;
            std::set<int> mine;
            for (int k = 0; k < blocks; ++k) {
                const int entry = p.block_table[static_cast<std::size_t>(b) * p.max_blocks + k];
                CHECK(entry >= 0);
                CHECK(entry < p.num_cache_blocks);
                if (used.count(entry) && !mine.count(entry)) shared = true;
                mine.insert(entry);
            }
            used.insert(mine.begin(), mine.end());
        }
        CHECK(shared);  // fewer cache blocks than the requests need: some are shared
        for (int blk = 0; blk < p.num_cache_blocks; ++blk) {
            float scale;
            std::memcpy(&scale, p.kv_cache.data() + static_cast<std::size_t>(blk) * 64 * 68 + 64 * 64, 4);
            CHECK(scale >= 0.25f);
            CHECK(scale <= 2.0f);
        }
    }
}

TEST_CASE("paged problem: without shared blocks every request's blocks are its own, each cache block used once") {
    const PagedProblemSpec spec{.batch = 7, .next_n = 2, .heads = 32, .head_dim = 64, .block_kv = 64,
                                .average_context = 500, .shared_blocks = false, .seed = 5};
    const HostPagedProblem p = make_paged_problem(spec);
    std::vector<int> uses(static_cast<std::size_t>(p.num_cache_blocks), 0);
    int blocks_needed = 0;
    bool out_of_order = false;
    for (int b = 0; b < spec.batch; ++b) {
        const int blocks = (p.visible_keys(b, spec.next_n - 1) + 63) / 64;
        blocks_needed += blocks;
        for (int k = 0; k < blocks; ++k) {
            const int entry = p.block_table[static_cast<std::size_t>(b) * p.max_blocks + k];
            REQUIRE(entry >= 0);
            REQUIRE(entry < p.num_cache_blocks);
            ++uses[static_cast<std::size_t>(entry)];
            if (k > 0 && entry != p.block_table[static_cast<std::size_t>(b) * p.max_blocks + k - 1] + 1) out_of_order = true;
        }
    }
    CHECK(p.num_cache_blocks == blocks_needed);
    CHECK(std::ranges::all_of(uses, [](int n) { return n == 1; }));
    CHECK(out_of_order);  // shuffled, not laid out request by request
    CHECK(p.kv_cache.size() == static_cast<std::size_t>(p.num_cache_blocks) * 64 * 68);
}

TEST_CASE("paged problem: the CPU reference equals the prefill reference over the gathered keys") {
    const PagedProblemSpec spec{.batch = 4, .next_n = 2, .heads = 32, .head_dim = 64, .block_kv = 64,
                                .average_context = 150, .context_lens_2d = true, .seed = 11};
    const HostPagedProblem p = make_paged_problem(spec);
    const std::vector<float> paged = cpu_paged_reference(p, true);
    for (int b = 0; b < spec.batch; ++b) {
        // The request's keys, gathered through the block table by hand, as a prefill problem whose
        // rows are the request's tokens and whose windows are what each token sees.
        const int keys = p.visible_keys(b, spec.next_n - 1);
        if (keys == 0) continue;
        HostProblem gathered = make_problem(spec.next_n, keys, spec.heads, spec.head_dim, MaskKind::full, 1);
        for (int j = 0; j < keys; ++j) {
            const int blk = p.block_table[static_cast<std::size_t>(b) * p.max_blocks + j / 64];
            const std::uint8_t* block = p.kv_cache.data() + static_cast<std::size_t>(blk) * p.cache_block_bytes();
            std::memcpy(&gathered.kv[static_cast<std::size_t>(j) * 64], block + (j % 64) * 64, 64);
            std::memcpy(&gathered.kv_scales[j], block + 64 * 64 + 4 * (j % 64), 4);
        }
        for (int t = 0; t < spec.next_n; ++t) {
            const std::size_t row = static_cast<std::size_t>(b) * spec.next_n + t;
            std::memcpy(&gathered.q[static_cast<std::size_t>(t) * 32 * 64], &p.q[row * 32 * 64], 32 * 64);
            std::memcpy(&gathered.weights[static_cast<std::size_t>(t) * 32], &p.weights[row * 32], 32 * 4);
            gathered.cu_starts[t] = 0;
            gathered.cu_ends[t] = p.visible_keys(b, t);
        }
        const std::vector<float> prefill = cpu_reference(gathered, true);
        for (int t = 0; t < spec.next_n; ++t) {
            const std::size_t row = static_cast<std::size_t>(b) * spec.next_n + t;
            for (int j = 0; j < keys; ++j) {
                const float want = prefill[static_cast<std::size_t>(t) * keys + j];
                const float have = paged[row * p.logits_row_stride + j];
                if (std::isinf(want)) {
                    CHECK(std::isinf(have));
                } else {
                    CHECK(have == doctest::Approx(want).epsilon(1e-6));
                }
            }
            for (int j = keys; j < p.max_context_len; ++j) CHECK(std::isinf(paged[row * p.logits_row_stride + j]));
        }
    }
}

TEST_CASE("paged problem: the comparison catches wrong values, unwritten entries and bad masks") {
    const PagedProblemSpec spec{.batch = 3, .next_n = 1, .heads = 32, .head_dim = 64, .block_kv = 64,
                                .average_context = 100, .context_lens_2d = false, .seed = 3};
    const HostPagedProblem p = make_paged_problem(spec);
    const std::vector<float> expected = cpu_paged_reference(p, true);
    CHECK(compare_paged_logits(p, expected, expected, true).passed(1e-12));

    std::vector<float> got = expected;
    got[0] = std::bit_cast<float>(kPoisonBits);
    CHECK(compare_paged_logits(p, got, expected, true).poisoned == 1);

    // A request that sees fewer keys than the logits have columns (not the longest one).
    int short_request = 0;
    while (p.visible_keys(short_request, 0) == p.max_context_len) ++short_request;
    const std::size_t row_start = static_cast<std::size_t>(short_request) * p.logits_row_stride;
    const int visible = p.visible_keys(short_request, 0);
    got = expected;
    got[row_start + visible] = 0.0f;  // the first column its token does not see
    CHECK(compare_paged_logits(p, got, expected, true).mask_mismatches == 1);
    CHECK(compare_paged_logits(p, got, expected, false).passed(1e-12));  // unchecked when not clean

    got = expected;
    for (int j = 0; j < visible; ++j) got[row_start + j] *= -1.0f;
    CHECK_FALSE(compare_paged_logits(p, got, expected, true).passed(1e-5));

    got = expected;
    got[row_start + 1] = -std::numeric_limits<float>::infinity();
    CHECK(compare_paged_logits(p, got, expected, true).mask_mismatches == 1);
}
