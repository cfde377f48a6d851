#pragma once
// Tuning tables as CSV, one layout per operator, its key columns then the value columns:
//   mqa_logits:       gfx,cu_num,heads,head_dim[,clean_logits],seq_len,seq_len_kv,backend,variant,us[,...]
//   paged_mqa_logits: gfx,cu_num,next_n,heads,head_dim,block_kv,clean_logits,batch,backend,variant,us[,...]
//   mqa_topk:         gfx,cu_num,heads,head_dim,k,seq_len,seq_len_kv,backend,variant,us[,...]
// Columns are found by header name, so their order is free and unknown columns are ignored; a key
// column of another operator's table (k, next_n, ...) is not unknown: such a file is refused. A
// prefill table without clean_logits holds clean_logits=1 rows (kCleanLogitsWithoutColumn); a
// paged table must have the column. A malformed row is reported with its file:line and skipped;
// the rest of the file loads.

#include <filesystem>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tuning_db/tuned_row.hpp"

namespace mqajit::tuning {

struct RowProblem {
    std::string place;    // "path/file.csv:12"
    std::string message;  // what is wrong and what to do
};

template <class Key>
struct CsvRowsOf {
    std::vector<TunedRowOf<Key>> rows;  // each with origin "<source>:<line>"
    std::vector<RowProblem> problems;
};
using CsvRows = CsvRowsOf<ShapeKey>;

// The CSV name of a table column: the arch column is "gfx" in the prefill tables.
std::string_view csv_column_name(std::string_view column);

// Parses CSV text as a table of Key's operator; `source` names it in origins and problems (usually
// the file path). A header that lacks Key's columns but has another operator's says so.
template <class Key = ShapeKey>
CsvRowsOf<Key> parse_csv(std::string_view text, std::string_view source);
// Reads and parses a file; throws mqajit::Error(io) when it cannot be read.
template <class Key = ShapeKey>
CsvRowsOf<Key> read_csv_file(const std::filesystem::path& file);

// Splits one CSV line into fields: commas separate, double quotes protect commas and quotes
// ("" inside quotes is one quote), spaces around unquoted fields are dropped. Throws
// mqajit::Error(invalid_argument) for an unterminated quote or text after a closing quote.
std::vector<std::string> split_csv_line(std::string_view line);

template <class Key = ShapeKey>
std::string csv_header();
std::string csv_line(const TunedRow& row);
std::string csv_line(const PagedTunedRow& row);
std::string csv_line(const TopkTunedRow& row);
// The row's fields for a file whose header names `columns` (CSV names; "arch" also means "gfx"),
// in their order; a column the row does not have is left empty.
std::string csv_line(const TunedRow& row, std::span<const std::string> columns);
std::string csv_line(const PagedTunedRow& row, std::span<const std::string> columns);
std::string csv_line(const TopkTunedRow& row, std::span<const std::string> columns);
void write_csv(std::ostream& out, std::span<const TunedRow> rows);
void write_csv(std::ostream& out, std::span<const PagedTunedRow> rows);
void write_csv(std::ostream& out, std::span<const TopkTunedRow> rows);
// Writes next to `file` first and renames it into place, so a reader never sees half a file.
void write_csv_file(const std::filesystem::path& file, std::span<const TunedRow> rows);
void write_csv_file(const std::filesystem::path& file, std::span<const PagedTunedRow> rows);
void write_csv_file(const std::filesystem::path& file, std::span<const TopkTunedRow> rows);
// Writes CSV text exactly as given, the same way (beside `file`, then renamed into place).
void write_csv_text_file(const std::filesystem::path& file, std::string_view text);

}  // namespace mqajit::tuning
