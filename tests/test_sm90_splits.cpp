// The wgmma family's KV split rule (codegen/families/sm90_mqa_logits/family.cpp): no split without tiles, within
// [1, tiles], and splitting only where the persistent grid would otherwise idle; the SM cap.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>

#include "codegen/families/sm90_mqa_logits/family.hpp"
#include "codegen/templates/mqa_logits_params.cuh"
#include "variants/variant.hpp"

using namespace mqajit;

namespace {

bool every_split_has_tiles(std::int64_t tiles, std::int64_t splits) {
    const std::int64_t per_split = (tiles + splits - 1) / splits;
    return (splits - 1) * per_split < tiles;  // the last split starts inside the tiles
}

}  // namespace

TEST_CASE("sm90 splits: a forced count is rounded so that no split is empty") {
    for (std::int64_t tiles : {1, 2, 10, 63, 64, 65, 938}) {
        for (std::int64_t wanted : {-3, 0, 1, 2, 3, 6, 7, 64, 100000}) {
            const std::int64_t splits = whole_kv_splits(tiles, wanted);
            INFO("tiles ", tiles, " wanted ", wanted, " -> ", splits);
            CHECK(splits >= 1);
            CHECK(splits <= tiles);
            CHECK(every_split_has_tiles(tiles, splits));
            if (wanted >= 1 && wanted <= tiles && tiles % wanted == 0) CHECK(splits == wanted);
        }
    }
    CHECK(whole_kv_splits(10, 6) == 5);
    CHECK(whole_kv_splits(0, 4) == 1);
}

TEST_CASE("sm90 splits: the automatic rule") {
    for (int sms : {1, 78, 132}) {
        for (const std::int64_t q_blocks : {std::int64_t{1}, std::int64_t{7}, std::int64_t{64}, std::int64_t{2} * sms,
                                            std::int64_t{1024}, std::int64_t{8} * sms}) {
            for (std::int64_t tiles : {1, 5, 64, 469, 938}) {
                const int splits = sm90_kv_splits(q_blocks, tiles, sms);
                INFO("sms ", sms, " q_blocks ", q_blocks, " tiles ", tiles, " -> ", splits);
                CHECK(splits >= 1);
                CHECK(splits <= tiles);
                CHECK(every_split_has_tiles(tiles, splits));
                // Whole rounds of q-blocks already keep every block busy: a split would only add start-ups.
                if (q_blocks % sms == 0) CHECK(splits == 1);
            }
        }
    }
    // Few q-blocks and long rows: split until the 132 blocks all have work.
    CHECK(sm90_kv_splits(1, 938, 132) >= 100);
    CHECK(sm90_kv_splits(64, 938, 132) >= 2);
}

TEST_CASE("sm90 plan: num_sms caps the persistent grid and the split model") {
    const DeviceLimits device{.multiprocessors = 132, .max_shared_bytes_per_block = 232448};
    const Variant variant = Variant::parse("wgmma64x128x32_bkv128_r4_w2_lds4");
    const auto plan_for = [&](std::int64_t seq_len, std::int64_t seq_len_kv, int num_sms) {
        MqaLogitsParams params{};
        const ProblemShape shape{.heads = 32, .head_dim = 128, .seq_len = seq_len, .seq_len_kv = seq_len_kv,
                                 .num_sms = num_sms};
        return sm90_mqa_logits_family().plan(variant, shape, device, params);
    };
    for (const int cap : {1, 20, 78, 131}) {
        for (const std::int64_t seq_len : {256, 4096}) {
            const LaunchPlan plan = plan_for(seq_len, 16384, cap);
            INFO("cap ", cap, " S ", seq_len);
            const std::int64_t q_blocks = (seq_len + variant.rows - 1) / variant.rows;
            CHECK(plan.num_kv_splits == sm90_kv_splits(q_blocks, 16384 / variant.bkv, cap));
            CHECK(plan.config.grid_x == std::min<std::int64_t>(q_blocks * plan.num_kv_splits, cap));
            CHECK(plan.config.grid_x <= static_cast<unsigned>(cap));
        }
    }
    CHECK(plan_for(4096, 16384, 0).config.grid_x == 132);    // 0: all of them
    CHECK(plan_for(4096, 16384, 500).config.grid_x == 132);  // more than the device has: all of them
    CHECK(plan_for(1, 128, 78).config.grid_x == 1);          // one unit needs one block, cap or not
}
