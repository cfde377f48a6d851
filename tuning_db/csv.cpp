#include "tuning_db/csv.hpp"

#include <map>
#include <optional>
#include <sstream>
#include <type_traits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/check.hpp"
#include "core/files.hpp"
#include "core/parse_number.hpp"
#include "core/utf8.hpp"
#include "variants/arch.hpp"

namespace mqajit::tuning {
namespace {

constexpr std::string_view kSpaces = " \t";

std::string_view trim(std::string_view text) {
    const auto first = text.find_first_not_of(kSpaces);
    if (first == std::string_view::npos) return {};
    return text.substr(first, text.find_last_not_of(kSpaces) - first + 1);
}

// Parses one field into a row member; returns a problem message or an empty string.
std::string parse_field(std::string_view column, std::string_view text, std::string& out) {
    (void)column;
    out = std::string(text);
    return {};
}

// NOTES: checked, so a number too large for its column is an error, never wrapped or saturated.
std::string parse_field(std::string_view column, std::string_view text, int& out) {
    std::string problem;
    if (auto value = parse_whole_int(text, &problem)) out = *value;
    return problem.empty() ? problem : fmt::format("{} {}", column, problem);
}

std::string parse_field(std::string_view column, std::string_view text, std::int64_t& out) {
    std::string problem;
    if (auto value = parse_whole_int64(text, &problem)) out = *value;
    return problem.empty() ? problem : fmt::format("{} {}", column, problem);
}

std::string parse_field(std::string_view column, std::string_view text, double& out) {
    std::string problem;
    if (auto value = parse_finite_double(text, &problem)) out = *value;
    return problem.empty() ? problem : fmt::format("{} {}", column, problem);
}

std::string parse_field(std::string_view column, std::string_view text, std::optional<double>& out) {
    if (text.empty()) {
        out.reset();
        return {};
    }
    double value = 0;
    auto problem = parse_field(column, text, value);
    if (problem.empty()) out = value;
    return problem;
}

template <class Key>
bool is_required(std::string_view column) {
    // NOTES: the measurements and provenance past `us` are optional: the prefill tables lack them.
    // The prefill clean_logits too: tables written before it existed mean kCleanLogitsWithoutColumn.
    if (column == "clean_logits") return !Key::kOp.mode_without_column.has_value();
    // The logits dtype too: a table without it holds float32 rows (the key's default).
    if (column == "logits_dtype") return false;
    return column != "baseline_us" && column != "runner_up" && column != "tuner_version" &&
           column != "compiler_version" && column != "driver_version" && column != "date";
}

// Whether a header (table column names) has every required key column of Key's table.
template <class Key>
bool has_key_columns(const std::map<std::string, std::size_t, std::less<>>& index_of) {
    bool all = true;
    Key{}.visit([&](std::string_view column, const auto&) {
        all = all && (!is_required<Key>(column) || index_of.contains(column));
    });
    return all;
}

// " (its columns are those of a paged_mqa_logits table: read it as one, e.g. `--op paged_mqa_logits`)"
// when the header belongs to another operator's table; empty otherwise.
template <class Key>
std::string other_table_hint(const std::map<std::string, std::size_t, std::less<>>& index_of) {
    std::string hint;
    for_each_table_key([&]<class Other>(std::type_identity<Other>) {
        if constexpr (!std::is_same_v<Other, Key>) {
            if (hint.empty() && has_key_columns<Other>(index_of))
                hint = fmt::format(" (its key columns are those of a {0} table: read it as one, e.g. `--op {0}`)",
                                   Other::kOp.name);
        }
    });
    return hint;
}

// A key column of another operator's table that Key's table lacks ("k", "next_n", ...), named in
// the header, with that table's operator; nullopt when there is none. Such a file is the other
// table's: read as Key's, its rows would lose a key column without a word.
template <class Key>
std::optional<std::pair<std::string, std::string_view>> foreign_key_column(
    const std::map<std::string, std::size_t, std::less<>>& index_of) {
    std::optional<std::pair<std::string, std::string_view>> found;
    const auto is_own = [](std::string_view column) {
        bool own = false;
        Key{}.visit([&](std::string_view name, const auto&) { own = own || name == column; });
        return own;
    };
    for_each_table_key([&]<class Other>(std::type_identity<Other>) {
        if constexpr (!std::is_same_v<Other, Key>) {
            Other{}.visit([&](std::string_view column, const auto&) {
                if (!found && !is_own(column) && index_of.contains(column))
                    found.emplace(std::string(column), Other::kOp.name);
            });
        }
    });
    return found;
}

// Maps each table column to its index in the file's header.
struct HeaderLayout {
    std::map<std::string, std::size_t, std::less<>> index_of;
    std::size_t num_fields = 0;
};

template <class Key>
std::optional<HeaderLayout> read_header(const std::vector<std::string>& fields, std::string& problem) {
    HeaderLayout layout;
    layout.num_fields = fields.size();
    for (std::size_t i = 0; i < fields.size(); ++i) {
        std::string name = fields[i];
        if (name == csv_column_name("arch")) name = "arch";
        const auto [found, inserted] = layout.index_of.emplace(name, i);
        if (!inserted) {
            problem = fmt::format("columns {} and {} both name '{}'; keep one", found->second + 1, i + 1,
                                  csv_column_name(name));
            return std::nullopt;
        }
    }
    std::vector<std::string> missing;
    auto require = [&](std::string_view column, const auto&) {
        if (is_required<Key>(column) && !layout.index_of.contains(column))
            missing.emplace_back(csv_column_name(column));
    };
    const TunedRowOf<Key> row;
    row.key.visit(require);
    row.visit_values(require);
    if (!missing.empty()) {
        std::vector<std::string> required;
        auto list_required = [&](std::string_view column, const auto&) {
            if (is_required<Key>(column)) required.emplace_back(csv_column_name(column));
        };
        row.key.visit(list_required);
        row.visit_values(list_required);
        problem = fmt::format("the header lacks column(s) {}{}; a {} table's header must name at least: {} (the file "
                              "was not read)",
                              fmt::join(missing, ", "), other_table_hint<Key>(layout.index_of), Key::kOp.name,
                              fmt::join(required, ","));
        return std::nullopt;
    }
    if (const auto foreign = foreign_key_column<Key>(layout.index_of)) {
        problem = fmt::format("the header names {}, a key column of the {} table that a {} table does not have: the "
                              "file is that table's; read it as one (e.g. `--op {}`)",
                              csv_column_name(foreign->first), foreign->second, Key::kOp.name, foreign->second);
        return std::nullopt;
    }
    return layout;
}

template <class Key>
std::string parse_row(const HeaderLayout& layout, const std::vector<std::string>& fields, TunedRowOf<Key>& row) {
    if (fields.size() != layout.num_fields)
        return fmt::format("the row has {} fields but the header has {}", fields.size(), layout.num_fields);
    std::string problem;
    if constexpr (has_mode_column<Key>) row.key.clean_logits = Key::kOp.mode_without_column.value_or(0);
    auto read = [&](std::string_view column, auto& value) {
        auto found = layout.index_of.find(column);
        if (!problem.empty() || found == layout.index_of.end()) return;
        problem = parse_field(column, fields[found->second], value);
    };
    row.key.visit(read);
    row.visit_values(read);
    if (!problem.empty()) return problem;
    if constexpr (requires { row.key.logits_dtype; }) {
        if (row.key.logits_dtype.empty()) row.key.logits_dtype = kLogitsDtypes[0];  // not said: float32
    }
    try {
        row.key.arch = Arch::parse(row.key.arch).name;
    } catch (const Error& e) {
        return e.what();
    }
    auto backend = normalize_backend(row.backend);
    if (!backend)
        return fmt::format("backend '{}' is unknown; use jit (or flydsl) or baseline (or triton)", row.backend);
    row.backend = *backend;
    // NOTES: imported Triton rows carry Triton's own config in `variant`; to us they all mean
    // the one pre-built baseline kernel.
    if (row.backend == kBackendBaseline) row.variant = std::string(kBackendBaseline);
    if (auto invalid = row_problem(row)) return *invalid;
    return {};
}

std::string quote_if_needed(std::string_view text) {
    const bool needs_quotes = text.find_first_of(",\"\r\n") != std::string_view::npos ||
                              (!text.empty() && (text.front() == ' ' || text.back() == ' ' ||
                                                 text.front() == '\t' || text.back() == '\t'));
    if (!needs_quotes) return std::string(text);
    std::string quoted = "\"";
    for (char c : text) {
        if (c == '"') quoted += '"';
        quoted += c;
    }
    quoted += '"';
    return quoted;
}

std::string format_field(const std::string& value) { return quote_if_needed(value); }
std::string format_field(const std::optional<double>& value) { return value ? fmt::format("{}", *value) : ""; }
template <class T>
    requires std::is_arithmetic_v<T>
std::string format_field(T value) {
    return fmt::format("{}", value);
}

}  // namespace

std::string_view csv_column_name(std::string_view column) { return column == "arch" ? "gfx" : column; }

std::vector<std::string> split_csv_line(std::string_view line) {
    std::vector<std::string> fields;
    std::size_t pos = 0;
    while (true) {
        const auto start = line.find_first_not_of(kSpaces, pos);
        if (start != std::string_view::npos && line[start] == '"') {
            std::string field;
            std::size_t i = start + 1;
            while (true) {
                MQAJIT_CHECK(i < line.size(), "a quoted field that starts at column {} is never closed; close "
                             "it with \" (fields cannot span lines)", start + 1);
                if (line[i] == '"') {
                    if (i + 1 < line.size() && line[i + 1] == '"') {
                        field += '"';
                        i += 2;
                        continue;
                    }
                    ++i;
                    break;
                }
                field += line[i++];
            }
            const auto after = line.find_first_not_of(kSpaces, i);
            MQAJIT_CHECK(after == std::string_view::npos || line[after] == ',',
                         "text follows the closing quote at column {}; put a comma after the quoted field", i);
            fields.push_back(std::move(field));
            if (after == std::string_view::npos) return fields;
            pos = after + 1;
        } else {
            const auto comma = line.find(',', pos);
            fields.emplace_back(trim(line.substr(pos, comma == std::string_view::npos ? std::string_view::npos
                                                                                   : comma - pos)));
            if (comma == std::string_view::npos) return fields;
            pos = comma + 1;
        }
    }
}

template <class Key>
CsvRowsOf<Key> parse_csv(std::string_view text, std::string_view source) {
    CsvRowsOf<Key> result;
    // NOTES: editors on Windows start UTF-8 files with a byte-order mark; it is not part of the header.
    if (text.starts_with(kUtf8ByteOrderMark)) text.remove_prefix(kUtf8ByteOrderMark.size());
    std::optional<HeaderLayout> layout;
    std::size_t line_number = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
        const auto newline = text.find('\n', pos);
        std::string_view line = text.substr(pos, newline == std::string_view::npos ? std::string_view::npos
                                                                                   : newline - pos);
        pos = newline == std::string_view::npos ? text.size() : newline + 1;
        ++line_number;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (trim(line).empty()) continue;
        const std::string place = fmt::format("{}:{}", source, line_number);
        if (const auto bad = invalid_utf8_at(line)) {
            result.problems.push_back({place, fmt::format("byte 0x{:02X} at column {} is not valid UTF-8; save the "
                                                          "file as UTF-8{}",
                                                          static_cast<unsigned char>(line[*bad]), *bad + 1,
                                                          layout ? "; row skipped" : "")});
            if (!layout) return result;
            continue;
        }
        std::vector<std::string> fields;
        try {
            fields = split_csv_line(line);
        } catch (const Error& e) {
            result.problems.push_back({place, e.what()});
            if (!layout) return result;
            continue;
        }
        if (!layout) {
            std::string problem;
            layout = read_header<Key>(fields, problem);
            if (!layout) {
                result.problems.push_back({place, problem});
                return result;
            }
            continue;
        }
        TunedRowOf<Key> row;
        if (auto problem = parse_row(*layout, fields, row); !problem.empty()) {
            result.problems.push_back({place, problem + "; row skipped"});
            continue;
        }
        row.origin = place;
        result.rows.push_back(std::move(row));
    }
    if (!layout) {
        result.problems.push_back({fmt::format("{}:1", source),
                                   fmt::format("the file has no header line (it is empty or blank); a table starts "
                                               "with its column names: {}",
                                               csv_header<Key>())});
    }
    return result;
}

