#pragma once
// What the tuning code knows about a table's key, all derived from one list of its columns.
//
// Each operator's key type (shape_keys.hpp) lists its columns once, in a static `columns(f, keys...)`
// that calls f(name, role, keys.member...) per column in table order; with no keys it calls
// f(name, role), so the list also serves at compile time. Its static `kOp` (a TableOp) names the
// operator, its SQLite table and its shipped files. From these two, the SQL schema and statements,
// the CSV header, JSON members, the group a lookup searches in and the lengths it searches along
// are derived (row_table.cpp, csv.cpp, row_json.cpp, tuned_group.hpp).

#include <array>
#include <compare>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include <fmt/format.h>

namespace mqajit {

// How the lookup rule treats a key column.
enum class ColumnRole {
    identity,  // must match the call's exactly (arch, heads, head_dim, ...)
    device,    // cu_num: the nearest tuned value stands in for an untuned one
    mode,      // clean_logits, 0 or 1: the other mode's rows stand in for a mode with none
    output,    // logits_dtype: the float32 rows stand in for a dtype with none
    length,    // the floor rule: the largest tuned value not above the call's (below all, the smallest)
};

template <ColumnRole Role, int Rank = 0>
struct ColumnTag {
    static constexpr ColumnRole role = Role;
    static constexpr int rank = Rank;  // lengths only: the order the rule searches them in, 0 first
};
inline constexpr ColumnTag<ColumnRole::identity> kIdentityColumn{};
inline constexpr ColumnTag<ColumnRole::device> kDeviceColumn{};
inline constexpr ColumnTag<ColumnRole::mode> kModeColumn{};
inline constexpr ColumnTag<ColumnRole::output> kOutputColumn{};
template <int Rank>
inline constexpr ColumnTag<ColumnRole::length, Rank> kLengthColumn{};

template <class Tag>
inline constexpr bool is_length_tag = std::remove_cvref_t<Tag>::role == ColumnRole::length;

// One operator's table: what a key type says about itself besides its columns.
struct TableOp {
    std::string_view name;        // the operator, as `--op` and Python's op= spell it: "mqa_logits"
    std::string_view table;       // its SQLite table in the system and user databases
    // Shipped tuned CSVs under configs/ and configs/model_configs/: names starting with
    // tuned_prefix and ending with tuned_suffix (config_files.hpp also says which op owns a name).
    std::string_view tuned_prefix;
    std::string_view tuned_suffix;
    // The clean_logits of a row read from a CSV without that column; nullopt: the column is required.
    std::optional<int> mode_without_column;
    std::string_view tune_command;  // how a table is tuned, for the messages: "mqajit tune"
};

// A tuning table's key type: a `kOp` descriptor, a `columns` list, a `cu_num` member (the device
// column), a `clean_logits` member where the table has a mode column, and a total order.
template <class Key>
concept TableKey = requires(const Key& key) {
    { Key::kOp } -> std::convertible_to<TableOp>;
    { key.cu_num } -> std::convertible_to<int>;
    key <=> key;
};

// Whether a key type has the clean_logits mode column (mqa_topk's table has none).
template <class Key>
inline constexpr bool has_mode_column = requires(const Key& key) {
    { key.clean_logits } -> std::convertible_to<int>;
};

// f(column, value) for each column of `key`, in table order.
template <class Key, class F>
void visit_key(Key& key, F&& f) {
    std::remove_const_t<Key>::columns([&](std::string_view column, auto, auto& value) { f(column, value); }, key);
}

// The number of length columns of a key type, and their names in search order.
template <class Key>
constexpr std::size_t num_lengths() {
    std::size_t count = 0;
    Key::columns([&](std::string_view, auto tag) { count += is_length_tag<decltype(tag)> ? 1 : 0; });
    return count;
}

template <class Key>
using Lengths = std::array<std::int64_t, num_lengths<Key>()>;

template <class Key>
constexpr std::array<std::string_view, num_lengths<Key>()> length_names() {
    std::array<std::string_view, num_lengths<Key>()> names{};
    Key::columns([&](std::string_view column, auto tag) {
        if constexpr (is_length_tag<decltype(tag)>) names[decltype(tag)::rank] = column;
    });
    return names;
}

template <class Key>
constexpr bool is_length_column(std::string_view column) {
    bool found = false;
    Key::columns([&](std::string_view name, auto tag) { found = found || (is_length_tag<decltype(tag)> && name == column); });
    return found;
}

// The key's lengths in search order.
template <TableKey Key>
Lengths<Key> lengths_of(const Key& key) {
    Lengths<Key> lengths{};
    Key::columns([&](std::string_view, auto tag, const auto& value) {
        if constexpr (is_length_tag<decltype(tag)>) lengths[decltype(tag)::rank] = value;
    }, key);
    return lengths;
}

// A lookup searches within a group: the key without its lengths. A group is kept as a key whose
// lengths are 0.
template <TableKey Key>
Key group_of(Key key) {
    Key::columns([](std::string_view, auto tag, auto& value) {
        if constexpr (is_length_tag<decltype(tag)>) value = 0;
    }, key);
    return key;
}

// Orders keys by their group alone, lengths ignored.
template <TableKey Key>
std::strong_ordering compare_groups(const Key& a, const Key& b) {
    std::strong_ordering order = std::strong_ordering::equal;
    Key::columns([&](std::string_view, auto tag, const auto& x, const auto& y) {
        if constexpr (!is_length_tag<decltype(tag)>) {
            if (order == 0) order = x <=> y;
        }
    }, a, b);
    return order;
}

template <TableKey Key>
bool same_group(const Key& a, const Key& b) {
    return compare_groups(a, b) == 0;
}

// Whether two keys differ at most in their device and mode columns (and lengths): rows of one can
// stand in for the other.
template <TableKey Key>
bool same_identity(const Key& a, const Key& b) {
    bool same = true;
    Key::columns([&](std::string_view, auto tag, const auto& x, const auto& y) {
        if constexpr (decltype(tag)::role == ColumnRole::identity) same = same && x == y;
    }, a, b);
    return same;
}

// A transparent comparator for maps keyed by groups.
struct GroupLess {
    using is_transparent = void;
    template <TableKey Key>
    bool operator()(const Key& a, const Key& b) const {
        return compare_groups(a, b) < 0;
    }
};

// "column=value ..." for the columns whose role `keep` accepts.
template <TableKey Key, class Keep>
std::string describe_columns(const Key& key, Keep keep) {
    std::string text;
    Key::columns([&](std::string_view column, auto tag, const auto& value) {
        if (!keep(decltype(tag)::role)) return;
        if (!text.empty()) text += ' ';
        text += fmt::format("{}={}", column, value);
    }, key);
    return text;
}

// "arch=gfx950 cu_num=256 heads=32 head_dim=128 clean_logits=0 seq_len=1024 seq_len_kv=8192"
template <TableKey Key>
std::string to_string(const Key& key) {
    return describe_columns(key, [](ColumnRole) { return true; });
}

// The group's columns: "arch=sm_90a cu_num=132 heads=32 head_dim=128 clean_logits=0"
template <TableKey Key>
std::string group_string(const Key& key) {
    return describe_columns(key, [](ColumnRole role) { return role != ColumnRole::length; });
}

// The identity columns: "arch=sm_90a heads=32 head_dim=128"
template <TableKey Key>
std::string identity_string(const Key& key) {
    return describe_columns(key, [](ColumnRole role) { return role == ColumnRole::identity; });
}

// The logits dtypes a key's output column takes; the first is the one whose rows stand in for the others.
inline constexpr std::array<std::string_view, 2> kLogitsDtypes{"float32", "bfloat16"};

// What is wrong with a key (an empty arch, a size that is not positive, a mode other than 0 or 1,
// a logits dtype other than float32 or bfloat16), or nullopt. The arch's spelling is not checked here.
template <TableKey Key>
std::optional<std::string> key_problem(const Key& key) {
    std::optional<std::string> problem;
    Key::columns([&](std::string_view column, auto tag, const auto& value) {
        if (problem) return;
        if constexpr (decltype(tag)::role == ColumnRole::output) {
            if (value != kLogitsDtypes[0] && value != kLogitsDtypes[1])
                problem = fmt::format("{} is '{}'; it must be float32 or bfloat16", column, value);
        } else if constexpr (std::is_same_v<std::remove_cvref_t<decltype(value)>, std::string>) {
            if (value.empty()) problem = "the arch (gfx column) is empty; give one like sm_90a or gfx950";
        } else if constexpr (decltype(tag)::role == ColumnRole::mode) {
            if (value != 0 && value != 1) problem = fmt::format("{} is {}; it must be 0 or 1", column, value);
        } else {
            if (value <= 0) problem = fmt::format("{} is {}; sizes must be positive", column, value);
        }
    }, key);
    return problem;
}

}  // namespace mqajit
