#pragma once
// The options of `mqajit bench`, for every operator: cmd_bench.cpp registers them and times
// mqa_logits (prefill); cmd_bench_paged.cpp times paged_mqa_logits (decode, --op paged_mqa_logits),
// cmd_bench_topk.cpp mqa_topk (--op mqa_topk).

#include <optional>
#include <string>
#include <vector>

namespace mqajit::cli {

struct BenchOptions {
    std::string op = "mqa_logits";
    std::optional<std::string> shapes;  // --shapes: glm5 (the default), deepseek, or a CSV of the op's shapes
    std::string variant;  // empty: what dispatch picks
    std::optional<std::string> clean_logits;  // --clean-logits: 0, 1 or 0,1
    int kv_splits = 0;    // prefill: forwarded to MqaLogitsOptions::kv_splits for every kernel but the baseline
    std::string logits_dtype = "float32";  // prefill: float32 or bfloat16 logits
    int runs = 50;
    int warmup = 5;
    bool check = false;
    bool json = false;
    std::string json_file;  // also write the JSON rows here
    // Decode shapes from flags (comma-separated lists; every combination is timed).
    std::optional<std::string> batch, next_n, heads, context_len;
    std::optional<int> head_dim, block_kv;
    std::optional<int> k;  // mqa_topk: keys selected per row (default 2048)

    bool decode_flags_given() const { return batch || next_n || heads || context_len || head_dim || block_kv; }
};

// `mqajit bench --op paged_mqa_logits`: the exit code.
int run_paged_bench(const BenchOptions& options);
// `mqajit bench --op mqa_topk`: the exit code.
int run_topk_bench(const BenchOptions& options);

// The kernels `spec` names: "all" -> none here (the caller lists the candidates), "a,b,c" -> those,
// a single name or "" -> none (one kernel: the requested or the tuned one).
std::vector<std::string> listed_variants(const std::string& spec);

}  // namespace mqajit::cli
