// Several processes writing one user database at once, starting together on a file that does not
// exist yet: every row of every process must land.

#include <doctest/doctest.h>

#include <chrono>
#include <set>
#include <thread>

#include "tests/support.hpp"
#include "tests/test_tuning_db_support.hpp"
#include "tuning_db/sqlite.hpp"
#include "tuning_db/tuning_db.hpp"

using namespace mqajit;
using namespace mqajit::testing;

namespace {

constexpr int kNumChildren = 4;
constexpr int kRowsPerChild = 200;

// Waits until all children have checked in, so their writes overlap.
bool wait_for_everyone(const std::filesystem::path& barrier_dir, int index) {
    write_text(barrier_dir / ("ready." + std::to_string(index)), "");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
        int ready = 0;
        for (const auto& entry : std::filesystem::directory_iterator(barrier_dir)) ready += entry.is_regular_file();
        if (ready == kNumChildren) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
}

// args: user db path, barrier folder, child index. Each child owns seq_len_kv = 1000 + index.
int writer_child(const std::vector<std::string>& args) {
    const std::filesystem::path file = args.at(0);
    const std::filesystem::path barrier = args.at(1);
    const int index = std::stoi(args.at(2));
    if (!wait_for_everyone(barrier, index)) return 10;
    TuningDb db(std::nullopt, file);
    for (int i = 1; i <= kRowsPerChild; ++i) {
        db.insert(glm5_row(i, 1000 + index, "mfma32x32x64_bkv64_r1_w2_lds2", 1.0 + index));
        // Reads interleaved with the writes: a lookup of the child's own last row.
        if (i % 50 == 0) {
            const TunedRow* row = db.lookup(gfx950_key(32, 128, 1, i, 1000 + index));
            if (row == nullptr || row->key.seq_len != i) return 11;
        }
    }
    // A fallback to memory would mean the rows never reached the file.
    return db.user_db_in_memory() ? 12 : 0;
}
MQAJIT_TEST_CHILD("tuning_db_writer", writer_child);

}  // namespace

TEST_CASE("tuning multiprocess: four processes writing at once lose no row") {
    TempDir dir("multiprocess");
    const auto file = dir.path() / "db" / "tuning.db";
    const auto barrier = dir.path() / "barrier";
    std::filesystem::create_directories(barrier);
    const auto codes = run_children("tuning_db_writer", {file.string(), barrier.string()}, kNumChildren);
    CHECK(codes == std::vector<int>(kNumChildren, 0));
    TuningDb db(std::nullopt, file);
    const auto rows = db.user_rows();
    CHECK(rows.size() == kNumChildren * kRowsPerChild);
    std::set<std::pair<std::int64_t, std::int64_t>> keys;
    for (const TunedRow& row : rows) {
        keys.emplace(row.key.seq_len, row.key.seq_len_kv);
        CHECK(row.us == 1.0 + static_cast<double>(row.key.seq_len_kv - 1000));  // each row from its own writer
    }
    CHECK(keys.size() == kNumChildren * kRowsPerChild);
}

namespace {

// Starts `count` copies of `command` at once (through the shell) and returns how many exited 0.
int run_concurrently(const std::string& command, int count, std::string* output) {
    std::string script = "for i in $(seq " + std::to_string(count) + "); do (" + command +
                         " >/dev/null 2>&1; echo \"exit $?\") & done; wait";
    run_command(script, output);
    int ok = 0;
    for (auto at = output->find("exit 0\n"); at != std::string::npos; at = output->find("exit 0\n", at + 1)) ++ok;
    return ok;
}

std::string quoted(const std::filesystem::path& path) { return "'" + path.string() + "'"; }

}  // namespace

TEST_CASE("tuning multiprocess: concurrent build-system runs and exports to one file all succeed") {
    TempDir dir("concurrent-writes");
    const std::filesystem::path csv = dir.path() / "glm5_tuned_mqa_logits.csv";
    write_text(csv, std::string(kCsvHeader) + "gfx950,256,32,128,256,4096,flydsl,mfma32x32x64_bkv64_r1_w2_lds2,18.4\n");
    const std::string cli = "env -u MQAJIT_TUNING_DB -u MQAJIT_SYSTEM_DB " + quoted(cli_path());
    const std::filesystem::path system_db = dir.path() / "system.db";
    std::string output;
    CHECK(run_concurrently(cli + " db build-system --out " + quoted(system_db) + " " + quoted(csv), 6, &output) == 6);
    INFO(output);
    const std::filesystem::path exported = dir.path() / "exported.csv";
    CHECK(run_concurrently(cli + " db --db " + quoted(dir.path() / "user.db") + " --system-db " + quoted(system_db) +
                               " export " + quoted(exported),
                           6, &output) == 6);
    CHECK(read_text(exported).find("mfma32x32x64_bkv64_r1_w2_lds2") != std::string::npos);
    // Nothing is left beside the targets.
    int files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
        CAPTURE(entry.path().string());
        ++files;
    }
    CHECK(files == 3);  // the CSV, system.db, exported.csv
}

TEST_CASE("tuning multiprocess: a lock held on the system database is waited for, not taken as no system rows") {
    TempDir dir("system-lock");
    const std::filesystem::path csv = dir.path() / "glm5_tuned_mqa_logits.csv";
    write_text(csv, std::string(kCsvHeader) + "gfx950,256,32,128,256,4096,flydsl,mfma32x32x64_bkv64_r1_w2_lds2,18.4\n");
    const std::filesystem::path system_db = dir.path() / "system.db";
    REQUIRE(run_command(quoted(cli_path()) + " db build-system --out " + quoted(system_db) + " " + quoted(csv)) == 0);

    // Another process (here a connection) holds the file's exclusive lock for a moment.
    sqlite::Database holder(system_db, sqlite::OpenMode::read_write);
    holder.execute("BEGIN EXCLUSIVE");
    std::thread release([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        holder.execute("COMMIT");
    });
    LogCapture captured;
    const TuningDb database(system_db, dir.path() / "user.db");
    const TunedRow* row = database.lookup({.arch = "gfx950", .cu_num = 256, .heads = 32, .head_dim = 128, .clean_logits = 1,
                                                .seq_len = 256, .seq_len_kv = 4096});
    release.join();
    CHECK(captured.warnings() == 0);
    REQUIRE(row != nullptr);
    CHECK(row->variant == "mfma32x32x64_bkv64_r1_w2_lds2");
}
