// The sm80_mqa_logits family without a GPU: every registered variant compiles under NVRTC without
// spills (skipped in a build without the CUDA backend), the generator and launch plan, the
// template's index math replayed on the CPU (coverage of the logits, ldmatrix fragments against the
// PTX layouts, exact e4m3 widening). The nvcc-built kernels: tests/test_cuda_prebuilt.cpp.

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "codegen/families/gfx9_mqa_logits/family.hpp"
#include "codegen/families/sm90_mqa_logits/family.hpp"
#include "codegen/family_registry.hpp"
#include "codegen/families/sm80_mqa_logits/family.hpp"
#include "codegen/families/sm80_mqa_logits/sm80_mqa_logits.cuh"
#include "mqajit/error.hpp"
#include "runtime/backend.hpp"
#include "tests/error_kind.hpp"
#include "tests/gpu_support.hpp"
#include "codegen/variant_registry.hpp"

namespace {

using mqajit::Arch;
using mqajit::ErrorKind;
using mqajit::MatrixOp;
using mqajit::Variant;

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

std::vector<Variant> mma_variants(const Arch& arch, int heads, int head_dim) {
    std::vector<Variant> result;
    for (const Variant& v : mqajit::VariantRegistry::instance().variants(arch, heads, head_dim)) {
        if (v.op == MatrixOp::mma) result.push_back(v);
    }
    return result;
}

// ---- NVRTC ------------------------------------------------------------------------------------

void check_mma_variants_compile(int heads, int head_dim) {
    MQAJIT_REQUIRE_BACKEND(mqajit::Vendor::nvidia);
    for (const char* arch_name : {"sm_90a", "sm_89", "sm_80"}) {
        const Arch arch = Arch::parse(arch_name);
        const std::vector<Variant> variants = mma_variants(arch, heads, head_dim);
        REQUIRE_FALSE(variants.empty());
        const mqajit::Compiler& compiler = backend->compiler();
        for (const Variant& v : variants) {
            CAPTURE(v.name());
            CAPTURE(arch.name);
            const mqajit::GeneratedKernel generated = mqajit::family_for(v).generate(v, heads, head_dim, arch);
            mqajit::CompileRequest request{.source = generated.source,
                                           .source_name = v.name() + ".cu",
                                           .kernel_name = generated.kernel_name,
                                           .arch = arch.name,
                                           .options = generated.options,
                                           .headers = generated.headers};
            const auto start = std::chrono::steady_clock::now();
            const mqajit::CompileResult result = compiler.compile(request);
            const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            MESSAGE(fmt::format("{} h{} d{} {}: {} registers, {:.2f} s", v.name(), heads, head_dim, arch.name,
                                result.usage.registers, seconds));
            CHECK_FALSE(result.binary.empty());
            CHECK(contains(std::string_view(result.binary.data(), result.binary.size()), generated.kernel_name));
            CHECK(result.usage.registers > 0);
            CHECK(result.usage.registers <= 255);
            CHECK(result.usage.spill_store_bytes == 0);
            CHECK(result.usage.spill_load_bytes == 0);
        }
    }
}

TEST_CASE("sm80 codegen: mma variants at heads=32 head_dim=128 compile without spills") {
    check_mma_variants_compile(32, 128);
}
TEST_CASE("sm80 codegen: mma variants at heads=32 head_dim=64 compile without spills") {
    check_mma_variants_compile(32, 64);
}
TEST_CASE("sm80 codegen: mma variants at heads=64 head_dim=128 compile without spills") {
    check_mma_variants_compile(64, 128);
}
TEST_CASE("sm80 codegen: mma variants at heads=64 head_dim=64 compile without spills") {
    check_mma_variants_compile(64, 64);
}

// ---- generator and plan --------------------------------------------------------------------------

TEST_CASE("sm80 codegen: the generated unit names the variant and instantiates the template") {
    const Variant v = Variant::parse("mma16x8x32_bkv128_r4_w4_lds3");
    const mqajit::KernelFamily& family = mqajit::family_for(v);
    CHECK(family.name() == "sm80_mqa_logits");
    CHECK(family.op() == MatrixOp::mma);
    const mqajit::GeneratedKernel k = family.generate(v, 32, 128, Arch::parse("sm_90a"));
    CHECK(k.kernel_name == "mqa_logits_mma16x8x32_bkv128_r4_w4_lds3_h32_d128");
    CHECK(contains(k.source, "#include \"sm80_mqa_logits.cuh\""));
    CHECK(contains(k.source, "MQA_SM80_MQA_LOGITS_KERNEL(mqa_logits_mma16x8x32_bkv128_r4_w4_lds3_h32_d128, 32, 128, "
                             "128, 4, 4, 3, true)"));
    for (const char* header : {"sm80_mqa_logits.cuh", "mqa_common.cuh", "mqa_logits_params.cuh"}) {
        CAPTURE(header);
        CHECK(std::any_of(k.headers.begin(), k.headers.end(), [&](const auto& f) { return f.name == header; }));
    }
    const mqajit::GeneratedKernel f16 =
        family.generate(Variant::parse("mma16x8x16_bkv64_r2_w4_lds2"), 64, 64, Arch::parse("sm_80"));
    CHECK(contains(f16.source, "64, 64, 64, 2, 4, 2, false)"));
}

TEST_CASE("sm80 codegen: the generator refuses what the template cannot build, saying why") {
    const mqajit::KernelFamily& family = mqajit::sm80_mqa_logits_family();
    const Arch sm80 = Arch::parse("sm_80");
    CHECK(mqajit::testing::error_kind_of([&] { family.generate(Variant::parse("mma16x8x32_bkv64_r4_w4_lds2"), 32, 128, sm80); }) ==
          ErrorKind::unsupported);
    CHECK(mqajit::testing::error_kind_of([&] {
              family.generate(Variant::parse("mma16x8x16_bkv64_r4_w4_lds2"), 32, 128, Arch::parse("gfx950"));
          }) == ErrorKind::unsupported);
    CHECK(mqajit::testing::error_kind_of([&] { family.generate(Variant::parse("mma16x8x16_bkv48_r4_w4_lds2"), 32, 128, sm80); }) ==
          ErrorKind::unsupported);
    CHECK(mqajit::testing::error_kind_of([&] { family.generate(Variant::parse("mma16x8x16_bkv64_r4_w4_lds2"), 12, 128, sm80); }) ==
          ErrorKind::unsupported);
    // r1 at 64 heads with four m tiles per warp cannot be split into passes of whole rows.
    CHECK(mqajit::testing::error_kind_of([&] { family.generate(Variant::parse("mma16x8x16_bkv64_r1_w1_lds2"), 64, 128, sm80); }) ==
          ErrorKind::unsupported);
    CHECK(&mqajit::family_for(Variant::parse("mfma32x32x64_bkv128_r2_w4_lds3")) == &mqajit::gfx9_mqa_logits_family());
    CHECK(&mqajit::family_for(Variant::parse("wgmma64x128x32_bkv128_r4_w2_lds3")) == &mqajit::sm90_mqa_logits_family());
}

TEST_CASE("sm80 codegen: shared memory fits every GPU the variant is registered for") {
    const Arch sm80 = Arch::parse("sm_80");
    for (int heads : {32, 64}) {
        for (int head_dim : {64, 128}) {
            const Variant baseline = mqajit::baseline_variant(heads);
            // NOTES: the baseline must launch without the opt-in to more than 48 KiB anywhere.
            CHECK(mqajit::sm80_shared_bytes(baseline, heads, head_dim) <= 48u * 1024);
            for (const Variant& v : mma_variants(Arch::parse("sm_90a"), heads, head_dim)) {
                CAPTURE(v.name());
                const std::size_t bytes = mqajit::sm80_shared_bytes(v, heads, head_dim);
                const std::size_t operands = std::size_t(v.rows) * heads * head_dim + std::size_t(v.stages) * v.bkv * head_dim;
                CHECK(bytes >= operands + std::size_t(v.rows) * v.bkv * 4);  // + the staged result tile
                CHECK(bytes <= 99u * 1024);
                CHECK(mqajit::sm80_mqa_logits_family().shared_bytes(v, heads, head_dim) == bytes);
            }
            (void)sm80;
        }
    }
}

MqaLogitsParams aligned_params() {
    MqaLogitsParams params{};
    params.q_stride_s = 32 * 128;
    params.kv_stride_n = 128;
    return params;
}

TEST_CASE("sm80 codegen: the launch plan covers the problem and keeps every SM busy") {
    const mqajit::DeviceLimits device{.multiprocessors = 132, .max_shared_bytes_per_block = 232448};  // an H200
    const mqajit::MqaLogitsFamily& family = mqajit::sm80_mqa_logits_family();
    const Variant v = Variant::parse("mma16x8x32_bkv64_r4_w4_lds2");
    struct Case {
        std::int64_t seq_len, seq_len_kv;
    };
    for (const Case c : {Case{4096, 8192}, Case{256, 16384}, Case{3, 100}, Case{1, 64}, Case{17, 1}, Case{9, 6400}}) {
        CAPTURE(c.seq_len);
        CAPTURE(c.seq_len_kv);
        const MqaLogitsParams params = aligned_params();
        const mqajit::LaunchPlan plan = family.plan(v, {32, 128, c.seq_len, c.seq_len_kv}, device, params);
        const std::int64_t q_blocks = (c.seq_len + 3) / 4;
        const std::int64_t tiles = (c.seq_len_kv + 63) / 64;
        CHECK(plan.config.grid_x == q_blocks);
        CHECK(plan.config.grid_y == unsigned(plan.num_kv_splits));
        CHECK(plan.config.block_x == 128);
        CHECK(plan.config.dynamic_shared_bytes == mqajit::sm80_shared_bytes(v, 32, 128));
        CHECK(plan.num_q_blocks == q_blocks);
        CHECK(plan.tensor_maps().empty());
        CHECK(plan.num_kv_splits >= 1);
        CHECK(plan.num_kv_splits <= tiles);
        CHECK((q_blocks * plan.num_kv_splits >= 2 * 132 || plan.num_kv_splits == tiles));
        for (int split = 0; split < plan.num_kv_splits; ++split) {  // no idle split
            CHECK_FALSE(mqa::split_tile_range(int(tiles), plan.num_kv_splits, split).empty());
        }
    }
    MqaLogitsParams misaligned = aligned_params();
    const mqajit::DeviceLimits small{.multiprocessors = 108, .max_shared_bytes_per_block = 16 * 1024};
    CHECK(mqajit::testing::error_kind_of([&] { family.plan(v, {32, 128, 8, 8}, small, misaligned); }) ==
          ErrorKind::unsupported);  // more shared memory than the device has
    misaligned.kv_stride_n = 136 + 4;
    CHECK(mqajit::testing::error_kind_of([&] { family.plan(v, {32, 128, 8, 8}, device, misaligned); }) == ErrorKind::invalid_argument);
}

// ---- the template's index math on the CPU --------------------------------------------------------

// Replays which logits each CTA writes (the -inf fill and the stores of computed tiles) and checks
// that with clean logits every element of [0, S) x [0, N) is written exactly once, and that every
// element inside a row's window lies in a computed tile.
void check_coverage(int seq_len, int seq_len_kv, int rows, int block_kv, int num_splits,
                    const std::vector<int>& starts, const std::vector<int>& ends) {
    CAPTURE(seq_len);
    CAPTURE(seq_len_kv);
    CAPTURE(rows);
    CAPTURE(block_kv);
    CAPTURE(num_splits);
    std::vector<int> writes(std::size_t(seq_len) * seq_len_kv, 0);
    std::vector<int> computed(std::size_t(seq_len) * seq_len_kv, 0);
    const int q_blocks = mqa::ceil_div(seq_len, rows);
    for (int q_block = 0; q_block < q_blocks; ++q_block) {
        for (int split = 0; split < num_splits; ++split) {
            const int first_row = q_block * rows;
            mqa::Range window{0, 0};
            for (int r = 0; r < rows && first_row + r < seq_len; ++r) {
                window = mqa::window_union(window, mqa::clamp_window(starts[first_row + r], ends[first_row + r], seq_len_kv));
            }
            const mqa::KvWork work = mqa::plan_kv_work(seq_len_kv, block_kv, num_splits, split, window);
            for (int r = 0; r < rows && first_row + r < seq_len; ++r) {
                const std::size_t row = std::size_t(first_row + r) * seq_len_kv;
                for (const mqa::Range fill : {work.fill_before, work.fill_after}) {
                    for (int j = fill.begin; j < fill.end; ++j) {
                        REQUIRE(j < seq_len_kv);
                        ++writes[row + j];
                    }
                }
                for (int tile = work.computed_tiles.begin; tile < work.computed_tiles.end; ++tile) {
                    for (int j = tile * block_kv; j < (tile + 1) * block_kv && j < seq_len_kv; ++j) {
                        ++writes[row + j];
                        ++computed[row + j];
                    }
                }
            }
        }
    }
    int wrong_count = 0, window_not_computed = 0;
    for (int i = 0; i < seq_len; ++i) {
        const mqa::Range window = mqa::clamp_window(starts[i], ends[i], seq_len_kv);
        for (int j = 0; j < seq_len_kv; ++j) {
            wrong_count += writes[std::size_t(i) * seq_len_kv + j] != 1;
            window_not_computed += j >= window.begin && j < window.end && computed[std::size_t(i) * seq_len_kv + j] != 1;
        }
    }
    CHECK(wrong_count == 0);
    CHECK(window_not_computed == 0);
}

TEST_CASE("sm80 index math: clean logits are written exactly once, windows always computed") {
    std::uint32_t state = 12345;
    const auto next = [&](int bound) {
        state = state * 1664525u + 1013904223u;
        return int((state >> 8) % std::uint32_t(bound));
    };
    for (int seq_len : {1, 3, 4, 7, 33}) {
        for (int seq_len_kv : {1, 63, 64, 65, 300, 1000}) {
            std::vector<int> starts(seq_len), ends(seq_len);
            for (int i = 0; i < seq_len; ++i) {
                switch (next(5)) {
                    case 0: starts[i] = 0, ends[i] = seq_len_kv; break;                   // full
                    case 1: starts[i] = -9, ends[i] = seq_len_kv + 9; break;              // beyond both ends
                    case 2: starts[i] = next(seq_len_kv + 1), ends[i] = starts[i] - next(3); break;  // empty
                    default: starts[i] = next(seq_len_kv + 10) - 5, ends[i] = starts[i] + next(seq_len_kv / 2 + 2);
                }
            }
            for (int rows : {1, 2, 4}) {
                for (int block_kv : {64, 128}) {
                    const int tiles = mqa::ceil_div(seq_len_kv, block_kv);
                    for (int splits : {1, 2, 3, tiles, tiles + 4}) check_coverage(seq_len, seq_len_kv, rows, block_kv, splits, starts, ends);
                }
            }
        }
    }
}

// A tile of `num_rows` rows x `row_bytes` bytes, stored with the kernel's swizzle.
struct SwizzledTile {
    int row_bytes;
    std::vector<std::uint8_t> bytes;
    SwizzledTile(int num_rows, int row_bytes_, auto value) : row_bytes(row_bytes_), bytes(std::size_t(num_rows) * row_bytes_) {
        for (int row = 0; row < num_rows; ++row) {
            for (int col = 0; col < row_bytes; ++col) {
                bytes[mqa::swizzled_offset(row, col / 16, row_bytes) + col % 16] = value(row, col);
            }
        }
    }
    // ldmatrix.x4: register m of lane L = 4 bytes at column 4*(L%4) of the row lane 8m + L/4 points at.
    std::uint32_t load(int lane, int matrix, auto row_of, auto chunk_of) const {
        const int source_lane = 8 * matrix + lane / 4;
        const int offset = mqa::swizzled_offset(row_of(source_lane), chunk_of(source_lane), row_bytes) + 4 * (lane % 4);
        std::uint32_t word;
        std::memcpy(&word, bytes.data() + offset, 4);
        return word;
    }
};

std::uint8_t byte_of(std::uint32_t word, int index) { return std::uint8_t(word >> (8 * index)); }

TEST_CASE("sm80 index math: ldmatrix on the swizzled tiles yields the m16n8k32 e4m3 fragments") {
    // Each byte encodes its (row, column), so a wrong mapping cannot go unnoticed.
    const auto code = [](int row, int col) { return std::uint8_t((row * 7 + col * 13) & 0xFF); };
    for (int row_bytes : {64, 128}) {
        CAPTURE(row_bytes);
        const SwizzledTile kv(64, row_bytes, code);
        for (int m_tile = 0; m_tile < 4; ++m_tile) {
            for (int slice = 0; slice < row_bytes / 32; ++slice) {
                for (int lane = 0; lane < 32; ++lane) {
                    const int g = lane / 4, t = lane % 4;
                    for (int reg = 0; reg < 4; ++reg) {
                        // PTX: a<reg> holds row g (+8 for odd reg), columns 4t..4t+3 (+16 for reg >= 2).
                        const int row = m_tile * 16 + g + 8 * (reg & 1);
                        const int col = slice * 32 + 16 * (reg >> 1) + 4 * t;
                        const std::uint32_t word =
                            kv.load(lane, reg, [&](int l) { return m_tile * 16 + mqa_sm80::a_fragment_row(l); },
                                    [&](int l) { return 2 * slice + mqa_sm80::a_fragment_chunk(l); });
                        for (int e = 0; e < 4; ++e) REQUIRE(byte_of(word, e) == code(row, col + e));
                    }
                }
            }
        }
        const SwizzledTile q(128, row_bytes, code);  // rows = (query row, head) columns of the GEMM
        for (int pair = 0; pair < 8; ++pair) {
            for (int slice = 0; slice < row_bytes / 32; ++slice) {
                for (int lane = 0; lane < 32; ++lane) {
                    const int g = lane / 4, t = lane % 4;
                    for (int reg = 0; reg < 4; ++reg) {
                        // registers 0,1: b0, b1 of n tile 2*pair; 2,3: of n tile 2*pair + 1.
                        // PTX: b0 holds k = 4t..4t+3, b1 k = 16 + 4t.., both at column n = g.
                        const int n = (2 * pair + reg / 2) * 8 + g;
                        const int k = slice * 32 + 16 * (reg & 1) + 4 * t;
                        const std::uint32_t word =
                            q.load(lane, reg, [&](int l) { return pair * 16 + mqa_sm80::b_fragment_row(l); },
                                   [&](int l) { return 2 * slice + mqa_sm80::b_fragment_chunk(l); });
                        for (int e = 0; e < 4; ++e) REQUIRE(byte_of(word, e) == code(n, k + e));
                    }
                }
            }
        }
    }
}

TEST_CASE("sm80 index math: the swizzle is a permutation and ldmatrix reads are bank-conflict free") {
    for (int row_bytes : {64, 128}) {
        CAPTURE(row_bytes);
        std::vector<int> seen(std::size_t(64) * row_bytes / 16, 0);
        for (int row = 0; row < 64; ++row) {
            for (int chunk = 0; chunk < row_bytes / 16; ++chunk) {
                const int offset = mqa::swizzled_offset(row, chunk, row_bytes);
                REQUIRE(offset % 16 == 0);
                REQUIRE(offset / 16 < int(seen.size()));
                ++seen[offset / 16];
            }
            // Eight consecutive rows at one logical chunk: eight distinct 16-byte bank groups.
            if (row % 8 == 0) {
                for (int chunk = 0; chunk < row_bytes / 16; ++chunk) {
                    int groups = 0;
                    for (int r = row; r < row + 8; ++r) groups |= 1 << ((mqa::swizzled_offset(r, chunk, row_bytes) / 16) % 8);
                    CHECK(groups == 0xFF);
                }
            }
        }
        CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
    }
}

TEST_CASE("sm80 index math: each quad lane stages a distinct result slot") {
    for (int pass_rows : {1, 2, 4}) {
        for (int m_tiles : {1, 2}) {
            std::vector<int> hits(std::size_t(m_tiles) * 2 * pass_rows, 0);
            for (int u = 0; u < m_tiles * 2 * pass_rows; ++u) {
                const mqa_sm80::ResultSlot slot = mqa_sm80::result_slot(u, pass_rows);
                REQUIRE(slot.row < pass_rows);
                REQUIRE(slot.m_tile < m_tiles);
                ++hits[(slot.m_tile * 2 + slot.half) * pass_rows + slot.row];
            }
            CHECK(std::all_of(hits.begin(), hits.end(), [](int n) { return n == 1; }));
        }
    }
}

// ---- e4m3 ------------------------------------------------------------------------------------------

double e4m3_by_definition(int bits) {
    const int exponent = (bits >> 3) & 15, mantissa = bits & 7;
    const double magnitude = exponent == 0 ? std::ldexp(mantissa / 8.0, -6) : std::ldexp(1 + mantissa / 8.0, exponent - 7);
    return (bits & 0x80) ? -magnitude : magnitude;
}

double f16_by_definition(std::uint16_t bits) {
    const int exponent = (bits >> 10) & 31, mantissa = bits & 1023;
    REQUIRE(exponent != 31);
    const double magnitude =
        exponent == 0 ? std::ldexp(mantissa / 1024.0, -14) : std::ldexp(1 + mantissa / 1024.0, exponent - 15);
    return (bits & 0x8000) ? -magnitude : magnitude;
}

TEST_CASE("sm80 e4m3: the software decoder and the f16 widening are exact") {
    CHECK(mqa::e4m3_to_float(0x7E) == 448.0f);
    CHECK(mqa::e4m3_to_float(0x01) == std::ldexp(1.0f, -9));
    CHECK(std::isnan(mqa::e4m3_to_float(0x7F)));
    CHECK(std::isnan(mqa::e4m3_to_float(0xFF)));
    for (int bits = 0; bits < 256; ++bits) {
        CAPTURE(bits);
        if ((bits & 0x7F) == 0x7F) continue;
        REQUIRE(double(mqa::e4m3_to_float(unsigned(bits))) == e4m3_by_definition(bits));
        for (int position = 0; position < 4; ++position) {
            const unsigned word = unsigned(bits) << (8 * position) | (0xA5u << (8 * ((position + 1) % 4)));
            const unsigned pair = mqa::e4m3x2_to_f16x2_scaled(word, position, (position + 1) % 4);
            REQUIRE(f16_by_definition(std::uint16_t(pair)) * 256.0 == e4m3_by_definition(bits));
            REQUIRE(f16_by_definition(std::uint16_t(pair >> 16)) * 256.0 == e4m3_by_definition(0xA5));
        }
    }
    CHECK(mqa::kF16ScaledProductCorrection == 65536.0f);
}

}  // namespace