template <class Key>
CsvRowsOf<Key> read_csv_file(const std::filesystem::path& file) {
    return parse_csv<Key>(read_regular_file(file, "tuning table"), file.string());
}

template <class Key>
std::string csv_header() {
    std::vector<std::string_view> names;
    auto add = [&](std::string_view column, const auto&) { names.push_back(csv_column_name(column)); };
    const TunedRowOf<Key> row;
    row.key.visit(add);
    row.visit_values(add);
    return fmt::format("{}", fmt::join(names, ","));
}

namespace {

template <class Key>
std::string any_csv_line(const TunedRowOf<Key>& row) {
    std::vector<std::string> fields;
    auto add = [&](std::string_view, const auto& value) { fields.push_back(format_field(value)); };
    row.key.visit(add);
    row.visit_values(add);
    return fmt::format("{}", fmt::join(fields, ","));
}

template <class Key>
std::string any_csv_line(const TunedRowOf<Key>& row, std::span<const std::string> columns) {
    std::map<std::string, std::string, std::less<>> field_of;
    auto add = [&](std::string_view column, const auto& value) {
        field_of.emplace(std::string(csv_column_name(column)), format_field(value));
    };
    row.key.visit(add);
    row.visit_values(add);
    std::vector<std::string> fields;
    for (const std::string& column : columns) {
        const auto found = field_of.find(column == "arch" ? csv_column_name(column) : std::string_view(column));
        fields.push_back(found == field_of.end() ? std::string() : found->second);
    }
    return fmt::format("{}", fmt::join(fields, ","));
}

template <class Key>
void any_write_csv(std::ostream& out, std::span<const TunedRowOf<Key>> rows) {
    out << csv_header<Key>() << '\n';
    for (const TunedRowOf<Key>& row : rows) out << any_csv_line(row) << '\n';
}

template <class Key>
void any_write_csv_file(const std::filesystem::path& file, std::span<const TunedRowOf<Key>> rows) {
    std::ostringstream text;
    any_write_csv(text, rows);
    write_csv_text_file(file, text.str());
}

}  // namespace

