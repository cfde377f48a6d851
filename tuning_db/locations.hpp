#pragma once
// Where the shipped tuning files live when nobody says: first relative to the binary that holds
// mqajit's code (libmqajit, the CLI, the Python extension), where the install put them, so an
// install keeps its tables wherever its prefix goes; then the build tree this code was built in;
// last the data folder the build was configured to install into (a static libmqajit linked into a
// program installed elsewhere). In the build tree the first rule already finds the build's tables
// for the library, the CLI and the tests (build/share/mqajit), and the second for the extension.

#include <filesystem>
#include <optional>
#include <vector>

namespace mqajit::tuning {

struct SystemDbLocation {
    std::optional<std::filesystem::path> path;  // nullopt: none found
    std::vector<std::filesystem::path> searched;  // every place looked at, for the warning
};

// A place the shipped files may be: the folder of system_tuning.db and the folder of the CSVs.
struct ShippedDataDir {
    std::filesystem::path tables;   // <prefix>/share/mqajit, or the build tree's share/mqajit
    std::filesystem::path configs;  // <prefix>/share/mqajit/configs, or the source tree's configs
};

// The places in the order they are tried.
std::vector<ShippedDataDir> shipped_data_dirs();

// MQAJIT_SYSTEM_DB when set (even if missing: the caller warns), else the first
// system_tuning.db of shipped_data_dirs().
SystemDbLocation locate_system_db();

// The shipped CSVs: the first configs folder of shipped_data_dirs() that exists.
std::optional<std::filesystem::path> locate_configs_dir();

// The file (shared library or executable) this code was loaded from, symlinks resolved; nullopt if
// the loader can't say.
std::optional<std::filesystem::path> binary_holding_mqajit();

inline constexpr const char* kSystemDbFileName = "system_tuning.db";

}  // namespace mqajit::tuning
