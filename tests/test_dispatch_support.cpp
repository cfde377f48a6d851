// What both dispatchers share, without a GPU: a tuned row naming a variant this build cannot parse
// means the baseline with a reason (never an exception), and one warning per cause.

#include <doctest/doctest.h>

#include <string>

#include "runtime/dispatch_support.hpp"

using namespace mqajit;

TEST_CASE("dispatch support: an unparsable tuned variant is a reason, not an exception") {
    std::string reason;
    const std::optional<Variant> parsed =
        parse_tuned_variant("user.db row 7", "pwgmma64x128x32_bkv64_r2_w2_lds8_v2", &reason);
    CHECK_FALSE(parsed.has_value());
    CHECK(reason.find("user.db row 7") != std::string::npos);
    CHECK(reason.find("cannot parse") != std::string::npos);
    reason.clear();
    const std::optional<Variant> good = parse_tuned_variant("user.db row 8", "pwgmma64x128x32_bkv64_r2_w2_lds8", &reason);
    REQUIRE(good.has_value());
    CHECK(good->op == MatrixOp::pwgmma);
    CHECK(reason.empty());
}

TEST_CASE("dispatch support: first_time is true once per topic") {
    CHECK(first_time("dispatch-support-test|a"));
    CHECK_FALSE(first_time("dispatch-support-test|a"));
    CHECK(first_time("dispatch-support-test|b"));
}
