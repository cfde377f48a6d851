// The twgmma kernel's candidate epilogue (codegen/families/sm90_mqa_topk/sm90_topk_epilogue.cuh)
// run on the CPU by tests/cuda_block_emulator.hpp, one math warp at a time, for every shape of its
// template (rows per q-block, math warpgroups, m64 slices per tile): each logit a lane holds is
// stored as the kernel's epilogue stores it, tile after tile, and every one that lies in its row's
// window and clears the row's threshold must reach the row's candidate buffer exactly once, the
// row's count must say how many, and a row whose threshold is -inf keeps its whole window in place.

#include "tests/cuda_block_emulator.hpp"

// clang-format off
#include "sm90_topk_epilogue.cuh"
// clang-format on

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "codegen/families/sm90_mqa_topk/family.hpp"
#include "variants/variant.hpp"

#include <algorithm>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

namespace {

struct Stored {
    int key;
    float value;
    bool operator<(const Stored& other) const { return std::tie(key, value) < std::tie(other.key, other.value); }
    bool operator==(const Stored& other) const { return key == other.key && value == other.value; }
};

// One math warp (the first of math warpgroup 0) runs `tiles` tiles of a unit of kRows rows.
template <int kRows, int kMathGroups, int kMTiles>
void check_epilogue(std::mt19937_64& rng, int tiles, float keep_share) {
    using Owned = mqa_sm90::OwnedResults<kRows, mqa_sm90::Output::candidates, kMathGroups, kMTiles>;
    using R = mqa_sm90::QuadReduction<kRows>;
    constexpr int kBlockKv = 64 * kMTiles;
    const int first_row = 3;
    const int seq_len = first_row + kRows - (kRows > 1 ? 1 : 0);  // the unit's last row past seq_len
    const int seq_len_kv = tiles * kBlockKv;
    const int capacity = 4096;
    std::uniform_int_distribution<int> position(0, seq_len_kv);
    std::vector<int> starts(static_cast<std::size_t>(seq_len)), ends(starts.size());
    std::vector<float> thresholds(starts.size());
    std::vector<int> counts(starts.size(), 0);
    for (int r = 0; r < seq_len; ++r) {
        int a = position(rng), b = position(rng);
        if (a > b) std::swap(a, b);
        starts[static_cast<std::size_t>(r)] = r == first_row ? -5 : a;  // one window clamped at 0
        ends[static_cast<std::size_t>(r)] = b;
        // Values are uniform in [-1, 1): the threshold keeps about keep_share of them; the unit's
        // second row keeps its whole window in place (threshold -inf, its count preset).
        const bool whole = r == first_row + 1;
        thresholds[static_cast<std::size_t>(r)] = whole ? -std::numeric_limits<float>::infinity() : 1.f - 2.f * keep_share;
        if (whole) counts[static_cast<std::size_t>(r)] = std::max(0, b - std::max(0, starts[static_cast<std::size_t>(r)]));
    }
    std::vector<int> keys(starts.size() * capacity, -7);
    std::vector<float> values(keys.size(), NAN);
    MqaLogitsParams p{};
    p.seq_len = seq_len;
    p.seq_len_kv = seq_len_kv;
    p.cu_starts = starts.data();
    p.cu_ends = ends.data();
    p.topk_thresholds = thresholds.data();
    p.topk_counts = counts.data();
    p.topk_keys = keys.data();
    p.topk_values = values.data();
    p.topk_capacity = capacity;
    std::uniform_real_distribution<float> uniform(-1.f, 1.f);
    std::vector<float> logits(starts.size() * static_cast<std::size_t>(seq_len_kv));
    for (float& v : logits) v = uniform(rng);

    // The host sizes the stage for the launch (the kernel traps on less): the same bytes.
    mqajit::Variant variant = mqajit::Variant::parse("twgmma64x128x32_bkv64_r4_w2_lds4");
    variant.rows = kRows;
    variant.warps = kMathGroups;
    variant.bkv = kBlockKv;
    CHECK(mqajit::sm90_topk_stage_bytes(variant) == Owned::kSharedBytes);
    std::vector<std::int64_t> shared((Owned::kSharedBytes + 7) / 8, -1);  // poisoned

    // The epilogue of math warp 0 (threads 128-159; warpgroup 0 produces).
    cuda_emulator::run_block(160, [&] {
        if (threadIdx.x < 128) return;
        const int lane = static_cast<int>(threadIdx.x % 32);
        const int group_row = lane / 4, quad_lane = lane % 4;
        Owned owned;
        owned.load(p, first_row, quad_lane, reinterpret_cast<unsigned char*>(shared.data()));
        for (int tile = 0; tile < tiles; ++tile) {
            for (int m = 0; m < kMTiles; ++m) {
                const int base_col = tile * kBlockKv + m * 64 + group_row;  // warp 0 of its warpgroup
                for (int k = 0; k < R::kHeld; ++k) {
                    const int row = first_row + R::item(k, quad_lane) / 2;
                    const int col = base_col + 8 * (R::item(k, quad_lane) % 2);
                    const float value =
                        row < seq_len ? logits[static_cast<std::size_t>(row) * seq_len_kv + col] : 0.f;
                    owned.store(p, k, base_col, value);
                }
            }
            owned.after_tile(p);
        }
        owned.finish(p);
    });

    for (int r = first_row; r < seq_len; ++r) {
        const auto row = static_cast<std::size_t>(r);
        const int lo = std::max(starts[row], 0), hi = std::min(ends[row], seq_len_kv);
        std::vector<Stored> want;
        // Warp 0 of a warpgroup holds columns 0-15 of each m64 slice: those are the ones it stores.
        for (int col = lo; col < hi; ++col) {
            const float value = logits[row * seq_len_kv + static_cast<std::size_t>(col)];
            if (col % 64 < 16 && !(value < thresholds[row])) want.push_back({col, value});
        }
        INFO(fmt::format("rows {} math groups {} m64 slices {} tiles {}: row {} window [{}, {})", kRows, kMathGroups,
                         kMTiles, tiles, r, lo, hi));
        std::vector<Stored> got;
        if (std::isinf(thresholds[row])) {  // in place: key col at slot col - lo
            CHECK(counts[row] == hi - lo);
            for (const Stored& s : want) {
                const std::size_t at = row * capacity + static_cast<std::size_t>(s.key - lo);
                CHECK(keys[at] == s.key);
                CHECK(values[at] == s.value);
            }
            continue;
        }
        REQUIRE(counts[row] == static_cast<int>(want.size()));
        for (int slot = 0; slot < counts[row]; ++slot) {
            const std::size_t at = row * capacity + static_cast<std::size_t>(slot);
            got.push_back({keys[at], values[at]});
        }
        std::sort(want.begin(), want.end());
        std::sort(got.begin(), got.end());
        CHECK(got.size() == want.size());
        CHECK((got == want));
    }
    // The row past seq_len gets nothing.
    CHECK(std::all_of(keys.begin() + static_cast<std::ptrdiff_t>(seq_len) * capacity, keys.end(), [](int k) { return k == -7; }));
}

}  // namespace

TEST_CASE("topk epilogue logic: each kept logit reaches its row's candidate buffer once, for every template shape") {
    std::mt19937_64 rng(std::random_device{}());
    for (const float keep : {0.05f, 0.5f, 1.0f}) {
        CAPTURE(keep);
        check_epilogue<1, 3, 1>(rng, 9, keep);
        check_epilogue<1, 2, 2>(rng, 7, keep);
        check_epilogue<2, 2, 1>(rng, 9, keep);
        check_epilogue<2, 4, 2>(rng, 7, keep);
        check_epilogue<4, 2, 1>(rng, 11, keep);
        check_epilogue<4, 1, 2>(rng, 6, keep);
        check_epilogue<4, 4, 1>(rng, 9, keep);
        check_epilogue<8, 2, 1>(rng, 11, keep);
        check_epilogue<8, 1, 1>(rng, 5, keep);
    }
}
