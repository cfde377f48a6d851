#pragma once
// Stand-ins for a Compiler and a Device, so cache logic is tested without NVRTC or a GPU.

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/check.hpp"
#include "runtime/compiler.hpp"
#include "runtime/device.hpp"
#include "runtime/disk_cache_meta.hpp"

namespace mqajit::testing {

// "Compiles" by prefixing the source, and reports fixed resource usage; counts its compiles.
class FakeCompiler final : public Compiler {
public:
    explicit FakeCompiler(std::string version = "1.0") : version_(std::move(version)) {}
    std::string name() const override { return "fake"; }
    std::string version() const override { return version_; }
    std::vector<std::string> base_options(const std::string& arch) const override { return {"--target=" + arch}; }
    CompileResult compile(const CompileRequest& request) const override {
        ++compiles;
        MQAJIT_CHECK_KIND(compile_failed, request.source.find("syntax error") == std::string::npos,
                          "fake compile of {} failed: syntax error", request.source_name);
        CompileResult result;
        const std::string text = "BIN[" + request.arch + "]" + request.source;
        result.binary.assign(text.begin(), text.end());
        result.log = "ptxas info    : Used 42 registers, used 1 barriers, 1024 bytes smem\n"
                     "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n";
        result.usage = {.registers = 42, .shared_bytes = 1024, .spill_store_bytes = 4, .spill_load_bytes = 4,
                        .stack_bytes = 8};
        return result;
    }
    mutable std::atomic<int> compiles{0};

private:
    std::string version_;
};

class FakeKernel final : public LoadedKernel {
public:
    FakeKernel(std::string name, std::vector<char> binary) : binary(std::move(binary)), name_(std::move(name)) {}
    std::string name() const override { return name_; }
    const std::vector<char> binary;

private:
    std::string name_;
};

// Loads binaries that start with "BIN[" (what FakeCompiler makes) and refuses anything else.
class FakeDevice final : public Device {
public:
    explicit FakeDevice(int ordinal = 0, std::string arch = "sm_90a") : ordinal_(ordinal), arch_(std::move(arch)) {}
    std::string arch() const override { return arch_; }
    std::string name() const override { return "Fake GPU"; }
    int ordinal() const override { return ordinal_; }
    int multiprocessor_count() const override { return 132; }
    std::size_t max_shared_bytes_per_block() const override { return 232448; }
    std::string driver_version() const override { return "0.0"; }
    std::shared_ptr<LoadedKernel> load(std::span<const char> binary, const std::string& kernel_name) override {
        ++loads;
        MQAJIT_CHECK_KIND(driver, binary.size() >= 4 && std::memcmp(binary.data(), "BIN[", 4) == 0,
                          "fake device cannot load this binary");
        return std::make_shared<FakeKernel>(kernel_name, std::vector<char>(binary.begin(), binary.end()));
    }
    void launch(const LoadedKernel&, const LaunchConfig&, void*, const void*, std::size_t) override {}
    void encode_tensor_map(const TensorMapRequest&, MqaTensorMap&) const override {}
    void make_current() override {}
    std::unique_ptr<DeviceBuffer> allocate(std::size_t) override { return nullptr; }
    void copy_to_device(void*, const void*, std::size_t, void*) override {}
    void copy_to_host(void*, const void*, std::size_t) override {}
    void copy_on_device(void*, const void*, std::size_t) override {}
    void fill_u32(void*, std::uint32_t, std::size_t, void*) override {}
    void fill_bytes(void*, std::uint8_t, std::size_t, void*) override {}
    void synchronize(void*) override {}
    std::unique_ptr<DeviceStream> create_stream() override { return nullptr; }
    std::unique_ptr<EventTimer> create_timer() override { return nullptr; }

    std::atomic<int> loads{0};

private:
    int ordinal_;
    std::string arch_;
};

inline CompileRequest fake_request(std::string source = "kernel body", std::string arch = "sm_90a") {
    CompileRequest request;
    request.source = std::move(source);
    request.source_name = "fake.cu";
    request.kernel_name = "fake_kernel";
    request.arch = std::move(arch);
    return request;
}

// Metadata for a hand-published disk cache entry (what KernelCache would record for a compile).
inline DiskCacheMeta sample_cache_meta(std::string compiler = "fake") {
    DiskCacheMeta meta;
    meta.family = "sm90_mqa_logits";
    meta.variant = "wgmma64x128x32_bkv128_r4_w2_lds3_h32_d128";
    meta.compiler = std::move(compiler);
    meta.compiler_version = "1.0";
    meta.arch = "sm_90a";
    meta.options = {"--target=sm_90a", "-DX=1"};
    meta.kernel_name = "fake_kernel";
    meta.source_hash = "abc";
    meta.usage = {.registers = 168, .shared_bytes = 32, .spill_store_bytes = 0, .spill_load_bytes = 0,
                  .stack_bytes = 0};
    meta.log = "ptxas info : Used 168 registers";
    return meta;
}

}  // namespace mqajit::testing
