#pragma once
// Tuned rows as JSON objects for `mqajit db ... --json`: one member per table column (from
// ShapeKey::visit and TunedRow::visit_values) plus "origin".

#include <nlohmann/json.hpp>

#include "tuning_db/tuned_row.hpp"

namespace mqajit::tuning {

using Json = nlohmann::ordered_json;  // members keep the column order

Json to_json(const ShapeKey& key);
Json to_json(const TunedRow& row);

}  // namespace mqajit::tuning
