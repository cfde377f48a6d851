#pragma once
// The tuning database the runtime asks which kernel serves a shape. It composes a read-only
// system database (built from the shipped CSVs) with the user's writable one; a user row replaces
// the system row of the same shape key, and rows of both take part in the lookup rule
// (tuned_group.hpp). A call's group is (arch, cu_num, heads, head_dim, clean_logits); when it has
// no rows, the other mode's or the nearest SM count's group answers (group_choice.hpp). Each
// group's answer is worked out and read from SQLite once, on its first lookup; after that a
// lookup is two binary searches under a shared lock: no SQL, no allocation. Safe to call from
// many threads.

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <vector>

#include "tuning_db/tuned_row.hpp"

namespace mqajit {

namespace tuning {
class SystemDb;
class UserDb;
class TunedGroup;
}  // namespace tuning

struct LookupResult {
    std::optional<TunedRow> row;     // nullopt: the baseline kernel (no tuned rows for the group)
    std::vector<std::string> steps;  // each step of the lookup rule, in words
    // How the group whose rows answered differs from the call's own (another clean_logits mode,
    // the nearest SM count), one sentence each; empty when its own group answered or none did.
    std::vector<std::string> fallbacks;
};

struct LookupOptions {
    // Let the nearest tuned SM count of the same arch, heads and head_dim answer a call whose own
    // SM count has no rows (settings().nearest_cu_num, MQAJIT_NEAREST_CU_NUM).
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
    // The same answer as lookup(), with each step of the rule in words.
    LookupResult explain(const ShapeKey& shape) const;

    // Writes to the user database, replacing a row with the same key. Throws
    // mqajit::Error(invalid_argument) for a malformed row (see row_problem); a batch is checked
    // whole before anything is written, then written in one transaction.
    void insert(const TunedRow& row);
    void insert(std::span<const TunedRow> rows);

    std::vector<TunedRow> rows() const;  // user and system merged (user wins), ordered by key
    std::vector<TunedRow> user_rows() const;
    std::vector<TunedRow> system_rows() const;

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
    // What answers a call's group: the rows of the group chosen for it, and how they were chosen.
    struct Served {
        const tuning::TunedGroup* rows = nullptr;  // never null: an empty group when none answers
        std::optional<ShapeKey> group;             // the group of `rows` (lengths 0); nullopt when none answers
        std::vector<std::string> fallbacks;
        std::string declined;
    };
    const Served& served(const GroupKeyView& key) const;
    std::unique_ptr<const tuning::TunedGroup> load_group(const GroupKeyView& key) const;
    std::vector<ShapeKey> tuned_groups() const;

    std::unique_ptr<tuning::SystemDb> system_;
    std::optional<std::string> system_problem_;
    std::unique_ptr<tuning::UserDb> user_;
    LookupOptions options_;
    mutable std::shared_mutex mutex_;
    // Both keyed by a group (a ShapeKey whose lengths are 0), found by a GroupKeyView.
    mutable std::map<ShapeKey, std::unique_ptr<const tuning::TunedGroup>, GroupLess> groups_;  // by their own group
    mutable std::map<ShapeKey, std::unique_ptr<const Served>, GroupLess> served_;  // by the call's group
    // NOTES: what an insert replaces is kept, not freed, so pointers and references handed out
    // stay valid; inserts are rare (tuning runs), so these grow by little.
    mutable std::vector<std::unique_ptr<const tuning::TunedGroup>> retired_;
    mutable std::vector<std::unique_ptr<const Served>> retired_served_;
    mutable std::uint64_t generation_ = 0;  // bumped by each insert, so a load racing it retries
};

}  // namespace mqajit
