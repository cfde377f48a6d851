#pragma once
// GPU architecture names as mqajit spells them: "sm_90a", "sm_89", "sm_80", "gfx950", "gfx942", ...

#include <string>
#include <string_view>

namespace mqajit {

enum class Vendor { nvidia, amd };

struct Arch {
    std::string name;  // canonical spelling, e.g. "sm_90a" or "gfx950"
    Vendor vendor = Vendor::nvidia;
    int number = 0;    // 90 for sm_90a, 950 for gfx950 (the feature suffix stripped)
    bool arch_specific = false;  // sm_90a's "a": wgmma and setmaxnreg need it

    // Accepts "sm_90a", "sm90a", "gfx950", "gfx942:sramecc+:xnack-" (feature flags dropped here).
    // Throws mqajit::Error naming the accepted forms.
    static Arch parse(std::string_view text);
    bool operator==(const Arch&) const = default;
};

std::string_view to_string(Vendor vendor);

}  // namespace mqajit
