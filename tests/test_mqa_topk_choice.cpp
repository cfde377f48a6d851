// choose_topk(): which path and kernels an mqa_topk call takes, from the call's request, the
// mqa_topk table and the mqa_logits table, on the host alone (mqa_topk() and explain_topk() both
// ask it), so it is tested without a GPU against tuning databases made here.

#include <doctest/doctest.h>

#include <string>

#include "mqajit/error.hpp"
#include "mqajit/mqa_topk.hpp"
#include "runtime/mqa_topk_path.hpp"
#include "tests/support.hpp"
#include "tuning_db/tuning_db.hpp"

using namespace mqajit;

namespace {

constexpr std::string_view kFused = "twgmma64x128x32_bkv64_r4_w2_lds4";   // H=32
constexpr std::string_view kTwin = "wgmma64x128x32_bkv64_r4_w2_lds4";
constexpr std::string_view kOtherLogits = "wgmma64x128x32_bkv64_r4_w3_lds6";
constexpr std::string_view kOtherTwin = "twgmma64x128x32_bkv64_r4_w3_lds6";

TopkQuery query(std::int64_t seq_len, std::int64_t seq_len_kv, MqaTopkPath path = MqaTopkPath::automatic,
                std::string variant = {}) {
    return {.arch = Arch::parse("sm_90a"), .cu_num = 132, .heads = 32, .head_dim = 128, .seq_len = seq_len,
            .seq_len_kv = seq_len_kv, .k = 2048, .workspace_bytes = mqa_topk_workspace_bytes(seq_len, seq_len_kv, 2048),
            .kv_rows_aligned = true, .path = path, .variant = std::move(variant), .device = "this test's sm_90a"};
}

TopkTunedRow topk_row(std::int64_t seq_len, std::int64_t seq_len_kv, std::string_view variant, int k = 2048) {
    TopkTunedRow row;
    row.key = {.arch = "sm_90a", .cu_num = 132, .heads = 32, .head_dim = 128, .k = k, .seq_len = seq_len,
               .seq_len_kv = seq_len_kv};
    row.backend = variant == "baseline" ? "baseline" : "jit";
    row.variant = std::string(variant);
    row.us = 100;
    return row;
}

TunedRow logits_row(std::int64_t seq_len, std::int64_t seq_len_kv, std::string_view variant) {
    TunedRow row;
    row.key = {.arch = "sm_90a", .cu_num = 132, .heads = 32, .head_dim = 128, .clean_logits = 0,
               .seq_len = seq_len, .seq_len_kv = seq_len_kv};
    row.backend = "jit";
    row.variant = std::string(variant);
    row.us = 100;
    return row;
}

std::string name_of(const std::optional<Variant>& variant) { return variant ? variant->name() : "baseline"; }

// A user database whose mqa_logits table serves every H=32 shape with kOtherLogits.
struct Tables {
    testing::TempDir dir{"topk-choice"};
    TuningDb db{std::nullopt, dir.path() / "tuning.db"};
    Tables() { db.insert(logits_row(1, 1, kOtherLogits)); }
};

}  // namespace

TEST_CASE("topk choice: without an mqa_topk row, the mqa_logits table's kernel and the path rule") {
    Tables tables;
    const TopkChoice long_rows = choose_topk(tables.db, query(4096, 1048576));
    CHECK(long_rows.fused);
    CHECK(name_of(long_rows.topk_variant) == kOtherTwin);
    CHECK(name_of(long_rows.logits.variant) == kOtherLogits);
    CHECK(long_rows.logits.reason.find("tuned row") != std::string::npos);
    CHECK_FALSE(long_rows.logits_pinned);
    CHECK_FALSE(long_rows.row);

    const TopkChoice short_rows = choose_topk(tables.db, query(4096, 32768));
    CHECK_FALSE(short_rows.fused);
    CHECK(name_of(short_rows.logits.variant) == kOtherLogits);
    CHECK(short_rows.reason.find("below 10 x") != std::string::npos);
}

