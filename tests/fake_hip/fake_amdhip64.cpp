// A stand-in for ROCm's libamdhip64, for tests on machines without an AMD GPU: the devices it
// reports are set by the test; code objects are "loaded" by reading their ELF header, launches are
// recorded, memory is host memory.

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "fake_hip_control.hpp"

namespace {

constexpr int kSuccess = 0, kInvalidValue = 1, kInvalidDevice = 101, kInvalidImage = 200, kNotFound = 500;

struct Module {
    std::string image;  // the whole ELF, by its header's section-table end
};
struct Function {
    std::string name;
};

struct State {
    std::vector<FakeHipDevice> devices;
    std::vector<std::string> names, targets;  // own the strings the devices point at
    FakeHipLaunch last_launch{};
    int live_modules = 0;
};
State& state() {
    static State instance;
    return instance;
}
thread_local int current_device = 0;

int check_device(int ordinal) {
    return ordinal >= 0 && ordinal < static_cast<int>(state().devices.size()) ? kSuccess : kInvalidDevice;
}

// An ELF's size from its header: the section headers end it (as clang and the fake hiprtc lay it out).
std::size_t elf_size(const char* image) {
    std::uint64_t section_offset = 0;
    std::uint16_t entry_size = 0, entries = 0;
    std::memcpy(&section_offset, image + 40, 8);
    std::memcpy(&entry_size, image + 58, 2);
    std::memcpy(&entries, image + 60, 2);
    return static_cast<std::size_t>(section_offset) + std::size_t{entry_size} * entries;
}

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Whether `name` appears in `image` as a whole identifier (a symbol name, or a name in fake source).
bool contains_name(std::string_view image, std::string_view name) {
    for (std::size_t at = image.find(name); at != std::string_view::npos; at = image.find(name, at + 1)) {
        const bool starts = at == 0 || !is_identifier_char(image[at - 1]);
        const bool ends = at + name.size() == image.size() || !is_identifier_char(image[at + name.size()]);
        if (starts && ends) return true;
    }
    return false;
}

}  // namespace

