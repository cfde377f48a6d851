// The AMD baseline and reference code objects linked into the library: present exactly when
// clang-22 was found at build time, each a valid AMDGPU ELF for its processor (checked by
// llvm-readelf-22 too, where installed) holding every baseline kernel and the reference kernel of
// both operators (mqa_logits and paged_mqa_logits), as the HIP backend hands them out; absent, the
// backend's error says why.

#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <string>

#include "codegen/family_registry.hpp"
#include "codegen/prebuilt_amd.hpp"
#include "mqajit/error.hpp"
#include "runtime/backend.hpp"
#include "runtime/hip_code_object.hpp"
#include "tests/error_kind.hpp"
#include "tests/support.hpp"
#include "codegen/variant_registry.hpp"

using namespace mqajit;

namespace {

bool has_symbol_name(std::span<const char> binary, const std::string& name) {
    const std::string_view text(binary.data(), binary.size());
    return text.find(name + '\0') != std::string_view::npos;  // in the string table
}

}  // namespace

TEST_CASE("amd baseline: built in exactly when clang-22 was found at build time") {
#if defined(MQAJIT_EXPECT_AMD_BASELINE)
    CHECK(prebuilt_amd_archs() == std::vector<std::string>{"gfx942", "gfx950"});
#else
    CHECK(prebuilt_amd_archs().empty());
    try {
        prebuilt_amd_baseline(Arch::parse("gfx950"), 32, 128);
        FAIL("a baseline was returned by a build without one");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::unsupported);
        CHECK(std::string(e.what()).find("clang-22 and lld-22 were not found when it was built") != std::string::npos);
    }
    CHECK(mqajit::testing::error_kind_of([] { backend_for(Vendor::amd).reference(Arch::parse("gfx942")); }) ==
          ErrorKind::unsupported);
    CHECK(mqajit::testing::error_kind_of([] { backend_for(Vendor::amd).paged_reference(Arch::parse("gfx950")); }) ==
          ErrorKind::unsupported);
#endif
}

