// The CUDA device layer on a real GPU (skipped without one): properties, compile -> load -> launch
// with a by-value argument, opt-in shared memory, memory helpers, streams, event timing, a TMA
// descriptor checked by a kernel that loads through it, and the driver errors callers see.

#include <doctest/doctest.h>

#include <cstring>
#include <thread>
#include <vector>

#include "codegen/templates/mqa_logits_params.cuh"
#include "mqajit/error.hpp"
#include "runtime/cuda_backend.hpp"
#include "runtime/kernel_cache.hpp"
#include "tests/cuda_test_kernels.hpp"
#include "tests/gpu_support.hpp"

using namespace mqajit;
using mqajit::testing::build_test_kernel;

namespace {

constexpr const char* kScaleAdd = R"(
struct ScaleAddArgs { float* data; int count; float scale; float add; };
extern "C" __global__ void scale_add(const __grid_constant__ ScaleAddArgs args) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < args.count) args.data[i] = args.data[i] * args.scale + args.add;
}
)";
struct ScaleAddArgs {
    float* data;
    int count;
    float scale;
    float add;
};

// Fills all of its dynamic shared memory, then writes back a checksum per block.
constexpr const char* kSharedFill = R"(
struct SharedArgs { unsigned* out; unsigned words; };
extern "C" __global__ void shared_fill(const __grid_constant__ SharedArgs args) {
    extern __shared__ unsigned scratch[];
    for (unsigned i = threadIdx.x; i < args.words; i += blockDim.x) scratch[i] = i;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned sum = 0;
        for (unsigned i = 0; i < args.words; ++i) sum += scratch[i];
        args.out[blockIdx.x] = sum;
    }
}
)";
struct SharedArgs {
    unsigned* out;
    unsigned words;
};

constexpr const char* kSpin = R"(
extern "C" __global__ void spin(const __grid_constant__ long long cycles) {
    const long long start = clock64();
    while (clock64() - start < cycles) {}
}
)";

// One TMA tile load (no swizzle) into shared memory, copied out as is.
constexpr const char* kTmaTile = R"(
struct alignas(64) TensorMap { unsigned long long words[16]; };
struct TmaArgs { TensorMap map; unsigned char* out; int x; int y; };
extern "C" __global__ void tma_tile(const __grid_constant__ TmaArgs args) {
    __shared__ alignas(128) unsigned char tile[4 * 64];
    __shared__ alignas(8) unsigned long long barrier;
    const unsigned bar = static_cast<unsigned>(__cvta_generic_to_shared(&barrier));
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(tile));
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar));
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(256) : "memory");
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%2, %3}], [%4];"
                     :: "r"(dst), "l"(&args.map), "r"(args.x), "r"(args.y), "r"(bar) : "memory");
        asm volatile("{\n .reg .pred done;\n WAIT_%=:\n"
                     " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
                     " @!done bra WAIT_%=;\n}" :: "r"(bar) : "memory");
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 4 * 64; i += blockDim.x) args.out[i] = tile[i];
}
)";
struct TmaArgs {
    MqaTensorMap map;
    unsigned char* out;
    int x;
    int y;
};

template <typename T>
std::vector<T> download(Device& gpu, const DeviceBuffer& buffer) {
    std::vector<T> host(buffer.size() / sizeof(T));
    gpu.copy_to_host(host.data(), buffer.data(), buffer.size());
    return host;
}

}  // namespace

TEST_CASE("gpu runtime: the device reports its arch, size and driver") {
    MQAJIT_REQUIRE_GPU();
    Backend& backend = backend_for(Vendor::nvidia);
    MESSAGE(backend.driver_status().message);
    CHECK(backend.driver_status().available);
    CHECK(backend.device_count() >= 1);
    CHECK(gpu->arch().starts_with("sm_"));
    CHECK(gpu->multiprocessor_count() > 0);
    CHECK(gpu->max_shared_bytes_per_block() >= 48 * 1024);
    CHECK(gpu->driver_version().find('.') != std::string::npos);
    CHECK_FALSE(gpu->name().empty());
    CHECK(backend.driver_status().message.find(gpu->name()) != std::string::npos);
    CHECK(backend.open_device(gpu->ordinal()).get() == gpu);
    CHECK(backend.current_device().get() == gpu);
    CHECK_THROWS_AS(backend.open_device(backend.device_count()), Error);
}

TEST_CASE("gpu runtime: a thread with no current context gets device 0 made current") {
    MQAJIT_REQUIRE_GPU();
    Backend& backend = backend_for(Vendor::nvidia);
    Device* from_thread = nullptr;
    Device* again = nullptr;
    std::thread([&] {
        from_thread = backend.current_device().get();
        again = backend.current_device().get();
    }).join();
    CHECK(from_thread == backend.open_device(0).get());
    CHECK(again == from_thread);
}

