// mqajit tune -i untuned.csv -o tuned.csv: tunes each shape on the live GPU (every candidate
// verified against the reference before it is timed; a line per candidate with an ETA) and writes
// each finished row at once to the output CSV and the user database, so an interrupt loses nothing
// finished.
// mqajit tune ... --json-file FILE: also every candidate's outcome per shape, as bench JSON rows.
// mqajit tune ... --devices 0,1,...: one worker process per GPU, their rows merged at the end.
// A candidate that hangs past --candidate-timeout or faults ends the run (exit 3) naming itself;
// --exclude leaves it out of the rerun.
// mqajit tune --run-config tuned.csv: re-checks and re-times every row of a tuned table.

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
#include "runtime/backend.hpp"
#include "tools/cli/commands.hpp"
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
namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void on_interrupt(int) { g_interrupted.store(true); }

struct TuneOptions {
    std::string input, output, run_config, db, json_file;
    std::string devices = "0";
    std::optional<std::string> clean_logits;  // --clean-logits: 0, 1 or 0,1
    int runs = 50;
    double prune_factor = tools::kDefaultPruneFactor;
    double candidate_timeout_s = tools::kDefaultCandidateTimeoutS;
    std::vector<std::string> exclude;
    bool no_prune = false;
    bool force = false;
};

Device& live_device() {
    const DriverStatus status = live_driver_status();
    MQAJIT_CHECK_KIND(unsupported, status.available, "tuning needs a GPU: {}", status.message);
    return *live_backend().current_device();
}

tools::TuneSettings settings_for(Device& device, const TuneOptions& o) {
    return tools::TuneSettings{.timed_runs = o.runs, .warmup_runs = 5, .prune_factor = o.no_prune ? 0.0 : o.prune_factor,
                               .compiler_version = tools::kernel_compiler_version(live_backend()),
                               .driver_version = device.driver_version(), .interrupted = &g_interrupted,
                               .excluded = o.exclude};
}

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

// Tunes on several GPUs: one worker process per GPU (this program, `tune` on its share of the
// shapes with CUDA_VISIBLE_DEVICES showing it one GPU), each writing its own CSV and the shared
// user database; the workers' CSVs are then merged into the output.
// The modes --clean-logits names; nullopt when it is not given.
std::optional<std::vector<int>> modes_of(const TuneOptions& o) {
    if (!o.clean_logits) return std::nullopt;
    return tools::parse_clean_logits_modes("--clean-logits", *o.clean_logits);
}

