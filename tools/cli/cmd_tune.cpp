// mqajit tune -i untuned.csv -o tuned.csv: tunes each shape on the live GPU (every candidate
// verified against the reference before it is timed; a line per candidate with an ETA) and writes
// each finished row at once to the output CSV and the user database, so an interrupt loses nothing
// finished.
// mqajit tune ... --json-file FILE: also every candidate's outcome per shape, as bench JSON rows.
// mqajit tune ... --devices 0,1,...: one worker process per GPU, their rows merged at the end.
// A candidate that hangs past --candidate-timeout or faults ends the run (exit 3) naming itself;
// --exclude leaves it out of the rerun.
// mqajit tune --run-config tuned.csv: re-checks and re-times every row of a tuned table.
// --op paged_mqa_logits: the decode op (cmd_tune_paged.cpp), through the same loops (tune_loop.hpp).

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>

#include "core/check.hpp"
#include "core/settings.hpp"
#include "mqajit/mqa_topk.hpp"
#include "runtime/backend.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/tune_command.hpp"
#include "tools/cli/tune_loop.hpp"
#include "tools/cli/number_options.hpp"
#include "tools/common/progress.hpp"
#include "tools/common/shapes.hpp"
#include "tools/common/tune_json.hpp"
#include "tools/common/tune_output_csv.hpp"
#include "tools/common/tune_watchdog.hpp"
#include "tools/common/tune_workers_plan.hpp"
#include "tools/common/tune_workers_spawn.hpp"
#include "tools/common/tuner.hpp"
#include "tuning_db/csv.hpp"
#include "tuning_db/tuning_db.hpp"