TEST_CASE("gpu runtime: a fresh backend finds the device of the context already current") {
    MQAJIT_REQUIRE_GPU();
    gpu->make_current();
    CudaBackend fresh;  // has opened no device yet, so it must ask the driver whose context this is
    auto device = fresh.current_device();
    CHECK(device->ordinal() == gpu->ordinal());
    CHECK(device.get() != gpu);
    CHECK(device->arch() == gpu->arch());
    CHECK(fresh.current_device().get() == device.get());
}

TEST_CASE("gpu runtime: a compiled kernel runs with its by-value argument") {
    MQAJIT_REQUIRE_GPU();
    auto kernel = build_test_kernel(*gpu, kScaleAdd, "scale_add");
    constexpr int kCount = 1000;
    std::vector<float> host(kCount);
    for (int i = 0; i < kCount; ++i) host[i] = static_cast<float>(i);
    auto buffer = gpu->allocate(kCount * sizeof(float));
    CHECK(buffer->size() == kCount * sizeof(float));
    gpu->copy_to_device(buffer->data(), host.data(), buffer->size());

    const ScaleAddArgs args{static_cast<float*>(buffer->data()), kCount, 2.0f, 0.5f};
    LaunchConfig config;
    config.grid_x = (kCount + 127) / 128;
    config.block_x = 128;
    gpu->launch(*kernel, config, nullptr, &args, sizeof(args));
    const auto result = download<float>(*gpu, *buffer);
    for (int i = 0; i < kCount; ++i) REQUIRE(result[i] == static_cast<float>(i) * 2.0f + 0.5f);
}

TEST_CASE("gpu runtime: kernels may use the opt-in shared memory, and asking beyond it is refused") {
    MQAJIT_REQUIRE_GPU();
    auto kernel = build_test_kernel(*gpu, kSharedFill, "shared_fill");
    const std::size_t shared_bytes = gpu->max_shared_bytes_per_block();  // no static shared memory here
    REQUIRE(shared_bytes > 48 * 1024);
    const unsigned words = static_cast<unsigned>(shared_bytes / 4);
    auto out = gpu->allocate(4 * sizeof(unsigned));
    const SharedArgs args{static_cast<unsigned*>(out->data()), words};
    LaunchConfig config;
    config.grid_x = 4;
    config.block_x = 256;
    config.dynamic_shared_bytes = shared_bytes;
    gpu->launch(*kernel, config, nullptr, &args, sizeof(args));
    unsigned expected = 0;
    for (unsigned i = 0; i < words; ++i) expected += i;
    for (unsigned sum : download<unsigned>(*gpu, *out)) CHECK(sum == expected);

    config.dynamic_shared_bytes = shared_bytes + 16;
    try {
        gpu->launch(*kernel, config, nullptr, &args, sizeof(args));
        FAIL("a launch beyond the shared-memory limit was accepted");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::invalid_argument);
    }
}

TEST_CASE("gpu runtime: fills, device copies and streams") {
    MQAJIT_REQUIRE_GPU();
    constexpr std::size_t kWords = 4096;
    auto a = gpu->allocate(kWords * 4);
    auto b = gpu->allocate(kWords * 4);
    gpu->fill_u32(a->data(), 0x3f800000u, kWords);  // 1.0f
    gpu->copy_on_device(b->data(), a->data(), kWords * 4);
    for (float value : download<float>(*gpu, *b)) REQUIRE(value == 1.0f);

    auto stream = gpu->create_stream();
    REQUIRE(stream->handle() != nullptr);
    gpu->fill_bytes(a->data(), 0xab, kWords * 4, stream->handle());
    gpu->synchronize(stream->handle());
    for (std::uint32_t word : download<std::uint32_t>(*gpu, *a)) REQUIRE(word == 0xababababu);

    std::vector<std::uint32_t> pattern(kWords);
    for (std::size_t i = 0; i < kWords; ++i) pattern[i] = static_cast<std::uint32_t>(i * 2654435761u);
    gpu->copy_to_device(b->data(), pattern.data(), kWords * 4, stream->handle());
    gpu->fill_u32(static_cast<std::uint32_t*>(b->data()) + 1, 7u, 1, stream->handle());
    gpu->synchronize();
    gpu->synchronize(stream->handle());
    pattern[1] = 7;
    CHECK(download<std::uint32_t>(*gpu, *b) == pattern);
}

TEST_CASE("gpu runtime: the event timer measures device time") {
    MQAJIT_REQUIRE_GPU();
    auto kernel = build_test_kernel(*gpu, kSpin, "spin");
    auto timer = gpu->create_timer();
    CHECK_THROWS_AS(timer->elapsed_ms(), Error);
    auto stream = gpu->create_stream();
    const long long cycles = 20'000'000;  // about 10 ms at 2 GHz
    LaunchConfig config;
    timer->record_start(stream->handle());
    gpu->launch(*kernel, config, stream->handle(), &cycles, sizeof(cycles));
    timer->record_stop(stream->handle());
    const double elapsed_ms = timer->elapsed_ms();
    MESSAGE("20M cycles took " << elapsed_ms << " ms");
    CHECK(elapsed_ms > 1.0);
    CHECK(elapsed_ms < 1000.0);
}

