#pragma once
// Where an mqa_logits value lands, for every kernel of the op (sm90, sm80, gfx9, the reference):
// float32 or bfloat16 elements (MqaLogitsParams::logits_bf16), dense rows (key column j at column
// j) or compressed rows (compressed_columns > 0: key column j of row i at column j - cu_starts[i],
// only for 0 <= j - cu_starts[i] < compressed_columns). Kernels compute in key columns and leave
// the placement to these helpers, so no kernel needs a second pass for either option.
//
// Host code (the fake HIP runtime of the tests) uses them too: plain inline functions there.

#include "mqa_device_common.cuh"
#include "mqa_logits_params.cuh"

#if defined(__HIP__)
#pragma clang force_cuda_host_device begin
#endif

namespace mqa_output {

// One output row: `base` is the byte address of key column 0 (shifted back by cu_starts[row]
// elements with compressed rows, so it may point before the row), and [begin, end) the key columns
// the row can hold.
struct LogitsRow {
    char* base;
    mqa::Range stored;
};

MQA_HOST_DEVICE LogitsRow logits_row(const MqaLogitsParams& p, int row) {
    const long long element_bytes = p.logits_bf16 ? 2 : 4;
    long long first_key = 0;
    mqa::Range stored{0, p.seq_len_kv};
    if (p.compressed_columns > 0) {
        const long long start = p.cu_starts[row];
        const long long last = start + p.compressed_columns;  // no int overflow near INT_MAX
        first_key = start;
        stored = mqa::Range{mqa::max_int(p.cu_starts[row], 0),
                            last < p.seq_len_kv ? static_cast<int>(last) : p.seq_len_kv};
    }
    char* base = static_cast<char*>(p.logits) + (row * p.logits_stride_s - first_key) * element_bytes;
    return LogitsRow{base, stored};
}

// Writes `value` at key column `column` of a row from logits_row (the caller checked the column).
MQA_HOST_DEVICE void store(const MqaLogitsParams& p, char* base, int column, float value) {
    if (p.logits_bf16) {
        reinterpret_cast<unsigned short*>(base)[column] = mqa::float_to_bf16_bits(value);
    } else {
        reinterpret_cast<float*>(base)[column] = value;
    }
}

// Stores `value` at key column `column` when the row holds it.
MQA_HOST_DEVICE void store_if_held(const MqaLogitsParams& p, const LogitsRow& row, int column, float value) {
    if (column >= row.stored.begin && column < row.stored.end) store(p, row.base, column, value);
}

MQA_HOST_DEVICE float negative_infinity_value() {
#if defined(__CUDA_ARCH__)
    return __int_as_float(0xFF800000);
#else
    return -__builtin_inff();
#endif
}

// Writes -inf to key columns `columns` of one row, the calling threads striding by `num_threads`
// (clean_logits only, which compressed rows exclude: dense rows hold every column).
MQA_HOST_DEVICE void fill_negative_infinity(const MqaLogitsParams& p, const LogitsRow& row, mqa::Range columns,
                                            int thread, int num_threads) {
    const float value = negative_infinity_value();
    for (int column = columns.begin + thread; column < columns.end; column += num_threads)
        store(p, row.base, column, value);
}

}  // namespace mqa_output

#if defined(__HIP__)
#pragma clang force_cuda_host_device end
#endif
