// bf16 logits and compressed rows on a real GPU, for the reference kernel, the baseline and every
// registered variant: each kernel's bf16 output is its own fp32 output rounded to nearest even, bit
// for bit, and its compressed rows hold its own dense values shifted by cu_starts[i]; nothing is
// written outside what a row holds (row padding and the columns before a negative start stay poisoned).

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "codegen/variant_registry.hpp"
#include "mqa_common.cuh"
#include "tests/gpu_support.hpp"
#include "tools/common/device_problem.hpp"

using namespace mqajit;
using namespace mqajit::tools;

namespace {

constexpr std::uint16_t kBf16Poison = 0x7FC1;   // a NaN no kernel writes
constexpr std::uint32_t kFloatPoison = 0x7FC00001;

struct Output {
    std::int64_t rows, columns, stride;  // columns the kernel may write, of `stride` per row
    DType dtype;
    std::unique_ptr<DeviceBuffer> buffer;

    Output(Device& gpu, std::int64_t rows_, std::int64_t columns_, std::int64_t stride_, DType dtype_)
        : rows(rows_), columns(columns_), stride(stride_), dtype(dtype_),
          buffer(gpu.allocate(static_cast<std::size_t>((rows_ * stride_ + 1) / 2 * 2) * element_bytes())) {}

    std::size_t element_bytes() const { return dtype == DType::bfloat16 ? 2 : 4; }
    TensorView view() const { return TensorView::strided(buffer->data(), dtype, {rows, columns}, {stride, 1}); }

