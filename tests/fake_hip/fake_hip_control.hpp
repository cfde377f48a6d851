#pragma once
// What the tests see of the fake ROCm libraries (fake_amdhip64.cpp, fake_hiprtc.cpp): C functions
// they export besides the HIP/hiprtc API, found with dlsym on the same path the backend opens.

#include <cstddef>

extern "C" {

struct FakeHipLaunch {
    int count;                  // launches so far
    char kernel[128];           // the launched function's name
    unsigned grid[3];
    unsigned block[3];
    unsigned shared_bytes;
    void* stream;
    void* first_argument;       // kernelParams[0]: the address of the by-value argument
    int current_device;         // hipGetDevice's answer when it launched
};

struct FakeHipDevice {
    const char* name;           // hipDeviceGetName, and name[] in the properties
    const char* target_id;      // gcnArchName
    int compute_units;
    int lds_bytes;
    int properties_compute_units;  // what the properties struct says; differs to model a layout change
};

// Sets the devices the fake reports (at most 4) and clears every record.
typedef void (*FakeHipConfigure)(const FakeHipDevice* devices, int count);
typedef const FakeHipLaunch* (*FakeHipLastLaunch)();
typedef int (*FakeHipLiveModules)();  // loaded and not yet unloaded

// hiprtc's version as hiprtcVersion reports it, whether compiles fail, and a target to build for
// whatever --offload-arch says (null: obey it), to model code made for another arch; clears the records.
typedef void (*FakeHiprtcConfigure)(int major, int minor, int fail_compiles, const char* force_target);
// The options of the last hiprtcCompileProgram, space-separated, and how many compiles ran.
typedef const char* (*FakeHiprtcLastOptions)();
typedef int (*FakeHiprtcCompiles)();
}