// The input's shapes, each in the mode it is tuned in (tools::in_modes).
std::vector<tools::BenchShape> shapes_to_tune(const TuneOptions& o) {
    return tools::in_modes(tools::read_shapes_csv(o.input), modes_of(o));
}

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
        // compiler and driver exactly as the single-GPU path does.
        if (std::filesystem::exists(output)) std::filesystem::copy_file(output, worker_csv);
        std::vector<std::string> argv = {tools::self_executable(), "tune", "-i", part_csv.string(), "-o",
                                         worker_csv.string(), "--devices", "0", "--runs", std::to_string(o.runs)};
        if (!o.db.empty()) argv.insert(argv.end(), {"--db", std::filesystem::absolute(o.db).string()});
        if (o.force) argv.push_back("--force");
        if (o.no_prune) argv.push_back("--no-prune");
        else argv.insert(argv.end(), {"--prune-factor", fmt::format("{}", o.prune_factor)});
        argv.insert(argv.end(), {"--candidate-timeout", fmt::format("{}", o.candidate_timeout_s)});
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
    const std::vector<int> devices = tools::parse_device_list(o.devices);
    tools::check_excluded_names(o.exclude);
    if (!o.exclude.empty()) fmt::print("excluded by the user (--exclude): {}\n", fmt::join(o.exclude, ", "));
    if (devices != std::vector<int>{0}) return run_tune_workers(o, devices);
    Device& device = live_device();
    tools::TuneWatchdog watchdog({.limit_s = o.candidate_timeout_s});
    tools::TuneSettings settings = settings_for(device, o);
    settings.watchdog = &watchdog;
    const std::string arch = Arch::parse(device.arch()).name;

    std::vector<tools::BenchShape> shapes = shapes_to_tune(o);
    for (const tools::BenchShape& s : shapes) {
        MQAJIT_CHECK(s.arch.empty() || Arch::parse(s.arch).name == arch,
                     "{} asks for arch {}, but this GPU is {}; tune on that GPU", o.input, s.arch, arch);
        MQAJIT_CHECK(s.cu_num == 0 || s.cu_num == device.multiprocessor_count(),
                     "{} asks for cu_num {}, but this GPU has {} SMs", o.input, s.cu_num, device.multiprocessor_count());
    }

    tools::TuneOutputCsv table = tools::TuneOutputCsv::read(o.output);
    for (const auto& problem : table.problems()) fmt::print("{}: kept as it is: {}\n", problem.place, problem.message);
    std::vector<TunedRow> output_rows = table.rows();
    auto already_tuned = [&](const tools::BenchShape& s) {
        return std::any_of(output_rows.begin(), output_rows.end(), [&](const TunedRow& r) {
            return r.key.arch == arch && r.key.cu_num == device.multiprocessor_count() && tools::tunes_shape(r.key, s) &&
                   r.compiler_version == settings.compiler_version && r.driver_version == settings.driver_version;
        });
    };
    nlohmann::json json_rows = o.json_file.empty() ? nlohmann::json::array() : tools::read_tune_json(o.json_file);
    std::unique_ptr<TuningDb> own_db;
    if (!o.db.empty()) own_db = std::make_unique<TuningDb>(std::nullopt, o.db);
    TuningDb& db = own_db ? *own_db : TuningDb::instance();

    std::signal(SIGINT, on_interrupt);
    // NOTES: the ETA counts candidates, the steps that take the time; shapes already tuned are
    // left out of it from the start.
    std::size_t candidates = 0;
    for (const tools::BenchShape& s : shapes) {
        if (o.force || !already_tuned(s)) candidates += tools::tuning_candidates(arch, s, settings.excluded).size();
    }
    tools::Progress progress(candidates, "candidates", stdout, isatty(STDOUT_FILENO) != 0);
    std::size_t done = 0;
    for (const tools::BenchShape& s : shapes) {
        const std::string label = tools::shape_label(s);
        const std::string shape_count = fmt::format("shape {}/{}", done + 1, shapes.size());
        if (!o.force && already_tuned(s)) {
            ++done;
            progress.note(fmt::format("{} {}: already tuned with this compiler and driver (--force retunes)",
                                      shape_count, label));
            continue;
        }
        const tools::ShapeResult result = tools::tune_shape(
            device, s, settings, [&](const std::string& line) { progress.step_done(label + " " + line); });
        if (!result.complete) break;
        output_rows.push_back(result.row);
        table.upsert(result.row);
        table.write(o.output);  // NOTES: atomic replace after every shape
        db.insert(result.row);
        if (!o.json_file.empty()) {
            json_rows = tools::merge_tune_json(json_rows, nlohmann::json::array({tools::tune_json_row(result, settings)}));
            tools::write_tune_json(o.json_file, json_rows);
        }
        const auto rejected = std::count_if(result.candidates.begin(), result.candidates.end(),
                                            [](const tools::CandidateResult& c) { return !c.verified; });
        const auto pruned = std::count_if(result.candidates.begin(), result.candidates.end(),
                                          [](const tools::CandidateResult& c) { return c.pruned; });
        ++done;
        progress.note(fmt::format("{} {}: {} {:.1f} us ({} candidates, {} rejected, {} pruned), {}", shape_count, label,
                                  result.row.variant, result.row.us, result.candidates.size(), rejected, pruned,
                                  progress.eta_text()));
    }
    if (g_interrupted.load()) {
        fmt::print("\ninterrupted: {} of {} shapes done, every finished row is in {}\n", done, shapes.size(), o.output);
        return 130;
    }
    return kOk;
}

