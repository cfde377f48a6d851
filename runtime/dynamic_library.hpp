#pragma once
// An owned dlopen handle. Libraries we only use at run time (the CUDA driver, NVRTC) are opened
// here, so libmqajit starts on a machine that lacks them and reports what it tried.

#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace mqajit {

class DynamicLibrary {
public:
    enum class Unload { on_destroy, never };

    // Opens the first candidate that loads (RTLD_NOW | RTLD_LOCAL). Throws Error(not_found), one line:
    // "<what> not found (tried <path>: <loader's reason>; ...); <advice>".
    static DynamicLibrary open_first(std::span<const std::string> candidates, std::string_view what,
                                     std::string_view advice, Unload unload = Unload::on_destroy);
    // Opens one path with RTLD_GLOBAL, so libraries loaded later by name find it.
    static DynamicLibrary open_global(const std::string& path);

    // The exported symbol, or nullptr when the library does not export it.
    void* symbol(const char* name) const;
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