namespace mqajit::cli {

std::atomic<bool> g_interrupted{false};

extern "C" void on_interrupt(int) { g_interrupted.store(true); }

void install_interrupt_handler() { std::signal(SIGINT, on_interrupt); }

Device& live_device() {
    const DriverStatus status = live_driver_status();
    MQAJIT_CHECK_KIND(unsupported, status.available, "tuning needs a GPU: {}", status.message);
    return *live_backend().current_device();
}

tools::TuneSettings settings_for(Device& device, const TuneOptions& o) {
    return tools::TuneSettings{.timed_runs = o.runs, .warmup_runs = 5, .prune_factor = o.no_prune ? 0.0 : o.prune_factor,
                               .min_gain = o.min_gain_percent / 100,
                               .compiler_version = tools::kernel_compiler_version(live_backend()),
                               .driver_version = device.driver_version(), .interrupted = &g_interrupted,
                               .excluded = o.exclude};
}

std::optional<std::vector<int>> modes_of(const TuneOptions& o) {
    if (!o.clean_logits) return std::nullopt;
    return tools::parse_clean_logits_modes("--clean-logits", *o.clean_logits);
}

namespace {

// Removes the workers' scratch folder however the run ends; the merge has taken what it holds.
struct ScratchDir {
    std::filesystem::path path;
    explicit ScratchDir(std::filesystem::path p) : path(std::move(p)) { std::filesystem::create_directories(path); }
    ~ScratchDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
};

// The input's shapes, each in the mode it is tuned in (tools::in_modes).
std::vector<tools::BenchShape> shapes_to_tune(const TuneOptions& o) {
    std::vector<tools::BenchShape> shapes = tools::read_shapes_csv(o.input);
    if (o.logits_dtype) {
        for (tools::BenchShape& shape : shapes) shape.logits_dtype = *o.logits_dtype;
    }
    return tools::in_modes(shapes, modes_of(o));
}

// Tunes on several GPUs: one worker process per GPU (this program, `tune` on its share of the
// shapes with CUDA_VISIBLE_DEVICES showing it one GPU), each writing its own CSV and the shared
// user database; the workers' CSVs are then merged into the output.
int run_tune_workers(const TuneOptions& o, const std::vector<int>& devices) {
    const std::vector<tools::BenchShape> shapes = shapes_to_tune(o);
    const std::optional<std::string> inherited = tools::inherited_environment("CUDA_VISIBLE_DEVICES");
    const std::filesystem::path output = std::filesystem::absolute(o.output);
    const ScratchDir scratch(output.parent_path() / fmt::format(".{}.workers-{}", output.filename().string(), getpid()));
    const auto parts = tools::split_round_robin(shapes, devices.size());

    std::vector<tools::WorkerSpec> workers;
    std::vector<std::pair<std::filesystem::path, const std::vector<tools::BenchShape>*>> worker_csvs;
    std::vector<std::filesystem::path> worker_jsons;
    for (std::size_t i = 0; i < devices.size(); ++i) {
        if (parts[i].empty()) continue;
        const auto part_csv = scratch.path / fmt::format("gpu{}_untuned.csv", devices[i]);
        const auto worker_csv = scratch.path / fmt::format("gpu{}_tuned.csv", devices[i]);
        const auto worker_json = scratch.path / fmt::format("gpu{}_tune.json", devices[i]);
        tools::write_shapes_csv(part_csv, parts[i]);
        // NOTES: the worker starts from the output's rows, so it skips shapes already tuned with its
        // tuner, compiler and driver exactly as the single-GPU path does.
        if (std::filesystem::exists(output)) std::filesystem::copy_file(output, worker_csv);
        std::vector<std::string> argv = {tools::self_executable(), "tune", "-i", part_csv.string(), "-o",
                                         worker_csv.string(), "--devices", "0", "--runs", std::to_string(o.runs)};
        if (!o.db.empty()) argv.insert(argv.end(), {"--db", std::filesystem::absolute(o.db).string()});
        if (o.force) argv.push_back("--force");
        if (o.no_prune) argv.push_back("--no-prune");
        else argv.insert(argv.end(), {"--prune-factor", fmt::format("{}", o.prune_factor)});
        argv.insert(argv.end(), {"--candidate-timeout", fmt::format("{}", o.candidate_timeout_s)});
        argv.insert(argv.end(), {"--min-gain", fmt::format("{}", o.min_gain_percent)});
        if (!o.exclude.empty()) argv.insert(argv.end(), {"--exclude", fmt::format("{}", fmt::join(o.exclude, ","))});
        if (!o.json_file.empty()) {
            argv.insert(argv.end(), {"--json-file", worker_json.string()});
            worker_jsons.push_back(worker_json);
        }
        workers.push_back({.label = fmt::format("GPU {}", devices[i]), .argv = std::move(argv),
                           .environment = {{"CUDA_VISIBLE_DEVICES", tools::worker_visible_devices(devices[i], inherited)}}});
        worker_csvs.emplace_back(worker_csv, &parts[i]);
    }
    fmt::print("tuning {} shape(s) with {} worker(s), one per GPU\n", shapes.size(), workers.size());
    std::fflush(stdout);
    const tools::WorkersResult result = tools::run_workers(workers);

    std::vector<TunedRow> finished;
    tools::TuneOutputCsv table = tools::TuneOutputCsv::read(output);
    const std::size_t rows_before = table.rows().size();
    for (const auto& [csv, part] : worker_csvs) {
        if (!std::filesystem::exists(csv)) continue;
        const tuning::CsvRows table = tuning::read_csv_file(csv);
        for (const auto& problem : table.problems) fmt::print("{}: skipped: {}\n", problem.place, problem.message);
        const std::vector<TunedRow> own = tools::rows_for_shapes(table.rows, *part);
        finished.insert(finished.end(), own.begin(), own.end());
    }
    // NOTES: new rows land in the order of the input file, as the single-GPU path writes them.
    const std::vector<TunedRow> updates = tools::rows_for_shapes(finished, shapes);
    if (updates.empty()) {
        fmt::print("no worker tuned a shape; {} is not written\n", o.output);
    } else {
        for (const TunedRow& row : updates) table.upsert(row);
        table.write(output);
        const std::size_t rows_after = table.rows().size();
        fmt::print("merged the workers' rows into {}: {} row(s), {} more than before\n", o.output, rows_after,
                   rows_after - rows_before);
    }
    if (!o.json_file.empty()) {
        const std::size_t added = tools::merge_tune_json_parts(o.json_file, worker_jsons, shapes);
        if (added)
            fmt::print("merged the workers' {} JSON row(s) into {}\n", added, o.json_file);
        else
            fmt::print("no worker wrote a JSON row; {} is not written\n", o.json_file);
    }

    int failed = 0;
    for (const tools::WorkerOutcome& w : result.outcomes) {
        if (w.exit_code == kOk || (result.interrupted && w.exit_code == 130)) continue;
        ++failed;
        fmt::print("{}: worker FAILED (exit {}): {}\n", w.label, w.exit_code, w.last_error);
    }
    if (result.interrupted) {
        fmt::print("interrupted: every finished row is in {}\n", o.output);
        return 130;
    }
    if (failed) fmt::print("{} of {} worker(s) failed; rows they finished are kept\n", failed, result.outcomes.size());
    return failed ? kCheckFailed : kOk;
}

int run_tune(const TuneOptions& o) {
    begin_tuning(o);
    const std::vector<int> devices = tools::parse_device_list(o.devices);
    if (devices != std::vector<int>{0}) return run_tune_workers(o, devices);
    const ShapeTuning<tools::BenchShape, ShapeKey, tools::ShapeResult> prefill{
        .label = tools::shape_label,
        .key = [](const tools::BenchShape& s, Device& device) {
            return ShapeKey{.arch = Arch::parse(device.arch()).name, .cu_num = device.multiprocessor_count(),
                            .heads = s.heads, .head_dim = s.head_dim, .clean_logits = tools::clean_logits_of(s) ? 1 : 0,
                            .logits_dtype = s.logits_dtype, .seq_len = s.seq_len, .seq_len_kv = s.seq_len_kv};
        },
        .candidates = [](std::string_view arch, const tools::BenchShape& s, const std::vector<std::string>& excluded) {
            return tools::tuning_candidates(arch, s, excluded).size();
        },
        .tune = tools::tune_shape,
        .json_row = tools::tune_json_row};
    return tune_shapes<tools::BenchShape>(o, [&] { return shapes_to_tune(o); }, prefill);
}

int run_config_check(const TuneOptions& o) {
    return recheck_table<ShapeKey>(o, tools::recheck_row, [](const TunedRow& row) {
        return fmt::format("H={} S={} N={} clean_logits={} logits_dtype={}", row.key.heads, row.key.seq_len,
                           row.key.seq_len_kv, row.key.clean_logits, row.key.logits_dtype);
    });
}

}  // namespace

void add_tune_command(CLI::App& app, CommandContext& context) {
    auto options = std::make_shared<TuneOptions>();
    CLI::App* command = app.add_subcommand(
        "tune", "Tune shapes on the live GPU (mqa_logits; --op paged_mqa_logits the decode op; --op mqa_topk the top-k "
                "path and kernel), or re-check a tuned table");
    add_op_option(*command, options->op, true);
    command->add_option("-i,--input,--shapes-file", options->input,
                        "Untuned CSV: for mqa_logits seq_len,seq_len_kv[,heads,head_dim,cu_num,gfx,clean_logits,logits_dtype]; for "
                        "paged_mqa_logits batch,next_n,heads,context_len[,head_dim,block_kv,cu_num,gfx,clean_logits] "
                        "(model_configs/paged_mqa_logits_untuned_*.csv), each row tuned over its contexts");
    command->add_option("-o,--output", options->output, "Tuned CSV to write (rows are added as they finish)");
    command->add_option("--run-config", options->run_config, "Re-check and re-time every row of this tuned CSV");
    command->add_option("--db", options->db, "User database to write (default: MQAJIT_TUNING_DB)");
    command->add_option("--devices", options->devices,
                        "GPUs to use, e.g. 0,1,2,3: other than just 0, one worker process per GPU tunes a share "
                        "of the shapes and the rows are merged (mqa_logits only: for paged_mqa_logits run one tune "
                        "per GPU on its own shapes file with CUDA_VISIBLE_DEVICES, then `db import` each)");
    command->add_option("--context-len", options->context_len,
                        "paged_mqa_logits --run-config: the average contexts to re-time each row over, e.g. "
                        "4096,32768 (default: those the shipped untuned files give the row's batch)");
    command->add_option("--k", options->k, "mqa_topk: keys selected per row, 1 to 4096 (default 2048)")
        ->check(CLI::Range(1, kMqaTopkMaxK));
    command->add_option("--runs", options->runs, "Timed runs per candidate (median)")->check(CLI::Range(50, 100000));
    command->add_flag("--force", options->force, "Retune shapes already tuned with this tuner, compiler and driver");
    command->add_option("--prune-factor", options->prune_factor,
                        "Prune a verified candidate whose 5-run probe is more than this many times the best time "
                        "so far: it is not timed in full (default 1.5)")
        ->check(finite_real() & CLI::Range(1.0, 1000.0));
    command->add_flag("--no-prune", options->no_prune, "Time every verified candidate in full, with no probe");
    command->add_option("--min-gain", options->min_gain_percent,
                        "Keep the baseline unless the fastest variant takes more than this many percent less time "
                        "(default 1; 0: the fastest candidate wins)")
        ->check(finite_real() & CLI::Range(0.0, 100.0));
    command->add_option("--candidate-timeout", options->candidate_timeout_s,
                        "End the run (exit 3) when one candidate's check, probe or timing runs longer than this "
                        "many seconds: a hung kernel cannot be stopped otherwise (default 120; 0: never)")
        ->check(finite_real() & CLI::Range(0.0, 1e6));
    command->add_option("--exclude", options->exclude,
                        "Leave these candidates out (comma-separated variant names, or baseline), e.g. one that "
                        "hung or faulted")
        ->delimiter(',');
    command->add_option("--clean-logits", options->clean_logits,
                        "The mode to tune in, 0 (no -inf outside the windows, what engines call), 1, or 0,1 for both: "
                        "input rows without a clean_logits column are tuned in each (default 0); rows with one keep "
                        "theirs and are tuned only if listed. With --run-config: re-check only rows of these modes");
    command->add_option("--logits-dtype", options->logits_dtype,
                        "mqa_logits: the logits' element type to tune every input row with, float32 or bfloat16 "
                        "(default: the input's logits_dtype column, else float32); the rows' key carries it")
        ->check(CLI::IsMember({"float32", "bfloat16"}));
    command->add_option("--json-file", options->json_file,
                        "Also write every candidate's outcome per shape here, as `mqajit bench --json-file` rows "
                        "(`mqajit report --bench` reads them)");
    command->callback([options, &context] {
        const bool tuning = !options->input.empty() || !options->output.empty();
        MQAJIT_CHECK(tuning != !options->run_config.empty(),
                     "give either -i untuned.csv -o tuned.csv, or --run-config tuned.csv");
        MQAJIT_CHECK(!tuning || (!options->input.empty() && !options->output.empty()),
                     "tuning needs both -i untuned.csv and -o tuned.csv");
        MQAJIT_CHECK(tuning || options->json_file.empty(), "--json-file goes with -i untuned.csv -o tuned.csv");
        (void)modes_of(*options);  // NOTES: a bad --clean-logits is bad usage, before any GPU is looked for
        const bool decode = options->op == "paged_mqa_logits";
        const bool topk = options->op == "mqa_topk";
        MQAJIT_CHECK(topk || !options->k, "--k goes with --op mqa_topk");
        MQAJIT_CHECK(!topk || (!options->clean_logits && !options->logits_dtype),
                     "--clean-logits and --logits-dtype are not for mqa_topk: it computes float32 logits without "
                     "-inf, and its table has no mode");
        MQAJIT_CHECK(!topk || options->devices == "0", "--devices is for mqa_logits: tune mqa_topk on one GPU per "
                     "process, then `mqajit db import --op mqa_topk` each CSV");
        MQAJIT_CHECK(!topk || tuning || !options->k, "--k goes with -i shapes.csv -o tuned.csv: --run-config "
                     "re-checks each row with its own k");
        MQAJIT_CHECK(decode || !options->context_len, "--context-len goes with --op paged_mqa_logits --run-config");
        MQAJIT_CHECK(!decode || !options->logits_dtype, "--logits-dtype is for mqa_logits (prefill): "
                     "paged_mqa_logits writes float32 logits");
        MQAJIT_CHECK(tuning || !options->logits_dtype, "--logits-dtype goes with -i untuned.csv -o tuned.csv: "
                     "--run-config re-checks each row with its own logits_dtype");
        MQAJIT_CHECK(!decode || options->devices == "0", "--devices is for mqa_logits: tune paged_mqa_logits on one "
                     "GPU per process (CUDA_VISIBLE_DEVICES=N mqajit tune --op paged_mqa_logits -i its_share.csv -o "
                     "its.csv), then `mqajit db import --op paged_mqa_logits` each CSV");
        MQAJIT_CHECK(!decode || !options->context_len || !tuning, "--context-len goes with --run-config; tuning "
                     "takes each shape's contexts from its context_len column");
        try {
            if (decode)
                context.exit_code = tuning ? run_paged_tune(*options) : run_paged_config_check(*options);
            else if (topk)
                context.exit_code = tuning ? run_topk_tune(*options) : run_topk_config_check(*options);
            else
                context.exit_code = tuning ? run_tune(*options) : run_config_check(*options);
        } catch (const tools::CandidateFault& fault) {
            // NOTES: the GPU context is dead; destructors would only fail on it. Rows are on disk.
            tools::stop_tuning_process(fault.what());
        }
    });
}

}  // namespace mqajit::cli
