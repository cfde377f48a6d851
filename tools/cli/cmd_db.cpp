// `mqajit db ...`: look up, list, import, export and check tuned rows, and build the system
// database. Exit codes: 0 ok, 1 a check failed (or rows were skipped or not saved), 2 bad usage.

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/check.hpp"
#include "core/log.hpp"
#include "core/settings.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/number_options.hpp"
#include "tuning_db/check.hpp"
#include "tuning_db/config_files.hpp"
#include "tuning_db/csv.hpp"
#include "tuning_db/locations.hpp"
#include "tuning_db/row_json.hpp"
#include "tuning_db/system_db.hpp"
#include "tuning_db/tuning_db.hpp"
#include "variants/arch.hpp"

namespace mqajit::cli {
namespace {

struct DbOptions {
    std::string user_db;    // --db
    std::string system_db;  // --system-db
    bool json = false;
    // lookup
    std::string arch;
    int cu_num = 0, heads = 0, head_dim = 0;
    int clean_logits = 0;  // NOTES: the callers' mode (vLLM and SGLang pass clean_logits=False)
    std::int64_t seq_len = 0, seq_len_kv = 0;
    // list / export
    bool user_only = false;
    // import / export
    std::string file;
    // check / build-system
    std::vector<std::string> files;
    std::string out;
};

TuningDb open_database(const DbOptions& options) {
    const std::filesystem::path user =
        options.user_db.empty() ? settings().user_db_path : std::filesystem::path(options.user_db);
    const LookupOptions lookup{.nearest_cu_num = settings().nearest_cu_num};
    if (!options.system_db.empty()) return TuningDb(std::filesystem::path(options.system_db), user, lookup);
    const auto location = tuning::locate_system_db();
    if (!location.path) log().warn("no system tuning database found; showing user rows only");
    return TuningDb(location.path, user, lookup);
}

// NOTES: rows are valid UTF-8 (row_table.cpp), but a path need not be; replace, never throw.
void print_json(const tuning::Json& value) {
    std::cout << value.dump(2, ' ', false, tuning::Json::error_handler_t::replace) << '\n';
}

// Commands that print rows fail (exit 1) when they could not read them, rather than print none.
void require_readable(const TuningDb& database, bool with_system) {
    if (auto problem = database.user_db_read_problem()) {
        MQAJIT_FAIL(database, "cannot read the user tuning database {}: it {}", database.user_db_path().string(),
                    *problem);
    }
    if (with_system && database.system_db_problem()) {
        MQAJIT_FAIL(database, "cannot read the system tuning database: {}", *database.system_db_problem());
    }
}

std::string kernel_name(const TunedRow* row) { return row ? row->variant : std::string(kBackendBaseline); }

void run_lookup(const DbOptions& options) {
    ShapeKey shape{.arch = options.arch, .cu_num = options.cu_num, .heads = options.heads,
                   .head_dim = options.head_dim, .clean_logits = options.clean_logits, .seq_len = options.seq_len,
                   .seq_len_kv = options.seq_len_kv};
    if (shape.arch.empty() && settings().arch_override) shape.arch = *settings().arch_override;
    MQAJIT_CHECK(!shape.arch.empty(), "no arch given; pass --arch (e.g. --arch gfx950) or set MQAJIT_ARCH");
    shape.arch = Arch::parse(shape.arch).name;
    const auto problem = key_problem(shape);
    MQAJIT_CHECK(!problem, "{}; got {}", problem.value_or(""), to_string(shape));
    const TuningDb database = open_database(options);
    const LookupResult result = database.explain(shape);
    require_readable(database, true);
    const TunedRow* row = result.row ? &*result.row : nullptr;
    if (options.json) {
        print_json({{"shape", tuning::to_json(shape)},
                    {"kernel", kernel_name(row)},
                    {"row", row ? tuning::to_json(*row) : tuning::Json(nullptr)},
                    {"steps", result.steps},
                    {"fallbacks", result.fallbacks},
                    {"system_db", database.system_db_path() ? database.system_db_path()->string() : ""},
                    {"user_db", database.user_db_path().string()}});
        return;
    }
    fmt::print("shape: {}\n", to_string(shape));
    fmt::print("databases: system {}, user {}\n",
               database.system_db_path() ? database.system_db_path()->string() : "(none)",
               database.user_db_path().string());
    for (std::size_t i = 0; i < result.steps.size(); ++i) fmt::print("  {}. {}\n", i + 1, result.steps[i]);
    fmt::print("{}\n", kernel_name(row));
}

void print_table(const std::vector<TunedRow>& rows) {
    std::vector<std::vector<std::string>> cells;
    std::vector<std::string> header;
    auto add_header = [&](std::string_view column, const auto&) { header.emplace_back(tuning::csv_column_name(column)); };
    const TunedRow blank;
    blank.key.visit(add_header);
    header.insert(header.end(), {"backend", "variant", "us", "origin"});
    cells.push_back(header);
    for (const TunedRow& row : rows) {
        std::vector<std::string> line;
        row.key.visit([&](std::string_view, const auto& value) { line.push_back(fmt::format("{}", value)); });
        line.insert(line.end(), {row.backend, row.variant, fmt::format("{}", row.us), row.origin});
        cells.push_back(std::move(line));
    }
    std::vector<std::size_t> widths(header.size(), 0);
    for (const auto& line : cells)
        for (std::size_t i = 0; i < line.size(); ++i) widths[i] = std::max(widths[i], line[i].size());
    for (const auto& line : cells) {
        std::string text;
        for (std::size_t i = 0; i < line.size(); ++i)
            text += i + 1 == line.size() ? line[i] : fmt::format("{:<{}}  ", line[i], widths[i]);
        fmt::print("{}\n", text);
    }
}

std::vector<TunedRow> selected_rows(const TuningDb& database, const DbOptions& options) {
    auto rows = options.user_only ? database.user_rows() : database.rows();
    require_readable(database, !options.user_only);
    if (!options.arch.empty()) {
        const std::string arch = Arch::parse(options.arch).name;
        std::erase_if(rows, [&](const TunedRow& row) { return row.key.arch != arch; });
    }
    return rows;
}

void run_list(const DbOptions& options) {
    const TuningDb database = open_database(options);
    const auto rows = selected_rows(database, options);
    if (options.json) {
        tuning::Json array = tuning::Json::array();
        for (const TunedRow& row : rows) array.push_back(tuning::to_json(row));
        print_json(array);
        return;
    }
    print_table(rows);
    fmt::print("{} row(s)\n", rows.size());
}

void report_problems(const std::vector<tuning::RowProblem>& problems) {
    for (const auto& problem : problems) fmt::print(stderr, "{}: {}\n", problem.place, problem.message);
}

tuning::Json problems_json(const std::vector<tuning::RowProblem>& problems) {
    tuning::Json array = tuning::Json::array();
    for (const auto& problem : problems) array.push_back({{"place", problem.place}, {"message", problem.message}});
    return array;
}

tuning::Json collisions_json(const std::vector<tuning::Collision>& collisions) {
    tuning::Json array = tuning::Json::array();
    for (const auto& collision : collisions) {
        array.push_back({{"key", tuning::to_json(collision.key)},
                         {"kept", {{"place", collision.kept.origin}, {"choice", collision.kept.choice()}}},
                         {"dropped", {{"place", collision.dropped.origin}, {"choice", collision.dropped.choice()}}},
                         {"message", collision.message()}});
    }
    return array;
}

int run_import(const DbOptions& options) {
    tuning::ConfigRows loaded = tuning::merge_tables({tuning::read_csv_file(options.file)});
    tuning::drop_unrunnable(loaded.rows, loaded.problems);
    TuningDb database = open_database(options);
    database.insert(loaded.rows);
    const bool saved = !database.user_db_in_memory();
    if (options.json) {
        print_json({{"file", options.file},
                    {"user_db", database.user_db_path().string()},
                    {"imported", saved ? loaded.rows.size() : 0},
                    {"skipped", problems_json(loaded.problems)},
                    {"collisions", collisions_json(loaded.collisions)}});
    } else {
        report_problems(loaded.problems);
        for (const auto& collision : loaded.collisions) fmt::print(stderr, "collision: {}\n", collision.message());
        if (saved) {
            fmt::print("imported {} row(s) from {} into {}; skipped {} row(s), malformed or not runnable on their arch\n", loaded.rows.size(),
                       options.file, database.user_db_path().string(), loaded.problems.size());
        }
    }
    if (!saved) {
        fmt::print(stderr, "mqajit: nothing was saved: the user tuning database {} cannot be written (see the "
                   "warning above)\n", database.user_db_path().string());
        return kCheckFailed;
    }
    return loaded.problems.empty() ? kOk : kCheckFailed;
}

void run_export(const DbOptions& options) {
    const TuningDb database = open_database(options);
    const auto rows = selected_rows(database, options);
    if (options.file == "-") {
        tuning::write_csv(std::cout, rows);
        return;
    }
    tuning::write_csv_file(options.file, rows);
    fmt::print("wrote {} row(s) to {}\n", rows.size(), options.file);
}

int run_check(const DbOptions& options) {
    std::vector<std::filesystem::path> files(options.files.begin(), options.files.end());
    const bool defaults = files.empty();
    if (defaults) {
        const auto configs = tuning::locate_configs_dir();
        MQAJIT_CHECK_KIND(not_found, configs.has_value(), "the shipped tuning CSVs were not found; name the files "
                          "to check: mqajit db check FILE.csv ...");
        files = tuning::shipped_config_files(*configs);
    }
    tuning::CheckReport report = tuning::check_config_files(files);
    if (defaults) {
        const TuningDb database = open_database(options);
        tuning::check_rows(database.user_rows(), report);
        require_readable(database, false);
    }
    if (options.json) {
        std::vector<std::string> names;
        for (const auto& file : report.files) names.push_back(file.string());
        print_json({{"ok", report.ok()},
                    {"files", names},
                    {"rows", report.num_rows},
                    {"problems", problems_json(report.problems)},
                    {"collisions", collisions_json(report.collisions)}});
    } else {
        for (const auto& file : report.files) fmt::print("checked {}\n", file.string());
        for (const auto& problem : report.problems) fmt::print("{}: {}\n", problem.place, problem.message);
        for (const auto& collision : report.collisions) fmt::print("collision: {}\n", collision.message());
        fmt::print("{}: {} row(s), {} malformed, {} collision(s)\n", report.ok() ? "ok" : "FAILED", report.num_rows,
                   report.problems.size(), report.collisions.size());
    }
    return report.ok() ? kOk : kCheckFailed;
}

void run_build_system(const DbOptions& options) {
    const std::vector<std::filesystem::path> files(options.files.begin(), options.files.end());
    const tuning::ConfigRows built = tuning::build_system_db(options.out, files);
    for (const auto& problem : built.problems) log().warn("{}: {}", problem.place, problem.message);
    for (const auto& collision : built.collisions) log().warn("collision: {}", collision.message());
    fmt::print("wrote {} row(s) from {} file(s) to {}\n", built.rows.size(), built.files.size(), options.out);
}

}  // namespace

void add_db_command(CLI::App& app, CommandContext& context) {
    auto options = std::make_shared<DbOptions>();
    CLI::App* db = app.add_subcommand("db", "Tuning database: look up, list, import, export, check, build");
    db->require_subcommand(1);
    db->add_option("--db", options->user_db, "User tuning database (default: MQAJIT_TUNING_DB or <cache>/tuning.db)");
    db->add_option("--system-db", options->system_db,
                   "System tuning database (default: MQAJIT_SYSTEM_DB, else the installed or built one)");

    auto add_json = [&](CLI::App* command) { command->add_flag("--json", options->json, "Print JSON"); };

    CLI::App* lookup = db->add_subcommand("lookup", "Which tuned row serves a shape, and each step of the rule");
    lookup->add_option("--arch", options->arch, "GPU arch, e.g. sm_90a or gfx950 (default: MQAJIT_ARCH)");
    lookup->add_option("--cu-num", options->cu_num, "SMs or CUs of the device")->required();
    lookup->add_option("--heads", options->heads, "Query heads H")->required();
    lookup->add_option("--head-dim", options->head_dim, "Head dimension D")->required();
    lookup->add_option("--seq-len", options->seq_len, "Query rows S")->required()->check(whole_int64());
    lookup->add_option("--seq-len-kv", options->seq_len_kv, "KV rows N")->required()->check(whole_int64());
    lookup->add_option("--clean-logits", options->clean_logits,
                       "The call's mode: 1 writes -inf outside the windows, 0 does not (default 0, what engines call)")
        ->check(CLI::IsMember({0, 1}));
    add_json(lookup);
    lookup->callback([options] { run_lookup(*options); });

    CLI::App* list = db->add_subcommand("list", "List tuned rows (user rows replace system rows of the same key)");
    list->add_option("--arch", options->arch, "Only rows of this arch");
    list->add_flag("--user-only", options->user_only, "Only rows of the user database");
    add_json(list);
    list->callback([options] { run_list(*options); });

    CLI::App* import = db->add_subcommand(
        "import", "Import a CSV into the user database; a malformed row, or one whose variant cannot run on its "
                  "arch, is skipped and makes it exit 1 (the others are imported)");
    import->add_option("file", options->file, "CSV file")->required()->check(CLI::ExistingFile);
    add_json(import);
    import->callback([options, &context] { context.exit_code = run_import(*options); });

    CLI::App* exporter = db->add_subcommand("export", "Write tuned rows (user and system merged) to a CSV");
    exporter->add_option("file", options->file, "CSV file to write, or - for standard output")->required();
    exporter->add_flag("--user-only", options->user_only, "Only rows of the user database");
    exporter->callback([options] { run_export(*options); });

    CLI::App* check = db->add_subcommand(
        "check", "Check CSVs for malformed rows, variants that cannot run on their arch, and collisions; exits 1 "
                 "on any problem");
    check->add_option("files", options->files, "CSV files (default: the shipped CSVs plus the user database)")
        ->check(CLI::ExistingFile);
    add_json(check);
    check->callback([options, &context] { context.exit_code = run_check(*options); });

    CLI::App* build = db->add_subcommand("build-system", "Build the read-only system database from CSVs");
    build->add_option("--out", options->out, "Database file to write")->required();
    build->add_option("csv", options->files, "CSV files (a later file in sorted path order wins a collision)")
        ->required()
        ->check(CLI::ExistingFile);
    build->callback([options] { run_build_system(*options); });

    for (CLI::App* command : {lookup, list, import, exporter, check, build}) command->fallthrough();
}

}  // namespace mqajit::cli
