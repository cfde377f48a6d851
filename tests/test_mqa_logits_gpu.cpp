// mqa_logits on a real GPU: the reference kernel against an fp64 CPU reference, then the baseline
// and every registered variant against the reference kernel on fresh random data.

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "tests/gpu_support.hpp"
#include "tools/common/device_problem.hpp"
#include "codegen/variant_registry.hpp"

using namespace mqajit;
using namespace mqajit::tools;

namespace {

struct Case {
    int seq_len, seq_len_kv;
    MaskKind mask;
    std::int64_t row_padding = 0;  // extra floats per logits row
};

// Edge shapes: S=1, N=1, N off every tile size, padded rows, several units per block, packed requests.
const Case kCases[] = {
    {1, 1, MaskKind::full},          {1, 4097, MaskKind::causal},       {7, 1, MaskKind::random_windows},
    {37, 4097, MaskKind::random_windows}, {130, 2048, MaskKind::packed, 37}, {256, 1000, MaskKind::causal, 3},
    {300, 5000, MaskKind::packed},   {512, 8192, MaskKind::causal},
};

std::uint64_t fresh_seed() {
    static std::uint64_t seed = 0x5eed;
    return ++seed;
}

// NOTES: calc_diff over a handful of entries is dominated by the odd near-cancelling head sum, so
// tiny shapes are checked on several fresh problems and judged on the combined calc_diff.
int problems_for(const Case& c) {
    const std::int64_t entries = static_cast<std::int64_t>(c.seq_len) * c.seq_len_kv;
    return static_cast<int>(std::clamp<std::int64_t>(4096 / entries, 1, 32));
}

void check_kernel(Device& gpu, const std::string& variant, int heads, int head_dim, bool clean) {
    for (const Case& c : kCases) {
        CheckResult combined;
        bool served_by_requested = true;
        std::int64_t unmasked = 0;
        for (int k = 0; k < problems_for(c); ++k) {
            const HostProblem host = make_problem(c.seq_len, c.seq_len_kv, heads, head_dim, c.mask, fresh_seed(),
                                                  c.seq_len_kv + c.row_padding);
            DeviceProblem problem(gpu, host);
            const CheckResult result =
                check_against_reference(problem, MqaLogitsOptions{.clean_logits = clean, .variant = variant});
            served_by_requested = served_by_requested && result.kernel == variant;
            combined.kernel = result.kernel;
            combined.deterministic = combined.deterministic && result.deterministic;
            combined.comparison.merge(result.comparison);
            unmasked += host.unmasked_pairs();
        }
        INFO(fmt::format("{} H={} D={} S={} N={} mask={} pad={} clean={} ({} problems): {}", variant, heads, head_dim,
                         c.seq_len, c.seq_len_kv, to_string(c.mask), c.row_padding, clean, problems_for(c),
                         combined.summary()));
        CHECK(served_by_requested);
        CHECK(combined.passed(kMaxCalcDiff));
        if (unmasked > 0) CHECK(combined.comparison.checked > 0);
    }
}

}  // namespace

TEST_CASE("gpu: the reference kernel matches an fp64 CPU reference") {
    MQAJIT_REQUIRE_GPU();
    for (int heads : {32, 64}) {
        for (const Case& c : {Case{5, 300, MaskKind::random_windows, 5}, Case{33, 129, MaskKind::causal}}) {
            const HostProblem host = make_problem(c.seq_len, c.seq_len_kv, heads, 128, c.mask, fresh_seed(),
                                                  c.seq_len_kv + c.row_padding);
            DeviceProblem problem(*gpu, host);
            problem.run_reference(true);
            const auto got = problem.download_logits();
            const auto expected = cpu_reference(host, true);
            const Comparison comparison = compare_logits(host, got, expected, true);
            INFO(comparison.summary());
            CHECK(comparison.passed(1e-9));
            CHECK(comparison.checked > 0);
        }
    }
}

TEST_CASE("gpu: the baseline kernel matches the reference") {
    MQAJIT_REQUIRE_GPU();
    for (int heads : {32, 64})
        for (int head_dim : {64, 128}) check_kernel(*gpu, "baseline", heads, head_dim, true);
}

TEST_CASE("gpu: every registered variant matches the reference") {
    MQAJIT_REQUIRE_GPU();
    const Arch arch = Arch::parse(gpu->arch());
    int checked = 0;
    for (int heads : {32, 64}) {
        for (int head_dim : {64, 128}) {
            for (const Variant& v : VariantRegistry::instance().variants(arch, heads, head_dim)) {
                if (v.op == MatrixOp::mfma) continue;
                check_kernel(*gpu, v.name(), heads, head_dim, true);
                ++checked;
            }
        }
    }
    MESSAGE(fmt::format("{} variant/shape combinations checked on {}", checked, arch.name));
    CHECK(checked > 0);
}

TEST_CASE("gpu: clean_logits=false computes every in-window entry") {
    MQAJIT_REQUIRE_GPU();
    check_kernel(*gpu, "baseline", 32, 128, false);
    const Arch arch = Arch::parse(gpu->arch());
    for (const Variant& v : VariantRegistry::instance().variants(arch, 32, 128)) check_kernel(*gpu, v.name(), 32, 128, false);
}

TEST_CASE("gpu: dispatch without a request serves a correct kernel and reports it") {
    MQAJIT_REQUIRE_GPU();
    DeviceProblem problem(*gpu, make_problem(1024, 4096, 32, 128, MaskKind::causal, fresh_seed()));
    const CheckResult result = check_against_reference(problem, MqaLogitsOptions{});
    INFO(result.summary());
    CHECK(!result.kernel.empty());
    CHECK(result.passed(kMaxCalcDiff));
}

TEST_CASE("gpu: a forced KV split count gives the same bits as the automatic one") {
    MQAJIT_REQUIRE_GPU();
    const Arch arch = Arch::parse(gpu->arch());
    const auto variants = VariantRegistry::instance().variants(arch, 32, 128);
    const auto wgmma = std::find_if(variants.begin(), variants.end(), [](const Variant& v) { return v.op == MatrixOp::wgmma; });
    if (wgmma == variants.end()) MQAJIT_SKIP(arch.name + " runs no wgmma variant");
    for (const Case& c : {Case{256, 5000, MaskKind::causal}, Case{300, 5000, MaskKind::packed, 5}}) {
        DeviceProblem problem(*gpu, make_problem(c.seq_len, c.seq_len_kv, 32, 128, c.mask, fresh_seed(),
                                                 c.seq_len_kv + c.row_padding));
        const std::vector<float> expected = reference_logits(problem, true);
        problem.poison_logits();
        problem.run(MqaLogitsOptions{.variant = wgmma->name()});
        const std::vector<float> automatic = problem.download_logits();
        for (int splits : {1, 2, 3, 7, 100000}) {
            const CheckResult result =
                check_against(problem, expected, MqaLogitsOptions{.variant = wgmma->name(), .kv_splits = splits});
            INFO(fmt::format("{} S={} N={} mask={} kv_splits={}: {}", wgmma->name(), c.seq_len, c.seq_len_kv,
                             to_string(c.mask), splits, result.summary()));
            CHECK(result.passed(kMaxCalcDiff));
            const std::vector<float> forced = problem.download_logits();
            CHECK(std::memcmp(forced.data(), automatic.data(), forced.size() * sizeof(float)) == 0);
        }
    }
}
