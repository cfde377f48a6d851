#include "tools/common/tune_output_csv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/check.hpp"
#include "core/files.hpp"
#include "core/utf8.hpp"

namespace mqajit::tools {
namespace {

bool is_blank(std::string_view line) { return line.find_first_not_of(" \t\r") == std::string_view::npos; }

std::string without_cr(std::string_view line) {
    return std::string(line.ends_with('\r') ? line.substr(0, line.size() - 1) : line);
}

}  // namespace

template <class Key>
TuneOutputCsvOf<Key>::TuneOutputCsvOf()
    : columns_(tuning::split_csv_line(tuning::csv_header<Key>())), lines_{{.text = tuning::csv_header<Key>()}} {}

template <class Key>
TuneOutputCsvOf<Key> TuneOutputCsvOf<Key>::parse(std::string_view text, std::string_view source) {
    TuneOutputCsvOf table;
    table.lines_.clear();
    table.columns_.clear();
    table.ends_with_newline_ = text.empty() || text.ends_with('\n');
    std::string header;
    std::size_t pos = 0, line_number = 0;
    while (pos < text.size()) {
        const std::size_t newline = text.find('\n', pos);
        const std::string_view line = text.substr(pos, newline == std::string_view::npos ? newline : newline - pos);
        pos = newline == std::string_view::npos ? text.size() : newline + 1;
        ++line_number;
        Line kept{.text = std::string(line)};
        if (header.empty() && !is_blank(line)) {
            header = without_cr(line);
            // NOTES: a byte-order mark stays in the file's text (kept.text) but is not part of a column name.
            if (header.starts_with(kUtf8ByteOrderMark)) header.erase(0, kUtf8ByteOrderMark.size());
            // NOTES: parsing the header alone reports a bad one; a good one yields no row and no problem.
            const tuning::CsvRowsOf<Key> check = tuning::parse_csv<Key>(header, source);
            MQAJIT_CHECK(check.problems.empty(), "{}:{} is not a tuning table's header ({}); give another -o file or "
                         "move this one away", source, line_number,
                         check.problems.empty() ? "" : check.problems.front().message);
            table.columns_ = tuning::split_csv_line(header);
            if (line.ends_with('\r')) table.cr_ = "\r";
        } else if (!is_blank(line)) {
            // NOTES: each line is parsed under the header on its own, so its row maps to its raw text.
            const tuning::CsvRowsOf<Key> one = tuning::parse_csv<Key>(header + "\n" + without_cr(line), source);
            const std::string place = fmt::format("{}:{}", source, line_number);
            if (one.rows.size() == 1) {
                kept.row = one.rows.front();
                kept.row->origin = place;
            }
            for (const tuning::RowProblem& problem : one.problems) table.problems_.push_back({place, problem.message});
        }
        table.lines_.push_back(std::move(kept));
    }
    // NOTES: a file with no header yet (empty or blank) becomes a fresh table.
    return header.empty() ? TuneOutputCsvOf() : table;
}

template <class Key>
TuneOutputCsvOf<Key> TuneOutputCsvOf<Key>::read(const std::filesystem::path& path) {
    std::error_code error;
    if (!std::filesystem::exists(path, error)) return TuneOutputCsvOf();
    return parse(read_regular_file(path, "tuned table"), path.string());
}

template <class Key>
std::vector<TunedRowOf<Key>> TuneOutputCsvOf<Key>::rows() const {
    std::vector<Row> rows;
    for (const Line& line : lines_)
        if (line.row) rows.push_back(*line.row);
    return rows;
}

template <class Key>
void TuneOutputCsvOf<Key>::add_column(std::string_view column, std::string_view meant) {
    // NOTES: appended, so every field already there keeps its bytes; a row without the column
    // meant `meant`, and now says it.
    columns_.emplace_back(column);
    bool header = true;
    for (Line& line : lines_) {
        if (is_blank(line.text)) continue;
        const bool ends_in_cr = line.text.ends_with('\r');
        std::string text = without_cr(line.text);
        text += fmt::format(",{}", header ? column : meant);
        line.text = text + (ends_in_cr ? "\r" : "");
        header = false;
    }
}

template <class Key>
void TuneOutputCsvOf<Key>::upsert(const Row& row) {
    const auto lacks = [&](std::string_view column) {
        return std::find(columns_.begin(), columns_.end(), column) == columns_.end();
    };
    // NOTES: only a table whose rows may lack the column (prefill) can be without it here: a decode
    // header without it does not parse.
    if constexpr (has_mode_column<Key>) {
        if (Key::kOp.mode_without_column && row.key.clean_logits != *Key::kOp.mode_without_column &&
            lacks("clean_logits"))
            add_column("clean_logits", std::to_string(*Key::kOp.mode_without_column));
    }
    if constexpr (requires { row.key.logits_dtype; }) {
        if (row.key.logits_dtype != kLogitsDtypes[0] && lacks("logits_dtype"))
            add_column("logits_dtype", kLogitsDtypes[0]);
    }
    Line replacement{.text = tuning::csv_line(row, columns_) + cr_, .row = row};
    const auto same_key = [&](const Line& line) { return line.row && line.row->key == row.key; };
    const auto first = std::find_if(lines_.begin(), lines_.end(), same_key);
    if (first == lines_.end()) {
        lines_.push_back(std::move(replacement));
        ends_with_newline_ = true;
        return;
    }
    // NOTES: a row that comes back with the same values (a --devices worker's copy of a row it did
    // not tune) keeps its line as it was.
    if (tuning::csv_line(*first->row) == tuning::csv_line(row)) return;
    *first = std::move(replacement);
    lines_.erase(std::remove_if(std::next(first), lines_.end(), same_key), lines_.end());
}

template <class Key>
std::string TuneOutputCsvOf<Key>::text() const {
    std::string text;
    for (std::size_t i = 0; i < lines_.size(); ++i) {
        text += lines_[i].text;
        if (i + 1 < lines_.size() || ends_with_newline_) text += '\n';
    }
    return text;
}

template <class Key>
void TuneOutputCsvOf<Key>::write(const std::filesystem::path& path) const {
    tuning::write_csv_text_file(path, text());
}

template class TuneOutputCsvOf<ShapeKey>;
template class TuneOutputCsvOf<PagedShapeKey>;
template class TuneOutputCsvOf<TopkShapeKey>;

}  // namespace mqajit::tools
