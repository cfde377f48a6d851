#include "tools/common/bench_output.hpp"

#include <fmt/format.h>

#include "tools/common/roofline.hpp"

namespace mqajit::tools {
std::string bench_table_header() {
    return fmt::format("{:>3} {:>6} {:>6} {:>5}  {:<36} {:>9} {:>7} {:>9} {:>7} {:>8} {:>7}", "H", "S", "N", "clean",
                       "kernel", "us", "TFLOP/s", "base us", "speedup", "floor us", "%floor");
}

std::string bench_table_line(const BenchResult& r) {
    const BenchShape& s = r.shape;
    const double floor = floor_us(r.flops, s.seq_len, s.seq_len_kv);
    return fmt::format("{:>3} {:>6} {:>6} {:>5}  {:<36} {:>9.1f} {:>7.0f} {:>9.1f} {:>6.2f}x {:>8.1f} {:>6.0f}%{}",
                       s.heads, s.seq_len, s.seq_len_kv, s.clean_logits.value_or(0), r.kernel, r.chosen.median_us,
                       r.flops / r.chosen.median_us * 1e-6, r.baseline.median_us,
                       r.baseline.median_us / r.chosen.median_us, floor, 100.0 * floor / r.chosen.median_us, r.verdict);
}

nlohmann::json bench_json_row(const BenchResult& r) {
    const BenchShape& s = r.shape;
    nlohmann::json variants = nlohmann::json::object();
    for (const auto& [name, us] : r.variants_us) variants[name] = us;
    return {{"arch", r.arch}, {"cu_num", r.cu_num}, {"heads", s.heads}, {"head_dim", s.head_dim},
            {"clean_logits", s.clean_logits.value_or(0)}, {"seq_len", s.seq_len}, {"seq_len_kv", s.seq_len_kv},
            {"kernel", r.kernel}, {"reason", r.reason}, {"variants_us", variants}, {"us", r.chosen.median_us},
            {"min_us", r.chosen.min_us}, {"flops", r.flops}, {"tflops", r.flops / r.chosen.median_us * 1e-6},
            {"baseline_us", r.baseline.median_us}, {"floor_us", floor_us(r.flops, s.seq_len, s.seq_len_kv)},
            {"runs", r.chosen.runs}, {"kv_splits", r.kv_splits}, {"logits_dtype", r.logits_dtype}, {"checked", r.checked},
            {"check_failed", !r.verdict.empty()}};
}

}  // namespace mqajit::tools
