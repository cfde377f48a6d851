// Several processes writing one user database at once, starting together on a file that does not
// exist yet: every row of every process must land.

#include <doctest/doctest.h>

#include <chrono>
#include <set>
#include <thread>

#include "tests/support.hpp"
#include "tests/test_tuning_db_support.hpp"
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
