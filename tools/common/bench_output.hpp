#pragma once
// What `mqajit bench` prints and writes for each shape in each clean_logits mode: one table line
// and one JSON row (the rows `mqajit report --bench` reads). Which shapes are timed together
// (the modes of one shape): group_modes_of_a_shape in shapes.hpp.

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/common/shapes.hpp"
#include "tools/common/timing.hpp"

namespace mqajit::tools {

struct BenchResult {
    BenchShape shape;      // its clean_logits set: the mode it ran in
    std::string arch;      // canonical, of the device
    int cu_num = 0;
    std::string kernel{};  // what the line reports: the tuned choice, the requested kernel, or the fastest
    std::string reason{};
    std::map<std::string, double> variants_us{};  // every candidate's median, when candidates were compared
    Timing chosen{};       // the kernel's timing
    Timing baseline{};     // the baseline kernel's, in the same mode and measurement
    double flops = 0;
    int kv_splits = 0;
    std::string logits_dtype = "float32";  // what the kernels wrote: float32 or bfloat16
    bool checked = false;
    std::string verdict{};  // " CHECK FAILED ..." for each failed check; empty when none failed
};

std::string bench_table_header();
std::string bench_table_line(const BenchResult& result);
nlohmann::json bench_json_row(const BenchResult& result);

}  // namespace mqajit::tools
