#pragma once
// Where the tuning files live when nobody says: the system database and the shipped CSVs are
// looked for in the install tree first, then in the build/source tree this library came from.

#include <filesystem>
#include <optional>
#include <vector>

namespace mqajit::tuning {

struct SystemDbLocation {
    std::optional<std::filesystem::path> path;  // nullopt: none found
    std::vector<std::filesystem::path> searched;  // every place looked at, for the warning
};

// MQAJIT_SYSTEM_DB when set (even if missing: the caller warns), else the installed
// <datadir>/mqajit/system_tuning.db, else the build tree's share/mqajit/system_tuning.db.
SystemDbLocation locate_system_db();

// The shipped CSVs: the installed <datadir>/mqajit/configs, else the source tree's.
std::optional<std::filesystem::path> locate_configs_dir();

inline constexpr const char* kSystemDbFileName = "system_tuning.db";

}  // namespace mqajit::tuning
