#include "runtime/dispatch_support.hpp"

#include <fmt/format.h>

#include <mutex>
#include <set>

#include "codegen/templates/mqa_logits_params.cuh"
#include "core/check.hpp"
#include "core/log.hpp"

namespace mqajit {

std::shared_ptr<LoadedKernel> load_prebuilt(KernelCache& cache, Device& device, const Arch& arch,
                                            const Backend& backend, const PrebuiltKernel& kernel) {
    const KernelKey key{.family = "prebuilt", .variant = kernel.kernel_name, .arch = arch.target_id(),
                        .options_fingerprint = backend.name()};
    return cache.get_prebuilt(device, key, kernel.binary, kernel.kernel_name);
}

void encode_tensor_maps(const LaunchPlan& plan, const Device& device, void* argument, std::size_t argument_bytes) {
    auto* bytes = static_cast<unsigned char*>(argument);
    for (const TensorMapPlan& map : plan.tensor_maps()) {
        MQAJIT_CHECK_KIND(internal, map.argument_offset % alignof(MqaTensorMap) == 0 &&
                                        map.argument_offset + sizeof(MqaTensorMap) <= argument_bytes,
                          "a launch plan put a tensor map at byte {} of the kernel argument", map.argument_offset);
        device.encode_tensor_map(map.request, *reinterpret_cast<MqaTensorMap*>(bytes + map.argument_offset));
    }
}

bool first_time(const std::string& topic) {
    static std::mutex mutex;
    static std::set<std::string> seen;
    const std::lock_guard lock(mutex);
    return seen.insert(topic).second;
}

std::optional<Variant> parse_tuned_variant(const std::string& origin, const std::string& name, std::string* reason) {
    try {
        return Variant::parse(name);
    } catch (const Error& e) {
        *reason = fmt::format("tuned row {} names variant '{}', which this build cannot parse: {}", origin, name,
                              e.what());
        if (first_time("row|" + origin + "|" + name))
            log().warn("{}; using the baseline kernel instead (check the table with `mqajit db check`)", *reason);
        return std::nullopt;
    }
}

}  // namespace mqajit
