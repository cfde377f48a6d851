#pragma once
// A HostPagedProblem uploaded to a device: poison the logits, run paged_mqa_logits() or its
// reference kernel, download and compare (the decode counterpart of device_problem.hpp).

#include <memory>
#include <vector>

#include "mqajit/paged_mqa_logits.hpp"
#include "runtime/device.hpp"
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

}  // namespace mqajit::tools
