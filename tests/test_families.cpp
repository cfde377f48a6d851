// What every kernel family promises, checked for each one the registry lists: one name (folder,
// main template, cache tag), the variants the rules accept are the ones it generates, the rules
// and the launch use one resource function, the kernel's cache key hashes only the templates it
// includes, and plan() works from plain numbers.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "codegen/families/gfx9_mqa_logits/family.hpp"
#include "codegen/families/gfx9_paged_mqa_logits/family.hpp"
#include "codegen/families/sm80_mqa_logits/family.hpp"
#include "codegen/families/sm90_mqa_logits/family.hpp"
#include "codegen/families/sm90_mqa_topk/family.hpp"
#include "codegen/families/sm90_paged_mqa_logits/family.hpp"
#include "codegen/family_registry.hpp"
#include "codegen/templates.hpp"
#include "codegen/templates/mqa_logits_params.cuh"
#include "codegen/variant_registry.hpp"
#include "mqajit/error.hpp"
#include "runtime/disk_cache.hpp"
#include "runtime/kernel_request.hpp"
#include "tests/error_kind.hpp"
#include "tests/runtime_fakes.hpp"

using namespace mqajit;

namespace {

std::set<std::string> header_names(const GeneratedKernel& kernel) {
    std::set<std::string> names;
    for (const EmbeddedFile& header : kernel.headers) names.emplace(header.name);
    return names;
}

// A runnable variant of `family` on `arch` at (32, 128), or nothing.
std::optional<Variant> some_variant(const KernelFamily& family, const Arch& arch) {
    for (const Variant& v : VariantRegistry::for_op(family.kernel_op()).variants(arch, 32, 128)) {
        if (v.op == family.op()) return v;
    }
    return std::nullopt;
}

Arch arch_of(const KernelFamily& family) { return Arch::parse(family.rules().archs().back()); }

}  // namespace

TEST_CASE("families: the registry lists each family once, in the order variants are listed, all of mqa_logits") {
    const std::vector<const KernelFamily*> families = families_of(KernelOp::mqa_logits);
    REQUIRE(families.size() == 3);
    CHECK(families[0] == &sm90_mqa_logits_family());
    CHECK(families[1] == &sm80_mqa_logits_family());
    CHECK(families[2] == &gfx9_mqa_logits_family());
    const std::vector<const KernelFamily*> all = all_families();
    REQUIRE(all.size() == 6);  // then the decode families, then the fused top-k one
    CHECK(std::vector(all.begin(), all.begin() + 3) == families);
    CHECK(all[3] == &sm90_paged_mqa_logits_family());
    CHECK(all[4] == &gfx9_paged_mqa_logits_family());
    CHECK(families_of(KernelOp::paged_mqa_logits) == std::vector<const KernelFamily*>{all[3], all[4]});
    CHECK(all[5] == &sm90_mqa_topk_family());
    CHECK(families_of(KernelOp::mqa_topk) == std::vector<const KernelFamily*>{all[5]});
    CHECK(to_string(KernelOp::mqa_topk) == "mqa_topk");
    std::set<MatrixOp> ops;
    for (const KernelFamily* family : families) {
        CHECK(family->kernel_op() == KernelOp::mqa_logits);
        CHECK(ops.insert(family->op()).second);  // one family per matrix op and operator
    }
    CHECK(to_string(KernelOp::mqa_logits) == "mqa_logits");
    CHECK(&VariantRegistry::for_op(KernelOp::mqa_logits) == &VariantRegistry::instance());
}

TEST_CASE("families: one name for the folder, the main template, the kernel's includes and its cache tag") {
    for (const KernelFamily* family : all_families()) {
        const std::string name = family->name();
        CAPTURE(name);
        CHECK(std::filesystem::is_directory(std::filesystem::path(MQAJIT_SOURCE_DIR) / "codegen/families" / name));
        CHECK(std::filesystem::is_regular_file(std::filesystem::path(MQAJIT_SOURCE_DIR) / "codegen/families" / name /
                                               (name + ".cuh")));
        const Arch arch = arch_of(*family);
        const std::optional<Variant> v = some_variant(*family, arch);
        REQUIRE(v.has_value());
        const GeneratedKernel kernel = family->generate(*v, 32, 128, arch);
        CHECK(kernel.source.find("#include \"" + name + ".cuh\"") != std::string::npos);
        CHECK(header_names(kernel).count(name + ".cuh") == 1);
        const testing::FakeCompiler compiler;
        CHECK(kernel_key_for(*v, 32, 128, arch, compiler).family == name);
    }
}

