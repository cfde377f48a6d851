// A stand-in for ROCm's libamdhip64, for tests on machines without an AMD GPU: the devices it
// reports are set by the test (fake_hip_configure) or, for a process such as the CLI, by
// MQAJIT_FAKE_HIP_DEVICE; code objects are "loaded" by reading their ELF header, launches are
// recorded, memory is host memory.
// With MQAJIT_FAKE_HIP_COMPUTE=1 every launch of an mqa_logits kernel computes the logits on the
// CPU from its MqaLogitsParams, and every launch of a paged_mqa_logits kernel (a decode baseline or
// reference, or a generated pmfma/pwgmma kernel, told apart by name) from its PagedMqaLogitsParams,
// whatever the kernel (so a tool's checks pass and its control flow,
// output files and errors can be tested; no AMD kernel is verified by this), except kernels whose
// name contains MQAJIT_FAKE_HIP_WRONG_KERNEL, whose logits come out 1.5x too large. Each launch
// advances a clock by a cost that depends on the kernel's name, which events measure.

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fake_hip_control.hpp"
#include "mqa_common.cuh"
#include "mqa_logits_output.cuh"
#include "mqa_logits_params.cuh"
#include "paged_mqa_logits_params.cuh"

namespace {

constexpr int kSuccess = 0, kInvalidValue = 1, kInvalidDevice = 101, kInvalidImage = 200, kNotFound = 500;

struct Function {
    std::string name;
};
struct Module {
    std::string image;  // the whole ELF, by its header's section-table end
    // NOTES: as in ROCm, a module owns the functions taken from it; they go when it is unloaded.
    std::vector<std::unique_ptr<Function>> functions;
};

struct State {
    std::vector<FakeHipDevice> devices;
    std::vector<std::string> names, targets;  // own the strings the devices point at
    FakeHipLaunch last_launch{};
    int live_modules = 0;
    double clock_ms = 0;  // advanced by launches, read by events
};

void add_device(State& s, const FakeHipDevice& given) {
    s.names.emplace_back(given.name);
    s.targets.emplace_back(given.target_id);
    FakeHipDevice device = given;
    device.name = s.names.back().c_str();
    device.target_id = s.targets.back().c_str();
    s.devices.push_back(device);
}

// MQAJIT_FAKE_HIP_DEVICE="name;target id;compute units;LDS bytes", for processes the test does not drive.
State initial_state() {
    State s;
    s.names.reserve(4);
    s.targets.reserve(4);
    if (const char* spec = std::getenv("MQAJIT_FAKE_HIP_DEVICE")) {
        std::vector<std::string> fields;
        std::string_view rest(spec);
        for (std::size_t at; (at = rest.find(';')) != std::string_view::npos; rest.remove_prefix(at + 1)) {
            fields.emplace_back(rest.substr(0, at));
        }
        fields.emplace_back(rest);
        if (fields.size() == 4) {
            const int units = std::atoi(fields[2].c_str());
            add_device(s, FakeHipDevice{fields[0].c_str(), fields[1].c_str(), units, std::atoi(fields[3].c_str()), units});
        }
    }
    return s;
}

State& state() {
    static State instance = initial_state();
    return instance;
}

bool env_flag(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr && std::string_view(value) == "1";
}

// The logits an mqa_logits kernel computes, on the CPU (MQAJIT_FAKE_HIP_COMPUTE), scaled by `scale`.
void compute_logits(const MqaLogitsParams& p, float scale) {
    for (int row = 0; row < p.seq_len; ++row) {
        const mqa::Range window = mqa::clamp_window(p.cu_starts[row], p.cu_ends[row], p.seq_len_kv);
        const mqa_output::LogitsRow out = mqa_output::logits_row(p, row);
        for (int kv = out.stored.begin; kv < out.stored.end; ++kv) {
            if (kv < window.begin || kv >= window.end) {
                if (p.clean_logits) mqa_output::store(p, out.base, kv, -__builtin_inff());
                continue;
            }
            float sum = 0;
            for (int head = 0; head < p.heads; ++head) {
                float dot = 0;
                for (int d = 0; d < p.head_dim; ++d) {
                    dot += mqa::e4m3_to_float(p.q[row * p.q_stride_s + head * p.head_dim + d]) *
                           mqa::e4m3_to_float(p.kv[kv * p.kv_stride_n + d]);
                }
                sum += p.weights[row * p.weights_stride_s + head] * (dot > 0 ? dot : 0);
            }
            mqa_output::store(p, out.base, kv, scale * p.kv_scales[kv] * sum);
        }
    }
}

// The logits a paged_mqa_logits kernel computes, on the CPU (MQAJIT_FAKE_HIP_COMPUTE), scaled by `scale`.
void compute_paged_logits(const PagedMqaLogitsParams& p, float scale) {
    for (long long row = 0; row < static_cast<long long>(p.batch) * p.next_n; ++row) {
        const int request = static_cast<int>(row / p.next_n), token = static_cast<int>(row % p.next_n);
        const int keys = p.context_lens_2d ? p.context_lens[request * p.context_lens_stride + token]
                                           : p.context_lens[request] - p.next_n + token + 1;
        const int visible = mqa::min_int(mqa::max_int(keys, 0), p.max_context_len);
        for (int col = 0; col < p.max_context_len; ++col) {
            float& out = p.logits[row * p.logits_stride + col];
            if (col >= visible) {
                if (p.clean_logits) out = -__builtin_inff();
                continue;
            }
            const unsigned char* block =
                p.kv_cache + p.block_table[request * p.block_table_stride + col / p.block_kv] * p.cache_block_bytes;
            const int slot = col % p.block_kv;
            float key_scale;
            std::memcpy(&key_scale, block + p.block_kv * p.head_dim + slot * 4, 4);
            float sum = 0;
            for (int head = 0; head < p.heads; ++head) {
                const unsigned char* q = p.q + request * p.q_stride_b + (token * p.heads + head) * p.head_dim;
                float dot = 0;
                for (int d = 0; d < p.head_dim; ++d)
                    dot += mqa::e4m3_to_float(q[d]) * mqa::e4m3_to_float(block[slot * p.head_dim + d]);
                sum += p.weights[row * p.weights_stride + head] * (dot > 0 ? dot : 0);
            }
            out = scale * key_scale * sum;
        }
    }
}

bool is_paged_kernel(const std::string& name) {
    return name.starts_with("paged_mqa_logits") || name.starts_with("mqa_logits_pmfma") ||
           name.starts_with("mqa_logits_pwgmma");
}

// What a launch of `name` costs on the fake clock: 10 to 25 us, by its name.
double launch_cost_ms(const std::string& name) {
    std::size_t hash = 0;
    for (char c : name) hash = hash * 131 + static_cast<unsigned char>(c);
    return 0.010 + 0.001 * static_cast<double>(hash % 16);
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
    s.names.reserve(4);
    s.targets.reserve(4);
    for (int i = 0; i < count && i < 4; ++i) add_device(s, devices[i]);
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
    *module = new Module{std::string(bytes, elf_size(bytes)), {}};
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
    module->functions.push_back(std::make_unique<Function>(Function{name}));
    *function = module->functions.back().get();
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
    state().clock_ms += launch_cost_ms(function->name);
    if (env_flag("MQAJIT_FAKE_HIP_COMPUTE")) {
        const char* wrong = std::getenv("MQAJIT_FAKE_HIP_WRONG_KERNEL");
        const bool is_wrong = wrong != nullptr && *wrong != '\0' && function->name.find(wrong) != std::string::npos;
        // NOTES: generated decode kernels are named mqa_logits_<variant>_... too: the op in the name decides.
        if (is_paged_kernel(function->name)) {
            compute_paged_logits(*static_cast<const PagedMqaLogitsParams*>(arguments[0]), is_wrong ? 1.5f : 1.0f);
        } else if (function->name.starts_with("mqa_logits")) {
            compute_logits(*static_cast<const MqaLogitsParams*>(arguments[0]), is_wrong ? 1.5f : 1.0f);
        }
    }
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
// An event holds the fake clock when it was recorded.
int hipEventCreate(void** event) { *event = new double(0); return kSuccess; }
int hipEventDestroy(void* event) { delete static_cast<double*>(event); return kSuccess; }
int hipEventRecord(void* event, void*) { *static_cast<double*>(event) = state().clock_ms; return kSuccess; }
int hipEventSynchronize(void*) { return kSuccess; }
int hipEventElapsedTime(float* ms, void* start, void* stop) {
    *ms = static_cast<float>(*static_cast<double*>(stop) - *static_cast<double*>(start));
    return kSuccess;
}
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