TEST_CASE("topk choice: an mqa_topk row naming a fused kernel takes the fused path wherever it can serve") {
    Tables tables;
    tables.db.insert(topk_row(1024, 8192, kFused));
    const TopkChoice choice = choose_topk(tables.db, query(2048, 8192));  // short rows: the rule alone says unfused
    CHECK(choice.fused);
    CHECK(name_of(choice.topk_variant) == kFused);
    CHECK(name_of(choice.logits.variant) == kTwin);  // the row's twin, not the mqa_logits table's kernel
    CHECK(choice.logits_pinned);
    REQUIRE(choice.row);
    CHECK(choice.row->variant == kFused);
    CHECK(choice.reason.find("mqa_topk row") != std::string::npos);

    // Where the fused path cannot serve, the unfused one runs the same values' kernel.
    TopkQuery small = query(2048, 8192);
    small.workspace_bytes = 8192 * 4;
    const TopkChoice unfused = choose_topk(tables.db, small);
    CHECK_FALSE(unfused.fused);
    CHECK(name_of(unfused.logits.variant) == kTwin);
    CHECK(unfused.logits_pinned);
    CHECK(unfused.reason.find("workspace holds") != std::string::npos);

    const TopkChoice asked_unfused = choose_topk(tables.db, query(2048, 8192, MqaTopkPath::unfused));
    CHECK_FALSE(asked_unfused.fused);
    CHECK(name_of(asked_unfused.logits.variant) == kTwin);

    // The row's k is part of its key: a call with another k does not see it.
    TopkQuery other_k = query(2048, 8192);
    other_k.k = 1024;
    const TopkChoice untuned = choose_topk(tables.db, other_k);
    CHECK_FALSE(untuned.row);
    CHECK(name_of(untuned.logits.variant) == kOtherLogits);
}

TEST_CASE("topk choice: an mqa_topk row naming an mqa_logits kernel or the baseline is the unfused path with it") {
    Tables tables;
    tables.db.insert(topk_row(1024, 8192, kTwin));
    tables.db.insert(topk_row(1024, 1 << 21, "baseline"));
    const TopkChoice choice = choose_topk(tables.db, query(4096, 1048576));  // long rows: the rule alone says fused
    CHECK_FALSE(choice.fused);
    CHECK(name_of(choice.logits.variant) == kTwin);
    CHECK(choice.logits_pinned);
    CHECK(choice.reason.find("the unfused path: mqa_topk row") != std::string::npos);

    const TopkChoice fused = choose_topk(tables.db, query(4096, 1048576, MqaTopkPath::fused));
    CHECK(fused.fused);
    CHECK(name_of(fused.topk_variant) == kFused);
    CHECK(name_of(fused.logits.variant) == kTwin);

    const TopkChoice baseline = choose_topk(tables.db, query(4096, 1 << 21));
    CHECK_FALSE(baseline.fused);
    CHECK_FALSE(baseline.logits.variant);
    CHECK(baseline.logits_pinned);
}

TEST_CASE("topk choice: a requested variant overrides the tables, and a fused one must be able to serve") {
    Tables tables;
    tables.db.insert(topk_row(1024, 8192, kFused));
    const TopkChoice logits = choose_topk(tables.db, query(4096, 1048576, MqaTopkPath::automatic, std::string(kTwin)));
    CHECK_FALSE(logits.row);
    CHECK(logits.logits_pinned);
    CHECK(name_of(logits.logits.variant) == kTwin);
    CHECK(logits.fused);  // long rows: the rule takes the requested kernel's twin
    CHECK(name_of(logits.topk_variant) == kFused);

    const TopkChoice fused = choose_topk(tables.db, query(1024, 4096, MqaTopkPath::automatic, std::string(kOtherTwin)));
    CHECK(fused.fused);
    CHECK(name_of(fused.topk_variant) == kOtherTwin);
    CHECK(name_of(fused.logits.variant) == kOtherLogits);

    CHECK_THROWS_WITH_AS(choose_topk(tables.db, query(1024, 4096, MqaTopkPath::unfused, std::string(kFused))),
                         doctest::Contains("is a fused kernel, and the unfused path was requested"), Error);
    CHECK_THROWS_WITH_AS(
        choose_topk(tables.db, query(1024, 4096, MqaTopkPath::automatic, "twgmma64x256x32_bkv64_r4_w2_lds4")),
        doctest::Contains("cannot run on this test's sm_90a"), Error);
    TopkQuery small = query(1024, 65536, MqaTopkPath::automatic, std::string(kFused));
    small.workspace_bytes = 65536 * 4;
    CHECK_THROWS_WITH_AS(choose_topk(tables.db, small), doctest::Contains("workspace holds"), Error);
}

TEST_CASE("topk choice: an mqa_topk row whose kernel cannot run here is passed over, saying why") {
    Tables tables;
    tables.db.insert(topk_row(1024, 8192, "twgmma64x256x32_bkv64_r4_w2_lds4"));  // H=64's, at H=32
    const TopkChoice choice = choose_topk(tables.db, query(4096, 1048576));
    CHECK_FALSE(choice.row);
    CHECK(name_of(choice.logits.variant) == kOtherLogits);
    CHECK(choice.logits.reason.find("is not used") != std::string::npos);
}
