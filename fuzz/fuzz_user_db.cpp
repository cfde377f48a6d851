// A damaged user database: whatever bytes sit in tuning.db, opening it (migrating a version 1
// file), looking up (the other mode and the nearest SM count too), listing and inserting never
// crash; either the file is used (and then holds the inserted row) or the process falls back to
// memory with the rows it wrote, and says why it could not read the file.

#include <cstdint>
#include <limits>
#include <string>

#include "fuzz/fuzz_support.hpp"
#include "mqajit/error.hpp"
#include "tuning_db/tuning_db.hpp"

using namespace mqajit;

namespace {

TunedRow probe_row() {
    TunedRow row;
    row.key = {.arch = "gfx950", .cu_num = 256, .heads = 32, .head_dim = 128, .seq_len = 4096, .seq_len_kv = 65536};
    row.backend = "jit";
    row.variant = "mfma32x32x64_bkv64_r2_w4_lds3";
    row.us = 12.5;
    return row;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::filesystem::path db = fuzz::scratch() / "user.db";
    std::error_code ignored;
    for (const char* suffix : {"-wal", "-shm", "-journal"}) std::filesystem::remove(db.string() + suffix, ignored);
    fuzz::write_file(db, fuzz::as_text(data, size));
    {
        TuningDb database(std::nullopt, db);
        const TunedRow row = probe_row();
        (void)database.lookup(row.key);
        // The other mode and other SM counts: the stand-in rules read every group key of the file.
        for (int cu_num : {1, 255, 257, std::numeric_limits<int>::max()}) {
            for (int clean_logits : {0, 1}) {
                ShapeKey other = row.key;
                other.cu_num = cu_num;
                other.clean_logits = clean_logits;
                (void)database.explain(other);
            }
        }
        for (const TunedRow& stored : database.user_rows()) (void)to_string(stored.key);
        const bool unreadable = database.user_db_read_problem().has_value();
        database.insert(row);
        const TunedRow* found = database.lookup(row.key);
        MQAJIT_FUZZ_EXPECT(found != nullptr && found->variant == row.variant);
        if (!database.user_db_in_memory()) MQAJIT_FUZZ_EXPECT(!unreadable);
    }
    return 0;
}
