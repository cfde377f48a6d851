// Argument checks run before anything launches, so they are tested without a GPU.

#include <doctest/doctest.h>

#include <string>

#include "mqajit/error.hpp"
#include "mqajit/mqa_logits.hpp"
#include "runtime/mqa_logits_args.hpp"
#include "tests/fake_operands.hpp"

using namespace mqajit;

namespace {

constexpr auto fake = testing::fake_device_address;

struct Args : testing::FakeMqaOperands {
    int s = 4, h = 32, d = 128, n = 100;
    TensorView logits = TensorView::contiguous(fake(7), DType::float32, {4, 100});

    MqaLogitsArgs make() const {
        return make_mqa_logits_args(q, kv, kv_scales, weights, cu_starts, cu_ends, logits, true);
    }
};

std::string error_of(const Args& a, ErrorKind* kind = nullptr) {
    try {
        a.make();
    } catch (const Error& e) {
        if (kind) *kind = e.kind();
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("mqa_logits args: a valid call fills the kernel argument") {
    Args a;
    a.logits = TensorView::strided(fake(7), DType::float32, {4, 100}, {256, 1});
    const MqaLogitsArgs args = a.make();
    CHECK(args.shape.heads == 32);
    CHECK(args.shape.head_dim == 128);
    CHECK(args.shape.seq_len == 4);
    CHECK(args.shape.seq_len_kv == 100);
    CHECK(args.params.logits_stride_s == 256);
    CHECK(args.params.q_stride_s == 32 * 128);
    CHECK(args.params.clean_logits == 1);
    CHECK(args.params.logits == fake(7));
}

TEST_CASE("mqa_logits args: bad input is rejected with a message naming the problem") {
    ErrorKind kind{};
    {
        Args a;
        a.q.data = nullptr;
        CHECK(error_of(a, &kind).find("q is a null pointer") != std::string::npos);
        CHECK(kind == ErrorKind::invalid_argument);
    }
    {
        Args a;
        a.kv.dtype = DType::float32;
        CHECK(error_of(a).find("kv has dtype float32") != std::string::npos);
    }
    {
        Args a;
        a.q = TensorView::contiguous(fake(1), DType::float8_e4m3, {4, 48, 128});
        a.weights = TensorView::contiguous(fake(4), DType::float32, {4, 48});
        CHECK(error_of(a, &kind).find("48 heads") != std::string::npos);
        CHECK(kind == ErrorKind::unsupported);
    }
    {
        Args a;
        a.q = TensorView::contiguous(fake(1), DType::float8_e4m3, {4, 32, 96});
        a.kv = TensorView::contiguous(fake(2), DType::float8_e4m3, {100, 96});
        CHECK(error_of(a).find("head_dim is 96") != std::string::npos);
    }
    {
        Args a;
        a.kv = TensorView::contiguous(fake(2), DType::float8_e4m3, {100, 64});
        CHECK(error_of(a).find("kv is") != std::string::npos);
    }
    {
        Args a;
        a.logits = TensorView::contiguous(fake(7), DType::float32, {4, 99});
        CHECK(error_of(a).find("logits") != std::string::npos);
    }
    {
        Args a;
        a.logits = TensorView::strided(fake(7), DType::float32, {4, 100}, {50, 1});
        CHECK(error_of(a).find("row stride must be >= N") != std::string::npos);
    }
    {
        Args a;
        a.q = TensorView::strided(fake(1), DType::float8_e4m3, {4, 32, 128}, {4096, 128, 2});
        CHECK(error_of(a).find("dense") != std::string::npos);
    }
    {
        Args a;
        a.kv.data = static_cast<char*>(fake(2)) + 8;
        CHECK(error_of(a).find("16-byte") != std::string::npos);
    }
    {
        Args a;
        a.cu_ends = TensorView::contiguous(fake(6), DType::int32, {5});
        CHECK(error_of(a).find("cu_ends") != std::string::npos);
    }
    {
        Args a;
        a.weights = TensorView::contiguous(fake(4), DType::float32, {4, 32, 1});
        CHECK(error_of(a).find("weights has 3 dimensions") != std::string::npos);
    }
    {
        // Views spanning 2^62 bytes or more are refused without overflowing (the paged op's fuzz
        // target found rows x row stride overflowing in the check this op shared).
        Args a;
        a.logits = TensorView::strided(fake(7), DType::float32, {4, 100}, {std::int64_t{1} << 61, 1});
        CHECK(error_of(a).find("logits is float32[4, 100] strides [2305843009213693952, 1]: its sizes and strides "
                               "span 2^62 bytes or more") != std::string::npos);
        a = Args{};
        a.q = TensorView::strided(fake(1), DType::float8_e4m3, {4, 32, 128}, {std::int64_t{1} << 61, 128, 1});
        CHECK(error_of(a).find("q is float8_e4m3[4, 32, 128]") != std::string::npos);
    }
}

TEST_CASE("mqa_logits: a negative kv_splits is refused before anything else happens") {
    const Args a;
    std::string message;
    ErrorKind kind = ErrorKind::internal;
    try {
        mqa_logits(a.q, a.kv, a.kv_scales, a.weights, a.cu_starts, a.cu_ends, a.logits, MqaLogitsOptions{.kv_splits = -2});
    } catch (const Error& e) {
        message = e.what();
        kind = e.kind();
    }
    INFO(message);
    CHECK(kind == ErrorKind::invalid_argument);
    CHECK(message.find("kv_splits") != std::string::npos);
    CHECK(message.find("-2") != std::string::npos);
}

TEST_CASE("mqa_logits args: bf16 logits and compressed rows are checked and reach the kernel parameters") {
    ErrorKind kind = ErrorKind::internal;
    {
        Args a;
        a.logits = TensorView::strided(fake(7), DType::bfloat16, {4, 100}, {104, 1});
        const MqaLogitsArgs args = make_mqa_logits_args(a.q, a.kv, a.kv_scales, a.weights, a.cu_starts, a.cu_ends,
                                                        a.logits, true, 0);
        CHECK(args.params.logits_bf16 == 1);
        CHECK(args.params.compressed_columns == 0);
        CHECK(args.params.logits_stride_s == 104);  // elements of the output's dtype
        CHECK(args.params.logits == fake(7));
    }
    {
        Args a;  // a bad bf16 view is still a bad view
        a.logits = TensorView::contiguous(fake(7), DType::bfloat16, {4, 99});
        CHECK(error_of(a, &kind).find("N from kv") != std::string::npos);
        CHECK(kind == ErrorKind::invalid_argument);
    }
    {
        Args a;
        a.logits = TensorView::contiguous(fake(7), DType::int32, {4, 100});
        CHECK(error_of(a).find("logits has dtype int32; it must be float32 (or bfloat16)") != std::string::npos);
    }
    const auto compressed_error = [](const Args& a, int max_seqlen_k, bool clean_logits, ErrorKind* kind) {
        try {
            make_mqa_logits_args(a.q, a.kv, a.kv_scales, a.weights, a.cu_starts, a.cu_ends, a.logits, clean_logits,
                                 max_seqlen_k);
        } catch (const Error& e) {
            *kind = e.kind();
            return std::string(e.what());
        }
        return std::string();
    };
    Args a;
    a.logits = TensorView::contiguous(fake(7), DType::float32, {4, 16});
    const MqaLogitsArgs args =
        make_mqa_logits_args(a.q, a.kv, a.kv_scales, a.weights, a.cu_starts, a.cu_ends, a.logits, false, 16);
    CHECK(args.params.compressed_columns == 16);
    CHECK(args.params.logits_bf16 == 0);
    CHECK(args.params.seq_len_kv == 100);  // the keys stay N; only the rows are compressed
    CHECK(compressed_error(a, 16, true, &kind).find("need clean_logits=False") != std::string::npos);
    CHECK(kind == ErrorKind::invalid_argument);
    CHECK(compressed_error(a, 17, false, &kind).find("max_seqlen_k (compressed rows) = 17") != std::string::npos);
    CHECK(compressed_error(a, -1, false, &kind).find("max_seqlen_k is -1") != std::string::npos);
    // Dense rows are checked against N, as before.
    CHECK(compressed_error(a, 0, false, &kind).find("N from kv = 100") != std::string::npos);
}

TEST_CASE("mqa_logits: a negative num_sms is refused before anything else happens") {
    const Args a;
    std::string message;
    try {
        mqa_logits(a.q, a.kv, a.kv_scales, a.weights, a.cu_starts, a.cu_ends, a.logits,
                   MqaLogitsOptions{.num_sms = -1});
    } catch (const Error& e) {
        message = e.what();
    }
    CHECK(message.find("options.num_sms must be 0 (all) or a positive count; got -1") != std::string::npos);
}

TEST_CASE("mqa_logits args: strides of size-1 dimensions address nothing and are taken as dense") {
    // torch's contiguous [1, H, D] may have strides [D, D, 1]; a column of an [S, 2] tensor has stride 2.
    Args a;
    a.q = TensorView::strided(fake(1), DType::float8_e4m3, {1, 32, 128}, {128, 128, 1});
    a.weights = TensorView::strided(fake(4), DType::float32, {1, 32}, {1, 1});
    a.cu_starts = TensorView::strided(fake(5), DType::int32, {1}, {2});
    a.cu_ends = TensorView::strided(fake(6), DType::int32, {1}, {2});
    a.logits = TensorView::strided(fake(7), DType::float32, {1, 100}, {7, 1});
    const MqaLogitsArgs args = a.make();
    CHECK(args.params.q_stride_s == 32 * 128);  // what the q tensor map describes, even for one row
    CHECK(args.params.weights_stride_s == 32);
    CHECK(args.params.logits_stride_s == 100);
    // A size-1 dimension inside the view still has to be what the kernel reads: q's heads stay checked.
    a.q = TensorView::strided(fake(1), DType::float8_e4m3, {1, 32, 128}, {8192, 256, 1});
    CHECK(error_of(a).find("heads of one query must be contiguous") != std::string::npos);
}

TEST_CASE("mqa_logits args: empty tensors and impossible views get messages, not crashes") {
    ErrorKind kind{};
    Args a;
    a.q = TensorView::contiguous(nullptr, DType::float8_e4m3, {0, 32, 128});  // torch's empty tensor: no data
    std::string message = error_of(a, &kind);
    CHECK(message.find("q is float8_e4m3[0, 32, 128]") != std::string::npos);
    CHECK(message.find("dimension 0 is empty") != std::string::npos);
    CHECK(kind == ErrorKind::invalid_argument);
    a = Args{};
    a.logits = TensorView::contiguous(nullptr, DType::float32, {4, 0});
    CHECK(error_of(a).find("logits is float32[4, 0]") != std::string::npos);
    for (int rank : {-1, 5, 7}) {
        a = Args{};
        a.kv.rank = rank;
        message = error_of(a, &kind);
        CHECK(message.find("kv has rank " + std::to_string(rank)) != std::string::npos);
        CHECK(kind == ErrorKind::invalid_argument);
        CHECK(a.kv.describe().find("view of rank " + std::to_string(rank)) != std::string::npos);
    }
}

TEST_CASE("mqa_logits args: logits that overlap an input are refused, logits beside them are not") {
    Args a;
    const auto check_apart = [&] { check_logits_apart(a.q, a.kv, a.kv_scales, a.weights, a.cu_starts, a.cu_ends, a.logits); };
    a.logits = TensorView::contiguous(fake(1), DType::float32, {4, 100});  // q's own memory
    CHECK_THROWS_WITH_AS(check_apart(), doctest::Contains("logits (float32[4, 100] strides [100, 1]) overlaps q"),
                         Error);
    // q spans 4 x 32 x 128 bytes from fake(1): logits right after its last byte are fine.
    a.logits = TensorView::contiguous(static_cast<char*>(fake(1)) + 4 * 32 * 128, DType::float32, {4, 100});
    CHECK_NOTHROW(check_apart());
    // mqa_logits() itself refuses the overlap before it looks for a device.
    a.logits = TensorView::contiguous(fake(6), DType::float32, {4, 100});
    CHECK_THROWS_WITH_AS(mqa_logits(a.q, a.kv, a.kv_scales, a.weights, a.cu_starts, a.cu_ends, a.logits),
                         doctest::Contains("overlaps cu_ends"), Error);
}
