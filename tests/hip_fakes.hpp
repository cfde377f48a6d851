#pragma once
// The fake ROCm libraries of tests/fake_hip/ as the tests drive them: opened by path with dlopen
// (the same handle the HIP backend gets), configured, and read back.

#include <dlfcn.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/hip_backend.hpp"
#include "tests/fake_hip/fake_hip_control.hpp"
#include "tests/support.hpp"

namespace mqajit::testing {

class FakeRocm {
public:
    // The libraries built next to the tests, or (in a child process) the ones the loader finds by
    // these names on LD_LIBRARY_PATH.
    FakeRocm(const std::string& hip_path = MQAJIT_FAKE_AMDHIP64, const std::string& hiprtc_path = MQAJIT_FAKE_HIPRTC)
        : hip_(open(hip_path)), hiprtc_(hiprtc_path.empty() ? nullptr : open(hiprtc_path)) {}
    ~FakeRocm() {
        dlclose(hip_);
        if (hiprtc_ != nullptr) dlclose(hiprtc_);
    }
    FakeRocm(const FakeRocm&) = delete;
    FakeRocm& operator=(const FakeRocm&) = delete;

    void devices(std::initializer_list<FakeHipDevice> list) const {
        const std::vector<FakeHipDevice> all(list);
        function<FakeHipConfigure>(hip_, "fake_hip_configure")(all.data(), static_cast<int>(all.size()));
    }
    void hiprtc(int major, int minor, bool fail_compiles = false, const char* force_target = nullptr) const {
        function<FakeHiprtcConfigure>(hiprtc_, "fake_hiprtc_configure")(major, minor, fail_compiles ? 1 : 0,
                                                                       force_target);
    }
    const FakeHipLaunch& last_launch() const { return *function<FakeHipLastLaunch>(hip_, "fake_hip_last_launch")(); }
    int live_modules() const { return function<FakeHipLiveModules>(hip_, "fake_hip_live_modules")(); }
    std::string hiprtc_options() const { return function<FakeHiprtcLastOptions>(hiprtc_, "fake_hiprtc_last_options")(); }
    int hiprtc_compiles() const { return function<FakeHiprtcCompiles>(hiprtc_, "fake_hiprtc_compiles")(); }

private:
    static void* open(const std::string& path) {
        void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle == nullptr) throw std::runtime_error("cannot open the fake library " + path + ": " + dlerror());
        return handle;
    }
    template <typename Function>
    static Function function(void* handle, const char* name) {
        if (handle == nullptr) throw std::runtime_error(std::string("the fake hiprtc is not open for ") + name);
        auto* found = reinterpret_cast<Function>(dlsym(handle, name));
        if (found == nullptr) throw std::runtime_error(std::string("the fake library lacks ") + name);
        return found;
    }

    void* hip_;
    void* hiprtc_;
};

// An MI300X and an MI355X as ROCm 6 reports them.
inline constexpr FakeHipDevice kFakeMi300x{"AMD Instinct MI300X", "gfx942:sramecc+:xnack-", 304, 65536, 304};
inline constexpr FakeHipDevice kFakeMi355x{"AMD Instinct MI355X", "gfx950:sramecc+:xnack-", 256, 163840, 256};

// A HIP backend on the fake libraries (clang as usual).
inline HipBackend fake_hip_backend() {
    return HipBackend({.runtime = {MQAJIT_FAKE_AMDHIP64},
                       .hiprtc = {MQAJIT_FAKE_HIPRTC},
                       .clang = ClangHipCompiler::default_candidates()});
}

// The smallest AMDGPU ELF code object the fake runtime loads: a header with `flags` as e_flags
// (EF_AMDGPU_MACH plus the v4 sramecc/xnack fields), then `payload` (where kernel names are found).
inline std::vector<char> tiny_code_object(std::uint32_t flags, std::string_view payload) {
    std::string elf(64, '\0');
    std::memcpy(elf.data(), "\x7f" "ELF", 4);
    elf[4] = 2;   // 64-bit
    elf[5] = 1;   // little-endian
    elf[7] = 64;  // ELFOSABI_AMDGPU_HSA
    elf[8] = 3;   // code object v5
    const std::uint16_t machine = 0xE0;
    std::memcpy(elf.data() + 18, &machine, 2);
    const std::uint64_t end = 64 + payload.size();
    std::memcpy(elf.data() + 40, &end, 8);
    std::memcpy(elf.data() + 48, &flags, 4);
    elf.append(payload);
    return {elf.begin(), elf.end()};
}

// A folder where the fake libraries go by ROCm's names (libamdhip64.so, libhiprtc.so), and a kernel
// cache, for processes (a test child, the CLI) that open them as they would open ROCm.
class FakeRocmInstall {
public:
    explicit FakeRocmInstall(bool with_hiprtc) : dir_("fake-rocm") {
        std::filesystem::create_directories(dir_.path() / "lib");
        std::filesystem::create_symlink(MQAJIT_FAKE_AMDHIP64, dir_.path() / "lib" / "libamdhip64.so");
        if (with_hiprtc) std::filesystem::create_symlink(MQAJIT_FAKE_HIPRTC, dir_.path() / "lib" / "libhiprtc.so");
    }
    const std::filesystem::path& dir() const { return dir_.path(); }
    std::filesystem::path cache() const { return dir_.path() / "cache"; }

    // Runs `command` (with its own VAR=value prefixes) where the loader finds the fakes, with this
    // folder's kernel cache and the build's system tuning table; stdout and stderr together.
    int run(const std::string& command, std::string* output) const {
        return run_command("LD_LIBRARY_PATH=" + (dir_.path() / "lib").string() + " MQAJIT_CACHE_DIR=" +
                               cache().string() + " MQAJIT_SYSTEM_DB=" MQAJIT_BINARY_DIR
                               "/share/mqajit/system_tuning.db " + command + " 2>&1",
                           output);
    }

private:
    TempDir dir_;
};

}  // namespace mqajit::testing
