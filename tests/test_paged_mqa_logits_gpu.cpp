// paged_mqa_logits on a real GPU: the reference kernel against the fp64 CPU reference, then the
// pre-built baseline, every registered variant and a 128-token-block variant against the reference
// kernel on fresh random problems (shuffled block tables with shared blocks, NaN-poisoned logits,
// both length layouts, both modes), each rerun for bitwise determinism.

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstring>
#include <string>
#include <vector>

#include "codegen/variant_registry.hpp"
#include "tests/gpu_support.hpp"
#include "tools/common/device_paged_problem.hpp"
#include "tools/common/device_problem.hpp"  // kMaxCalcDiff

using namespace mqajit;
using namespace mqajit::tools;

namespace {

std::uint64_t fresh_seed() {
    static std::uint64_t seed = 0xdec0de;
    return ++seed;
}

struct PagedCase {
    int batch, average_context;
    bool lens_2d;
};

// One request with a short context, odd batches with contexts off every block, a batch wider than the SMs.
const PagedCase kCases[] = {{1, 37, true}, {5, 1000, false}, {7, 4097, true}, {160, 700, false}};

void require_paged(Device& gpu) {
    const Arch arch = Arch::parse(gpu.arch());
    if (VariantRegistry::for_op(KernelOp::paged_mqa_logits).variants(arch).empty())
        MQAJIT_SKIP(arch.name + " has no paged_mqa_logits kernels (sm_90a only)");
}

// Runs `variant` on a fresh problem and checks it against the reference kernel.
void check_paged(Device& gpu, const std::string& variant, int heads, int next_n, int block_kv, bool clean) {
    for (const PagedCase& c : kCases) {
        const HostPagedProblem host = make_paged_problem(PagedProblemSpec{
            .batch = c.batch, .next_n = next_n, .heads = heads, .head_dim = 128, .block_kv = block_kv,
            .average_context = c.average_context, .context_lens_2d = c.lens_2d, .seed = fresh_seed()});
        DevicePagedProblem problem(gpu, host);
        problem.run_reference(clean);
        const std::vector<float> expected = problem.download_logits();
        problem.poison_logits();
        DispatchReport report;
        problem.run(PagedMqaLogitsOptions{.clean_logits = clean, .variant = variant, .report = &report});
        const std::vector<float> got = problem.download_logits();
        problem.poison_logits();
        problem.run(PagedMqaLogitsOptions{.clean_logits = clean, .variant = variant});
        const std::vector<float> again = problem.download_logits();
        const Comparison comparison = compare_paged_logits(host, got, expected, clean);
        INFO(fmt::format("{} H={} next_n={} block_kv={} B={} context~{} lens_2d={} clean={}: {} ({})", variant, heads,
                         next_n, block_kv, c.batch, c.average_context, c.lens_2d, clean, comparison.summary(),
                         report.kernel));
        CHECK(report.kernel == variant);
        CHECK(comparison.passed(kMaxCalcDiff));
        CHECK(comparison.checked > 0);
        CHECK(std::memcmp(got.data(), again.data(), got.size() * sizeof(float)) == 0);
    }
}

}  // namespace

TEST_CASE("gpu: the paged reference kernel matches an fp64 CPU reference") {
    MQAJIT_REQUIRE_GPU();
    require_paged(*gpu);
    for (int heads : {32, 64}) {
        for (bool lens_2d : {true, false}) {
            const HostPagedProblem host = make_paged_problem(PagedProblemSpec{
                .batch = 3, .next_n = 2, .heads = heads, .average_context = 300, .context_lens_2d = lens_2d,
                .seed = fresh_seed()});
            DevicePagedProblem problem(*gpu, host);
            problem.run_reference(true);
            const Comparison comparison =
                compare_paged_logits(host, problem.download_logits(), cpu_paged_reference(host, true), true);
            INFO(comparison.summary());
            CHECK(comparison.passed(1e-9));
            CHECK(comparison.checked > 0);
        }
    }
}

TEST_CASE("gpu: the paged baseline matches the reference at every next_n") {
    MQAJIT_REQUIRE_GPU();
    require_paged(*gpu);
    for (int heads : {32, 64})
        for (int next_n = 1; next_n <= 4; ++next_n)
            for (bool clean : {true, false}) check_paged(*gpu, "baseline", heads, next_n, 64, clean);
}

TEST_CASE("gpu: every registered paged variant matches the reference") {
    MQAJIT_REQUIRE_GPU();
    require_paged(*gpu);
    const Arch arch = Arch::parse(gpu->arch());
    int checked = 0;
    for (int heads : {32, 64}) {
        for (const Variant& v : VariantRegistry::for_op(KernelOp::paged_mqa_logits).variants(arch, heads, 128)) {
            check_paged(*gpu, v.name(), heads, v.rows, v.bkv, true);
            ++checked;
        }
    }
    CHECK(checked == 42);
}

TEST_CASE("gpu: a 128-token-block cache runs a JIT variant, and the baseline refuses it by name") {
    MQAJIT_REQUIRE_GPU();
    require_paged(*gpu);
    check_paged(*gpu, "pwgmma64x64x32_bkv128_r2_w2_lds4", 32, 2, 128, false);
    const HostPagedProblem host = make_paged_problem(
        PagedProblemSpec{.batch = 2, .next_n = 1, .heads = 64, .block_kv = 128, .average_context = 500, .seed = 9});
    DevicePagedProblem problem(*gpu, host);
    try {
        problem.run(PagedMqaLogitsOptions{.variant = "baseline"});
        FAIL("the baseline ran a 128-token-block cache");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find("64-token cache blocks") != std::string::npos);
    }
}

TEST_CASE("gpu: paged dispatch without a request serves a correct kernel and says why") {
    MQAJIT_REQUIRE_GPU();
    require_paged(*gpu);
    const HostPagedProblem host = make_paged_problem(
        PagedProblemSpec{.batch = 64, .next_n = 2, .heads = 64, .average_context = 3000, .seed = fresh_seed()});
    DevicePagedProblem problem(*gpu, host);
    problem.run_reference(false);
    const std::vector<float> expected = problem.download_logits();
    problem.poison_logits();
    DispatchReport report;
    PagedMqaLogitsOptions options;
    options.report = &report;
    problem.run(options);
    const Comparison comparison = compare_paged_logits(host, problem.download_logits(), expected, false);
    INFO(report.kernel, ": ", report.reason, "; ", comparison.summary());
    CHECK(!report.reason.empty());
    CHECK(comparison.passed(kMaxCalcDiff));
}
