#pragma once
// GPU architecture names as mqajit spells them: "sm_90a", "sm_89", "sm_80", "gfx950", "gfx942", ...

#include <string>
#include <string_view>
#include <vector>

namespace mqajit {

enum class Vendor { nvidia, amd };

struct Arch {
    std::string name;  // canonical spelling, e.g. "sm_90a" or "gfx950"
    Vendor vendor = Vendor::nvidia;
    int number = 0;    // 90 for sm_90a, 950 for gfx950 (the feature suffix stripped); gfx90a -> 910
    bool arch_specific = false;  // sm_90a's "a": wgmma and setmaxnreg need it
    // AMD target-ID feature flags, sorted, e.g. {"sramecc+", "xnack-"} for "gfx942:sramecc+:xnack-".
    // Not part of `name`; a HIP code-object cache key needs them (see target_id()).
    std::vector<std::string> features;

    // Accepts "sm_90a", "sm90a", "gfx950", "gfx942:sramecc+:xnack-" (feature flags go to `features`).
    // Throws mqajit::Error naming the accepted forms.
    static Arch parse(std::string_view text);
    // `name` plus ":feature" for each feature flag, e.g. "gfx942:sramecc+:xnack-".
    std::string target_id() const;
    bool operator==(const Arch&) const = default;
};

std::string_view to_string(Vendor vendor);

}  // namespace mqajit
