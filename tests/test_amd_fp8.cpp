// gfx942's MFMA reads fp8 as e4m3fnuz; the kernel re-encodes e4m3fn inputs on their way into LDS
// and multiplies the head weights by 4 (codegen/families/gfx9_mqa_logits/gfx9_mqa_logits.cuh). Checked here on the
// CPU for every code, every byte position of the four-byte form, and every product of two codes.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>

#include "codegen/families/gfx9_mqa_logits/gfx9_mqa_logits.cuh"

namespace {

// Decoders written from the format definitions, independent of the kernel headers.
// e4m3fn: bias 7, exponent 0 is subnormal (m * 2^-9), S.1111.111 is NaN, no infinities.
double decode_e4m3fn(unsigned code) {
    const unsigned exponent = (code >> 3) & 0xF;
    const unsigned mantissa = code & 0x7;
    if (exponent == 0xF && mantissa == 0x7) return NAN;
    const double magnitude =
        exponent == 0 ? std::ldexp(mantissa, -9) : std::ldexp(8.0 + mantissa, static_cast<int>(exponent) - 10);
    return (code & 0x80) ? -magnitude : magnitude;
}

// e4m3fnuz: bias 8, exponent 0 is subnormal (m * 2^-10), 0x80 is the only NaN, no -0, no infinities.
double decode_e4m3fnuz(unsigned code) {
    if (code == 0x80) return NAN;
    const unsigned exponent = (code >> 3) & 0xF;
    const unsigned mantissa = code & 0x7;
    const double magnitude =
        exponent == 0 ? std::ldexp(mantissa, -10) : std::ldexp(8.0 + mantissa, static_cast<int>(exponent) - 11);
    return (code & 0x80) ? -magnitude : magnitude;
}

}  // namespace

TEST_CASE("amd fp8: every e4m3fn code becomes the e4m3fnuz code of half its value, NaN stays NaN") {
    int num_nan = 0;
    for (unsigned code = 0; code < 256; ++code) {
        CAPTURE(code);
        const unsigned converted = mqa_gfx9::e4m3fn_to_fnuz(code);
        REQUIRE(converted < 256);
        const double original = decode_e4m3fn(code);
        const double result = decode_e4m3fnuz(converted);
        if (std::isnan(original)) {
            CHECK(std::isnan(result));
            ++num_nan;
        } else {
            CHECK_FALSE(std::isnan(result));
            CHECK(result * 2.0 == original);  // exact: same mantissa, exponent one lower
        }
    }
    CHECK(num_nan == 2);  // 0x7f and 0xff
    CHECK(mqa_gfx9::e4m3fn_to_fnuz(0x80) == 0x00);  // -0 would read as fnuz NaN
    CHECK(mqa_gfx9::e4m3fn_to_fnuz(0x7F) == 0x80);
    CHECK(mqa_gfx9::e4m3fn_to_fnuz(0x7E) == 0x7E);  // 448 -> 224: the largest finite keeps its bits
}

TEST_CASE("amd fp8: the four-byte conversion equals the one-byte conversion in every byte position") {
    for (unsigned code = 0; code < 256; ++code) {
        for (int position = 0; position < 4; ++position) {
            // The other bytes hold the codes around the special ones, to catch carries between bytes.
            const unsigned neighbours[4] = {0x7F, 0x80, 0xFF, 0x00};
            unsigned word = 0;
            unsigned expected = 0;
            for (int byte = 0; byte < 4; ++byte) {
                const unsigned value = byte == position ? code : neighbours[(byte + code) % 4];
                word |= value << (8 * byte);
                expected |= mqa_gfx9::e4m3fn_to_fnuz(value) << (8 * byte);
            }
            CAPTURE(word);
            CHECK(mqa_gfx9::e4m3fn_to_fnuz_x4(word) == expected);
        }
    }
    std::mt19937 random(6);
    for (int i = 0; i < 100000; ++i) {
        const unsigned word = static_cast<unsigned>(random());
        unsigned expected = 0;
        for (int byte = 0; byte < 4; ++byte) expected |= mqa_gfx9::e4m3fn_to_fnuz((word >> (8 * byte)) & 0xFF) << (8 * byte);
        CAPTURE(word);
        REQUIRE(mqa_gfx9::e4m3fn_to_fnuz_x4(word) == expected);
    }
}

TEST_CASE("amd fp8: products of converted operands times the correction equal the e4m3fn products exactly") {
    CHECK(mqa_gfx9::kFnuzProductCorrection == 4.0f);
    int num_checked = 0;
    for (unsigned a = 0; a < 256; ++a) {
        for (unsigned b = 0; b < 256; ++b) {
            const double expected = decode_e4m3fn(a) * decode_e4m3fn(b);
            if (std::isnan(expected)) continue;
            const double product = decode_e4m3fnuz(mqa_gfx9::e4m3fn_to_fnuz(a)) *
                                   decode_e4m3fnuz(mqa_gfx9::e4m3fn_to_fnuz(b)) * mqa_gfx9::kFnuzProductCorrection;
            if (product != expected) {
                CAPTURE(a);
                CAPTURE(b);
                CHECK(product == expected);
            }
            ++num_checked;
        }
    }
    CHECK(num_checked == 254 * 254);
}