TEST_CASE("gpu runtime: a TMA descriptor loads the right tile and fills outside the tensor with zeros") {
    MQAJIT_REQUIRE_GPU();
    if (gpu->arch() < std::string("sm_90")) MQAJIT_SKIP("TMA needs sm_90 or newer, this is " + gpu->arch());
    constexpr int kCols = 128, kRows = 16;
    std::vector<unsigned char> host(kCols * kRows);
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<unsigned char>(i * 7 + 3);
    auto tensor = gpu->allocate(host.size());
    gpu->copy_to_device(tensor->data(), host.data(), host.size());
    auto out = gpu->allocate(4 * 64);

    TensorMapRequest request;
    request.base = tensor->data();
    request.rank = 2;
    request.dims[0] = kCols;
    request.dims[1] = kRows;
    request.strides_bytes[0] = kCols;
    request.box[0] = 64;
    request.box[1] = 4;
    request.element_bytes = 1;
    request.swizzle_bytes = 0;
    TmaArgs args{};
    gpu->encode_tensor_map(request, args.map);
    bool any_set = false;
    for (auto word : args.map.words) any_set = any_set || word != 0;
    CHECK(any_set);

    auto kernel = build_test_kernel(*gpu, kTmaTile, "tma_tile");
    LaunchConfig config;
    config.block_x = 128;
    args.out = static_cast<unsigned char*>(out->data());
    for (auto [x, y] : {std::pair{64, 8}, std::pair{96, 14}}) {
        CAPTURE(x);
        CAPTURE(y);
        args.x = x;
        args.y = y;
        gpu->launch(*kernel, config, nullptr, &args, sizeof(args));
        const auto tile = download<unsigned char>(*gpu, *out);
        for (int r = 0; r < 4; ++r) {
            for (int c = 0; c < 64; ++c) {
                const int row = y + r, col = x + c;
                const unsigned char expected = (row < kRows && col < kCols) ? host[row * kCols + col] : 0;
                REQUIRE(tile[r * 64 + c] == expected);
            }
        }
    }

    TensorMapRequest fp32 = request;
    fp32.element_bytes = 4;
    fp32.dims[0] = 32;
    fp32.box[0] = 32;
    fp32.box[1] = 8;
    fp32.swizzle_bytes = 128;
    MqaTensorMap fp32_map{};
    CHECK_NOTHROW(gpu->encode_tensor_map(fp32, fp32_map));
}

TEST_CASE("gpu runtime: driver errors name the failing call") {
    MQAJIT_REQUIRE_GPU();
    CompileRequest request;
    request.source = kScaleAdd;
    request.source_name = "scale_add.cu";
    request.kernel_name = "scale_add";
    request.arch = gpu->arch() == "sm_80" ? "sm_90a" : "sm_80";  // another major: its SASS cannot run here
    const CompileResult foreign = backend_for(Vendor::nvidia).compiler().compile(request);
    try {
        gpu->load(foreign.binary, "scale_add");
        FAIL("a binary for " << request.arch << " loaded on " << gpu->arch());
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::driver);
        CHECK(std::string(e.what()).find("cuModuleLoadData") != std::string::npos);
    }

    request.arch = gpu->arch();
    const CompileResult native = backend_for(Vendor::nvidia).compiler().compile(request);
    try {
        gpu->load(native.binary, "no_such_kernel");
        FAIL("a kernel name missing from the binary was found");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::not_found);
        CHECK(std::string(e.what()).find("no_such_kernel") != std::string::npos);
    }
}

TEST_CASE("gpu runtime: KernelCache loads a kernel once per device and it launches") {
    MQAJIT_REQUIRE_GPU();
    KernelCache cache(std::nullopt, 4);
    const Compiler& compiler = backend_for(Vendor::nvidia).compiler();
    const KernelKey key{.family = "test", .variant = "scale_add", .arch = gpu->arch(),
                        .options_fingerprint = compiler.name() + "-" + compiler.version()};
    int generated = 0;
    auto make_request = [&] {
        ++generated;
        CompileRequest request;
        request.source = kScaleAdd;
        request.source_name = "scale_add.cu";
        request.kernel_name = "scale_add";
        request.arch = gpu->arch();
        return request;
    };
    auto first = cache.get(*gpu, compiler, key, make_request);
    auto second = cache.get(*gpu, compiler, key, make_request);
    CHECK(first.get() == second.get());
    CHECK(generated == 1);

    float value = 3.0f;
    auto buffer = gpu->allocate(sizeof(float));
    gpu->copy_to_device(buffer->data(), &value, sizeof(value));
    const ScaleAddArgs args{static_cast<float*>(buffer->data()), 1, 10.0f, 1.0f};
    LaunchConfig config;
    config.block_x = 32;
    gpu->launch(*first, config, nullptr, &args, sizeof(args));
    gpu->copy_to_host(&value, buffer->data(), sizeof(value));
    CHECK(value == 31.0f);
}
