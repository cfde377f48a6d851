#pragma once
// Tuned rows as JSON objects for `mqajit db ... --json`: one member per table column (from the
// key's columns and TunedRowOf::visit_values) plus "origin".

#include <nlohmann/json.hpp>

#include "tuning_db/tuned_row.hpp"

namespace mqajit::tuning {

using Json = nlohmann::ordered_json;  // members keep the column order

namespace detail {
template <class T>
Json json_value(const T& value) {
    return value;
}
inline Json json_value(const std::optional<double>& value) { return value ? Json(*value) : Json(nullptr); }
}  // namespace detail

template <TableKey Key>
Json to_json(const Key& key) {
    Json object = Json::object();
    key.visit([&](std::string_view column, const auto& value) { object[std::string(column)] = detail::json_value(value); });
    return object;
}

template <class Key>
Json to_json(const TunedRowOf<Key>& row) {
    Json object = to_json(row.key);
    row.visit_values(
        [&](std::string_view column, const auto& value) { object[std::string(column)] = detail::json_value(value); });
    object["origin"] = row.origin;
    return object;
}

}  // namespace mqajit::tuning
