// `mqajit db import`: a CSV file read as the command reads it, merged and written to a fresh user
// database in one transaction. Nothing crashes, every good row lands and reads back equal, and
// JSON of every stored row can be printed.

#include <cstdint>
#include <string>

#include "fuzz/fuzz_support.hpp"
#include "mqajit/error.hpp"
#include "tuning_db/config_files.hpp"
#include "tuning_db/csv.hpp"
#include "tuning_db/row_json.hpp"
#include "tuning_db/tuning_db.hpp"

using namespace mqajit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::filesystem::path csv = fuzz::scratch() / "import.csv";
    const std::filesystem::path db = fuzz::scratch() / "import.db";
    fuzz::write_file(csv, fuzz::as_text(data, size));
    std::error_code ignored;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(db.string() + suffix, ignored);

    const tuning::ConfigRows loaded = tuning::merge_tables({tuning::read_csv_file(csv)});
    {
        TuningDb database(std::nullopt, db);
        database.insert(loaded.rows);  // row_problem found nothing in them, so this must not throw
        MQAJIT_FUZZ_EXPECT(!database.user_db_in_memory());
        const std::vector<TunedRow> stored = database.user_rows();
        MQAJIT_FUZZ_EXPECT(stored.size() == loaded.rows.size());
        for (std::size_t i = 0; i < stored.size(); ++i) {
            MQAJIT_FUZZ_EXPECT(stored[i].key == loaded.rows[i].key);
            MQAJIT_FUZZ_EXPECT(stored[i].same_choice(loaded.rows[i]));
            MQAJIT_FUZZ_EXPECT(stored[i].runner_up == loaded.rows[i].runner_up);
            (void)tuning::to_json(stored[i]).dump();
            MQAJIT_FUZZ_EXPECT(database.lookup(stored[i].key) != nullptr);
        }
    }
    return 0;
}