int run_config_check(const TuneOptions& o) {
    Device& device = live_device();
    tools::TuneWatchdog watchdog({.limit_s = o.candidate_timeout_s});
    tools::TuneSettings settings = settings_for(device, o);
    settings.watchdog = &watchdog;
    const std::string arch = Arch::parse(device.arch()).name;
    const tuning::CsvRows table = tuning::read_csv_file(o.run_config);
    for (const auto& problem : table.problems) fmt::print("{}: skipped: {}\n", problem.place, problem.message);
    const std::optional<std::vector<int>> modes = modes_of(o);
    int failures = static_cast<int>(table.problems.size()), checked = 0;
    for (const TunedRow& row : table.rows) {
        if (row.key.arch != arch || row.key.cu_num != device.multiprocessor_count()) continue;
        if (modes && std::find(modes->begin(), modes->end(), row.key.clean_logits) == modes->end()) continue;
        ++checked;
        const tools::RecheckResult r = tools::recheck_row(device, row, settings);
        const bool drifted = r.verified && std::abs(r.drift) > 0.10;
        if (!r.verified || drifted) ++failures;
        fmt::print("{} H={} S={} N={} clean_logits={} {}: {}\n", row.origin, row.key.heads, row.key.seq_len,
                   row.key.seq_len_kv, row.key.clean_logits, row.variant,
                   !r.verified ? "CHECK FAILED " + r.problem
                               : fmt::format("{:.1f} us vs recorded {:.1f} ({:+.0f}%){}", r.measured_us, row.us,
                                             100 * r.drift, drifted ? " OFF BY MORE THAN 10%" : ""));
    }
    fmt::print("{} row(s) for {} with {} SMs{} checked, {} problem(s)\n", checked, arch, device.multiprocessor_count(),
               modes ? fmt::format(" and clean_logits {}", fmt::join(*modes, ",")) : "", failures);
    return failures ? kCheckFailed : kOk;
}

}  // namespace

void add_tune_command(CLI::App& app, CommandContext& context) {
    auto options = std::make_shared<TuneOptions>();
    CLI::App* command = app.add_subcommand("tune", "Tune shapes on the live GPU, or re-check a tuned table");
    command->add_option("-i,--input", options->input, "Untuned CSV (seq_len,seq_len_kv[,heads,head_dim,cu_num,gfx,clean_logits])");
    command->add_option("-o,--output", options->output, "Tuned CSV to write (rows are added as they finish)");
    command->add_option("--run-config", options->run_config, "Re-check and re-time every row of this tuned CSV");
    command->add_option("--db", options->db, "User database to write (default: MQAJIT_TUNING_DB)");
    command->add_option("--devices", options->devices,
                        "GPUs to use, e.g. 0,1,2,3: other than just 0, one worker process per GPU tunes a share "
                        "of the shapes and the rows are merged");
    command->add_option("--runs", options->runs, "Timed runs per candidate (median)")->check(CLI::Range(50, 100000));
    command->add_flag("--force", options->force, "Retune shapes already tuned with this compiler and driver");
    command->add_option("--prune-factor", options->prune_factor,
                        "Prune a verified candidate whose 5-run probe is more than this many times the best time "
                        "so far: it is not timed in full (default 1.5)")
        ->check(finite_real() & CLI::Range(1.0, 1000.0));
    command->add_flag("--no-prune", options->no_prune, "Time every verified candidate in full, with no probe");
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
        try {
            context.exit_code = tuning ? run_tune(*options) : run_config_check(*options);
        } catch (const tools::CandidateFault& fault) {
            // NOTES: the GPU context is dead; destructors would only fail on it. Rows are on disk.
            tools::stop_tuning_process(fault.what());
        }
    });
}

}  // namespace mqajit::cli
