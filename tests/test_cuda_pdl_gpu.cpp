// Programmatic dependent launch on a real sm_90+ GPU (skipped elsewhere). A kernel that lets its
// dependents launch at once and then writes an operand late stands in for the engine's kernel
// before mqajit's; each operator, launched with `pdl`, must still read what that kernel wrote.
// The first case shows the setup can fail: a dependent that does not wait sees the old operand.

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>
#include <tuple>
#include <vector>

#include "mqajit/mqa_logits.hpp"
#include "mqajit/mqa_topk.hpp"
#include "mqajit/paged_mqa_logits.hpp"
#include "runtime/cuda_device.hpp"
#include "tests/cuda_test_kernels.hpp"
#include "tests/gpu_support.hpp"
#include "tools/common/device_buffers.hpp"
#include "tools/common/device_paged_problem.hpp"
#include "tools/common/device_problem.hpp"
#include "tools/common/topk_problem.hpp"
#include "variants/arch.hpp"

using namespace mqajit;
using namespace mqajit::tools;
using mqajit::testing::build_test_kernel;

namespace {

// One block: lets dependents launch, spins `cycles` (about a millisecond), then copies src to dst.
constexpr const char* kLateWriter = R"(
struct LateWriteArgs { const float* src; float* dst; int count; long long cycles; };
extern "C" __global__ void late_write(const __grid_constant__ LateWriteArgs a) {
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    if (threadIdx.x == 0) {
        const long long start = clock64();
        while (clock64() - start < a.cycles) {}
    }
    __syncthreads();
    for (int i = threadIdx.x; i < a.count; i += blockDim.x) a.dst[i] = a.src[i];
}
struct CopyArgs { const float* src; float* dst; int count; };
extern "C" __global__ void copy_without_wait(const __grid_constant__ CopyArgs a) {
    for (int i = threadIdx.x; i < a.count; i += blockDim.x) a.dst[i] = a.src[i];
}
extern "C" __global__ void copy_after_wait(const __grid_constant__ CopyArgs a) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    for (int i = threadIdx.x; i < a.count; i += blockDim.x) a.dst[i] = a.src[i];
}
)";
struct LateWriteArgs {
    const float* src;
    float* dst;
    int count;
    long long cycles;
};
struct CopyArgs {
    const float* src;
    float* dst;
    int count;
};

constexpr long long kLateCycles = 2'000'000;

LaunchConfig one_block() {
    LaunchConfig config;
    config.block_x = 256;
    return config;
}

// The stand-in for the engine's kernel: `operand` (float32, 2-D, dense) holds zeros until, about a
// millisecond after its dependents may start, the kernel copies `values` into it.
class LateOperand {
public:
    LateOperand(Device& gpu, const TensorView& operand)
        : gpu_(gpu), kernel_(build_test_kernel(gpu, kLateWriter, "late_write")), operand_(static_cast<float*>(operand.data)),
          count_(static_cast<int>(operand.size(0) * operand.size(1))), values_(gpu.allocate(sizeof(float) * count_)) {
        gpu.copy_on_device(values_->data(), operand_, sizeof(float) * count_);
    }
    void enqueue(void* stream) const {
        gpu_.fill_u32(operand_, 0, count_, stream);
        const LateWriteArgs args{static_cast<const float*>(values_->data()), operand_, count_, kLateCycles};
        gpu_.launch(*kernel_, one_block(), stream, &args, sizeof(args));
    }

private:
    Device& gpu_;
    std::shared_ptr<LoadedKernel> kernel_;
    float* operand_;
    int count_;
    std::unique_ptr<DeviceBuffer> values_;
};

bool has_pdl(const Device& gpu) {
    const Arch arch = Arch::parse(gpu.arch());
    return arch.vendor == Vendor::nvidia && arch.number >= 90;
}

// The device's count of launches made with PDL, to show that an operator's `pdl` reached them.
std::uint64_t programmatic_launches(Device& gpu) {
    const auto* cuda = dynamic_cast<const CudaDevice*>(&gpu);
    REQUIRE(cuda != nullptr);
    return cuda->programmatic_launches();
}

#define MQAJIT_REQUIRE_PDL_GPU()                                                      \
    MQAJIT_REQUIRE_GPU();                                                             \
    if (!has_pdl(*gpu))                                                               \
    MQAJIT_SKIP(gpu->arch() + " has no programmatic dependent launch (sm_90 and later)")

}  // namespace

