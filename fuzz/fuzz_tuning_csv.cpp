// The tuning CSV loader, reading the text as each operator's table: any text parses without
// crashing, every row it returns can be stored (row_problem finds nothing, its text is UTF-8),
// every problem names a line of the file, and a returned row written back as CSV reads back as the
// same row.

#include <cstdint>
#include <string>

#include "core/utf8.hpp"
#include "fuzz/fuzz_support.hpp"
#include "mqajit/error.hpp"
#include "tuning_db/csv.hpp"

using namespace mqajit;

namespace {

// The text read as a table of Key's operator.
template <class Key>
void check_table(std::string_view text) {
    const tuning::CsvRowsOf<Key> parsed = tuning::parse_csv<Key>(text, "fuzz.csv");
    for (const tuning::RowProblem& problem : parsed.problems) {
        MQAJIT_FUZZ_EXPECT(problem.place.starts_with("fuzz.csv:"));
        MQAJIT_FUZZ_EXPECT(!invalid_utf8_at(problem.message) || invalid_utf8_at(text));
    }
    for (const TunedRowOf<Key>& row : parsed.rows) {
        MQAJIT_FUZZ_EXPECT(!row_problem(row));
        const tuning::CsvRowsOf<Key> again =
            tuning::parse_csv<Key>(tuning::csv_header<Key>() + "\n" + tuning::csv_line(row), "again");
        MQAJIT_FUZZ_EXPECT(again.problems.empty());
        MQAJIT_FUZZ_EXPECT(again.rows.size() == 1);
        const TunedRowOf<Key>& back = again.rows.front();
        MQAJIT_FUZZ_EXPECT(back.key == row.key);
        MQAJIT_FUZZ_EXPECT(back.same_choice(row));
        MQAJIT_FUZZ_EXPECT(back.runner_up == row.runner_up && back.date == row.date);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text = fuzz::as_text(data, size);
    for_each_table_key([&]<class Key>(std::type_identity<Key>) { check_table<Key>(text); });
    // A single line alone, as the CLI's shape and tuner readers split them.
    try {
        (void)tuning::split_csv_line(text.substr(0, text.find('\n')));
    } catch (const Error&) {
    }
    return 0;
}
