// mqa_topk on a real GPU: each row's selection against a CPU sort of the same call's mqa_logits
// values (the orders and tie rule of include/mqajit/mqa_topk.hpp), on fresh random data, with
// windows wider and narrower than k, empty windows, tied logits across the k-th place, one pass
// and many, key order and logit order, poisoned outputs and a bitwise rerun; by the unfused path
// and, on sm_90a, by the fused one (whose candidates overflow or fall short on the tied rows, so
// that its fallback runs too).

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "mqajit/mqa_topk.hpp"
#include "tests/gpu_support.hpp"
#include "tools/common/device_buffers.hpp"
#include "tools/common/device_problem.hpp"

using namespace mqajit;
using namespace mqajit::tools;

namespace {

struct TopkCase {
    int seq_len, seq_len_kv, heads, k;
    MaskKind mask;
    // Keys outside a random set of this many become copies of key 0 (same bytes, same scale), so
    // every row holds a run of equal logits wider than k; -1: leave the keys random.
    int distinct_keys = -1;
    int rows_per_pass = 0;  // 0: every row in one pass
    bool sorted = false;    // MqaTopkOptions::sorted
    const char* variant = "";
};

const TopkCase kCases[] = {
    {64, 5000, 32, 2048, MaskKind::causal, -1, 5, true},
    {64, 5000, 64, 2048, MaskKind::causal, -1, 0, false},
    {37, 4097, 64, 256, MaskKind::random_windows, -1, 0, true},    // empty, clamped and narrow windows
    {37, 4097, 32, 2048, MaskKind::random_windows, -1, 7, false},  // windows on both sides of k
    {24, 3000, 32, 2048, MaskKind::full, 100, 0, true},            // equal logits across the k-th place
    {24, 3000, 32, 2048, MaskKind::full, 100, 0, false},
    {24, 3000, 64, 100, MaskKind::full, 0, 5, false},              // every logit of a row equal
    {8, 1, 32, 16, MaskKind::full, -1, 0, true},                   // N = 1
    {20, 777, 64, 1, MaskKind::random_windows, -1, 3, false},      // k = 1
    {4, 9000, 32, kMqaTopkMaxK, MaskKind::full, -1, 0, true},      // the largest k
    {4, 9000, 64, kMqaTopkMaxK, MaskKind::full, -1, 0, false},
    {130, 2048, 32, 512, MaskKind::packed, -1, 64, false, "baseline"},
    // Windows past the fused path's candidate buffer (2.5 k): its thresholds come from the sample.
    {64, 40000, 32, 2048, MaskKind::causal, -1, 0, false},
    {64, 40000, 64, 2048, MaskKind::causal, -1, 16, true},
    {48, 30000, 32, 1024, MaskKind::random_windows, -1, 0, false},
    {24, 12000, 32, 2048, MaskKind::full, 100, 0, false},  // ties past the buffer: the fallback serves
    {24, 12000, 64, 2048, MaskKind::full, 0, 7, true},
};

std::uint64_t fresh_seed() {
    static std::uint64_t seed = 0x70b4;
    return ++seed;
}

void tie_keys(HostProblem& host, int distinct_keys, std::uint64_t seed) {
    std::vector<int> keys(static_cast<std::size_t>(host.seq_len_kv));
    std::iota(keys.begin(), keys.end(), 0);
    std::shuffle(keys.begin(), keys.end(), std::mt19937_64(seed));
    const auto d = static_cast<std::size_t>(host.head_dim);
    for (std::size_t i = static_cast<std::size_t>(distinct_keys); i < keys.size(); ++i) {
        const auto key = static_cast<std::size_t>(keys[i]);
        if (key == 0) continue;
        std::memcpy(host.kv.data() + key * d, host.kv.data(), d);
        host.kv_scales[key] = host.kv_scales[0];
    }
}

// The rule of mqa_topk.hpp applied by a CPU sort to the logits mqa_logits() wrote: the selection
// by logit (equal logits by key), then in key order unless `sorted`. Indices [S, k], -1 past the window.
std::vector<int> expected_topk(const HostProblem& host, const std::vector<float>& logits, int k, bool sorted) {
    std::vector<int> indices(static_cast<std::size_t>(host.seq_len) * k, -1);
    for (int i = 0; i < host.seq_len; ++i) {
        const int lo = std::max(host.cu_starts[i], 0), hi = std::min(host.cu_ends[i], host.seq_len_kv);
        if (hi <= lo) continue;
        const float* row = logits.data() + static_cast<std::size_t>(i) * host.logits_row_stride;
        std::vector<int> keys(static_cast<std::size_t>(hi - lo));
        std::iota(keys.begin(), keys.end(), lo);
        const auto taken = std::min<std::size_t>(keys.size(), static_cast<std::size_t>(k));
        std::partial_sort(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(taken), keys.end(),
                          [&](int a, int b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
        if (!sorted) std::sort(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(taken));
        std::copy_n(keys.begin(), taken, indices.begin() + static_cast<std::ptrdiff_t>(i) * k);
    }
    return indices;
}

struct TopkOutput {
    std::vector<std::int32_t> indices;
    std::vector<float> values;
};

TopkOutput run_topk(Device& gpu, const DeviceProblem& problem, const TopkCase& c, MqaTopkPath path) {
    const HostProblem& host = problem.host();
    const auto slots = static_cast<std::size_t>(host.seq_len) * c.k;
    auto indices = gpu.allocate(slots * 4), values = gpu.allocate(slots * 4);
    fill_floats(gpu, *indices, kPoisonBits);
    fill_floats(gpu, *values, kPoisonBits);
    const std::int64_t rows_per_pass = c.rows_per_pass > 0 ? c.rows_per_pass : host.seq_len;
    const std::int64_t row_bytes = mqa_topk_row_bytes(host.seq_len_kv);
    // The fused path's fixed part (the largest workspace less its S rows of logits), then the rows.
    const std::int64_t fixed_bytes =
        path == MqaTopkPath::fused
            ? mqa_topk_workspace_bytes(host.seq_len, host.seq_len_kv, c.k, std::int64_t{1} << 40) -
                  host.seq_len * row_bytes
            : 0;
    const std::int64_t workspace_bytes = fixed_bytes + rows_per_pass * row_bytes;
    auto workspace = gpu.allocate(static_cast<std::size_t>(workspace_bytes));
    fill_floats(gpu, *workspace, kPoisonBits);
    const DeviceProblem::Views v = problem.views();
    DispatchReport report;
    mqa_topk(v.q, v.kv, v.kv_scales, v.weights, v.cu_starts, v.cu_ends,
             TensorView::contiguous(indices->data(), DType::int32, {host.seq_len, c.k}),
             TensorView::contiguous(values->data(), DType::float32, {host.seq_len, c.k}),
             TensorView::contiguous(workspace->data(), DType::uint8, {workspace_bytes}),
             MqaTopkOptions{.sorted = c.sorted, .variant = c.variant, .path = path, .report = &report});
    CHECK(report.kernel.starts_with("fused ") == (path == MqaTopkPath::fused));
    TopkOutput out{std::vector<std::int32_t>(slots), std::vector<float>(slots)};
    gpu.copy_to_host(out.indices.data(), indices->data(), slots * 4);
    gpu.copy_to_host(out.values.data(), values->data(), slots * 4);
    return out;
}

// Every slot as the CPU sort says: the same key, its logit beside it, -1 and -inf past the window.
void check_selection(const HostProblem& host, const std::vector<float>& logits, const TopkCase& c,
                     const TopkOutput& got) {
    const std::vector<int> want = expected_topk(host, logits, c.k, c.sorted);
    std::int64_t wrong = 0;
    std::string first;
    for (int i = 0; i < host.seq_len; ++i) {
        for (int t = 0; t < c.k; ++t) {
            const std::size_t at = static_cast<std::size_t>(i) * c.k + t;
            const int index = want[at];
            const float value = index >= 0 ? logits[static_cast<std::size_t>(i) * host.logits_row_stride + index]
                                           : -INFINITY;
            const bool ok = got.indices[at] == index && got.values[at] == value;
            if (!ok && wrong++ == 0) {
                first = fmt::format("row {} slot {}: got key {} logit {}, want key {} logit {}", i, t, got.indices[at],
                                    got.values[at], index, value);
            }
        }
    }
    INFO(first);
    CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("gpu: mqa_topk selects what a sort of mqa_logits' values selects") {
    MQAJIT_REQUIRE_GPU();
    std::vector<MqaTopkPath> paths = {MqaTopkPath::unfused};
    if (gpu->arch() == "sm_90a") paths.push_back(MqaTopkPath::fused);
    for (const TopkCase& c : kCases) {
        const std::uint64_t seed = fresh_seed();
        HostProblem host = make_problem(c.seq_len, c.seq_len_kv, c.heads, 128, c.mask, seed);
        if (c.distinct_keys >= 0) tie_keys(host, c.distinct_keys, seed);
        DeviceProblem problem(*gpu, host);
        problem.poison_logits();
        problem.run(MqaLogitsOptions{.clean_logits = false, .variant = c.variant});
        const std::vector<float> logits = problem.download_logits();

        for (const MqaTopkPath path : paths) {
            INFO(fmt::format("S={} N={} H={} k={} mask={} distinct keys={} rows per pass={} sorted={} variant='{}' "
                             "path={}",
                             c.seq_len, c.seq_len_kv, c.heads, c.k, to_string(c.mask), c.distinct_keys,
                             c.rows_per_pass, c.sorted, c.variant, path == MqaTopkPath::fused ? "fused" : "unfused"));
            const TopkOutput first = run_topk(*gpu, problem, c, path);
            check_selection(host, logits, c, first);
            const TopkOutput second = run_topk(*gpu, problem, c, path);
            CHECK(first.indices == second.indices);
            CHECK(std::memcmp(first.values.data(), second.values.data(), first.values.size() * 4) == 0);
        }
    }
}

TEST_CASE("gpu: mqa_topk leaves values out when none are asked for") {
    MQAJIT_REQUIRE_GPU();
    const HostProblem host = make_problem(16, 3000, 32, 128, MaskKind::causal, fresh_seed());
    DeviceProblem problem(*gpu, host);
    problem.run(MqaLogitsOptions{.clean_logits = false});
    const std::vector<float> logits = problem.download_logits();
    const int k = 300;
    auto indices = gpu->allocate(16 * k * 4);
    fill_floats(*gpu, *indices, kPoisonBits);
    const std::int64_t workspace_bytes = mqa_topk_workspace_bytes(16, 3000, k);
    auto workspace = gpu->allocate(static_cast<std::size_t>(workspace_bytes));
    const DeviceProblem::Views v = problem.views();
    mqa_topk(v.q, v.kv, v.kv_scales, v.weights, v.cu_starts, v.cu_ends,
             TensorView::contiguous(indices->data(), DType::int32, {16, k}), TensorView{},
             TensorView::contiguous(workspace->data(), DType::uint8, {workspace_bytes}));
    std::vector<std::int32_t> got(16 * k);
    gpu->copy_to_host(got.data(), indices->data(), got.size() * 4);
    CHECK(got == expected_topk(host, logits, k, false));
}
