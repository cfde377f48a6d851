// mqa_logits arguments: make_mqa_logits_args() either refuses a call with mqajit::Error or returns
// kernel parameters under which every store the kernels can make (mqa_logits_output.cuh's
// placement, for any cu_starts the device may hold) lands inside the logits view: dense or
// compressed rows, float32 or bfloat16, any row stride the checks let through.

#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "codegen/templates/mqa_logits_output.cuh"
#include "fuzz/fuzz_support.hpp"
#include "mqajit/error.hpp"
#include "runtime/mqa_logits_args.hpp"

using namespace mqajit;


extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::scratch();  // quiet logging
    fuzz::ByteReader in(data, size);
    const std::int64_t s = 1 + in.next(1) % 48;
    const std::int64_t n = 1 + in.next(2) % 3000;
    const std::int64_t h = in.next(1) % 4 == 0 ? 64 : 32;
    const std::int64_t d = in.next(1) % 4 == 0 ? 64 : 128;
    const std::uint32_t mode = in.next(1);
    const bool clean = mode & 1;
    const DType dtype = (mode & 6) == 0 ? DType::bfloat16 : (mode & 6) == 2 ? DType::int32 : DType::float32;
    const int max_seqlen_k = (mode & 8) ? static_cast<int>(in.next(2) % (n + 3)) - 1 : 0;
    const std::int64_t columns = (mode & 16) ? 1 + in.next(2) % (n + 4) : (max_seqlen_k > 0 ? max_seqlen_k : n);
    const std::int64_t stride = columns + static_cast<std::int64_t>(in.next(1) % 40) - 8;

    const TensorView q = TensorView::contiguous(fuzz::fake_address(1), DType::float8_e4m3, {s, h, d});
    const TensorView kv = TensorView::contiguous(fuzz::fake_address(2), DType::float8_e4m3, {n, d});
    const TensorView kv_scales = TensorView::contiguous(fuzz::fake_address(3), DType::float32, {n});
    const TensorView weights = TensorView::contiguous(fuzz::fake_address(4), DType::float32, {s, h});
    const TensorView cu_starts = TensorView::contiguous(fuzz::fake_address(5), DType::int32, {s});
    const TensorView cu_ends = TensorView::contiguous(fuzz::fake_address(6), DType::int32, {s});
    TensorView logits;
    try {
        logits = TensorView::strided(fuzz::fake_address(7), dtype, {s, columns}, {stride, 1});
    } catch (const Error&) {
        return 0;
    }
    MqaLogitsArgs args;
    try {
        args = make_mqa_logits_args(q, kv, kv_scales, weights, cu_starts, cu_ends, logits, clean, max_seqlen_k);
    } catch (const Error&) {
        return 0;
    }

    // Accepted: walk every row's stored key columns for starts the device could hold.
    MqaLogitsParams p = args.params;
    MQAJIT_FUZZ_EXPECT(p.seq_len == s && p.seq_len_kv == n);
    MQAJIT_FUZZ_EXPECT(p.logits_bf16 == (dtype == DType::bfloat16 ? 1 : 0));
    MQAJIT_FUZZ_EXPECT(p.compressed_columns == (max_seqlen_k > 0 ? max_seqlen_k : 0));
    std::vector<std::int32_t> starts(static_cast<std::size_t>(s));
    for (auto& start : starts) {
        switch (in.next(1) % 4) {
            case 0: start = in.next_int32(); break;  // anything, INT_MIN and INT_MAX included
            case 1: start = static_cast<std::int32_t>(in.next(2) % (n + 1)); break;
            case 2: start = -static_cast<std::int32_t>(in.next(2)); break;
            default: start = static_cast<std::int32_t>(n - 1 - in.next(1) % 8); break;
        }
    }
    p.cu_starts = starts.data();
    const std::int64_t element = dtype == DType::bfloat16 ? 2 : 4;
    const std::int64_t extent = ((s - 1) * stride + columns) * element;  // bytes the view covers
    for (int row = 0; row < s; ++row) {
        const mqa_output::LogitsRow out = mqa_output::logits_row(p, row);
        MQAJIT_FUZZ_EXPECT(out.stored.begin >= 0 && out.stored.end <= n);
        if (out.stored.empty()) continue;
        for (const int key : {out.stored.begin, out.stored.end - 1}) {
            const std::int64_t at = (out.base - static_cast<char*>(p.logits)) + key * element;
            MQAJIT_FUZZ_EXPECT(at >= row * stride * element);  // inside its own row
            MQAJIT_FUZZ_EXPECT(at + element <= row * stride * element + columns * element);
            MQAJIT_FUZZ_EXPECT(at + element <= extent);
        }
    }
    return 0;
}