TEST_CASE("amd baseline: each code object is an AMDGPU ELF for its processor with every baseline kernel") {
    for (const std::string& name : prebuilt_amd_archs()) {
        CAPTURE(name);
        const Arch arch = Arch::parse(name);
        const std::span<const char> code_object = prebuilt_amd_code_object(arch);
        REQUIRE(code_object.size() > 1024);
        const std::optional<Arch> target = amdgpu_code_object_target(code_object);
        REQUIRE(target.has_value());
        CHECK(target->target_id() == name);  // the bare processor: runs with any sramecc/xnack setting
        CHECK(amdgpu_code_object_abi_version(code_object) == 3);  // code object v5, as ClangHipCompiler makes
        CHECK(std::string_view(code_object.data(), code_object.size()).find("amdgcn-amd-amdhsa--" + name) !=
              std::string_view::npos);  // the metadata note's amdhsa.target
        // Feature flags of the live device do not matter: the same object serves them.
        CHECK(prebuilt_amd_code_object(Arch::parse(name + ":sramecc+:xnack-")).data() == code_object.data());

        for (int heads : {32, 64}) {
            for (int head_dim : {64, 128}) {
                const PrebuiltBaseline baseline = prebuilt_amd_baseline(arch, heads, head_dim);
                CAPTURE(baseline.kernel_name);
                CHECK(has_symbol_name(code_object, baseline.kernel_name));
                CHECK(baseline.variant.op == MatrixOp::mfma);
                CHECK(VariantRegistry::instance().supports(arch, heads, head_dim, baseline.variant).ok);
                CHECK(family_for(baseline.variant).shared_bytes(baseline.variant, heads, head_dim) <= 64 * 1024);
                const BaselineKernel from_backend = backend_for(Vendor::amd).baseline(arch, heads, head_dim);
                CHECK(from_backend.kernel.kernel_name == baseline.kernel_name);
                CHECK(from_backend.kernel.binary.data() == code_object.data());
            }
        }
        // The reference kernel is in the same object, under the NVIDIA reference kernel's name.
        CHECK(has_symbol_name(code_object, kReferenceKernelName));
        const PrebuiltKernel reference = backend_for(Vendor::amd).reference(Arch::parse(name + ":xnack-"));
        CHECK(reference.kernel_name == kReferenceKernelName);
        CHECK(reference.binary.data() == code_object.data());

        // The decode baselines, one per (heads, head_dim, next_n), and the decode reference.
        for (int heads : {32, 64}) {
            for (int head_dim : {64, 128}) {
                for (int next_n = 1; next_n <= 4; ++next_n) {
                    const PagedProblemShape shape{.batch = 1, .next_n = next_n, .heads = heads, .head_dim = head_dim,
                                                  .block_kv = 64};
                    const BaselineKernel paged = backend_for(Vendor::amd).paged_baseline(arch, shape);
                    CAPTURE(paged.kernel.kernel_name);
                    CHECK(paged.kernel.kernel_name == paged_baseline_kernel_name(shape, "pmfma"));
                    CHECK(has_symbol_name(code_object, paged.kernel.kernel_name));
                    CHECK(paged.kernel.binary.data() == code_object.data());
                    CHECK(paged.variant.op == MatrixOp::pmfma);
                    CHECK(paged.variant.rows == next_n);
                    CHECK(VariantRegistry::for_op(KernelOp::paged_mqa_logits).supports(arch, heads, head_dim, paged.variant).ok);
                    CHECK(paged_family_for(paged.variant).fits(paged.variant, shape).ok);
                }
            }
        }
        const PagedProblemShape block128{.batch = 1, .next_n = 1, .heads = 64, .head_dim = 128, .block_kv = 128};
        try {
            backend_for(Vendor::amd).paged_baseline(arch, block128);
            FAIL("a 64-token baseline was returned for a 128-token cache");
        } catch (const Error& e) {
            CHECK(e.kind() == ErrorKind::unsupported);
            CHECK(std::string(e.what()).find("pmfma..._bkv128") != std::string::npos);
        }
        CHECK(has_symbol_name(code_object, kPagedReferenceKernelName));
        const PrebuiltKernel paged_reference = backend_for(Vendor::amd).paged_reference(arch);
        CHECK(paged_reference.kernel_name == kPagedReferenceKernelName);
        CHECK(paged_reference.binary.data() == code_object.data());
    }
    CHECK(prebuilt_amd_code_object(Arch::parse("gfx90a")).empty());
    CHECK(prebuilt_amd_code_object(Arch::parse("sm_90a")).empty());
    if (!prebuilt_amd_archs().empty()) {
        CHECK(mqajit::testing::error_kind_of([] { prebuilt_amd_baseline(Arch::parse("gfx90a"), 32, 128); }) ==
              ErrorKind::unsupported);
        CHECK(mqajit::testing::error_kind_of([] { prebuilt_amd_baseline(Arch::parse("gfx950"), 16, 128); }) ==
              ErrorKind::unsupported);
    }
}

TEST_CASE("amd baseline: llvm-readelf-22 reads each code object as its processor's") {
    if (prebuilt_amd_archs().empty()) MQAJIT_SKIP("this build has no AMD code objects (no clang-22 at build time)");
    std::string version;
    if (mqajit::testing::run_command("llvm-readelf-22 --version", &version) != 0) {
        MQAJIT_SKIP("llvm-readelf-22 is not installed");
    }
    const mqajit::testing::TempDir dir("amd-prebuilt");
    for (const std::string& name : prebuilt_amd_archs()) {
        CAPTURE(name);
        const std::span<const char> code_object = prebuilt_amd_code_object(Arch::parse(name));
        const std::filesystem::path file = dir.path() / (name + ".co");
        std::ofstream(file, std::ios::binary).write(code_object.data(), static_cast<std::streamsize>(code_object.size()));
        std::string header;
        REQUIRE(mqajit::testing::run_command("llvm-readelf-22 --file-header --notes " + file.string(), &header) == 0);
        INFO(header);
        CHECK(header.find("Machine:                           EM_AMDGPU") != std::string::npos);
        // e_flags: EF_AMDGPU_MACH (0x4c gfx942, 0x4f gfx950) with xnack and sramecc "any" (0x100, 0x400).
        const std::string flags = name == "gfx950" ? "0x54f" : "0x54c";
        CHECK(header.find("Flags:                             " + flags + ", " + name + ", xnack, sramecc") !=
              std::string::npos);
        CHECK(header.find("amdhsa.target:   amdgcn-amd-amdhsa--" + name) != std::string::npos);
        CHECK(header.find(".name:           mqa_logits_baseline_h64_d128") != std::string::npos);
        CHECK(header.find(".name:           mqa_logits_reference") != std::string::npos);
        CHECK(header.find(".name:           paged_mqa_logits_baseline_h64_d128_n4") != std::string::npos);
        CHECK(header.find(".name:           paged_mqa_logits_reference") != std::string::npos);
    }
}
