// The gfx9 decode kernel's schedule replayed on the CPU (gfx9_paged_mqa_logits.cuh's host-visible
// part): every workgroup (request, split) of a grid computes its split of the request's cache blocks
// pair by pair and writes its share of the -inf tail, exactly as the kernel's loops do, with the
// products in fp64 in place of the MFMAs (whose lane layouts tests/test_gfx9_lane_mapping.cpp checks).
// Compared with the fp64 CPU reference on fresh random problems, outputs poisoned first. This is the
// index math only: the kernel itself has not run on AMD hardware.

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "codegen/families/gfx9_paged_mqa_logits/gfx9_paged_mqa_logits.cuh"
#include "tools/common/paged_problem.hpp"
#include "tools/common/problem.hpp"

using namespace mqajit::tools;

namespace {

struct Grid {
    int splits;
    int threads;  // waves x 64
    int m;        // the MFMA tile: key columns per pair
};

PagedMqaLogitsParams params_for(const HostPagedProblem& hp, std::vector<float>& logits, bool clean) {
    PagedMqaLogitsParams p{};
    p.q = hp.q.data();
    p.weights = hp.weights.data();
    p.context_lens = hp.context_lens.data();
    p.block_table = hp.block_table.data();
    p.kv_cache = hp.kv_cache.data();
    p.logits = logits.data();
    p.q_stride_b = std::int64_t{hp.spec.next_n} * hp.spec.heads * hp.spec.head_dim;
    p.weights_stride = hp.spec.heads;
    p.context_lens_stride = hp.spec.next_n;
    p.block_table_stride = hp.max_blocks;
    p.logits_stride = hp.logits_row_stride;
    p.cache_block_bytes = hp.cache_block_bytes();
    p.batch = hp.spec.batch;
    p.next_n = hp.spec.next_n;
    p.heads = hp.spec.heads;
    p.head_dim = hp.spec.head_dim;
    p.block_kv = hp.spec.block_kv;
    p.max_blocks = hp.max_blocks;
    p.max_context_len = hp.max_context_len;
    p.context_lens_2d = hp.spec.context_lens_2d ? 1 : 0;
    p.clean_logits = clean ? 1 : 0;
    p.num_cache_blocks = hp.num_cache_blocks;
    return p;
}

// One logit as compute_pair() forms it: the cache block read through the table (zeros outside the
// cache), the held token's Q and weights, relu, the head sum, the block's scale, the -inf rule.
float pair_logit(const PagedMqaLogitsParams& p, int request, int token, int block, int slot) {
    const int index = p.block_table[static_cast<long long>(request) * p.block_table_stride + block];
    const bool inside = index >= 0 && index < p.num_cache_blocks;
    const unsigned char* cache = p.kv_cache + static_cast<long long>(index) * p.cache_block_bytes;
    const unsigned char* q = p.q + static_cast<long long>(request) * p.q_stride_b;
    const long long row = static_cast<long long>(request) * p.next_n + token;
    double sum = 0.0;
    for (int h = 0; h < p.heads; ++h) {
        double dot = 0.0;
        for (int d = 0; d < p.head_dim; ++d) {
            const unsigned key = inside ? cache[slot * p.head_dim + d] : 0u;
            dot += double(mqa::e4m3_to_float(q[(token * p.heads + h) * p.head_dim + d])) * mqa::e4m3_to_float(key);
        }
        sum += p.weights[row * p.weights_stride + h] * std::max(0.0, dot);
    }
    float scale = 0.0f;
    if (inside) std::memcpy(&scale, cache + p.block_kv * p.head_dim + slot * 4, 4);
    const int col = block * p.block_kv + slot;
    const bool masked = p.clean_logits && col >= mqa_gfx9_paged::visible_keys(p, request, token);
    return masked ? -std::numeric_limits<float>::infinity() : static_cast<float>(sum * scale);
}

// The kernel's loops over the whole grid; `writes` counts the stores to each logits element.
void replay(const PagedMqaLogitsParams& p, const Grid& grid, std::vector<int>& writes) {
    const int column_tiles = p.block_kv / grid.m;
    const auto store = [&](long long row, int col, float value) {
        p.logits[row * p.logits_stride + col] = value;
        ++writes[static_cast<std::size_t>(row * p.logits_stride + col)];
    };
    for (int request = 0; request < p.batch; ++request) {
        for (int split = 0; split < grid.splits; ++split) {
            const mqa_gfx9_paged::SplitWork work = mqa_gfx9_paged::split_work(p, request, split, grid.splits);
            for (int block = work.blocks.begin; block < work.blocks.end; ++block) {
                for (int pair = 0; pair < mqa_gfx9_paged::block_pairs(p.next_n, p.block_kv, grid.m); ++pair) {
                    const int token = pair / column_tiles;
                    for (int lane = 0; lane < grid.m; ++lane) {
                        const int slot = (pair % column_tiles) * grid.m + lane;
                        const int col = block * p.block_kv + slot;
                        if (col < p.max_context_len)
                            store(static_cast<long long>(request) * p.next_n + token, col,
                                  pair_logit(p, request, token, block, slot));
                    }
                }
            }
            if (!p.clean_logits) continue;
            for (int t = 0; t < p.next_n; ++t) {
                for (int thread = 0; thread < grid.threads; ++thread) {
                    for (int c = mqa_gfx9_paged::first_tail_column(work.tail_begin, split, grid.threads, thread);
                         c < p.max_context_len; c += grid.splits * grid.threads)
                        store(static_cast<long long>(request) * p.next_n + t, c, -std::numeric_limits<float>::infinity());
                }
            }
        }
    }
}

std::vector<float> poisoned(const HostPagedProblem& hp) {
    return std::vector<float>(static_cast<std::size_t>(hp.rows() * hp.logits_row_stride),
                              std::bit_cast<float>(kPoisonBits));
}

// Lengths at the edges: none, negative, exactly a block, past max_context_len.
void set_edge_lengths(HostPagedProblem& hp) {
    const int per_request = hp.spec.context_lens_2d ? hp.spec.next_n : 1;
    const int edges[] = {0, -5, hp.spec.block_kv, hp.max_context_len + 1000};
    for (int e = 0; e < 4 && e < hp.spec.batch; ++e) {
        for (int t = 0; t < per_request; ++t) hp.context_lens[static_cast<std::size_t>(e * per_request + t)] = edges[e];
    }
}

}  // namespace