TEST_CASE("families: every variant the registry accepts is generated (none refused by the generator)") {
    // NOTES: before the rules and the generator shared one check, `mqajit variants --arch gfx950
    // --head-dim 64` listed 36 mfma16x16x128 variants per head count that codegen then refused.
    int generated = 0, generated_paged = 0;
    for (const KernelOp op : {KernelOp::mqa_logits, KernelOp::paged_mqa_logits}) {
        const auto& registry = VariantRegistry::for_op(op);
        for (const std::string& arch_name : registry.archs()) {
            const Arch arch = Arch::parse(arch_name);
            for (int heads : {32, 64}) {
                for (int head_dim : {64, 128}) {
                    for (const Variant& v : registry.variants(arch, heads, head_dim)) {
                        CAPTURE(arch.name);
                        CAPTURE(v.name());
                        CAPTURE(head_dim);
                        CHECK_NOTHROW(kernel_family_for(v).generate(v, heads, head_dim, arch));
                        ++(op == KernelOp::mqa_logits ? generated : generated_paged);
                    }
                }
            }
        }
    }
    CHECK(generated > 500);
    CHECK(generated_paged > 200);
    const auto& registry = VariantRegistry::instance();
    CHECK_FALSE(registry.supports(Arch::parse("gfx950"), 32, 64, Variant::parse("mfma16x16x128_bkv64_r1_w1_lds2")).ok);
    CHECK(registry.supports(Arch::parse("gfx950"), 32, 128, Variant::parse("mfma16x16x128_bkv64_r1_w1_lds2")).ok);
}

TEST_CASE("families: the generator refuses with the rules' reason") {
    const Variant v = Variant::parse("wgmma64x128x32_bkv64_r4_w2_lds3");  // lds not a multiple of w
    const Support support = VariantRegistry::instance().supports(Arch::parse("sm_90a"), 32, 128, v);
    REQUIRE_FALSE(support.ok);
    try {
        sm90_mqa_logits_family().generate(v, 32, 128, Arch::parse("sm_90a"));
        FAIL("an unsupported variant was generated");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::unsupported);
        CHECK(std::string(e.what()).find(support.reason) != std::string::npos);
    }
}

TEST_CASE("families: the rules check the same shared memory the launch asks for") {
    // Over each family's limit; the reason quotes the family's own shared_bytes().
    struct Case {
        const char* arch;
        int heads;
        const char* variant;
    };
    for (const Case c : {Case{"sm_80", 32, "mma16x8x16_bkv256_r1_w16_lds4"}, Case{"gfx942", 64, "mfma32x32x16_bkv128_r4_w4_lds3"}}) {
        CAPTURE(c.variant);
        const Variant v = Variant::parse(c.variant);
        const Support support = VariantRegistry::instance().supports(Arch::parse(c.arch), c.heads, 128, v);
        REQUIRE_FALSE(support.ok);
        CHECK(support.reason.find(std::to_string(family_for(v).shared_bytes(v, c.heads, 128)) + " B exceeds") !=
              std::string::npos);
    }
}

TEST_CASE("families: a kernel's headers are the templates its source includes, nothing of other families") {
    const Arch sm90 = Arch::parse("sm_90a");
    const GeneratedKernel wgmma =
        sm90_mqa_logits_family().generate(Variant::parse("wgmma64x128x32_bkv128_r4_w2_lds4"), 32, 128, sm90);
    // Every mqa_logits family places its values through mqa_logits_output.cuh (bf16, compressed rows).
    const std::set<std::string> output{"mqa_logits_output.cuh", "mqa_device_common.cuh", "mqa_common.cuh",
                                       "hip_minimal.cuh", "mqa_logits_params.cuh"};
    const auto with_output = [&](std::set<std::string> names) {
        names.insert(output.begin(), output.end());
        return names;
    };
    CHECK(header_names(wgmma) == with_output({"sm90_mqa_logits.cuh", "sm90_primitives.cuh", "sm90_wgmma.cuh",
                                              "sm90_consumer.cuh", "sm90_epilogue.cuh", "grid_dependency.cuh"}));
    const GeneratedKernel mma =
        sm80_mqa_logits_family().generate(Variant::parse("mma16x8x32_bkv64_r4_w4_lds2"), 32, 128, Arch::parse("sm_89"));
    CHECK(header_names(mma) == with_output({"sm80_mqa_logits.cuh", "grid_dependency.cuh"}));
    const GeneratedKernel mfma =
        gfx9_mqa_logits_family().generate(Variant::parse("mfma32x32x64_bkv64_r1_w2_lds2"), 32, 128, Arch::parse("gfx950"));
    CHECK(header_names(mfma) == with_output({"gfx9_mqa_logits.cuh", "gfx9_mfma.cuh"}));
    CHECK(embedded_templates().size() > header_names(wgmma).size() + 2);
    CHECK(testing::error_kind_of([] { templates_included_by("no_such_template.cuh"); }) == ErrorKind::internal);
}

