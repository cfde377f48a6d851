// The kernel cache loads only entries it can trust: written with this cache's key (a planted or
// copied entry is refused even when its size and hash match), owned by this user (or the configured
// shared group), in folders nobody else can change; and it never falls back to a shared /tmp folder.
// A team cache shared on purpose (MQAJIT_CACHE_GROUP) serves every member.

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/hash.hpp"
#include "core/settings.hpp"
#include "runtime/disk_cache.hpp"
#include "runtime/disk_cache_meta.hpp"
#include "tests/runtime_fakes.hpp"
#include "tests/support.hpp"
#include "tests/test_tuning_db_support.hpp"
#include "tuning_db/tuning_db.hpp"

using namespace mqajit;
using mqajit::testing::FakeCompiler;
using mqajit::testing::LogCapture;
using mqajit::testing::TempDir;
namespace fs = std::filesystem;

namespace {

std::vector<char> bytes_of(std::string_view text) { return {text.begin(), text.end()}; }

DiskCacheMeta small_meta() { return mqajit::testing::sample_cache_meta(); }

std::string key_for(std::string_view source) {
    return DiskCache::key_for(FakeCompiler(), mqajit::testing::fake_request(std::string(source)));
}

void write_file(const fs::path& path, std::string_view text) {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file << text;
}

bool is_root() { return geteuid() == 0; }

void chown_tree(const fs::path& path, uid_t uid, gid_t gid) {
    REQUIRE(::lchown(path.c_str(), uid, gid) == 0);
    if (fs::is_directory(fs::symlink_status(path)))
        for (const auto& entry : fs::recursive_directory_iterator(path)) REQUIRE(::lchown(entry.path().c_str(), uid, gid) == 0);
}

}  // namespace

TEST_CASE("disk cache trust: an entry written by hand is refused although its size and hash match its bytes") {
    TempDir dir("cache-planted");
    const DiskCache cache(dir.path());
    cache.publish(key_for("a real kernel"), bytes_of("BIN[real]"), small_meta());  // the cache is in use

    // What the old check accepted: a meta.json naming the key, the size and the content hash, and
    // the bytes; the planter cannot write a seal without the cache's private key.
    const std::string key = key_for("the kernel the attacker wants to replace");
    const std::string evil = "BIN[planted code]";
    DiskCacheMeta meta = small_meta();
    meta.key = key;
    meta.created = utc_timestamp();
    nlohmann::json json = to_json(meta);
    json["binary_bytes"] = evil.size();
    json["binary_hash"] = hash_hex(evil);
    for (int format : {1, DiskCacheMeta::kFormat}) {
        CAPTURE(format);
        json["format"] = format;
        fs::create_directory(dir.path() / key);
        write_file(dir.path() / key / "kernel.bin", evil);
        write_file(dir.path() / key / "meta.json", json.dump(2));
        CHECK_FALSE(cache.load(key).has_value());
        CHECK_FALSE(fs::exists(dir.path() / key));
    }
}

TEST_CASE("disk cache trust: an entry copied from another cache is refused (each cache has its own key)") {
    TempDir first_dir("cache-first"), second_dir("cache-second");
    const DiskCache first(first_dir.path()), second(second_dir.path());
    const std::string key = key_for("copied");
    const fs::path entry = first.publish(key, bytes_of("BIN[from the first cache]"), small_meta());
    second.publish(key_for("own"), bytes_of("BIN[own]"), small_meta());
    fs::copy(entry, second_dir.path() / key, fs::copy_options::recursive);

    LogCapture captured;
    CHECK(first.load(key).has_value());
    CHECK_FALSE(second.load(key).has_value());
    CHECK(captured.count("was not sealed with this cache's key") == 1);
    CHECK(first.load(key).has_value());
}