    void poison(Device& gpu) const {
        const std::size_t count = static_cast<std::size_t>(rows * stride);
        if (dtype == DType::bfloat16) {
            gpu.fill_u32(buffer->data(), (std::uint32_t{kBf16Poison} << 16) | kBf16Poison, (count + 1) / 2);
        } else {
            gpu.fill_u32(buffer->data(), kFloatPoison, count);
        }
    }
    // Every element's bits, widened to 32 bits.
    std::vector<std::uint32_t> bits(Device& gpu) const {
        const std::size_t count = static_cast<std::size_t>(rows * stride);
        std::vector<std::uint32_t> out(count);
        if (dtype == DType::bfloat16) {
            std::vector<std::uint16_t> half(count);
            gpu.copy_to_host(half.data(), buffer->data(), count * 2);
            for (std::size_t i = 0; i < count; ++i) out[i] = half[i];
        } else {
            gpu.copy_to_host(out.data(), buffer->data(), count * 4);
        }
        return out;
    }
    std::uint32_t poison_bits() const { return dtype == DType::bfloat16 ? kBf16Poison : kFloatPoison; }
};

std::uint32_t float_bits(float value) {
    std::uint32_t bits;
    std::memcpy(&bits, &value, 4);
    return bits;
}

// Runs `variant` ("reference" for the reference kernel) into `out`.
void run(const DeviceProblem& problem, const std::string& variant, const Output& out, bool clean, int max_seqlen_k) {
    const DeviceProblem::Views v = problem.views();
    if (variant == "reference") {
        mqa_logits_reference(v.q, v.kv, v.kv_scales, v.weights, v.cu_starts, v.cu_ends, out.view(), clean, nullptr,
                             max_seqlen_k);
    } else {
        mqa_logits(v.q, v.kv, v.kv_scales, v.weights, v.cu_starts, v.cu_ends, out.view(),
                   MqaLogitsOptions{.clean_logits = clean, .variant = variant, .max_seqlen_k = max_seqlen_k});
    }
    problem.device().synchronize();
}

struct Mismatch {
    std::int64_t count = 0;
    std::string first;
    void note(std::int64_t row, std::int64_t column, std::uint32_t got, std::uint32_t expected) {
        if (count++ == 0) first = fmt::format("row {} column {}: bits {:#x}, expected {:#x}", row, column, got, expected);
    }
};

// Checks `variant` on one problem in every output mode against its own dense fp32 output.
void check_modes(Device& gpu, const std::string& variant, const HostProblem& host) {
    DeviceProblem problem(gpu, host);
    const std::int64_t s = host.seq_len, n = host.seq_len_kv;
    std::vector<mqa::Range> windows(static_cast<std::size_t>(s));
    int widest = 1;
    for (std::int64_t i = 0; i < s; ++i) {
        windows[i] = mqa::clamp_window(host.cu_starts[i], host.cu_ends[i], static_cast<int>(n));
        widest = std::max(widest, host.cu_ends[i] - host.cu_starts[i]);
    }
    const std::int64_t widest_columns = std::min<std::int64_t>(widest, n);

    const Output dense(gpu, s, n, n + 3, DType::float32);
    dense.poison(gpu);
    run(problem, variant, dense, true, 0);
    const std::vector<std::uint32_t> expected = dense.bits(gpu);

    for (const bool clean : {true, false}) {
        const Output bf16(gpu, s, n, n + 5, DType::bfloat16);
        bf16.poison(gpu);
        run(problem, variant, bf16, clean, 0);
        const std::vector<std::uint32_t> got = bf16.bits(gpu);
        Mismatch wrong, padding;
        for (std::int64_t i = 0; i < s; ++i) {
            for (std::int64_t j = 0; j < bf16.stride; ++j) {
                const std::uint32_t bits = got[i * bf16.stride + j];
                if (j >= n) {
                    if (bits != kBf16Poison) padding.note(i, j, bits, kBf16Poison);
                    continue;
                }
                if (!clean && (j < windows[i].begin || j >= windows[i].end)) continue;  // anything
                float value;
                std::memcpy(&value, &expected[i * dense.stride + j], 4);
                const std::uint32_t want = mqa::float_to_bf16_bits(value);
                if (bits != want) wrong.note(i, j, bits, want);
            }
        }
        INFO(fmt::format("{} bf16 clean={}: {} wrong ({}), {} padding written ({})", variant, clean, wrong.count,
                         wrong.first, padding.count, padding.first));
        CHECK(wrong.count == 0);
        CHECK(padding.count == 0);
    }

    for (const DType dtype : {DType::float32, DType::bfloat16}) {
        const Output compressed(gpu, s, widest_columns, widest_columns + 7, dtype);
        compressed.poison(gpu);
        run(problem, variant, compressed, false, static_cast<int>(widest_columns));
        const std::vector<std::uint32_t> got = compressed.bits(gpu);
        Mismatch wrong, stray;
        std::int64_t held = 0;
        for (std::int64_t i = 0; i < s; ++i) {
            const std::int64_t start = host.cu_starts[i];
            for (std::int64_t c = 0; c < compressed.stride; ++c) {
                const std::uint32_t bits = got[i * compressed.stride + c];
                const std::int64_t j = start + c;
                const bool in_window = c < widest_columns && j >= windows[i].begin && j < windows[i].end;
                if (in_window) {
                    float value;
                    std::memcpy(&value, &expected[i * dense.stride + j], 4);
                    const std::uint32_t want =
                        dtype == DType::bfloat16 ? mqa::float_to_bf16_bits(value) : float_bits(value);
                    if (bits != want) wrong.note(i, c, bits, want);
                    ++held;
                } else if ((c >= widest_columns || j < 0 || j >= n) && bits != compressed.poison_bits()) {
                    stray.note(i, c, bits, compressed.poison_bits());  // a column no key maps to was written
                }
            }
        }
        INFO(fmt::format("{} compressed {} (max_seqlen_k {}): {} of {} wrong ({}), {} stray writes ({})", variant,
                         to_string(dtype), widest_columns, wrong.count, held, wrong.first, stray.count, stray.first));
        CHECK(wrong.count == 0);
        CHECK(stray.count == 0);
        CHECK(held > 0);
    }
}

const struct {
    int seq_len, seq_len_kv;
    MaskKind mask;
} kCases[] = {{37, 4097, MaskKind::random_windows}, {300, 5000, MaskKind::packed}, {256, 1000, MaskKind::causal}};

void check_kernel(Device& gpu, const std::string& variant, int heads, int head_dim) {
    std::uint64_t seed = 0xb16;
    for (const auto& c : kCases) {
        CAPTURE(c.seq_len);
        CAPTURE(c.seq_len_kv);
        check_modes(gpu, variant, make_problem(c.seq_len, c.seq_len_kv, heads, head_dim, c.mask, ++seed + heads));
    }
}

}  // namespace

TEST_CASE("gpu: the reference and baseline kernels write bf16 logits and compressed rows of their own values") {
    MQAJIT_REQUIRE_GPU();
    for (int heads : {32, 64}) {
        check_kernel(*gpu, "reference", heads, 128);
        check_kernel(*gpu, "baseline", heads, 128);
    }
}

TEST_CASE("gpu: every registered variant writes bf16 logits and compressed rows of its own values") {
    MQAJIT_REQUIRE_GPU();
    const Arch arch = Arch::parse(gpu->arch());
    int checked = 0;
    for (int heads : {32, 64}) {
        for (const Variant& v : VariantRegistry::instance().variants(arch, heads, 128)) {
            if (v.op == MatrixOp::mfma) continue;
            check_kernel(*gpu, v.name(), heads, 128);
            ++checked;
        }
    }
    MESSAGE(fmt::format("{} variant/head combinations checked on {}", checked, arch.name));
    CHECK(checked > 0);
}