std::string csv_line(const TunedRow& row) { return any_csv_line(row); }
std::string csv_line(const PagedTunedRow& row) { return any_csv_line(row); }
std::string csv_line(const TopkTunedRow& row) { return any_csv_line(row); }
std::string csv_line(const TunedRow& row, std::span<const std::string> columns) { return any_csv_line(row, columns); }
std::string csv_line(const PagedTunedRow& row, std::span<const std::string> columns) {
    return any_csv_line(row, columns);
}
std::string csv_line(const TopkTunedRow& row, std::span<const std::string> columns) {
    return any_csv_line(row, columns);
}
void write_csv(std::ostream& out, std::span<const TunedRow> rows) { any_write_csv(out, rows); }
void write_csv(std::ostream& out, std::span<const PagedTunedRow> rows) { any_write_csv(out, rows); }
void write_csv(std::ostream& out, std::span<const TopkTunedRow> rows) { any_write_csv(out, rows); }
void write_csv_file(const std::filesystem::path& file, std::span<const TunedRow> rows) {
    any_write_csv_file(file, rows);
}
void write_csv_file(const std::filesystem::path& file, std::span<const PagedTunedRow> rows) {
    any_write_csv_file(file, rows);
}
void write_csv_file(const std::filesystem::path& file, std::span<const TopkTunedRow> rows) {
    any_write_csv_file(file, rows);
}

void write_csv_text_file(const std::filesystem::path& file, std::string_view text) {
    write_file_atomically(file, text);
}

#define MQAJIT_CSV_FOR(Key)                                                              \
    template CsvRowsOf<Key> parse_csv<Key>(std::string_view, std::string_view);          \
    template CsvRowsOf<Key> read_csv_file<Key>(const std::filesystem::path&);            \
    template std::string csv_header<Key>();
MQAJIT_CSV_FOR(ShapeKey)
MQAJIT_CSV_FOR(PagedShapeKey)
MQAJIT_CSV_FOR(TopkShapeKey)
#undef MQAJIT_CSV_FOR

}  // namespace mqajit::tuning
