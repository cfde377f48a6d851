#include "tuning_db/row_json.hpp"

namespace mqajit::tuning {
namespace {

template <class T>
Json json_value(const T& value) {
    return value;
}

Json json_value(const std::optional<double>& value) {
    return value ? Json(*value) : Json(nullptr);
}

}  // namespace

Json to_json(const ShapeKey& key) {
    Json object = Json::object();
    key.visit([&](std::string_view column, const auto& value) { object[std::string(column)] = json_value(value); });
    return object;
}

Json to_json(const TunedRow& row) {
    Json object = to_json(row.key);
    row.visit_values([&](std::string_view column, const auto& value) { object[std::string(column)] = json_value(value); });
    object["origin"] = row.origin;
    return object;
}

}  // namespace mqajit::tuning
