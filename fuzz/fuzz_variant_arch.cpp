// Variant and arch names: parsing never crashes, a name that parses prints back as itself, and the
// registry answers for whatever parsed.

#include <cstdint>
#include <optional>
#include <string>

#include "fuzz/fuzz_support.hpp"
#include "mqajit/error.hpp"
#include "variants/arch.hpp"
#include "codegen/variant_registry.hpp"
#include "variants/variant.hpp"

using namespace mqajit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text = fuzz::as_text(data, size);
    // "arch\nvariant": both parsers from one input, and the registry for the pair.
    const auto [arch_text, variant_text] = fuzz::split<2>(text, "\n");
    std::optional<Arch> arch;
    try {
        arch = Arch::parse(arch_text);
        MQAJIT_FUZZ_EXPECT(Arch::parse(arch->name).name == arch->name);
        MQAJIT_FUZZ_EXPECT(Arch::parse(arch->target_id()).target_id() == arch->target_id());
    } catch (const Error&) {
    }
    for (std::string_view name : {variant_text, text}) {
        try {
            const Variant variant = Variant::parse(name);
            MQAJIT_FUZZ_EXPECT(variant.name() == name);
            MQAJIT_FUZZ_EXPECT(Variant::parse(variant.name()) == variant);
            if (arch) {
                for (int heads : {32, 64})
                    (void)VariantRegistry::instance().supports(*arch, heads, 128, variant);
            }
        } catch (const Error&) {
        }
    }
    return 0;
}
