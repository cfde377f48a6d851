#include "tools/common/topk_problem.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <numeric>

#include "codegen/family_registry.hpp"
#include "core/check.hpp"
#include "tools/common/device_buffers.hpp"

namespace mqajit::tools {
namespace {

// A float's place in the order mqa_topk() selects by, as an unsigned key (larger: selected
// first); -0.0 takes +0.0's key.
std::uint32_t order_key(float value) {
    if (value == 0.0f) value = 0.0f;
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
    return bits & 0x80000000u ? ~bits : bits | 0x80000000u;
}

std::pair<std::int64_t, std::int64_t> clamped_window(const HostProblem& p, int row) {
    const std::int64_t n = p.seq_len_kv;
    const std::int64_t lo = std::clamp<std::int64_t>(p.cu_starts[row], 0, n);
    const std::int64_t hi = std::clamp<std::int64_t>(p.cu_ends[row], 0, n);
    return {lo, std::max(lo, hi)};
}

}  // namespace

DeviceTopkProblem::DeviceTopkProblem(Device& device, const HostProblem& problem, int k)
    : device_(device), host_(problem), k_(k), inputs_(device, problem) {
    indices_ = device.allocate(static_cast<std::size_t>(problem.seq_len) * k * sizeof(std::int32_t));
    workspace_ = device.allocate(
        static_cast<std::size_t>(mqa_topk_workspace_bytes(problem.seq_len, problem.seq_len_kv, k)));
    poison_indices();
}

void DeviceTopkProblem::run(const MqaTopkOptions& options) const {
    const HostProblem& p = host_;
    const DeviceInputs::Views in = inputs_.views(p);
    mqa_topk(in.q, in.kv, in.kv_scales, in.weights, in.cu_starts, in.cu_ends,
             TensorView::contiguous(indices_->data(), DType::int32, {p.seq_len, k_}), TensorView{},
             TensorView::contiguous(workspace_->data(), DType::uint8,
                                    {static_cast<std::int64_t>(workspace_->size())}),
             options);
}

void DeviceTopkProblem::poison_indices(void* stream) { fill_floats(device_, *indices_, kPoisonBits, stream); }

std::vector<std::int32_t> DeviceTopkProblem::download_indices() const {
    std::vector<std::int32_t> out(indices_->size() / sizeof(std::int32_t));
    device_.copy_to_host(out.data(), indices_->data(), indices_->size());
    return out;
}

std::vector<float> DeviceTopkProblem::logits_of(const std::string& kernel) const {
    const HostProblem& p = host_;
    const auto logits = device_.allocate(static_cast<std::size_t>(p.seq_len) * p.logits_row_stride * sizeof(float));
    fill_floats(device_, *logits, kPoisonBits);
    const DeviceInputs::Views in = inputs_.views(p);
    mqa_logits(in.q, in.kv, in.kv_scales, in.weights, in.cu_starts, in.cu_ends,
               TensorView::strided(logits->data(), DType::float32, {p.seq_len, p.seq_len_kv}, {p.logits_row_stride, 1}),
               MqaLogitsOptions{.clean_logits = false, .variant = kernel});
    return download_floats(device_, *logits);
}

std::uint64_t fresh_topk_seed() {
    static std::uint64_t counter =
        static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) * 2 + 1;
    return ++counter;
}

std::vector<std::int32_t> expected_topk(const HostProblem& problem, const std::vector<float>& logits,
                                        std::int64_t row_stride, int k) {
    MQAJIT_CHECK_KIND(internal, logits.size() >= static_cast<std::size_t>(problem.seq_len) * row_stride,
                      "expected_topk: {} logits for {} rows of stride {}", logits.size(), problem.seq_len, row_stride);
    std::vector<std::int32_t> expected(static_cast<std::size_t>(problem.seq_len) * k, -1);
    std::vector<std::int32_t> keys;
    for (int row = 0; row < problem.seq_len; ++row) {
        const auto [lo, hi] = clamped_window(problem, row);
        keys.resize(static_cast<std::size_t>(hi - lo));
        std::iota(keys.begin(), keys.end(), static_cast<std::int32_t>(lo));
        const float* values = logits.data() + row * row_stride;
        const auto before = [values](std::int32_t a, std::int32_t b) {
            const std::uint32_t ka = order_key(values[a]), kb = order_key(values[b]);
            return ka != kb ? ka > kb : a < b;
        };
        const std::size_t take = std::min<std::size_t>(k, keys.size());
        std::nth_element(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(take), keys.end(), before);
        std::sort(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(take));
        std::copy_n(keys.begin(), take, expected.begin() + static_cast<std::ptrdiff_t>(row) * k);
    }
    return expected;
}

TopkCheck check_topk(DeviceTopkProblem& problem, const std::vector<std::int32_t>& expected,
                     const MqaTopkOptions& options) {
    TopkCheck check;
    DispatchReport report;
    MqaTopkOptions reporting = options;
    reporting.report = &report;
    problem.poison_indices();
    problem.run(reporting);
    const std::vector<std::int32_t> first = problem.download_indices();
    check.kernel = report.kernel;
    const int k = problem.k();
    for (int row = 0; row < problem.host().seq_len && check.problem.empty(); ++row) {
        for (int slot = 0; slot < k; ++slot) {
            const std::size_t at = static_cast<std::size_t>(row) * k + slot;
            if (first[at] == expected[at]) continue;
            check.problem = fmt::format("row {} slot {}: key {} where {} belongs", row, slot, first[at], expected[at]);
            break;
        }
    }
    if (check.problem.empty()) {
        problem.poison_indices();
        problem.run(reporting);
        if (problem.download_indices() != first) check.problem = "a rerun gave other indices";
    }
    check.passed = check.problem.empty();
    return check;
}

std::string selecting_kernel_of_report(const std::string& served) {
    constexpr std::string_view kFused = "fused ";
    if (!served.starts_with(kFused)) return served;
    const Variant variant = Variant::parse(served.substr(kFused.size()));
    return topk_family_for(variant).logits_twin(variant).name();
}

TopkCheck check_topk_call(DeviceTopkProblem& problem, const MqaTopkOptions& options) {
    DispatchReport report;
    MqaTopkOptions reporting = options;
    reporting.report = &report;
    problem.run(reporting);
    const HostProblem& p = problem.host();
    const std::vector<std::int32_t> expected =
        expected_topk(p, problem.logits_of(selecting_kernel_of_report(report.kernel)), p.logits_row_stride, problem.k());
    return check_topk(problem, expected, options);
}

}  // namespace mqajit::tools
