#pragma once
// The output CSV of `mqajit tune`, kept line for line. A row the run does not tune comes out
// byte for byte as it went in (a gfx950 row's backend stays `flydsl`, `56.0` stays `56.0`, a line
// that does not parse stays as it was); a tuned row replaces the first line of its key in place,
// or is appended; the header line is kept, and new rows are written in its column order. The one
// exception: a table without a clean_logits column gets one, at the end of every line (its old
// rows saying 1, what a row without the column means), when a clean_logits=0 row is written.
// One class per table (TuneOutputCsv for mqa_logits, PagedTuneOutputCsv for paged_mqa_logits,
// whose tables always have the column).

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tuning_db/csv.hpp"
#include "tuning_db/tuned_row.hpp"

namespace mqajit::tools {

template <class Key>
class TuneOutputCsvOf {
public:
    using Row = TunedRowOf<Key>;
    // A table with the standard header (csv_header<Key>()) and no rows.
    TuneOutputCsvOf();
    // The table in CSV text; `source` names it in origins and problems. Throws
    // Error(invalid_argument) when the text has a first line but it is not a header of Key's table.
    static TuneOutputCsvOf parse(std::string_view text, std::string_view source);
    // The table in `path`, or an empty one when there is no such file.
    static TuneOutputCsvOf read(const std::filesystem::path& path);

    // Every line that holds a row, in file order, each with origin "<source>:<line>".
    std::vector<Row> rows() const;
    // Lines that did not parse; they are kept as they are.
    const std::vector<tuning::RowProblem>& problems() const { return problems_; }

    // Puts `row` in place of the first line of its key (later lines of that key are dropped), or
    // appends it. A row whose values equal that line's changes nothing.
    void upsert(const Row& row);

    std::string text() const;
    // Writes text() beside `path` and renames it into place.
    void write(const std::filesystem::path& path) const;

private:
    // Appends a key column the file lacks, each row's field saying what the missing column meant.
    void add_column(std::string_view column, std::string_view meant);

    struct Line {
        std::string text;  // as read, without its '\n'
        std::optional<Row> row{};
    };
    std::vector<std::string> columns_;
    std::vector<Line> lines_;  // the header is one of them
    std::string cr_;  // "\r" when the file's lines end in "\r\n"
    bool ends_with_newline_ = true;
    std::vector<tuning::RowProblem> problems_;
};

using TuneOutputCsv = TuneOutputCsvOf<ShapeKey>;
using PagedTuneOutputCsv = TuneOutputCsvOf<PagedShapeKey>;

}  // namespace mqajit::tools
