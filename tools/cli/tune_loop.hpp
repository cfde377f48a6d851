#pragma once
// The single-GPU `mqajit tune` loops, for any operator: tune each shape in turn (skipping those
// the output already has with this tuner, compiler and driver), writing every finished row at once to
// the output CSV, the user database and the JSON file; and `--run-config`, which re-checks and
// re-times a tuned table's rows. The operator gives its shape type, the key a shape tunes, how a
// shape is tuned or a row re-checked, and how both are named (cmd_tune.cpp, cmd_tune_paged.cpp).

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/check.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/tune_command.hpp"
#include "tools/common/candidate_search.hpp"
#include "tools/common/progress.hpp"
#include "tools/common/tune_json.hpp"
#include "tools/common/tune_output_csv.hpp"
#include "tuning_db/csv.hpp"
#include "tuning_db/tuning_db.hpp"
#include "variants/arch.hpp"

namespace mqajit::cli {

// What a tuning loop needs of its operator. Result has `complete`, `row` (TunedRowOf<Key>) and
// `candidates` (tools::CandidateResult), like tools::ShapeResult.
template <class Shape, class Key, class Result>
struct ShapeTuning {
    std::function<std::string(const Shape&)> label;
    std::function<Key(const Shape&, Device&)> key;  // the row the shape tunes on this device
    // How many candidates the shape has on `arch` (the progress counts candidates).
    std::function<std::size_t(std::string_view arch, const Shape&, const std::vector<std::string>& excluded)>
        candidates;
    std::function<Result(Device&, const Shape&, const tools::TuneSettings&,
                         const std::function<void(const std::string&)>&)>
        tune;
    std::function<nlohmann::json(const Result&, const tools::TuneSettings&)> json_row;
};

// The --exclude names, before anything else (a bad name is bad usage).
inline void begin_tuning(const TuneOptions& o) {
    tools::check_excluded_names(o.exclude);
    if (!o.exclude.empty()) fmt::print("excluded by the user (--exclude): {}\n", fmt::join(o.exclude, ", "));
}

// `load_shapes` runs once the GPU is found (without one the refusal comes first, whatever the input).
template <class Shape, class Key, class Result>
int tune_shapes(const TuneOptions& o, const std::function<std::vector<Shape>()>& load_shapes,
                const ShapeTuning<Shape, Key, Result>& op) {
    Device& device = live_device();
    const std::vector<Shape> shapes = load_shapes();
    tools::TuneWatchdog watchdog({.limit_s = o.candidate_timeout_s});
    tools::TuneSettings settings = settings_for(device, o);
    settings.watchdog = &watchdog;
    const std::string arch = Arch::parse(device.arch()).name;
    for (const Shape& s : shapes) {
        MQAJIT_CHECK(s.arch.empty() || Arch::parse(s.arch).name == arch,
                     "{} asks for arch {}, but this GPU is {}; tune on that GPU", o.input, s.arch, arch);
        MQAJIT_CHECK(s.cu_num == 0 || s.cu_num == device.multiprocessor_count(),
                     "{} asks for cu_num {}, but this GPU has {} SMs", o.input, s.cu_num, device.multiprocessor_count());
    }

    tools::TuneOutputCsvOf<Key> table = tools::TuneOutputCsvOf<Key>::read(o.output);
    for (const auto& problem : table.problems()) fmt::print("{}: kept as it is: {}\n", problem.place, problem.message);
    std::vector<TunedRowOf<Key>> output_rows = table.rows();
    auto already_tuned = [&](const Shape& s) {
        const Key key = op.key(s, device);
        return std::any_of(output_rows.begin(), output_rows.end(),
                           [&](const TunedRowOf<Key>& r) { return tools::tuned_alike(r, key, settings); });
    };
    nlohmann::json json_rows = o.json_file.empty() ? nlohmann::json::array() : tools::read_tune_json(o.json_file);
    std::unique_ptr<TuningDb> own_db;
    if (!o.db.empty()) own_db = std::make_unique<TuningDb>(std::nullopt, o.db);
    TuningDb& db = own_db ? *own_db : TuningDb::instance();

    install_interrupt_handler();
    // NOTES: the ETA counts candidates, the steps that take the time; shapes already tuned are
    // left out of it from the start.
    std::size_t candidates = 0;
    for (const Shape& s : shapes)
        if (o.force || !already_tuned(s)) candidates += op.candidates(arch, s, settings.excluded);
    tools::Progress progress(candidates, "candidates", stdout, isatty(STDOUT_FILENO) != 0);
    std::size_t done = 0;
    for (const Shape& s : shapes) {
        const std::string label = op.label(s);
        const std::string shape_count = fmt::format("shape {}/{}", done + 1, shapes.size());
        if (!o.force && already_tuned(s)) {
            ++done;
            progress.note(fmt::format("{} {}: already tuned with this tuner, compiler and driver (--force retunes)",
                                      shape_count, label));
            continue;
        }
        const Result result = op.tune(device, s, settings,
                                      [&](const std::string& line) { progress.step_done(label + " " + line); });
        if (!result.complete) break;
        output_rows.push_back(result.row);
        table.upsert(result.row);
        table.write(o.output);  // NOTES: atomic replace after every shape
        db.insert(result.row);
        if (!o.json_file.empty()) {
            json_rows = tools::merge_tune_json<Key>(json_rows, nlohmann::json::array({op.json_row(result, settings)}));
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

// `--run-config`: every row of Key's table in o.run_config for this GPU (and the modes
// --clean-logits lists) re-checked and re-timed by `recheck`; one line each, named by `describe`.
template <class Key>
int recheck_table(const TuneOptions& o,
                  const std::function<tools::RecheckResult(Device&, const TunedRowOf<Key>&, const tools::TuneSettings&)>&
                      recheck,
                  const std::function<std::string(const TunedRowOf<Key>&)>& describe) {
    Device& device = live_device();
    tools::TuneWatchdog watchdog({.limit_s = o.candidate_timeout_s});
    tools::TuneSettings settings = settings_for(device, o);
    settings.watchdog = &watchdog;
    const std::string arch = Arch::parse(device.arch()).name;
    const tuning::CsvRowsOf<Key> table = tuning::read_csv_file<Key>(o.run_config);
    for (const auto& problem : table.problems) fmt::print("{}: skipped: {}\n", problem.place, problem.message);
    const std::optional<std::vector<int>> modes = modes_of(o);
    int failures = static_cast<int>(table.problems.size()), checked = 0;
    for (const TunedRowOf<Key>& row : table.rows) {
        if (row.key.arch != arch || row.key.cu_num != device.multiprocessor_count()) continue;
        if constexpr (has_mode_column<Key>) {
            if (modes && std::find(modes->begin(), modes->end(), row.key.clean_logits) == modes->end()) continue;
        }
        ++checked;
        const tools::RecheckResult r = recheck(device, row, settings);
        const bool drifted = r.verified && std::abs(r.drift) > 0.10;
        if (!r.verified || drifted) ++failures;
        fmt::print("{} {} {}: {}\n", row.origin, describe(row), row.variant,
                   !r.verified ? "CHECK FAILED " + r.problem
                               : fmt::format("{:.1f} us vs recorded {:.1f} ({:+.0f}%){}", r.measured_us, row.us,
                                             100 * r.drift, drifted ? " OFF BY MORE THAN 10%" : ""));
    }
    fmt::print("{} row(s) for {} with {} SMs{} checked, {} problem(s)\n", checked, arch, device.multiprocessor_count(),
               modes ? fmt::format(" and clean_logits {}", fmt::join(*modes, ",")) : "", failures);
    return failures ? kCheckFailed : kOk;
}

}  // namespace mqajit::cli