TEST_CASE("gfx9 paged schedule: the grid's workgroups write every visible logit once, as the reference") {
    int problems = 0;
    std::uint64_t seed = 900;
    for (const bool lens_2d : {true, false}) {
        for (const int next_n : {1, 2, 3, 4}) {
            for (const int block_kv : {64, 128}) {
                PagedProblemSpec spec{.batch = 7, .next_n = next_n, .heads = 32, .head_dim = 64, .block_kv = block_kv,
                                      .average_context = 200, .context_lens_2d = lens_2d, .seed = ++seed};
                HostPagedProblem hp = make_paged_problem(spec);
                set_edge_lengths(hp);
                hp.max_context_len -= 7;  // not a whole number of blocks
                for (const bool clean : {true, false}) {
                    const std::vector<float> expected = cpu_paged_reference(hp, clean);
                    for (const Grid grid : {Grid{1, 128, 32}, Grid{3, 256, 16}, Grid{16, 64, 32}}) {
                        CAPTURE(lens_2d);
                        CAPTURE(next_n);
                        CAPTURE(block_kv);
                        CAPTURE(clean);
                        CAPTURE(grid.splits);
                        std::vector<float> logits = poisoned(hp);
                        std::vector<int> writes(logits.size(), 0);
                        const PagedMqaLogitsParams p = params_for(hp, logits, clean);
                        replay(p, grid, writes);
                        const Comparison c = compare_paged_logits(hp, logits, expected, clean);
                        INFO(c.summary());
                        CHECK(c.passed(1e-12));
                        CHECK(c.checked == hp.visible_pairs());
                        // No element twice, none past max_context_len, and with clean every one of them.
                        for (std::int64_t row = 0; row < hp.rows(); ++row) {
                            for (std::int64_t col = 0; col < hp.logits_row_stride; ++col) {
                                const int n = writes[static_cast<std::size_t>(row * hp.logits_row_stride + col)];
                                const int want = col < hp.max_context_len ? (clean ? 1 : -1) : 0;
                                if (want >= 0 ? n != want : n > 1) {
                                    FAIL_CHECK("row " << row << " col " << col << " written " << n << " times");
                                    row = hp.rows();
                                    break;
                                }
                            }
                        }
                        ++problems;
                    }
                }
            }
        }
    }
    CHECK(problems == 96);
}

TEST_CASE("gfx9 paged schedule: a block index outside the cache reads as zeros, and the split bounds") {
    PagedProblemSpec spec{.batch = 2, .next_n = 2, .heads = 32, .head_dim = 64, .block_kv = 64,
                          .average_context = 200, .context_lens_2d = true, .seed = 77};
    HostPagedProblem hp = make_paged_problem(spec);
    hp.block_table[0] = hp.num_cache_blocks + 3;  // request 0, keys 0..63
    hp.block_table[1] = -1;                       // request 0, keys 64..127
    std::vector<float> logits = poisoned(hp);
    std::vector<int> writes(logits.size(), 0);
    const PagedMqaLogitsParams p = params_for(hp, logits, true);
    replay(p, Grid{2, 128, 32}, writes);
    for (int t = 0; t < 2; ++t) {
        for (int col = 0; col < std::min(128, hp.visible_keys(0, t)); ++col) {
            CAPTURE(col);
            CHECK(logits[static_cast<std::size_t>(t * hp.logits_row_stride + col)] == 0.0f);
        }
    }
    // Splits of a request's blocks: equal runs in order, the last ones empty when there are too few.
    const mqa::Range first = mqa_gfx9_paged::split_work(p, 1, 0, 3).blocks;
    const mqa::Range last = mqa_gfx9_paged::split_work(p, 1, 2, 3).blocks;
    const int blocks = mqa_gfx9_paged::request_blocks(p, 1);
    CHECK(blocks == (std::max(hp.visible_keys(1, 0), hp.visible_keys(1, 1)) + 63) / 64);
    CHECK(first.begin == 0);
    CHECK(last.end == blocks);
    CHECK(mqa_gfx9_paged::split_work(p, 1, 0, 3).tail_begin == blocks * 64);
}
