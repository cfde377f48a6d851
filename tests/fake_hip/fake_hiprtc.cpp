// A stand-in for ROCm's libhiprtc, for tests on machines without ROCm: it checks that every header
// the source includes was handed over, fails on "#error" (or on every compile when told to), and
// "compiles" to an AMDGPU ELF header for the --offload-arch target followed by the source text.

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "fake_hip_control.hpp"

namespace {

constexpr int kSuccess = 0, kInvalidInput = 3, kCompilation = 6;

struct Program {
    std::string source{};
    std::vector<std::string> header_names{};
    std::string log{};
    std::string code{};
};

struct State {
    int major = 6, minor = 2;
    bool fail_compiles = false;
    std::string force_target{};
    std::string last_options{};
    int compiles = 0;
};
State& state() {
    static State instance;
    return instance;
}

// e_flags for a target ID: EF_AMDGPU_MACH, then the v4 sramecc/xnack fields (absent flag: "any").
std::uint32_t target_flags(std::string_view target) {
    const std::string_view processor = target.substr(0, target.find(':'));
    std::uint32_t flags = processor == "gfx950" ? 0x4f : processor == "gfx942" ? 0x4c : 0x3f;
    auto setting = [&](std::string_view feature, std::uint32_t any, std::uint32_t off, std::uint32_t on) {
        if (target.find(std::string(feature) + "-") != std::string_view::npos) return off;
        if (target.find(std::string(feature) + "+") != std::string_view::npos) return on;
        return any;
    };
    return flags | setting("sramecc", 0x400, 0x800, 0xc00) | setting("xnack", 0x100, 0x200, 0x300);
}

std::string elf_for(std::string_view target, const std::string& payload) {
    std::string elf(64, '\0');
    std::memcpy(elf.data(), "\x7f" "ELF", 4);
    elf[4] = 2;      // ELFCLASS64
    elf[5] = 1;      // little-endian
    elf[6] = 1;      // EV_CURRENT
    elf[7] = 64;     // ELFOSABI_AMDGPU_HSA
    elf[8] = 3;      // code object v5
    const std::uint16_t machine = 0xE0;
    std::memcpy(elf.data() + 18, &machine, 2);
    const std::uint64_t section_offset = 64 + payload.size();  // no sections: the file ends there
    std::memcpy(elf.data() + 40, &section_offset, 8);
    const std::uint32_t flags = target_flags(target);
    std::memcpy(elf.data() + 48, &flags, 4);
    return elf + payload;
}

}  // namespace

extern "C" {

void fake_hiprtc_configure(int major, int minor, int fail_compiles, const char* force_target) {
    state() = State{.major = major, .minor = minor, .fail_compiles = fail_compiles != 0,
                    .force_target = force_target != nullptr ? force_target : ""};
}
const char* fake_hiprtc_last_options() { return state().last_options.c_str(); }
int fake_hiprtc_compiles() { return state().compiles; }

int hiprtcVersion(int* major, int* minor) {
    *major = state().major;
    *minor = state().minor;
    return kSuccess;
}
const char* hiprtcGetErrorString(int result) {
    return result == kCompilation ? "HIPRTC_ERROR_COMPILATION" : result == kSuccess ? "HIPRTC_SUCCESS" : "HIPRTC_ERROR";
}
int hiprtcCreateProgram(Program** program, const char* source, const char*, int num_headers, const char* const*,
                        const char* const* include_names) {
    if (source == nullptr) return kInvalidInput;
    *program = new Program{.source = source};
    for (int i = 0; i < num_headers; ++i) (*program)->header_names.emplace_back(include_names[i]);
    return kSuccess;
}
int hiprtcDestroyProgram(Program** program) {
    delete *program;
    *program = nullptr;
    return kSuccess;
}
int hiprtcCompileProgram(Program* program, int num_options, const char* const* options) {
    State& s = state();
    ++s.compiles;
    s.last_options.clear();
    std::string target;
    for (int i = 0; i < num_options; ++i) {
        const std::string_view option = options[i];
        if (i) s.last_options += ' ';
        s.last_options += option;
        if (option.starts_with("--offload-arch=")) target = option.substr(15);
    }
    if (s.fail_compiles || program->source.find("#error") != std::string::npos) {
        program->log = "fake.hip:1:2: error: the fake hiprtc was told to fail\n";
        return kCompilation;
    }
    for (std::size_t at = program->source.find("#include \""); at != std::string::npos;
         at = program->source.find("#include \"", at + 1)) {
        const std::size_t begin = at + 10;
        const std::string name = program->source.substr(begin, program->source.find('"', begin) - begin);
        bool given = false;
        for (const std::string& header : program->header_names) given = given || header == name;
        if (!given) {
            program->log = "fake.hip: fatal error: '" + name + "' file not found\n";
            return kCompilation;
        }
    }
    program->code = elf_for(s.force_target.empty() ? target : s.force_target, program->source);
    program->log = "";
    return kSuccess;
}
int hiprtcGetProgramLogSize(Program* program, std::size_t* size) {
    *size = program->log.size() + 1;
    return kSuccess;
}
int hiprtcGetProgramLog(Program* program, char* log) {
    std::memcpy(log, program->log.c_str(), program->log.size() + 1);
    return kSuccess;
}
int hiprtcGetCodeSize(Program* program, std::size_t* size) {
    *size = program->code.size();
    return kSuccess;
}
int hiprtcGetCode(Program* program, char* code) {
    std::memcpy(code, program->code.data(), program->code.size());
    return kSuccess;
}

}  // extern "C"
