#pragma once
// What the operators' `mqajit tune` share: its options (cmd_tune.cpp registers them and tunes
// mqa_logits; cmd_tune_paged.cpp tunes paged_mqa_logits, cmd_tune_topk.cpp mqa_topk), the live
// GPU, the tuner settings and the interrupt flag.

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "runtime/device.hpp"
#include "tools/common/candidate_search.hpp"
#include "tools/common/tune_watchdog.hpp"

namespace mqajit::cli {

struct TuneOptions {
    std::string op = "mqa_logits";
    std::string input, output, run_config, db, json_file;
    std::string devices = "0";
    std::optional<std::string> clean_logits;  // --clean-logits: 0, 1 or 0,1
    std::optional<std::string> logits_dtype;  // --logits-dtype: float32 or bfloat16, for every input row
    std::optional<std::string> context_len;   // decode --run-config: the contexts to re-time rows over
    std::optional<int> k;                     // mqa_topk: keys selected per row (default 2048)
    int runs = 50;
    double prune_factor = tools::kDefaultPruneFactor;
    double min_gain_percent = 100 * tools::kDefaultMinGain;
    double candidate_timeout_s = tools::kDefaultCandidateTimeoutS;
    std::vector<std::string> exclude;
    bool no_prune = false;
    bool force = false;
};

// Set by SIGINT once install_interrupt_handler() ran; the tuner stops between candidates.
extern std::atomic<bool> g_interrupted;
void install_interrupt_handler();

// The live GPU; Error(unsupported) "tuning needs a GPU: ..." without one.
Device& live_device();
tools::TuneSettings settings_for(Device& device, const TuneOptions& options);
// The modes --clean-logits names; nullopt when it is not given.
std::optional<std::vector<int>> modes_of(const TuneOptions& options);

// `mqajit tune --op paged_mqa_logits -i -o` and `--run-config`: exit codes (cmd_tune_paged.cpp).
int run_paged_tune(const TuneOptions& options);
int run_paged_config_check(const TuneOptions& options);
// `--op mqa_topk` (cmd_tune_topk.cpp).
int run_topk_tune(const TuneOptions& options);
int run_topk_config_check(const TuneOptions& options);

}  // namespace mqajit::cli
