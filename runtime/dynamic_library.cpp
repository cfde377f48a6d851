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

DynamicLibrary DynamicLibrary::open_first(std::span<const std::string> candidates, std::string_view what,
                                          std::string_view advice, Unload unload) {
    MQAJIT_CHECK_KIND(internal, !candidates.empty(), "no candidate paths given for {}", what);
    // NOTES: RTLD_NODELETE for the driver: it keeps threads and atexit work of its own, and
    // unmapping it while those exist crashes at process exit.
    const int flags = RTLD_NOW | RTLD_LOCAL | (unload == Unload::never ? RTLD_NODELETE : 0);
    std::vector<std::string> tried;
    for (const std::string& candidate : candidates) {
        if (void* handle = dlopen(candidate.c_str(), flags)) return DynamicLibrary(handle, candidate);
        std::string reason = last_loader_error();
        // dlerror() starts with the path itself; keep the reason only.
        if (reason.starts_with(candidate + ": ")) reason.erase(0, candidate.size() + 2);
        tried.push_back(fmt::format("{}: {}", candidate, reason));
    }
    MQAJIT_FAIL(not_found, "{} not found (tried {}); {}", what, fmt::join(tried, "; "), advice);
}

DynamicLibrary DynamicLibrary::open_global(const std::string& path) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    MQAJIT_CHECK_KIND(not_found, handle != nullptr, "cannot load {}: {}", path, last_loader_error());
    return DynamicLibrary(handle, path);
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
