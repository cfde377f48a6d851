#pragma once
// The tuning database the runtime asks which kernel serves a call, for each operator's table
// (mqa_logits keyed by ShapeKey, paged_mqa_logits by PagedShapeKey, mqa_topk by TopkShapeKey). It composes a read-only
// system database (built from the shipped CSVs) with the user's writable one; a user row replaces
// the system row of the same key, and rows of both take part in the lookup rule (tuned_group.hpp).
// A call's group is its key without the lengths; when it has no rows, the other mode's or the
// nearest SM count's group answers (group_choice.hpp). Each group's answer is worked out and read
// from SQLite once, on its first lookup; after that a lookup is a few binary searches under a
// shared lock: no SQL, no allocation. Safe to call from many threads.

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tuning_db/tuned_row.hpp"

namespace mqajit {

namespace tuning {
class SystemDb;
class UserDb;
}  // namespace tuning

template <class Key>
struct LookupResultOf {
    std::optional<TunedRowOf<Key>> row;  // nullopt: the baseline kernel (no tuned rows for the group)
    std::vector<std::string> steps;      // each step of the lookup rule, in words
    // How the group whose rows answered differs from the call's own (another clean_logits mode,
    // the nearest SM count), one sentence each; empty when its own group answered or none did.
    std::vector<std::string> fallbacks;
};
using LookupResult = LookupResultOf<ShapeKey>;
using PagedLookupResult = LookupResultOf<PagedShapeKey>;
using TopkLookupResult = LookupResultOf<TopkShapeKey>;

struct LookupOptions {
    // Let the nearest tuned SM count of the same identity columns (arch, heads, head_dim, ...)
    // answer a call whose own SM count has no rows (settings().nearest_cu_num, MQAJIT_NEAREST_CU_NUM).
    bool nearest_cu_num = true;
};

class TuningDb {
public:
    // The process-wide database: the system database found by tuning::locate_system_db() and the
    // user database at settings().user_db_path. A missing system database is one warning.
    static TuningDb& instance();

    // system_db nullopt: no system rows. A system path that is missing or unusable is one warning.
    TuningDb(std::optional<std::filesystem::path> system_db, std::filesystem::path user_db,
             LookupOptions options = {});
    ~TuningDb();
    TuningDb(const TuningDb&) = delete;
    TuningDb& operator=(const TuningDb&) = delete;

    // The row that serves `shape`, or nullptr for the baseline kernel. The pointer stays valid for
    // the life of this TuningDb, even after later inserts (which then answer new lookups).
    const TunedRow* lookup(const ShapeKey& shape) const;
    const PagedTunedRow* lookup(const PagedShapeKey& shape) const;
    const TopkTunedRow* lookup(const TopkShapeKey& shape) const;
    // The same answer as lookup(), with each step of the rule in words.
    LookupResult explain(const ShapeKey& shape) const;
    PagedLookupResult explain(const PagedShapeKey& shape) const;
    TopkLookupResult explain(const TopkShapeKey& shape) const;

    // Writes to the user database, replacing a row with the same key. Throws
    // mqajit::Error(invalid_argument) for a malformed row (see row_problem); a batch is checked
    // whole before anything is written, then written in one transaction.
    void insert(const TunedRow& row);
    void insert(std::span<const TunedRow> rows);
    void insert(const PagedTunedRow& row);
    void insert(std::span<const PagedTunedRow> rows);
    void insert(const TopkTunedRow& row);
    void insert(std::span<const TopkTunedRow> rows);

    // The rows of Key's table: user and system merged (user wins), ordered by key.
    template <class Key = ShapeKey>
    std::vector<TunedRowOf<Key>> rows() const;
    template <class Key = ShapeKey>
    std::vector<TunedRowOf<Key>> user_rows() const;
    template <class Key = ShapeKey>
    std::vector<TunedRowOf<Key>> system_rows() const;

    const std::filesystem::path& user_db_path() const;
    // The system database in use; nullopt when none (not given, missing or unusable).
    std::optional<std::filesystem::path> system_db_path() const;
    // Whether user rows live in memory only (the file was unusable; a warning said why).
    bool user_db_in_memory() const;
    // Why the user database's rows could not be read, though the file exists; nullopt when they
    // were (or there is no file). Commands that print rows fail on it rather than print none.
    std::optional<std::string> user_db_read_problem() const;
    // Why the system database that was found or given cannot be used; nullopt when it is in use
    // or when there is none (a missing one is only a warning).
    const std::optional<std::string>& system_db_problem() const { return system_problem_; }

private:
    template <class Key>
    class Table;  // one operator's loaded groups and answers (tuning_db.cpp)

    template <class Key>
    Table<Key>& table() const;
    template <class Key>
    std::vector<Key> tuned_groups() const;
    template <class Key>
    std::vector<TunedRowOf<Key>> group_rows(const Key& group) const;
    template <class Key>
    LookupResultOf<Key> explain_any(const Key& shape) const;
    template <class Key>
    void insert_any(std::span<const TunedRowOf<Key>> rows);

    std::unique_ptr<tuning::SystemDb> system_;
    std::optional<std::string> system_problem_;
    std::unique_ptr<tuning::UserDb> user_;
    LookupOptions options_;
    std::unique_ptr<Table<ShapeKey>> mqa_logits_;
    std::unique_ptr<Table<PagedShapeKey>> paged_mqa_logits_;
    std::unique_ptr<Table<TopkShapeKey>> mqa_topk_;
};

}  // namespace mqajit