extern "C" {

void fake_hip_configure(const FakeHipDevice* devices, int count) {
    State& s = state();
    s = State{};
    s.names.reserve(count);
    s.targets.reserve(count);
    for (int i = 0; i < count && i < 4; ++i) {
        s.names.emplace_back(devices[i].name);
        s.targets.emplace_back(devices[i].target_id);
        FakeHipDevice device = devices[i];
        device.name = s.names.back().c_str();
        device.target_id = s.targets.back().c_str();
        s.devices.push_back(device);
    }
    current_device = 0;
}
const FakeHipLaunch* fake_hip_last_launch() { return &state().last_launch; }
int fake_hip_live_modules() { return state().live_modules; }

int hipInit(unsigned) { return state().devices.empty() ? 100 : kSuccess; }
int hipDriverGetVersion(int* version) { *version = 60241133; return kSuccess; }
int hipRuntimeGetVersion(int* version) { *version = 60241133; return kSuccess; }
int hipGetDeviceCount(int* count) {
    *count = static_cast<int>(state().devices.size());
    return *count == 0 ? 100 : kSuccess;
}
int hipGetDevice(int* ordinal) { *ordinal = current_device; return kSuccess; }
int hipSetDevice(int ordinal) {
    if (check_device(ordinal) != kSuccess) return kInvalidDevice;
    current_device = ordinal;
    return kSuccess;
}
int hipDeviceGetName(char* name, int length, int ordinal) {
    if (check_device(ordinal) != kSuccess) return kInvalidDevice;
    std::strncpy(name, state().devices[ordinal].name, static_cast<std::size_t>(length));
    return kSuccess;
}
int hipDeviceGetAttribute(int* value, int attribute, int ordinal) {
    if (check_device(ordinal) != kSuccess) return kInvalidDevice;
    const FakeHipDevice& device = state().devices[ordinal];
    if (attribute == 63) *value = device.compute_units;          // hipDeviceAttributeMultiprocessorCount
    else if (attribute == 74) *value = device.lds_bytes;         // hipDeviceAttributeMaxSharedMemoryPerBlock
    else return kInvalidValue;
    return kSuccess;
}
// Writes the fields mqajit reads at ROCm 6's hipDeviceProp_tR0600 offsets, in a struct-sized span.
int hipGetDevicePropertiesR0600(void* properties, int ordinal) {
    if (check_device(ordinal) != kSuccess) return kInvalidDevice;
    const FakeHipDevice& device = state().devices[ordinal];
    auto* bytes = static_cast<char*>(properties);
    std::memset(bytes, 0x5a, 1416);  // sizeof(hipDeviceProp_tR0600) up to the end of gcnArchName
    std::strncpy(bytes, device.name, 256);
    std::memcpy(bytes + 388, &device.properties_compute_units, sizeof(int));
    std::strncpy(bytes + 1160, device.target_id, 256);
    return kSuccess;
}

int hipModuleLoadData(Module** module, const void* image) {
    const auto* bytes = static_cast<const char*>(image);
    if (std::memcmp(bytes, "\x7f" "ELF", 4) != 0 || static_cast<unsigned char>(bytes[18]) != 0xE0) return kInvalidImage;
    *module = new Module{std::string(bytes, elf_size(bytes))};
    ++state().live_modules;
    return kSuccess;
}
int hipModuleUnload(Module* module) {
    delete module;
    --state().live_modules;
    return kSuccess;
}
int hipModuleGetFunction(Function** function, Module* module, const char* name) {
    if (!contains_name(module->image, name)) return kNotFound;
    // NOTES: functions live as long as the process here; a real runtime frees them with the module.
    *function = new Function{name};
    return kSuccess;
}
int hipModuleLaunchKernel(Function* function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                          unsigned bz, unsigned shared, void* stream, void** arguments, void** extra) {
    if (arguments == nullptr || extra != nullptr) return kInvalidValue;
    FakeHipLaunch& launch = state().last_launch;
    ++launch.count;
    std::strncpy(launch.kernel, function->name.c_str(), sizeof(launch.kernel) - 1);
    launch.grid[0] = gx, launch.grid[1] = gy, launch.grid[2] = gz;
    launch.block[0] = bx, launch.block[1] = by, launch.block[2] = bz;
    launch.shared_bytes = shared;
    launch.stream = stream;
    launch.first_argument = arguments[0];
    launch.current_device = current_device;
    return kSuccess;
}

int hipMalloc(void** pointer, std::size_t bytes) { *pointer = std::malloc(bytes); return kSuccess; }
int hipFree(void* pointer) { std::free(pointer); return kSuccess; }
int hipMemcpyHtoD(void* dst, const void* src, std::size_t bytes) { std::memcpy(dst, src, bytes); return kSuccess; }
int hipMemcpyHtoDAsync(void* dst, const void* src, std::size_t bytes, void*) { return hipMemcpyHtoD(dst, src, bytes); }
int hipMemcpyDtoH(void* dst, const void* src, std::size_t bytes) { std::memcpy(dst, src, bytes); return kSuccess; }
int hipMemcpyDtoD(void* dst, const void* src, std::size_t bytes) { std::memcpy(dst, src, bytes); return kSuccess; }
int hipMemsetD32(void* dst, int value, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) std::memcpy(static_cast<char*>(dst) + 4 * i, &value, 4);
    return kSuccess;
}
int hipMemsetD32Async(void* dst, int value, std::size_t count, void*) { return hipMemsetD32(dst, value, count); }
int hipMemsetD8(void* dst, unsigned char value, std::size_t count) { std::memset(dst, value, count); return kSuccess; }
int hipMemsetD8Async(void* dst, unsigned char value, std::size_t count, void*) { return hipMemsetD8(dst, value, count); }
int hipDeviceSynchronize() { return kSuccess; }
int hipStreamCreate(void** stream) { *stream = new int(current_device); return kSuccess; }
int hipStreamDestroy(void* stream) { delete static_cast<int*>(stream); return kSuccess; }
int hipStreamSynchronize(void*) { return kSuccess; }
int hipEventCreate(void** event) { *event = new int(0); return kSuccess; }
int hipEventDestroy(void* event) { delete static_cast<int*>(event); return kSuccess; }
int hipEventRecord(void* event, void*) { ++*static_cast<int*>(event); return kSuccess; }
int hipEventSynchronize(void*) { return kSuccess; }
int hipEventElapsedTime(float* ms, void*, void*) { *ms = 1.5f; return kSuccess; }
const char* hipGetErrorString(int error) {
    switch (error) {
        case kInvalidValue: return "hipErrorInvalidValue";
        case kInvalidDevice: return "hipErrorInvalidDevice";
        case kInvalidImage: return "hipErrorInvalidImage";
        case kNotFound: return "hipErrorNotFound";
        default: return "hipErrorUnknown";
    }
}

}  // extern "C"
