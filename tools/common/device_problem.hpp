#pragma once
// A HostProblem uploaded to a device, with the checks every tool runs: poison the output, run a
// kernel, compare with the reference kernel, rerun for bitwise determinism.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mqajit/mqa_logits.hpp"
#include "runtime/device.hpp"
#include "tools/common/problem.hpp"

namespace mqajit::tools {

class DeviceProblem {
public:
    DeviceProblem(Device& device, const HostProblem& problem);

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
    std::unique_ptr<DeviceBuffer> q_, kv_, kv_scales_, weights_, cu_starts_, cu_ends_, logits_;
};

struct CheckResult {
    Comparison comparison;
    bool deterministic = true;  // a rerun gave identical bits
    std::string kernel;         // what served the call
    bool passed(double max_calc_diff) const { return deterministic && comparison.passed(max_calc_diff); }
    std::string summary() const;
};

// Runs the reference kernel and then `options` on fresh poisoned outputs, compares, reruns once and
// compares bits. The tolerance the project uses against the dequantized reference is 1e-5.
inline constexpr double kMaxCalcDiff = 1e-5;
CheckResult check_against_reference(DeviceProblem& problem, const MqaLogitsOptions& options);

}  // namespace mqajit::tools
