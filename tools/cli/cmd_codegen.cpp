// mqajit codegen VARIANT --arch A [--heads H] [--head-dim D] [--expand]: prints the generated kernel
// source; with --expand the whole translation unit the compiler sees, the templates inlined.

#include <cstdio>

#include "codegen/expanded_unit.hpp"
#include "codegen/family_registry.hpp"
#include "tools/cli/arch_option.hpp"
#include "tools/cli/commands.hpp"
#include "codegen/variant_registry.hpp"

namespace mqajit::cli {

void add_codegen_command(CLI::App& app, CommandContext& context) {
    struct Options {
        std::string variant;
        std::optional<std::string> arch;
        int heads = 32;
        int head_dim = 128;
        bool expand = false;
    };
    auto options = std::make_shared<Options>();
    CLI::App* command = app.add_subcommand("codegen", "Print the kernel source generated for a variant");
    command->add_option("variant", options->variant, "Variant name, e.g. wgmma64x128x32_bkv128_r4_w2_lds4")->required();
    command->add_option("--arch", options->arch, "Target arch (default: MQAJIT_ARCH)");
    command->add_option("--heads", options->heads, "Query heads H")->check(CLI::IsMember({32, 64}));
    command->add_option("--head-dim", options->head_dim, "Head dimension D")->check(CLI::IsMember({64, 128}));
    command->add_flag("--expand", options->expand,
                      "Print the whole translation unit the compiler sees: the included templates inlined");
    command->callback([options, &context] {
        const Arch arch = resolve_arch(options->arch);
        const Variant variant = Variant::parse(options->variant);
        const Support support =
            VariantRegistry::of(variant).supports(arch, options->heads, options->head_dim, variant);
        MQAJIT_CHECK(support.ok, "{} cannot run on {} at heads {} head_dim {}: {}", variant.name(), arch.name,
                     options->heads, options->head_dim, support.reason);
        const GeneratedKernel kernel = kernel_family_for(variant).generate(variant, options->heads, options->head_dim, arch);
        std::fputs(options->expand ? expanded_unit(kernel).c_str() : kernel.source.c_str(), stdout);
        context.exit_code = kOk;
    });
}

}  // namespace mqajit::cli
