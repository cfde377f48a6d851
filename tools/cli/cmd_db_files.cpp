// `mqajit db import`, `db check` and `db build-system`: the subcommands that read tuned rows from
// CSV files (the options and the other subcommands: cmd_db.cpp).

#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/check.hpp"
#include "core/log.hpp"
#include "tools/cli/cmd_db.hpp"
#include "tools/cli/commands.hpp"
#include "tuning_db/check.hpp"
#include "tuning_db/config_files.hpp"
#include "tuning_db/csv.hpp"
#include "tuning_db/locations.hpp"
#include "tuning_db/system_db.hpp"

namespace mqajit::cli {
namespace {

void report_problems(const std::vector<tuning::RowProblem>& problems) {
    for (const auto& problem : problems) fmt::print(stderr, "{}: {}\n", problem.place, problem.message);
}

tuning::Json problems_json(const std::vector<tuning::RowProblem>& problems) {
    tuning::Json array = tuning::Json::array();
    for (const auto& problem : problems) array.push_back({{"place", problem.place}, {"message", problem.message}});
    return array;
}

template <class Key>
tuning::Json collisions_json(const std::vector<tuning::CollisionOf<Key>>& collisions) {
    tuning::Json array = tuning::Json::array();
    for (const auto& collision : collisions) {
        array.push_back({{"op", Key::kOp.name},
                         {"key", tuning::to_json(collision.key)},
                         {"kept", {{"place", collision.kept.origin}, {"choice", collision.kept.choice()}}},
                         {"dropped", {{"place", collision.dropped.origin}, {"choice", collision.dropped.choice()}}},
                         {"message", collision.message()}});
    }
    return array;
}

template <class Key>
int run_import(const DbOptions& options) {
    // Unrunnable rows go before the merge: a later row of the same key that cannot run must not
    // hide an earlier one that can.
    tuning::CsvRowsOf<Key> parsed = tuning::read_csv_file<Key>(options.file);
    std::vector<tuning::RowProblem> unrunnable;
    tuning::drop_unrunnable(parsed.rows, unrunnable);
    tuning::ConfigRowsOf<Key> loaded = tuning::merge_tables<Key>({std::move(parsed)});
    loaded.problems.insert(loaded.problems.end(), unrunnable.begin(), unrunnable.end());
    TuningDb database = open_database(options);
    database.insert(loaded.rows);
    const bool saved = !database.user_db_in_memory();
    if (options.json) {
        print_json({{"op", Key::kOp.name},
                    {"file", options.file},
                    {"user_db", database.user_db_path().string()},
                    {"imported", saved ? loaded.rows.size() : 0},
                    {"skipped", problems_json(loaded.problems)},
                    {"collisions", collisions_json(loaded.collisions)}});
    } else {
        report_problems(loaded.problems);
        for (const auto& collision : loaded.collisions) fmt::print(stderr, "collision: {}\n", collision.message());
        if (saved) {
            fmt::print("imported {} row(s) from {} into {} ({}); skipped {} row(s), malformed or not runnable on "
                       "their arch\n", loaded.rows.size(), options.file, database.user_db_path().string(),
                       Key::kOp.name, loaded.problems.size());
        }
    }
    if (!saved) {
        fmt::print(stderr, "mqajit: nothing was saved: the user tuning database {} cannot be written (see the "
                   "warning above)\n", database.user_db_path().string());
        return kCheckFailed;
    }
    return loaded.problems.empty() ? kOk : kCheckFailed;
}

// What `db check` found over the tables it checked.
struct CheckSummary {
    std::vector<std::string> files;
    std::size_t num_rows = 0;
    std::vector<tuning::RowProblem> problems;
    tuning::Json collisions = tuning::Json::array();
    std::vector<std::string> collision_messages;

    bool ok() const { return problems.empty() && collision_messages.empty(); }
};

// Checks Key's CSVs among `files` (all of them with --op, else those whose names say Key's
// operator) or, with no files, Key's shipped CSVs and user rows.
template <class Key>
void check_table(const DbOptions& options, const std::vector<std::filesystem::path>& named, CheckSummary& summary) {
    std::vector<std::filesystem::path> files;
    for (const auto& file : named)
        if (op_of_file(options, file) == Key::kOp.name) files.push_back(file);
    const bool defaults = named.empty();
    if (defaults) {
        const auto configs = tuning::locate_configs_dir();
        MQAJIT_CHECK_KIND(not_found, configs.has_value(), "the shipped tuning CSVs were not found; name the files "
                          "to check: mqajit db check FILE.csv ...");
        files = tuning::shipped_config_files<Key>(*configs);
    }
    if (!defaults && files.empty()) return;
    tuning::CheckReportOf<Key> report = tuning::check_config_files<Key>(files);
    if (defaults) {
        const TuningDb database = open_database(options);
        tuning::check_rows(database.user_rows<Key>(), report);
        require_readable(database, false);
    }
    for (const auto& file : report.files) summary.files.push_back(file.string());
    summary.num_rows += report.num_rows;
    summary.problems.insert(summary.problems.end(), report.problems.begin(), report.problems.end());
    for (const auto& item : collisions_json(report.collisions)) summary.collisions.push_back(item);
    for (const auto& collision : report.collisions) summary.collision_messages.push_back(collision.message());
}

}  // namespace

int run_db_import(const DbOptions& options) {
    return with_table(op_of_file(options, options.file),
                      [&]<class Key>(std::type_identity<Key>) { return run_import<Key>(options); });
}

int run_db_check(const DbOptions& options) {
    const std::vector<std::filesystem::path> files(options.files.begin(), options.files.end());
    CheckSummary summary;
    for_each_table_key([&]<class Key>(std::type_identity<Key>) {
        if (options.op.empty() || options.op == Key::kOp.name) check_table<Key>(options, files, summary);
    });
    if (options.json) {
        print_json({{"ok", summary.ok()},
                    {"files", summary.files},
                    {"rows", summary.num_rows},
                    {"problems", problems_json(summary.problems)},
                    {"collisions", summary.collisions}});
    } else {
        for (const auto& file : summary.files) fmt::print("checked {}\n", file);
        for (const auto& problem : summary.problems) fmt::print("{}: {}\n", problem.place, problem.message);
        for (const auto& message : summary.collision_messages) fmt::print("collision: {}\n", message);
        fmt::print("{}: {} row(s), {} malformed, {} collision(s)\n", summary.ok() ? "ok" : "FAILED", summary.num_rows,
                   summary.problems.size(), summary.collision_messages.size());
    }
    return summary.ok() ? kOk : kCheckFailed;
}

void run_db_build_system(const DbOptions& options) {
    const std::vector<std::filesystem::path> files(options.files.begin(), options.files.end());
    const tuning::SystemDbBuild built = tuning::build_system_db(options.out, files);
    std::vector<std::string> counts;
    std::size_t num_rows = 0;
    for_each_table_key([&]<class Key>(std::type_identity<Key>) {
        const auto& loaded = built.of<Key>();
        for (const auto& problem : loaded.problems) log().warn("{}: {}", problem.place, problem.message);
        for (const auto& collision : loaded.collisions) log().warn("collision: {}", collision.message());
        counts.push_back(fmt::format("{} {}", Key::kOp.name, loaded.rows.size()));
        num_rows += loaded.rows.size();
    });
    fmt::print("wrote {} row(s) from {} file(s) to {} ({})\n", num_rows, files.size(), options.out,
               fmt::join(counts, ", "));
}

}  // namespace mqajit::cli
