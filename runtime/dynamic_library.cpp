#include "runtime/dynamic_library.hpp"

#include <dlfcn.h>
#include <link.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "core/check.hpp"

namespace mqajit {
namespace {

std::string last_loader_error() {
    const char* message = dlerror();
    return message != nullptr ? message : "unknown reason";
}

}  // namespace

void DynamicLibrary::Closer::operator()(void* handle) const {
    if (handle != nullptr) dlclose(handle);
}

std::optional<DynamicLibrary> DynamicLibrary::try_open(const std::string& path, std::string& reason) {
    if (void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return DynamicLibrary(handle, path);
    reason = last_loader_error();
    // dlerror() starts with the path itself; keep the reason only.
    if (reason.starts_with(path + ": ")) reason.erase(0, path.size() + 2);
    return std::nullopt;
}

DynamicLibrary DynamicLibrary::open_first(std::span<const std::string> candidates, std::string_view what,
                                          std::string_view advice) {
    MQAJIT_CHECK_KIND(internal, !candidates.empty(), "no candidate paths given for {}", what);
    std::vector<std::string> tried;
    for (const std::string& candidate : candidates) {
        std::string reason;
        if (auto library = try_open(candidate, reason)) return std::move(*library);
        tried.push_back(fmt::format("{}: {}", candidate, reason));
    }
    MQAJIT_FAIL(not_found, "{} not found (tried {}); {}", what, fmt::join(tried, "; "), advice);
}

DynamicLibrary DynamicLibrary::open_global(const std::string& path) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    MQAJIT_CHECK_KIND(not_found, handle != nullptr, "cannot load {}: {}", path, last_loader_error());
    return DynamicLibrary(handle, path);
}

void DynamicLibrary::keep_loaded() const {
    // NOTES: dlopen with RTLD_NOLOAD only adds the flag to the mapped object; the extra reference
    // is dropped at once.
    if (void* again = dlopen(resolved_path().c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE)) dlclose(again);
}

void* DynamicLibrary::symbol(const char* name) const {
    dlerror();
    return dlsym(handle_.get(), name);
}

std::string DynamicLibrary::resolved_path() const {
    link_map* map = nullptr;
    if (dlinfo(handle_.get(), RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_name == nullptr ||
        map->l_name[0] == '\0') {
        return name_;
    }
    return map->l_name;
}

}  // namespace mqajit
