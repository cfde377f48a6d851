#include "tools/common/paged_bench_output.hpp"

#include <fmt/format.h>

#include "tools/common/roofline.hpp"

namespace mqajit::tools {
namespace {

std::string microseconds(const std::optional<Timing>& t) { return t ? fmt::format("{:.1f}", t->median_us) : "-"; }

}  // namespace

std::string paged_bench_table_header() {
    return fmt::format("{:>5} {:>2} {:>3} {:>4} {:>7} {:>5}  {:<36} {:>8} {:>6} {:>8} {:>7} {:>8} {:>6}", "B", "n",
                       "H", "bkv", "context", "clean", "kernel", "us", "GB/s", "base us", "speedup", "floor us",
                       "%floor");
}

std::string paged_bench_table_line(const PagedBenchResult& r) {
    const PagedBenchShape& s = r.shape;
    const double floor = bytes_floor_us(static_cast<double>(r.floor_bytes));
    const bool both = r.chosen && r.baseline;
    return fmt::format("{:>5} {:>2} {:>3} {:>4} {:>7} {:>5}  {:<36} {:>8} {:>6} {:>8} {:>7} {:>8.1f} {:>6}{}",
                       s.batch, s.next_n, s.heads, s.block_kv, r.context, s.clean_logits.value_or(0), r.kernel,
                       microseconds(r.chosen),
                       r.chosen ? fmt::format("{:.0f}", r.floor_bytes / r.chosen->median_us * 1e-3) : "-",
                       microseconds(r.baseline),
                       both ? fmt::format("{:.2f}x", r.baseline->median_us / r.chosen->median_us) : "-", floor,
                       r.chosen ? fmt::format("{:.0f}%", 100.0 * floor / r.chosen->median_us) : "-", r.verdict);
}

nlohmann::json paged_bench_json_row(const PagedBenchResult& r) {
    const PagedBenchShape& s = r.shape;
    nlohmann::json variants = nlohmann::json::object();
    for (const auto& [name, us] : r.variants_us) variants[name] = us;
    const double floor = bytes_floor_us(static_cast<double>(r.floor_bytes));
    nlohmann::json row = {{"op", "paged_mqa_logits"}, {"arch", r.arch}, {"cu_num", r.cu_num},
                          {"batch", s.batch}, {"next_n", s.next_n}, {"heads", s.heads}, {"head_dim", s.head_dim},
                          {"block_kv", s.block_kv}, {"clean_logits", s.clean_logits.value_or(0)},
                          {"context_len", r.context}, {"kernel", r.kernel}, {"reason", r.reason},
                          {"variants_us", variants}, {"floor_bytes", r.floor_bytes}, {"floor_us", floor},
                          {"checked", r.checked}, {"check_failed", !r.verdict.empty()}};
    if (r.chosen) {
        row.update({{"us", r.chosen->median_us}, {"min_us", r.chosen->min_us}, {"runs", r.chosen->runs},
                    {"gb_per_s", r.floor_bytes / r.chosen->median_us * 1e-3},
                    {"floor_fraction", floor / r.chosen->median_us}});
    }
    if (r.baseline) row["baseline_us"] = r.baseline->median_us;
    return row;
}

}  // namespace mqajit::tools
