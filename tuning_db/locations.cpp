#include "tuning_db/locations.hpp"

#include "core/settings.hpp"

#ifndef MQAJIT_INSTALL_DATADIR
#error "MQAJIT_INSTALL_DATADIR must be defined by the build (the installed share/mqajit)"
#endif
#ifndef MQAJIT_BUILD_DATADIR
#error "MQAJIT_BUILD_DATADIR must be defined by the build (tuning_db/CMakeLists.txt)"
#endif
#ifndef MQAJIT_SOURCE_CONFIGS_DIR
#error "MQAJIT_SOURCE_CONFIGS_DIR must be defined by the build (tuning_db/CMakeLists.txt)"
#endif

namespace mqajit::tuning {

SystemDbLocation locate_system_db() {
    SystemDbLocation location;
    if (settings().system_db_path) {
        location.path = settings().system_db_path;
        location.searched.push_back(*settings().system_db_path);
        return location;
    }
    const std::filesystem::path dirs[] = {MQAJIT_INSTALL_DATADIR, MQAJIT_BUILD_DATADIR};
    for (const auto& dir : dirs) {
        const auto candidate = dir / kSystemDbFileName;
        location.searched.push_back(candidate);
        std::error_code error;
        if (std::filesystem::is_regular_file(candidate, error)) {
            location.path = candidate;
            return location;
        }
    }
    return location;
}

std::optional<std::filesystem::path> locate_configs_dir() {
    const std::filesystem::path candidates[] = {std::filesystem::path(MQAJIT_INSTALL_DATADIR) / "configs",
                                                std::filesystem::path(MQAJIT_SOURCE_CONFIGS_DIR)};
    for (const auto& dir : candidates) {
        std::error_code error;
        if (std::filesystem::is_directory(dir, error)) return dir;
    }
    return std::nullopt;
}

}  // namespace mqajit::tuning
