// `mqajit db ...`: look up, list, import, export and check tuned rows of each operator's table
// (`--op mqa_logits`, the default, `--op paged_mqa_logits` or `--op mqa_topk`), and build the
// system database. Here: the command's options, lookup, list and export; the subcommands that read
// CSV files are in cmd_db_files.cpp.
// Exit codes: 0 ok, 1 a check failed (or rows were skipped or not saved), 2 bad usage.

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/check.hpp"
#include "core/log.hpp"
#include "core/settings.hpp"
#include "mqajit/mqa_topk.hpp"
#include "runtime/mqa_topk_path.hpp"
#include "tools/cli/cmd_db.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/number_options.hpp"
#include "tuning_db/config_files.hpp"
#include "tuning_db/csv.hpp"
#include "tuning_db/locations.hpp"
#include "tuning_db/row_json.hpp"
#include "tuning_db/tuning_db.hpp"
#include "variants/arch.hpp"

namespace mqajit::cli {

std::string_view op_of_file(const DbOptions& options, const std::filesystem::path& file) {
    return options.op.empty() ? tuning::config_file_op(file) : std::string_view(options.op);
}

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

void require_readable(const TuningDb& database, bool with_system) {
    if (auto problem = database.user_db_read_problem()) {
        MQAJIT_FAIL(database, "cannot read the user tuning database {}: it {}", database.user_db_path().string(),
                    *problem);
    }
    if (with_system && database.system_db_problem()) {
        MQAJIT_FAIL(database, "cannot read the system tuning database: {}", *database.system_db_problem());
    }
}

namespace {

template <class Row>
std::string kernel_name(const Row* row) {
    return row ? row->variant : std::string(kBackendBaseline);
}

// The key `db lookup` asks for, from the options its operator takes; refuses the other's.
template <class Key>
Key lookup_key(const DbOptions& options) {
    const std::vector<std::string> wanted = std::is_same_v<Key, PagedShapeKey>
                                                ? std::vector<std::string>{"--next-n", "--block-kv", "--batch"}
                                                : std::vector<std::string>{"--seq-len", "--seq-len-kv"};
    std::vector<std::string> optional;
    if constexpr (has_mode_column<Key>) optional.emplace_back("--clean-logits");
    if constexpr (std::is_same_v<Key, ShapeKey>) optional.emplace_back("--logits-dtype");
    if constexpr (std::is_same_v<Key, TopkShapeKey>) optional.emplace_back("--k");
    for (const std::string& flag : options.given) {
        MQAJIT_CHECK(std::ranges::find(wanted, flag) != wanted.end() || std::ranges::find(optional, flag) != optional.end(),
                     "{} is not a key of the {} table; its lookup takes {}", flag, Key::kOp.name,
                     fmt::join(wanted, ", "));
    }
    for (const std::string& flag : wanted) {
        MQAJIT_CHECK(std::ranges::find(options.given, flag) != options.given.end(),
                     "a {} lookup needs {} (it takes {})", Key::kOp.name, flag, fmt::join(wanted, ", "));
    }
    Key key;
    if constexpr (std::is_same_v<Key, ShapeKey>) {
        key = {.arch = {}, .cu_num = options.cu_num, .heads = options.heads, .head_dim = options.head_dim,
               .clean_logits = options.clean_logits, .logits_dtype = options.logits_dtype, .seq_len = options.seq_len,
               .seq_len_kv = options.seq_len_kv};
    } else if constexpr (std::is_same_v<Key, PagedShapeKey>) {
        key = {.arch = {}, .cu_num = options.cu_num, .next_n = options.next_n, .heads = options.heads,
               .head_dim = options.head_dim, .block_kv = options.block_kv, .clean_logits = options.clean_logits,
               .batch = options.batch};
    } else {
        key = {.arch = {}, .cu_num = options.cu_num, .heads = options.heads, .head_dim = options.head_dim,
               .k = options.k, .seq_len = options.seq_len, .seq_len_kv = options.seq_len_kv};
    }
    key.arch = options.arch;
    if (key.arch.empty() && settings().arch_override) key.arch = *settings().arch_override;
    MQAJIT_CHECK(!key.arch.empty(), "no arch given; pass --arch (e.g. --arch gfx950) or set MQAJIT_ARCH");
    key.arch = Arch::parse(key.arch).name;
    const auto problem = key_problem(key);
    MQAJIT_CHECK(!problem, "{}; got {}", problem.value_or(""), to_string(key));
    return key;
}

// What an mqa_topk call of the looked-up shape would run (choose_topk: the table's row, else the
// mqa_logits table's kernel and the path rule), with mqa_topk_workspace_bytes()' workspace.
TopkChoice topk_call(const TuningDb& database, const TopkShapeKey& shape) {
    const Arch arch = Arch::parse(shape.arch);
    return choose_topk(database, {.arch = arch, .cu_num = shape.cu_num, .heads = shape.heads,
                                  .head_dim = shape.head_dim, .seq_len = shape.seq_len, .seq_len_kv = shape.seq_len_kv,
                                  .k = shape.k,
                                  .workspace_bytes = mqa_topk_workspace_bytes(shape.seq_len, shape.seq_len_kv, shape.k),
                                  .kv_rows_aligned = true, .path = MqaTopkPath::automatic, .variant = {},
                                  .device = fmt::format("{} with {} SMs", arch.name, shape.cu_num)});
}

template <class Key>
void run_lookup(const DbOptions& options) {
    const Key shape = lookup_key<Key>(options);
    const TuningDb database = open_database(options);
    const LookupResultOf<Key> result = database.explain(shape);
    require_readable(database, true);
    const TunedRowOf<Key>* row = result.row ? &*result.row : nullptr;
    std::optional<TopkChoice> call;
    if constexpr (std::is_same_v<Key, TopkShapeKey>) call = topk_call(database, shape);
    const auto call_kernel = [&] {
        if (call->fused) return "fused " + call->topk_variant->name();
        return call->logits.variant ? call->logits.variant->name() : std::string(kBackendBaseline);
    };
    if (options.json) {
        tuning::Json answer = {{"op", Key::kOp.name},
                               {"shape", tuning::to_json(shape)},
                               {"kernel", kernel_name(row)},
                               {"row", row ? tuning::to_json(*row) : tuning::Json(nullptr)},
                               {"steps", result.steps},
                               {"fallbacks", result.fallbacks},
                               {"system_db", database.system_db_path() ? database.system_db_path()->string() : ""},
                               {"user_db", database.user_db_path().string()}};
        if (call) {
            answer["call"] = {{"path", call->fused ? "fused" : "unfused"}, {"kernel", call_kernel()},
                              {"reason", fmt::format("{}; logits: {}", call->reason, call->logits.reason)}};
        }
        print_json(answer);
        return;
    }
    fmt::print("{}: {}\n", Key::kOp.name, to_string(shape));
    fmt::print("databases: system {}, user {}\n",
               database.system_db_path() ? database.system_db_path()->string() : "(none)",
               database.user_db_path().string());
    for (std::size_t i = 0; i < result.steps.size(); ++i) fmt::print("  {}. {}\n", i + 1, result.steps[i]);
    if (call) {
        fmt::print("a call runs: {} ({}; logits: {})\n", call_kernel(), call->reason, call->logits.reason);
    }
    fmt::print("{}\n", kernel_name(row));
}

template <class Key>
void print_table(const std::vector<TunedRowOf<Key>>& rows) {
    std::vector<std::vector<std::string>> cells;
    std::vector<std::string> header;
    Key{}.visit([&](std::string_view column, const auto&) { header.emplace_back(tuning::csv_column_name(column)); });
    header.insert(header.end(), {"backend", "variant", "us", "origin"});
    cells.push_back(header);
    for (const auto& row : rows) {
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

template <class Key>
std::vector<TunedRowOf<Key>> selected_rows(const TuningDb& database, const DbOptions& options) {
    auto rows = options.user_only ? database.user_rows<Key>() : database.rows<Key>();
    require_readable(database, !options.user_only);
    if (!options.arch.empty()) {
        const std::string arch = Arch::parse(options.arch).name;
        std::erase_if(rows, [&](const TunedRowOf<Key>& row) { return row.key.arch != arch; });
    }
    return rows;
}

template <class Key>
void run_list(const DbOptions& options) {
    const TuningDb database = open_database(options);
    const auto rows = selected_rows<Key>(database, options);
    if (options.json) {
        tuning::Json array = tuning::Json::array();
        for (const auto& row : rows) array.push_back(tuning::to_json(row));
        print_json(array);
        return;
    }
    print_table<Key>(rows);
    fmt::print("{} row(s)\n", rows.size());
}

template <class Key>
void run_export(const DbOptions& options) {
    const TuningDb database = open_database(options);
    const auto rows = selected_rows<Key>(database, options);
    if (options.file == "-") {
        tuning::write_csv(std::cout, rows);
        return;
    }
    tuning::write_csv_file(options.file, rows);
    fmt::print("wrote {} row(s) to {}\n", rows.size(), options.file);
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
    auto add_op = [&](CLI::App* command, const std::string& what) {
        command->add_option("--op", options->op, "The operator's table: mqa_logits (prefill), paged_mqa_logits "
                                                 "(decode) or mqa_topk; default " + what)
            ->check(CLI::IsMember({std::string(ShapeKey::kOp.name), std::string(PagedShapeKey::kOp.name),
                                   std::string(TopkShapeKey::kOp.name)}));
    };

    CLI::App* lookup = db->add_subcommand("lookup", "Which tuned row serves a shape, and each step of the rule");
    add_op(lookup, "mqa_logits");
    lookup->add_option("--arch", options->arch, "GPU arch, e.g. sm_90a or gfx950 (default: MQAJIT_ARCH)");
    lookup->add_option("--cu-num", options->cu_num, "SMs or CUs of the device")->required();
    lookup->add_option("--heads", options->heads, "Query heads H")->required();
    lookup->add_option("--head-dim", options->head_dim, "Head dimension D")->required();
    std::vector<CLI::Option*> key_options = {
        lookup->add_option("--seq-len", options->seq_len, "mqa_logits, mqa_topk: query rows S")->check(whole_int64()),
        lookup->add_option("--seq-len-kv", options->seq_len_kv, "mqa_logits, mqa_topk: KV rows N")
            ->check(whole_int64()),
        lookup->add_option("--k", options->k, "mqa_topk: keys selected per row (default 2048)"),
        lookup->add_option("--next-n", options->next_n, "paged_mqa_logits: query tokens per request, 1 to 4"),
        lookup->add_option("--block-kv", options->block_kv, "paged_mqa_logits: tokens per KV-cache block"),
        lookup->add_option("--batch", options->batch, "paged_mqa_logits: requests B")->check(whole_int64()),
        lookup->add_option("--logits-dtype", options->logits_dtype,
                           "mqa_logits: the logits' element type, float32 (default) or bfloat16")
            ->check(CLI::IsMember({"float32", "bfloat16"}))};
    key_options.push_back(
        lookup->add_option("--clean-logits", options->clean_logits,
                           "The call's mode: 1 writes -inf outside the windows, 0 does not (default 0, what engines "
                           "call); not for mqa_topk")
            ->check(CLI::IsMember({0, 1})));
    add_json(lookup);
    lookup->callback([options, key_options] {
        for (const CLI::Option* option : key_options)
            if (option->count() > 0) options->given.push_back(option->get_name());
        with_table(options->op, [&]<class Key>(std::type_identity<Key>) { run_lookup<Key>(*options); });
    });

    CLI::App* list = db->add_subcommand("list", "List tuned rows (user rows replace system rows of the same key)");
    add_op(list, "mqa_logits");
    list->add_option("--arch", options->arch, "Only rows of this arch");
    list->add_flag("--user-only", options->user_only, "Only rows of the user database");
    add_json(list);
    list->callback([options] {
        with_table(options->op, [&]<class Key>(std::type_identity<Key>) { run_list<Key>(*options); });
    });

    CLI::App* import = db->add_subcommand(
        "import", "Import a CSV into the user database; a malformed row, or one whose variant cannot run on its "
                  "arch, is skipped and makes it exit 1 (the others are imported)");
    add_op(import, "the one the file's name says (paged_mqa_logits*.csv: paged_mqa_logits, mqa_topk_tuned*.csv: "
                   "mqa_topk, else mqa_logits)");
    import->add_option("file", options->file, "CSV file")->required()->check(CLI::ExistingFile);
    add_json(import);
    import->callback([options, &context] { context.exit_code = run_db_import(*options); });

    CLI::App* exporter = db->add_subcommand("export", "Write tuned rows (user and system merged) to a CSV");
    add_op(exporter, "mqa_logits");
    exporter->add_option("file", options->file, "CSV file to write, or - for standard output")->required();
    exporter->add_flag("--user-only", options->user_only, "Only rows of the user database");
    exporter->callback([options] {
        with_table(options->op, [&]<class Key>(std::type_identity<Key>) { run_export<Key>(*options); });
    });

    CLI::App* check = db->add_subcommand(
        "check", "Check CSVs for malformed rows, variants that cannot run on their arch, and collisions; exits 1 "
                 "on any problem");
    add_op(check, "every table (a named file: the one its name says)");
    check->add_option("files", options->files, "CSV files (default: the shipped CSVs plus the user database)")
        ->check(CLI::ExistingFile);
    add_json(check);
    check->callback([options, &context] { context.exit_code = run_db_check(*options); });

    CLI::App* build = db->add_subcommand(
        "build-system", "Build the read-only system database from CSVs (paged_mqa_logits*.csv go to the decode table, "
                        "mqa_topk_tuned*.csv to the mqa_topk table, the others to the prefill table)");
    build->add_option("--out", options->out, "Database file to write")->required();
    build->add_option("csv", options->files, "CSV files (a later file in sorted path order wins a collision)")
        ->required()
        ->check(CLI::ExistingFile);
    build->callback([options] { run_db_build_system(*options); });

    for (CLI::App* command : {lookup, list, import, exporter, check, build}) command->fallthrough();
}

}  // namespace mqajit::cli