TEST_CASE("gpu pdl: a dependent starts before the late writer ends, and griddepcontrol.wait holds it") {
    MQAJIT_REQUIRE_PDL_GPU();
    constexpr int kCount = 4096;
    std::vector<float> ones(kCount, 1.0f);
    auto source = upload(*gpu, ones);
    auto operand = gpu->allocate(sizeof(float) * kCount), copied = gpu->allocate(sizeof(float) * kCount);
    const auto writer = build_test_kernel(*gpu, kLateWriter, "late_write");
    const auto without_wait = build_test_kernel(*gpu, kLateWriter, "copy_without_wait");
    const auto after_wait = build_test_kernel(*gpu, kLateWriter, "copy_after_wait");
    const auto stream = gpu->create_stream();
    auto run = [&](const LoadedKernel& reader, bool programmatic) {
        gpu->fill_u32(operand->data(), 0, kCount, stream->handle());
        const LateWriteArgs late{static_cast<const float*>(source->data()), static_cast<float*>(operand->data()),
                                 kCount, kLateCycles};
        gpu->launch(*writer, one_block(), stream->handle(), &late, sizeof(late));
        LaunchConfig config = one_block();
        config.programmatic_dependent_launch = programmatic;
        const CopyArgs copy{static_cast<const float*>(operand->data()), static_cast<float*>(copied->data()), kCount};
        gpu->launch(reader, config, stream->handle(), &copy, sizeof(copy));
        gpu->synchronize(stream->handle());
        return download_floats(*gpu, *copied);
    };
    CHECK(run(*without_wait, false) == ones);
    CHECK(run(*without_wait, true) != ones);  // it ran early: the setup below tests something
    CHECK(run(*after_wait, true) == ones);
}

TEST_CASE("gpu pdl: mqa_logits launched with pdl reads the weights a late kernel writes") {
    MQAJIT_REQUIRE_PDL_GPU();
    DeviceProblem problem(*gpu, make_problem(1024, 4096, 32, 128, MaskKind::causal, 0x9d1));
    const std::vector<float> expected = reference_logits(problem, true);
    const LateOperand late(*gpu, problem.views().weights);
    const auto stream = gpu->create_stream();
    for (const std::string variant : {"", "baseline"}) {
        problem.poison_logits(stream->handle());
        late.enqueue(stream->handle());
        DispatchReport report;
        const std::uint64_t launches = programmatic_launches(*gpu);
        problem.run(MqaLogitsOptions{
            .clean_logits = true, .stream = stream->handle(), .variant = variant, .report = &report, .pdl = true});
        gpu->synchronize(stream->handle());
        CHECK(programmatic_launches(*gpu) == launches + 1);
        const Comparison comparison = compare_logits(problem.host(), problem.download_logits(), expected, true);
        INFO(fmt::format("{}: {}", report.kernel, comparison.summary()));
        CHECK(comparison.passed(kMaxCalcDiff));
        CHECK(comparison.checked > 0);
    }
}

TEST_CASE("gpu pdl: paged_mqa_logits launched with pdl reads the weights a late kernel writes") {
    MQAJIT_REQUIRE_PDL_GPU();
    for (const auto& [heads, next_n, batch] : {std::tuple{64, 2, 32}, std::tuple{32, 1, 1}}) {
        DevicePagedProblem problem(*gpu, make_paged_problem(PagedProblemSpec{.batch = batch, .next_n = next_n,
                                                                            .heads = heads, .average_context = 2048,
                                                                            .seed = 0x9d2}));
        const std::vector<float> expected = reference_paged_logits(problem, true);
        const LateOperand late(*gpu, problem.views().weights);
        const auto stream = gpu->create_stream();
        problem.poison_logits(stream->handle());
        late.enqueue(stream->handle());
        DispatchReport report;
        const std::uint64_t launches = programmatic_launches(*gpu);
        problem.run(PagedMqaLogitsOptions{
            .clean_logits = true, .stream = stream->handle(), .report = &report, .pdl = true});
        gpu->synchronize(stream->handle());
        CHECK(programmatic_launches(*gpu) == launches + 1);
        const Comparison comparison =
            compare_paged_logits(problem.host(), problem.download_logits(), expected, true);
        INFO(fmt::format("H={} next_n={} batch={} {}: {}", heads, next_n, batch, report.kernel, comparison.summary()));
        CHECK(comparison.passed(kMaxCalcDiff));
        CHECK(comparison.checked > 0);
    }
}

TEST_CASE("gpu pdl: mqa_topk launched with pdl reads the weights a late kernel writes, on both paths") {
    MQAJIT_REQUIRE_PDL_GPU();
    DeviceTopkProblem problem(*gpu, make_problem(512, 8192, 32, 128, MaskKind::causal, fresh_topk_seed()), 2048);
    const LateOperand late(*gpu, problem.inputs().weights);
    const auto stream = gpu->create_stream();
    std::uint64_t launches_before_any = programmatic_launches(*gpu);
    for (const MqaTopkPath path : {MqaTopkPath::unfused, MqaTopkPath::fused}) {
        DispatchReport report;
        problem.run(MqaTopkOptions{.path = path, .report = &report});
        const std::string selecting = selecting_kernel_of_report(report.kernel);
        const std::vector<std::int32_t> expected =
            expected_topk(problem.host(), problem.logits_of(selecting), problem.host().logits_row_stride, 2048);
        CHECK(programmatic_launches(*gpu) == launches_before_any);  // the calls without pdl made none
        problem.poison_indices(stream->handle());
        late.enqueue(stream->handle());
        const std::uint64_t launches = programmatic_launches(*gpu);
        problem.run(MqaTopkOptions{.stream = stream->handle(), .path = path, .pdl = true});
        gpu->synchronize(stream->handle());
        CHECK(programmatic_launches(*gpu) >= launches + 2);  // every kernel of the call: at least scores and select
        launches_before_any = programmatic_launches(*gpu);
        INFO(report.kernel);
        CHECK(problem.download_indices() == expected);
    }
}
