#pragma once
// An owned dlopen handle. Libraries we only use at run time (the CUDA driver, NVRTC) are opened
// here, so libmqajit starts on a machine that lacks them and reports what it tried.

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mqajit {

class DynamicLibrary {
public:
    // Opens the first candidate that loads (RTLD_NOW | RTLD_LOCAL). Throws Error(not_found), one line:
    // "<what> not found (tried <path>: <loader's reason>; ...); <advice>".
    static DynamicLibrary open_first(std::span<const std::string> candidates, std::string_view what,
                                     std::string_view advice);
    // Opens one path (RTLD_NOW | RTLD_LOCAL); nullopt with the loader's reason in `reason` on failure.
    static std::optional<DynamicLibrary> try_open(const std::string& path, std::string& reason);
    // Opens one path with RTLD_GLOBAL, so libraries loaded later by name find it.
    static DynamicLibrary open_global(const std::string& path);

    // Keeps the library mapped after the last handle closes (RTLD_NODELETE), for libraries that
    // start threads or atexit work of their own, such as the CUDA driver.
    void keep_loaded() const;

    // The exported symbol, or nullptr when the library does not export it.
    void* symbol(const char* name) const;
    // Sets `pointer` to the exported function `name`, or records `name` in `missing`, so a loader
    // can check every symbol up front and name all that are absent in one error.
    template <typename Function>
    void resolve(const char* name, Function& pointer, std::vector<std::string>& missing) const {
        pointer = reinterpret_cast<Function>(symbol(name));
        if (pointer == nullptr) missing.emplace_back(name);
    }
    // The name it was opened by (one of the candidates).
    const std::string& name() const { return name_; }
    // The file the loader actually mapped, e.g. "/usr/lib/x86_64-linux-gnu/libcuda.so.1".
    std::string resolved_path() const;

private:
    struct Closer {
        void operator()(void* handle) const;
    };
    DynamicLibrary(void* handle, std::string name) : handle_(handle), name_(std::move(name)) {}

    std::unique_ptr<void, Closer> handle_;
    std::string name_;
};

}  // namespace mqajit