TEST_CASE("disk cache trust: a folder in the path that every user may write makes the cache refuse to load or "
          "store") {
    TempDir dir("cache-world-writable");
    const fs::path open_folder = dir.path() / "open";
    fs::create_directories(open_folder);
    const DiskCache cache(open_folder / "cache");
    const std::string key = key_for("world writable");
    REQUIRE(cache.store(key, bytes_of("BIN[x]"), small_meta()).has_value());
    REQUIRE(cache.load(key).has_value());

    fs::permissions(open_folder, fs::perms::all);  // 0777, no sticky bit: anyone may rename the cache away
    LogCapture captured;
    CHECK_FALSE(cache.load(key).has_value());
    CHECK_FALSE(cache.store(key_for("another"), bytes_of("BIN[y]"), small_meta()).has_value());
    CHECK(captured.count("is writable by every user") >= 1);
    CHECK_THROWS_AS(cache.publish(key_for("another"), bytes_of("BIN[y]"), small_meta()), Error);

    // A sticky folder (like /tmp) only lets each user remove their own names, so it may sit above a cache.
    fs::permissions(open_folder, fs::perms::all | fs::perms::sticky_bit);
    CHECK(cache.load(key).has_value());
}

TEST_CASE("disk cache trust: entries, and caches, that another user owns are not loaded") {
    if (!is_root()) {
        MESSAGE("skipped: needs root to give files to another user");
        return;
    }
    TempDir dir("cache-other-owner");
    const DiskCache cache(dir.path() / "kernels");
    const std::string key = key_for("owned by nobody");
    const fs::path entry = cache.publish(key, bytes_of("BIN[x]"), small_meta());
    REQUIRE(cache.load(key).has_value());

    chown_tree(entry, 65534, 65534);
    LogCapture captured;
    CHECK_FALSE(cache.load(key).has_value());
    CHECK(captured.count("owned by uid 65534") == 1);

    const std::string second = key_for("second");
    cache.publish(second, bytes_of("BIN[y]"), small_meta());
    REQUIRE(cache.load(second).has_value());
    chown_tree(dir.path() / "kernels", 65534, 65534);  // the whole cache is someone else's
    CHECK_FALSE(cache.load(second).has_value());
    CHECK_FALSE(cache.store(key_for("third"), bytes_of("BIN[z]"), small_meta()).has_value());
}

TEST_CASE("disk cache trust: a symlink in an entry is never followed") {
    TempDir dir("cache-symlink");
    const DiskCache cache(dir.path());
    const std::string key = key_for("linked");
    const fs::path entry = cache.publish(key, bytes_of("BIN[real]"), small_meta());
    const fs::path elsewhere = dir.path() / "elsewhere.bin";
    fs::copy_file(entry / "kernel.bin", elsewhere);
    fs::remove(entry / "kernel.bin");
    fs::create_symlink(elsewhere, entry / "kernel.bin");
    CHECK_FALSE(cache.load(key).has_value());
    CHECK(fs::exists(elsewhere));

    // A whole entry folder that is a link to a good entry elsewhere.
    TempDir other_dir("cache-symlink-target");
    const DiskCache other(other_dir.path());
    const std::string linked = key_for("linked folder");
    const fs::path target = cache.publish(linked, bytes_of("BIN[real]"), small_meta());
    fs::rename(target, other_dir.path() / "moved");
    fs::create_directory_symlink(other_dir.path() / "moved", target);
    CHECK_FALSE(cache.load(linked).has_value());
}

TEST_CASE("settings: without HOME or XDG_CACHE_HOME the cache is not put in a folder every user shares") {
    const Settings settings = Settings::from_environment([](std::string_view) { return std::nullopt; });
    const fs::path shared_tmp = fs::temp_directory_path() / "mqajit";
    CHECK(settings.cache_dir != shared_tmp);
    CHECK(settings.user_db_path != shared_tmp / "tuning.db");
    if (!settings.cache_dir.empty()) {
        // The passwd entry's home, or nothing: never a folder outside this user's own.
        CHECK(settings.cache_dir.is_absolute());
        CHECK(settings.cache_dir.string().find(fs::temp_directory_path().string()) != 0);
    }
    // No home anywhere: no cache folder at all, rather than a shared one.
    const Settings homeless = Settings::from_environment([](std::string_view) { return std::nullopt; },
                                                         [] { return std::optional<std::string>(); });
    CHECK(homeless.cache_dir.empty());
    CHECK(homeless.user_db_path.empty());
    // XDG_CACHE_HOME must be absolute to count; MQAJIT_CACHE_GROUP is read as given.
    const Settings relative = Settings::from_environment(
        [](std::string_view name) -> std::optional<std::string> {
            if (name == "XDG_CACHE_HOME") return "relative/cache";
            if (name == "HOME") return "/home/someone";
            if (name == "MQAJIT_CACHE_GROUP") return "team";
            return std::nullopt;
        },
        [] { return std::optional<std::string>(); });
    CHECK(relative.cache_dir == fs::path("/home/someone/.cache/mqajit"));
    CHECK(relative.cache_group == std::optional<std::string>("team"));
}