TEST_CASE("families: the disk cache key changes with an included template's text and only with it") {
    const Arch gfx950 = Arch::parse("gfx950");
    const Variant v = Variant::parse("mfma32x32x64_bkv64_r1_w2_lds2");
    const testing::FakeCompiler compiler;
    const CompileRequest request = compile_request_for(v, 32, 128, gfx950);
    const std::string key = DiskCache::key_for(compiler, request);

    // The same request with one included template edited.
    std::vector<EmbeddedFile> edited(request.headers.begin(), request.headers.end());
    const std::string changed_text = std::string(edited.back().text) + "\n// edited\n";
    edited.back().text = changed_text;
    CompileRequest with_edit = request;
    with_edit.headers = edited;
    CHECK(DiskCache::key_for(compiler, with_edit) != key);

    // Every template this kernel does not include can change without changing its key: none of
    // them is in the request.
    for (const EmbeddedFile& file : embedded_templates()) {
        const bool included = std::ranges::any_of(request.headers, [&](const EmbeddedFile& h) { return h.name == file.name; });
        if (std::string_view(file.name).starts_with("sm90_")) CHECK_FALSE(included);
    }
}

TEST_CASE("families: plan() takes plain device limits and lists the tensor maps to encode") {
    alignas(16) static unsigned char q[16], kv[16];
    MqaLogitsParams params{};
    params.q = q;
    params.kv = kv;
    params.q_stride_s = 32 * 128;
    params.kv_stride_n = 128;
    const DeviceLimits h200{.multiprocessors = 132, .max_shared_bytes_per_block = 232448};
    const ProblemShape shape{.heads = 32, .head_dim = 128, .seq_len = 4096, .seq_len_kv = 8192};

    const Variant wgmma = Variant::parse("wgmma64x128x32_bkv128_r4_w2_lds4");
    const LaunchPlan plan = sm90_mqa_logits_family().plan(wgmma, shape, h200, params);
    CHECK(plan.config.grid_x == 132);  // persistent: one block per SM
    CHECK(plan.config.block_x == 384);  // a producer and two math warpgroups
    CHECK(plan.config.dynamic_shared_bytes == sm90_mqa_logits_family().shared_bytes(wgmma, 32, 128));
    CHECK(plan.num_q_blocks == 1024);
    CHECK(plan.num_kv_splits == sm90_kv_splits(1024, 64, 132));
    REQUIRE(plan.tensor_maps().size() == 2);
    const TensorMapPlan& q_map = plan.tensor_maps()[0];
    CHECK(q_map.argument_offset == offsetof(MqaLogitsParams, tma_q));
    CHECK(q_map.request.base == q);
    CHECK(q_map.request.rank == 3);
    CHECK(q_map.request.dims[2] == 4096);
    CHECK(q_map.request.box[2] == 4);  // r query rows per box
    CHECK(q_map.request.strides_bytes[1] == 32 * 128);
    const TensorMapPlan& kv_map = plan.tensor_maps()[1];
    CHECK(kv_map.argument_offset == offsetof(MqaLogitsParams, tma_kv));
    CHECK(kv_map.request.base == kv);
    CHECK(kv_map.request.dims[1] == 8192);
    CHECK(kv_map.request.box[1] == 128);  // bkv rows per box
    CHECK(params.num_q_blocks == 0);  // the argument is left as it was: the runtime writes the plan in

    MqaLogitsParams forced = params;
    forced.num_kv_splits = 6;  // 64 tiles: 6 splits of 11 tiles leave none empty
    CHECK(sm90_mqa_logits_family().plan(wgmma, shape, h200, forced).num_kv_splits == whole_kv_splits(64, 6));

    const DeviceLimits small{.multiprocessors = 132, .max_shared_bytes_per_block = 48 * 1024};
    CHECK(testing::error_kind_of([&] { sm90_mqa_logits_family().plan(wgmma, shape, small, params); }) ==
          ErrorKind::unsupported);

    LaunchPlan full;
    full.add_tensor_map({}, 0);
    full.add_tensor_map({}, 128);
    full.add_tensor_map({}, 256);  // the decode family's keys, scales and queries
    CHECK(testing::error_kind_of([&] { full.add_tensor_map({}, 384); }) == ErrorKind::internal);
}
