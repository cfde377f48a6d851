#include "runtime/hip_code_object.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/check.hpp"

namespace mqajit {
namespace {

// ELF64 header fields (System V gABI) and the AMDGPU values (LLVM's AMDGPUUsage).
constexpr std::size_t kElf64HeaderBytes = 64;
constexpr std::size_t kClassOffset = 4;         // e_ident[EI_CLASS]
constexpr std::size_t kOsAbiOffset = 7;         // e_ident[EI_OSABI]
constexpr std::size_t kAbiVersionOffset = 8;    // e_ident[EI_ABIVERSION]
constexpr std::size_t kMachineOffset = 18;      // e_machine
constexpr std::size_t kFlagsOffset = 48;        // e_flags
constexpr unsigned char kElfClass64 = 2;
constexpr unsigned char kOsAbiAmdgpuHsa = 64;
constexpr std::uint16_t kMachineAmdgpu = 0xE0;
constexpr unsigned char kAbiVersionV4 = 2;

constexpr std::uint32_t kMachMask = 0x0ff;
constexpr std::uint32_t kXnackMask = 0x300;     // EF_AMDGPU_FEATURE_XNACK_V4: 0x100 any, 0x200 off, 0x300 on
constexpr std::uint32_t kSrameccMask = 0xc00;   // EF_AMDGPU_FEATURE_SRAMECC_V4: 0x400 any, 0x800 off, 0xc00 on

struct Processor {
    std::uint32_t mach;
    std::string_view name;
};

// EF_AMDGPU_MACH values of the CDNA parts mqajit targets and their neighbours.
constexpr Processor kProcessors[] = {
    {0x2c, "gfx900"},  {0x2f, "gfx906"},  {0x30, "gfx908"},  {0x3f, "gfx90a"},  {0x4c, "gfx942"},
    {0x4f, "gfx950"},  {0x36, "gfx1030"}, {0x41, "gfx1100"}, {0x48, "gfx1200"}, {0x4e, "gfx1201"},
};

template <typename T>
T read_little_endian(std::span<const char> bytes, std::size_t offset) {
    T value{};
    std::memcpy(&value, bytes.data() + offset, sizeof(T));  // x86-64 and AMDGPU ELF are both little-endian
    return value;
}

bool is_amdgpu_elf(std::span<const char> binary) {
    return binary.size() >= kElf64HeaderBytes && std::memcmp(binary.data(), "\x7f" "ELF", 4) == 0 &&
           static_cast<unsigned char>(binary[kClassOffset]) == kElfClass64 &&
           static_cast<unsigned char>(binary[kOsAbiOffset]) == kOsAbiAmdgpuHsa &&
           read_little_endian<std::uint16_t>(binary, kMachineOffset) == kMachineAmdgpu;
}

void add_feature(Arch& arch, std::string_view feature, std::uint32_t setting, std::uint32_t off, std::uint32_t on) {
    if (setting == off) arch.features.push_back(std::string(feature) + "-");
    if (setting == on) arch.features.push_back(std::string(feature) + "+");
}

}  // namespace

int amdgpu_code_object_abi_version(std::span<const char> binary) {
    if (!is_amdgpu_elf(binary)) return -1;
    return static_cast<unsigned char>(binary[kAbiVersionOffset]);
}

std::optional<Arch> amdgpu_code_object_target(std::span<const char> binary) {
    if (!is_amdgpu_elf(binary)) return std::nullopt;
    const auto flags = read_little_endian<std::uint32_t>(binary, kFlagsOffset);
    const auto* processor = std::ranges::find(kProcessors, flags & kMachMask, &Processor::mach);
    MQAJIT_CHECK_KIND(unsupported, processor != std::end(kProcessors),
                      "the code object is for an AMDGPU processor this build does not know (EF_AMDGPU_MACH 0x{:x}); "
                      "mqajit runs on gfx942 and gfx950",
                      flags & kMachMask);
    Arch target = Arch::parse(processor->name);
    // NOTES: code object v3 coded xnack/sramecc as plain on/off bits; mqajit's compilers make v5, so
    // only the v4+ coding is read and an older object is treated as "any".
    if (static_cast<unsigned char>(binary[kAbiVersionOffset]) >= kAbiVersionV4) {
        add_feature(target, "sramecc", flags & kSrameccMask, 0x800, 0xc00);
        add_feature(target, "xnack", flags & kXnackMask, 0x200, 0x300);
    }
    return target;
}

}  // namespace mqajit
