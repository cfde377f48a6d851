// Where the shipped tables are looked for (tuning_db/locations.cpp), seen from the test binary in
// the build tree: the binary found by walking the loaded objects is this executable, the places
// tried start beside it, and the build tree's database and the source tree's CSVs are found.
// The installed case, a moved prefix, is tests/CMakeLists.txt's installed_package_keeps_its_tables_when_moved.

#include <doctest/doctest.h>

#include <filesystem>

#include "core/settings.hpp"
#include "tuning_db/locations.hpp"

namespace fs = std::filesystem;
using namespace mqajit;

TEST_CASE("locations: the binary holding mqajit's code is this test executable") {
    const auto binary = tuning::binary_holding_mqajit();
    REQUIRE(binary.has_value());
    CHECK(*binary == fs::read_symlink("/proc/self/exe"));
}

TEST_CASE("locations: from the build tree, the build's database and the source tree's CSVs are found") {
    const std::vector<tuning::ShippedDataDir> dirs = tuning::shipped_data_dirs();
    REQUIRE(dirs.size() >= 2);
    const fs::path beside = tuning::binary_holding_mqajit()->parent_path();
    CHECK(dirs.front().tables.parent_path().parent_path() == beside);  // <binary dir>/share/mqajit first
    if (settings().system_db_path) {
        MESSAGE("MQAJIT_SYSTEM_DB is set; the default search is not what serves here");
        return;
    }
    const tuning::SystemDbLocation location = tuning::locate_system_db();
    REQUIRE(location.path.has_value());
    CHECK(*location.path == fs::path(MQAJIT_BINARY_DIR) / "share" / "mqajit" / tuning::kSystemDbFileName);
    CHECK(location.searched.back() == *location.path);
    const auto configs = tuning::locate_configs_dir();
    REQUIRE(configs.has_value());
    CHECK(fs::equivalent(*configs, fs::path(MQAJIT_SOURCE_DIR) / "tuning_db" / "configs"));
}
