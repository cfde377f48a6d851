// The index math of the gfx9 kernel, replayed on the CPU for each MFMA shape: operand bytes cover
// d exactly once, accumulators cover every head of a KV column exactly once across the lanes the
// cross-lane adds combine, and a modelled MFMA with these layouts reproduces the logits.

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "codegen/families/gfx9_mqa_logits/gfx9_mqa_logits.cuh"

namespace {

struct Shape {
    int m;
    int k;
};
constexpr Shape kShapes[] = {{32, 64}, {16, 128}, {32, 16}, {16, 32}};

// The lanes whose partial sums the kernel adds for lane `lane`: xor 32, and for M = 16 also xor 16.
std::set<int> combined_lanes(int m, int lane) {
    std::set<int> lanes{lane, lane ^ 32};
    if (m == 16) {
        for (int l : std::set<int>(lanes)) lanes.insert(l ^ 16);
    }
    return lanes;
}

}  // namespace

TEST_CASE("gfx9 lanes: operand bytes of the lane groups cover each MFMA step's d range exactly once") {
    for (const Shape shape : kShapes) {
        CAPTURE(shape.m);
        CAPTURE(shape.k);
        const int bytes = mqa_gfx9::operand_bytes_per_lane(shape.m, shape.k);
        CHECK(bytes * 64 == shape.m * shape.k);
        const int head_dim = 128;
        std::vector<int> covered(head_dim, 0);
        for (int step = 0; step < head_dim / shape.k; ++step) {
            for (int group = 0; group < 64 / shape.m; ++group) {
                const int first = mqa_gfx9::operand_first_byte(shape.m, shape.k, step, group);
                REQUIRE(first >= step * shape.k);
                REQUIRE(first + bytes <= (step + 1) * shape.k);
                // 8- or 32-byte pieces never straddle a 16-byte swizzle chunk unevenly.
                CHECK((bytes == 8 ? first % 16 + bytes <= 16 : first % 16 == 0));
                for (int b = first; b < first + bytes; ++b) ++covered[b];
            }
        }
        CHECK(std::all_of(covered.begin(), covered.end(), [](int count) { return count == 1; }));
    }
}

TEST_CASE("gfx9 lanes: the combined lanes of a KV column hold each head of the tile exactly once") {
    for (const Shape shape : kShapes) {
        CAPTURE(shape.m);
        const int accumulators = mqa_gfx9::accumulators_per_lane(shape.m);
        CHECK(accumulators * 64 == shape.m * shape.m);
        for (int lane = 0; lane < 64; ++lane) {
            CAPTURE(lane);
            std::vector<int> seen(shape.m, 0);
            for (int other : combined_lanes(shape.m, lane)) {
                CHECK(other % shape.m == lane % shape.m);  // same KV column
                for (int a = 0; a < accumulators; ++a) {
                    const int head = mqa_gfx9::accumulator_row(shape.m, other, a);
                    REQUIRE(head >= 0);
                    REQUIRE(head < shape.m);
                    ++seen[head];
                }
            }
            CHECK(std::all_of(seen.begin(), seen.end(), [](int count) { return count == 1; }));
        }
    }
}

TEST_CASE("gfx9 lanes: a modelled MFMA with the kernel's lane layouts gives the logits of one KV tile") {
    // The model: the hardware reads A[m][k] from lane m + M * (k / bytes) slot k % bytes, B[k][n] from
    // lane n + M * (k / bytes), and writes C[row(a, lane)][lane % M] to accumulator a of the lane.
    // The kernel fills those slots from LDS rows as load_operand does (group g: bytes of d from
    // operand_first_byte), then reduces with its weights and cross-lane adds.
    std::mt19937 random(942);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    for (const Shape shape : kShapes) {
        CAPTURE(shape.m);
        const int heads = 64, head_dim = 128, columns = shape.m;
        const int bytes = mqa_gfx9::operand_bytes_per_lane(shape.m, shape.k);
        std::vector<float> q(heads * head_dim), kv(columns * head_dim), w(heads);
        for (float& x : q) x = value(random);
        for (float& x : kv) x = value(random);
        for (float& x : w) x = value(random);

        std::vector<double> lane_sum(64, 0.0);
        for (int mt = 0; mt < heads / shape.m; ++mt) {
            std::vector<double> c(shape.m * shape.m, 0.0);  // C[h][n] of this head tile
            for (int step = 0; step < head_dim / shape.k; ++step) {
                for (int h = 0; h < shape.m; ++h) {
                    for (int n = 0; n < shape.m; ++n) {
                        for (int kk = 0; kk < shape.k; ++kk) {
                            const int group = kk / bytes, slot = kk % bytes;
                            const int d = mqa_gfx9::operand_first_byte(shape.m, shape.k, step, group) + slot;
                            c[h * shape.m + n] += double(q[(mt * shape.m + h) * head_dim + d]) * kv[n * head_dim + d];
                        }
                    }
                }
            }
            for (int lane = 0; lane < 64; ++lane) {
                for (int a = 0; a < mqa_gfx9::accumulators_per_lane(shape.m); ++a) {
                    const int h = mqa_gfx9::accumulator_row(shape.m, lane, a);
                    lane_sum[lane] += w[mt * shape.m + h] * std::max(0.0, c[h * shape.m + lane % shape.m]);
                }
            }
        }
        for (int lane = 0; lane < shape.m; ++lane) {
            double total = 0.0;
            for (int other : combined_lanes(shape.m, lane)) total += lane_sum[other];
            double expected = 0.0;
            for (int h = 0; h < heads; ++h) {
                double dot = 0.0;
                for (int d = 0; d < head_dim; ++d) dot += double(q[h * head_dim + d]) * kv[lane * head_dim + d];
                expected += w[h] * std::max(0.0, dot);
            }
            CAPTURE(lane);
            CHECK(total == doctest::Approx(expected).epsilon(1e-9));
        }
    }
}
