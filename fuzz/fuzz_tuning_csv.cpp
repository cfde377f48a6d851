// The tuning CSV loader: any text parses without crashing, every row it returns can be stored
// (row_problem finds nothing, its text is UTF-8), every problem names a line of the file, and a
// returned row written back as CSV reads back as the same row.

#include <cstdint>
#include <string>

#include "core/utf8.hpp"
#include "fuzz/fuzz_support.hpp"
#include "mqajit/error.hpp"
#include "tuning_db/csv.hpp"

using namespace mqajit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text = fuzz::as_text(data, size);
    const tuning::CsvRows parsed = tuning::parse_csv(text, "fuzz.csv");
    for (const tuning::RowProblem& problem : parsed.problems) {
        MQAJIT_FUZZ_EXPECT(problem.place.starts_with("fuzz.csv:"));
        MQAJIT_FUZZ_EXPECT(!invalid_utf8_at(problem.message) || invalid_utf8_at(text));
    }
    for (const TunedRow& row : parsed.rows) {
        MQAJIT_FUZZ_EXPECT(!row_problem(row));
        const tuning::CsvRows again = tuning::parse_csv(tuning::csv_header() + "\n" + tuning::csv_line(row), "again");
        MQAJIT_FUZZ_EXPECT(again.problems.empty());
        MQAJIT_FUZZ_EXPECT(again.rows.size() == 1);
        const TunedRow& back = again.rows.front();
        MQAJIT_FUZZ_EXPECT(back.key == row.key);
        MQAJIT_FUZZ_EXPECT(back.same_choice(row));
        MQAJIT_FUZZ_EXPECT(back.runner_up == row.runner_up && back.date == row.date);
    }
    // A single line alone, as the CLI's shape and tuner readers split them.
    try {
        (void)tuning::split_csv_line(text.substr(0, text.find('\n')));
    } catch (const Error&) {
    }
    return 0;
}
