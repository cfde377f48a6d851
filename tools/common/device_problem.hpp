#pragma once
// A HostProblem uploaded to a device, with the checks every tool runs: poison the output, run a
// kernel, compare with the reference kernel, rerun for bitwise determinism.

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mqajit/mqa_logits.hpp"
#include "runtime/device.hpp"
#include "tools/common/problem.hpp"

namespace mqajit::tools {

// A HostProblem's six inputs uploaded to a device, and views of them: what every operator's
// problem on a device starts from (DeviceProblem here, DeviceTopkProblem).
class DeviceInputs {
public:
    DeviceInputs(Device& device, const HostProblem& problem);
    struct Views {
        TensorView q, kv, kv_scales, weights, cu_starts, cu_ends;
    };
    Views views(const HostProblem& problem) const;

private:
    std::unique_ptr<DeviceBuffer> q_, kv_, kv_scales_, weights_, cu_starts_, cu_ends_;
};

class DeviceProblem {
public:
    // `logits_dtype` float32 or bfloat16: what the kernels write; download_logits() widens bf16.
    DeviceProblem(Device& device, const HostProblem& problem, DType logits_dtype = DType::float32);

    struct Views {
        TensorView q, kv, kv_scales, weights, cu_starts, cu_ends, logits;
    };
    Views views() const;
    const HostProblem& host() const { return host_; }
    Device& device() const { return device_; }

    void poison_logits(void* stream = nullptr);
    std::vector<float> download_logits() const;

    // mqa_logits() into this problem's logits buffer.
    void run(const MqaLogitsOptions& options) const;
    void run_reference(bool clean_logits, void* stream = nullptr) const;

private:
    Device& device_;
    HostProblem host_;
    DType logits_dtype_;
    DeviceInputs inputs_;
    std::unique_ptr<DeviceBuffer> logits_;
};

struct CheckResult {
    Comparison comparison;
    bool deterministic = true;  // a rerun gave identical bits
    std::string kernel;         // what served the call
    bool passed(double max_calc_diff) const { return deterministic && comparison.passed(max_calc_diff); }
    std::string summary() const;
};

// The check both operators' problems run (DeviceProblem, DevicePagedProblem): `options` on fresh
// poisoned outputs, the logits compared by `compare`, then a rerun whose first `columns` of each of
// `rows` rows (of `row_stride`) must hold the same bits.
template <class Problem, class Options, class Compare>
CheckResult check_twice(Problem& problem, Options options, Compare&& compare, std::int64_t rows,
                        std::int64_t row_stride, std::int64_t columns) {
    CheckResult result;
    DispatchReport report;
    options.report = &report;
    problem.poison_logits();
    problem.run(options);
    const std::vector<float> first = problem.download_logits();
    result.kernel = report.kernel;
    result.comparison = compare(first);
    problem.poison_logits();
    problem.run(options);
    const std::vector<float> second = problem.download_logits();
    for (std::int64_t row = 0; row < rows && result.deterministic; ++row) {
        const std::size_t at = static_cast<std::size_t>(row * row_stride);
        result.deterministic = std::memcmp(first.data() + at, second.data() + at, sizeof(float) * columns) == 0;
    }
    return result;
}

// The tolerance the project uses against the dequantized reference.
inline constexpr double kMaxCalcDiff = 1e-5;

// The reference kernel's logits for `problem` (run on fresh poisoned outputs), downloaded once so
// that several kernels can be checked against them with check_against().
std::vector<float> reference_logits(DeviceProblem& problem, bool clean_logits);

// Runs `options` on fresh poisoned outputs, compares with `expected` (reference_logits() of this
// problem with the same clean_logits), reruns once and compares bits.
CheckResult check_against(DeviceProblem& problem, const std::vector<float>& expected,
                          const MqaLogitsOptions& options);

// reference_logits() then check_against(): one kernel checked on the problem.
CheckResult check_against_reference(DeviceProblem& problem, const MqaLogitsOptions& options);

}  // namespace mqajit::tools