TEST_CASE("user tuning database: with no location at all, rows stay in memory with one warning") {
    mqajit::testing::LogCapture captured;
    TuningDb database(std::nullopt, fs::path());
    CHECK(database.rows().empty());
    database.insert(mqajit::testing::glm5_row(256, 4096, "mfma32x32x64_bkv64_r1_w2_lds2"));
    CHECK(database.user_db_in_memory());
    CHECK(database.lookup(mqajit::testing::glm5_row(256, 4096, "x").key) != nullptr);
    CHECK(captured.count("no location is known") == 1);
}

TEST_CASE("user tuning database: a symlink at its path is not followed, so nothing is written where it points") {
    TempDir dir("db-symlink");
    const fs::path target = dir.path() / "victim" / "important.file";
    fs::create_directories(target.parent_path());
    const fs::path link = dir.path() / "tuning.db";
    fs::create_symlink(target, link);
    mqajit::testing::LogCapture captured;
    TuningDb database(std::nullopt, link);
    database.insert(mqajit::testing::glm5_row(256, 4096, "mfma32x32x64_bkv64_r1_w2_lds2"));
    CHECK(database.user_db_in_memory());
    CHECK_FALSE(fs::exists(target));
    CHECK(captured.count("symbolic link") >= 1);
}

namespace {

// args: root, key, "publish" | "load"; prints HIT or MISS. Run under setpriv as another user.
MQAJIT_TEST_CHILD("shared-cache", [](const std::vector<std::string>& args) {
    const DiskCache cache(args.at(0));
    if (args.at(2) == "publish") {
        cache.publish(args.at(1), bytes_of("BIN[shared]"), small_meta());
        return 0;
    }
    std::printf("%s\n", cache.load(args.at(1)) ? "HIT" : "MISS");
    return 0;
});

}  // namespace

TEST_CASE("disk cache trust: a team cache shared on purpose (MQAJIT_CACHE_GROUP) serves every member") {
    if (!is_root() || std::system("setpriv --help >/dev/null 2>&1") != 0) {
        MESSAGE("skipped: needs root and setpriv to act as two other users");
        return;
    }
    TempDir dir("cache-shared");
    fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::group_exec | fs::perms::group_read |
                                    fs::perms::others_exec | fs::perms::others_read);
    // What an administrator sets up: a folder of the team's group, group-writable, setgid.
    const fs::path shared = dir.path() / "team-cache";
    constexpr gid_t kTeam = 4242;
    fs::create_directory(shared);
    REQUIRE(::chown(shared.c_str(), 0, kTeam) == 0);
    REQUIRE(::chmod(shared.c_str(), 02770) == 0);
    const std::string key = key_for("shared kernel");
    const std::string self = fs::read_symlink("/proc/self/exe").string();
    auto as_user = [&](int uid, const std::string& environment, const std::string& action) {
        std::string output;
        const int code = mqajit::testing::run_command(
            "env -u HOME " + environment + " setpriv --reuid=" + std::to_string(uid) + " --regid=" +
                std::to_string(uid) + " --groups=" + std::to_string(kTeam) + " " + self +
                " --mqajit-child=shared-cache " + shared.string() + " " + key + " " + action,
            &output);
        INFO(output);
        CHECK(code == 0);
        return output;
    };
    const std::string group = "MQAJIT_CACHE_GROUP=" + std::to_string(kTeam);
    as_user(65533, group, "publish");
    CHECK(as_user(65534, group, "load").find("HIT") != std::string::npos);
    CHECK(as_user(65533, group, "load").find("HIT") != std::string::npos);
    // Without the setting, another user's entry in a group-writable folder is not trusted.
    CHECK(as_user(65534, "", "load").find("MISS") != std::string::npos);
    // The entry is still there for the team.
    CHECK(as_user(65534, group, "load").find("HIT") != std::string::npos);
}
