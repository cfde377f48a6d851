// mqa_logits_output.cuh on the CPU: bf16 rounding against an independent nearest-value search, and
// where dense and compressed rows put each key column (the same helpers every kernel stores through).

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "mqa_logits_output.cuh"

namespace {

float from_bits(std::uint32_t bits) {
    float value;
    std::memcpy(&value, &bits, 4);
    return value;
}

// The bf16 nearest to finite `value` by exact comparison in double, ties to the even pattern; past
// the largest finite bf16 the next candidate is infinity, which IEEE rounding places at 2^128.
std::uint16_t nearest_bf16(float value) {
    std::uint32_t bits;
    std::memcpy(&bits, &value, 4);
    const std::uint16_t down = static_cast<std::uint16_t>(bits >> 16);  // toward zero
    const std::uint16_t up = static_cast<std::uint16_t>(down + 1);      // away from zero
    const double below = from_bits(std::uint32_t{down} << 16);
    double above = from_bits(std::uint32_t{up} << 16);
    if (std::isinf(above)) above = std::copysign(std::ldexp(1.0, 128), above);
    const double distance_down = std::fabs(value - below), distance_up = std::fabs(above - value);
    if (distance_down != distance_up) return distance_down < distance_up ? down : up;
    return (down & 1) ? up : down;
}

MqaLogitsParams params(void* logits, int bf16, int compressed_columns, const int* starts, int n, long long stride) {
    MqaLogitsParams p{};
    p.logits = logits;
    p.logits_bf16 = bf16;
    p.compressed_columns = compressed_columns;
    p.cu_starts = starts;
    p.seq_len_kv = n;
    p.logits_stride_s = stride;
    return p;
}

}  // namespace

TEST_CASE("logits output: bf16 rounding is to the nearest value, ties to even, NaN stays NaN") {
    CHECK(mqa::float_to_bf16_bits(1.0f) == 0x3F80);
    CHECK(mqa::float_to_bf16_bits(from_bits(0x3F808000)) == 0x3F80);  // tie, even below
    CHECK(mqa::float_to_bf16_bits(from_bits(0x3F818000)) == 0x3F82);  // tie, even above
    CHECK(mqa::float_to_bf16_bits(from_bits(0x3F808001)) == 0x3F81);
    CHECK(mqa::float_to_bf16_bits(-std::numeric_limits<float>::infinity()) == 0xFF80);
    CHECK(mqa::float_to_bf16_bits(std::numeric_limits<float>::infinity()) == 0x7F80);
    CHECK(mqa::float_to_bf16_bits(std::numeric_limits<float>::max()) == 0x7F80);  // rounds past the largest bf16
    CHECK(mqa::float_to_bf16_bits(-0.0f) == 0x8000);
    const std::uint16_t nan = mqa::float_to_bf16_bits(std::numeric_limits<float>::quiet_NaN());
    CHECK((nan & 0x7F80) == 0x7F80);
    CHECK((nan & 0x007F) != 0);
    CHECK((mqa::float_to_bf16_bits(from_bits(0x7F800001)) & 0x7F) != 0);  // a NaN whose payload rounding would lose

    std::mt19937 rng(12345);
    int mismatches = 0;
    for (int i = 0; i < 200000; ++i) {
        std::uint32_t bits = rng();
        if ((bits & 0x7F800000u) == 0x7F800000u) bits &= 0xBFFFFFFFu;  // finite values only here
        if (i % 4 == 0) bits = (bits & 0xFFFF0000u) | 0x8000u;          // many exact ties
        const float value = from_bits(bits);
        if (mqa::float_to_bf16_bits(value) != nearest_bf16(value)) ++mismatches;
    }
    CHECK(mismatches == 0);
}

TEST_CASE("logits output: dense and compressed rows place each key column where the contract says") {
    const int n = 50;
    const int starts[3] = {10, -4, 45};  // a negative start and one near N
    SUBCASE("dense float32 rows hold every key column at its own index") {
        std::vector<float> logits(3 * 64, -1.0f);
        const MqaLogitsParams p = params(logits.data(), 0, 0, starts, n, 64);
        for (int row = 0; row < 3; ++row) {
            const mqa_output::LogitsRow out = mqa_output::logits_row(p, row);
            CHECK(out.stored.begin == 0);
            CHECK(out.stored.end == n);
            for (int j = 0; j < 60; ++j) mqa_output::store_if_held(p, out, j, static_cast<float>(row * 100 + j));
        }
        for (int row = 0; row < 3; ++row)
            for (int c = 0; c < 64; ++c) CHECK(logits[row * 64 + c] == (c < n ? row * 100 + c : -1.0f));
    }
    SUBCASE("compressed bf16 rows hold key j at j - cu_starts[i], below max_seqlen_k, nothing before or after") {
        const int columns = 8;
        std::vector<std::uint16_t> logits(3 * 12, 0xFFFF);
        const MqaLogitsParams p = params(logits.data(), 1, columns, starts, n, 12);
        for (int row = 0; row < 3; ++row) {
            const mqa_output::LogitsRow out = mqa_output::logits_row(p, row);
            for (int j = -10; j < 70; ++j) mqa_output::store_if_held(p, out, j, static_cast<float>(j));
        }
        CHECK(mqa_output::logits_row(p, 0).stored.begin == 10);
        CHECK(mqa_output::logits_row(p, 0).stored.end == 18);
        CHECK(mqa_output::logits_row(p, 1).stored.begin == 0);  // keys start at 0: columns 0..3 are never written
        CHECK(mqa_output::logits_row(p, 1).stored.end == 4);
        CHECK(mqa_output::logits_row(p, 2).stored.end == n);  // only 5 keys are left before N
        for (int row = 0; row < 3; ++row) {
            for (int c = 0; c < 12; ++c) {
                const int j = starts[row] + c;
                const bool held = c < columns && j >= 0 && j < n;
                CAPTURE(row);
                CAPTURE(c);
                CHECK(logits[row * 12 + c] == (held ? mqa::float_to_bf16_bits(static_cast<float>(j)) : 0xFFFF));
            }
        }
    }
    SUBCASE("-inf fills go through the same placement") {
        std::vector<std::uint16_t> logits(64, 0);
        const MqaLogitsParams p = params(logits.data(), 1, 0, starts, n, 64);
        mqa_output::fill_negative_infinity(p, mqa_output::logits_row(p, 0), mqa::Range{3, 9}, 1, 2);
        for (int c = 0; c < 64; ++c) CHECK(logits[c] == ((c == 4 || c == 6 || c == 8) ? 0xFF80 : 0));
    }
}
