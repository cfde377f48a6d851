#pragma once
// What `mqajit bench --op paged_mqa_logits` prints and writes for each decode shape, context and
// mode: one table line and one JSON row. Times against the bytes floor (paged_floor_bytes at the
// H200's copy rate, roofline.hpp).

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "tools/common/paged_shapes.hpp"
#include "tools/common/timing.hpp"

namespace mqajit::tools {

struct PagedBenchResult {
    PagedBenchShape shape{};  // its clean_logits set: the mode it ran in
    int context = 0;        // the average context of this line
    std::string arch{};
    int cu_num = 0;
    std::string kernel{};     // the tuned choice, the requested kernel, or the fastest candidate
    std::string reason{};
    std::map<std::string, double> variants_us{};  // every candidate's median, when candidates were compared
    std::optional<Timing> chosen{};  // nullopt: not timed (its check failed)
    std::optional<Timing> baseline{};  // the baseline's in the same measurement; nullopt: not timed
    std::int64_t floor_bytes = 0;    // paged_floor_bytes of the timed problem
    bool checked = false;
    std::string verdict{};    // " CHECK FAILED ..." for each failed check; empty when none failed
};

std::string paged_bench_table_header();
std::string paged_bench_table_line(const PagedBenchResult& result);
nlohmann::json paged_bench_json_row(const PagedBenchResult& result);

}  // namespace mqajit::tools
