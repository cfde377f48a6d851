// paged_mqa_logits() end to end on a fake MI355X: a child process finds the fake libamdhip64 and
// libhiprtc of tests/fake_hip/ by their real names, so the library's decode dispatcher runs as it
// would on an AMD device: the pre-built pmfma baseline and paged reference from the clang-22 code
// object, a requested pmfma variant built by (fake) hiprtc, each launched with the gfx9 family's
// plan. The fake computes every decode launch on the CPU (MQAJIT_FAKE_HIP_COMPUTE), so the results
// are checked against the CPU reference only to show the arguments arrive whole: no AMD kernel
// runs or is verified here.

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <bit>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "codegen/families/gfx9_paged_mqa_logits/family.hpp"
#include "codegen/family_support.hpp"
#include "mqajit/error.hpp"
#include "mqajit/paged_mqa_logits.hpp"
#include "runtime/backend.hpp"
#include "tests/hip_fakes.hpp"
#include "tests/support.hpp"
#include "tools/common/paged_problem.hpp"
#include "tools/common/problem.hpp"

using namespace mqajit;

namespace {

constexpr tools::PagedProblemSpec kSpec{.batch = 3, .next_n = 2, .heads = 64, .head_dim = 128, .block_kv = 64,
                                        .average_context = 300, .context_lens_2d = true, .seed = 4242};

// One call (or one reference call) on host memory; prints what served it, its launch and the check.
void call_once(const mqajit::testing::FakeRocm& rocm, const std::string& variant, bool clean) {
    const tools::HostPagedProblem p = tools::make_paged_problem(kSpec);
    const std::int64_t b = kSpec.batch, n = kSpec.next_n, h = kSpec.heads, d = kSpec.head_dim;
    std::vector<float> logits(static_cast<std::size_t>(p.rows() * p.logits_row_stride),
                              std::bit_cast<float>(tools::kPoisonBits));
    const TensorView q = TensorView::contiguous(p.q.data(), DType::float8_e4m3, {b, n, h, d});
    const TensorView cache =
        TensorView::contiguous(p.kv_cache.data(), DType::uint8, {p.num_cache_blocks, kSpec.block_kv, 1, d + 4});
    const TensorView weights = TensorView::contiguous(p.weights.data(), DType::float32, {b * n, h});
    const TensorView lens = TensorView::contiguous(p.context_lens.data(), DType::int32, {b, n});
    const TensorView table = TensorView::contiguous(p.block_table.data(), DType::int32, {b, p.max_blocks});
    const TensorView out = TensorView::strided(logits.data(), DType::float32, {b * n, p.max_context_len},
                                               {p.logits_row_stride, 1});
    DispatchReport report;
    try {
        if (variant == "reference") {
            paged_mqa_logits_reference(q, cache, weights, lens, table, out, clean);
            report.kernel = "reference";
        } else {
            paged_mqa_logits(q, cache, weights, lens, table, out,
                             PagedMqaLogitsOptions{.clean_logits = clean, .variant = variant, .report = &report});
        }
    } catch (const Error& e) {
        std::printf("ERROR %s\n", e.what());
        return;
    }
    const FakeHipLaunch& launch = rocm.last_launch();
    const tools::Comparison c =
        tools::compare_paged_logits(p, logits, tools::cpu_paged_reference(p, clean), clean);
    std::printf("RESULT %s launched %s grid %ux%u block %u lds %u\nREASON %s\nCOMPARE %s %s\n", report.kernel.c_str(),
                launch.kernel, launch.grid[0], launch.grid[1], launch.block[0], launch.shared_bytes,
                report.reason.c_str(), c.passed(1e-6) ? "ok" : "failed", c.summary().c_str());
}

// args: variant ("" as "table", "baseline", "reference" or a name), clean (0/1).
MQAJIT_TEST_CHILD("hip-paged-dispatch", [](const std::vector<std::string>& args) {
    const mqajit::testing::FakeRocm rocm("libamdhip64.so", "libhiprtc.so");
    rocm.devices({mqajit::testing::kFakeMi355x});
    rocm.hiprtc(6, 2, false, nullptr);
    call_once(rocm, args.at(0) == "table" ? "" : args.at(0), args.at(1) == "1");
    std::printf("HIPRTC %d compile(s)\n", rocm.hiprtc_compiles());
    std::fflush(stdout);
    return 0;
});

std::string run_child(const std::string& variant, bool clean) {
    const mqajit::testing::FakeRocmInstall rocm(/*with_hiprtc=*/true);
    std::string output;
    const int exit_code = rocm.run("MQAJIT_FAKE_HIP_COMPUTE=1 " + std::filesystem::read_symlink("/proc/self/exe").string() +
                                       " --mqajit-child=hip-paged-dispatch " + variant + (clean ? " 1" : " 0"),
                                   &output);
    INFO(output);
    CHECK(exit_code == 0);
    return output;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// grid (batch, splits), 128 threads, the variant's LDS: what the gfx9 decode family plans here.
std::string planned_launch(const char* variant, int max_context_len) {
    const Variant v = Variant::parse(variant);
    return fmt::format("grid {}x{} block {} lds {}", kSpec.batch, pmfma_splits(kSpec.batch, max_context_len, 64, 256),
                       v.warps * 64, pmfma_lds_bytes(v, kSpec.heads, kSpec.head_dim));
}

void require_fake_device() {
    if (live_driver_status().available) MQAJIT_SKIP("a real GPU is present, so dispatch would not reach the fake AMD device");
#if !defined(MQAJIT_EXPECT_AMD_BASELINE)
    MQAJIT_SKIP("this build has no AMD pre-built code objects (clang-22 and lld-22 were missing at build time)");
#endif
}

}  // namespace

TEST_CASE("hip paged dispatch (fake MI355X): the pre-built pmfma baseline serves without a tuned row") {
    require_fake_device();
    const int max_context_len = tools::make_paged_problem(kSpec).max_context_len;
    for (const bool clean : {false, true}) {
        const std::string output = run_child("table", clean);
        INFO(output);
        CHECK(has(output, "RESULT baseline launched paged_mqa_logits_baseline_h64_d128_n2 " +
                              planned_launch("pmfma32x32x64_bkv64_r2_w2_lds2", max_context_len) + "\n"));
        CHECK(has(output, "REASON no tuned paged_mqa_logits row"));
        CHECK(has(output, "COMPARE ok"));
        CHECK(has(output, "HIPRTC 0 compile(s)"));
    }
    const std::string baseline = run_child("baseline", true);
    CHECK(has(baseline, "RESULT baseline launched paged_mqa_logits_baseline_h64_d128_n2 "));
}

TEST_CASE("hip paged dispatch (fake MI355X): a requested pmfma variant is built by hiprtc and launched as planned") {
    require_fake_device();
    const int max_context_len = tools::make_paged_problem(kSpec).max_context_len;
    const char* variant = "pmfma16x16x128_bkv64_r2_w4_lds2";
    const std::string output = run_child(variant, true);
    INFO(output);
    const std::string kernel = generated_kernel_name(Variant::parse(variant), kSpec.heads, kSpec.head_dim);
    CHECK(has(output, fmt::format("RESULT {} launched {} {}\n", variant, kernel, planned_launch(variant, max_context_len))));
    CHECK(has(output, "COMPARE ok"));
    CHECK(has(output, "HIPRTC 1 compile(s)"));
    // One that does not fit the call is refused before anything is built or launched.
    const std::string wrong = run_child("pmfma32x32x64_bkv64_r1_w2_lds2", true);
    CHECK(has(wrong, "ERROR variant pmfma32x32x64_bkv64_r1_w2_lds2 cannot run this paged_mqa_logits call"));
    CHECK(has(wrong, "r=1 must equal the call's next_n, 2"));
    CHECK(has(wrong, "HIPRTC 0 compile(s)"));
}

TEST_CASE("hip paged dispatch (fake MI355X): the paged reference kernel comes from the AMD code object") {
    require_fake_device();
    const std::string output = run_child("reference", true);
    INFO(output);
    CHECK(has(output, "launched paged_mqa_logits_reference grid "));
    CHECK(has(output, " block 128 lds 0\n"));
    CHECK(has(output, "COMPARE ok"));
}
