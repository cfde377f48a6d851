#pragma once
// What the `mqajit db` subcommands share (cmd_db.cpp: lookup, list, export and the command's
// options; cmd_db_files.cpp: import, check and build-system, the ones that read CSV files).

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tuning_db/row_json.hpp"
#include "tuning_db/tuning_db.hpp"

namespace mqajit::cli {

struct DbOptions {
    std::string user_db;    // --db
    std::string system_db;  // --system-db
    std::string op;         // --op; empty: mqa_logits, or for named CSVs the operator their names say
    bool json = false;
    // lookup
    std::string arch;
    int cu_num = 0, heads = 0, head_dim = 0;
    int clean_logits = 0;  // NOTES: the callers' mode (vLLM and SGLang pass clean_logits=False)
    std::string logits_dtype = "float32";       // mqa_logits
    std::int64_t seq_len = 0, seq_len_kv = 0;  // mqa_logits
    int next_n = 0, block_kv = 0;              // paged_mqa_logits
    std::int64_t batch = 0;
    int k = 2048;                              // mqa_topk
    std::vector<std::string> given;  // the lookup's key options given on the command line
    // list / export
    bool user_only = false;
    // import / export
    std::string file;
    // check / build-system
    std::vector<std::string> files;
    std::string out;
};

// Runs f(std::type_identity<Key>{}) for the table `op` names.
template <class F>
decltype(auto) with_table(std::string_view op, F&& f) {
    if (op == PagedShapeKey::kOp.name) return f(std::type_identity<PagedShapeKey>{});
    if (op == TopkShapeKey::kOp.name) return f(std::type_identity<TopkShapeKey>{});
    return f(std::type_identity<ShapeKey>{});
}

// The operator of a named CSV: --op when given, else the one its file name says.
std::string_view op_of_file(const DbOptions& options, const std::filesystem::path& file);

TuningDb open_database(const DbOptions& options);

// JSON on standard output; invalid UTF-8 in a path is replaced, never thrown on.
void print_json(const tuning::Json& value);

// Commands that print rows fail (exit 1) when they could not read them, rather than print none.
void require_readable(const TuningDb& database, bool with_system);

// The subcommands that read CSV files (cmd_db_files.cpp); the exit codes of commands.hpp.
int run_db_import(const DbOptions& options);
int run_db_check(const DbOptions& options);
void run_db_build_system(const DbOptions& options);

}  // namespace mqajit::cli
