#pragma once
// A HostPagedProblem uploaded to a device: poison the logits, run paged_mqa_logits() or its
// reference kernel, download and compare, with the check every tool runs (the decode
// counterparts of device_problem.hpp).

#include <memory>
#include <vector>

#include "mqajit/paged_mqa_logits.hpp"
#include "runtime/device.hpp"
#include "tools/common/device_problem.hpp"  // CheckResult, kMaxCalcDiff
#include "tools/common/paged_problem.hpp"

namespace mqajit::tools {

class DevicePagedProblem {
public:
    DevicePagedProblem(Device& device, const HostPagedProblem& problem);

    struct Views {
        TensorView q, kv_cache, weights, context_lens, block_table, logits;
    };
    Views views() const;
    const HostPagedProblem& host() const { return host_; }

    void poison_logits(void* stream = nullptr);
    std::vector<float> download_logits() const;

    void run(const PagedMqaLogitsOptions& options) const;
    void run_reference(bool clean_logits, void* stream = nullptr) const;

private:
    Device& device_;
    HostPagedProblem host_;
    std::unique_ptr<DeviceBuffer> q_, kv_cache_, weights_, context_lens_, block_table_, logits_;
};

// The reference kernel's logits for `problem` (on fresh poisoned outputs), downloaded once so that
// several kernels can be checked against them.
std::vector<float> reference_paged_logits(DevicePagedProblem& problem, bool clean_logits);

// Runs `options` on fresh poisoned outputs, compares with `expected` (reference_paged_logits() of
// this problem in the same mode), reruns once and compares the bits of the columns it owns.
CheckResult check_paged_against(DevicePagedProblem& problem, const std::vector<float>& expected,
                                const PagedMqaLogitsOptions& options);

}  // namespace mqajit::tools
