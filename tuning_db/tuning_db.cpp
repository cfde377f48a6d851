#include "tuning_db/tuning_db.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <shared_mutex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/check.hpp"
#include "core/log.hpp"
#include "core/settings.hpp"
#include "tuning_db/group_choice.hpp"
#include "tuning_db/locations.hpp"
#include "tuning_db/system_db.hpp"
#include "tuning_db/tuned_group.hpp"
#include "tuning_db/user_db.hpp"

namespace mqajit {
namespace {

template <class Row>
std::vector<Row> merge_user_over_system(std::vector<Row> system_rows, std::vector<Row> user_rows) {
    std::map<decltype(Row::key), Row> by_key;
    for (Row& row : system_rows) by_key.insert_or_assign(row.key, std::move(row));
    for (Row& row : user_rows) by_key.insert_or_assign(row.key, std::move(row));
    std::vector<Row> merged;
    merged.reserve(by_key.size());
    for (auto& [key, row] : by_key) merged.push_back(std::move(row));
    return merged;
}

template <class Row>
std::string describe_row(const Row& row) {
    std::string text = fmt::format("answer: {} ({} us", row.choice(), row.us);
    if (row.baseline_us) text += fmt::format(", baseline {} us", *row.baseline_us);
    return text + fmt::format(") from {}", row.origin);
}

}  // namespace

// One operator's answers: which group serves each call group, and the rows of each loaded group.
template <class Key>
class TuningDb::Table {
public:
    using Group = tuning::TunedGroup<Key>;
    // What answers a call's group: the rows of the group chosen for it, and how they were chosen.
    struct Served {
        const Group* rows = nullptr;  // never null: an empty group when none answers
        std::optional<Key> group;     // the group of `rows` (lengths 0); nullopt when none answers
        std::vector<std::string> fallbacks;
        std::string declined;
        std::vector<std::string> unreadable;  // listed groups passed over: none of their rows reads back
        bool table_empty = false;  // the operator's table has no rows at all
    };

    const Served& served(const TuningDb& db, const Key& key) {
        static const Group kNoRows{std::vector<TunedRowOf<Key>>{}};
        std::uint64_t seen_generation = 0;
        {
            std::shared_lock lock(mutex_);
            if (auto found = served_.find(key); found != served_.end()) return *found->second;
            seen_generation = generation_;
        }
        while (true) {
            // NOTES: SQLite is read outside the lock so lookups of loaded groups never wait on disk;
            // if an insert landed meanwhile, what was read may predate it, so read again.
            std::vector<Key> tuned = db.tuned_groups<Key>();
            const bool table_empty = tuned.empty();
            tuning::GroupChoice<Key> choice;
            std::unique_ptr<const Group> loaded;
            std::vector<std::string> unreadable;
            // NOTES: a damaged or hand-edited file can list a group none of whose rows reads back
            // under its key (a number stored as text or a fraction, text that is not UTF-8). Such a
            // group is as good as untuned: the choice is made again without it, so that another
            // group (the other mode, a nearer SM count) or the baseline answers, not an empty group.
            while (true) {
                choice = tuning::choose_group(key, tuned, db.options_.nearest_cu_num);
                loaded = choice.group ? std::make_unique<const Group>(db.group_rows(*choice.group)) : nullptr;
                if (!loaded || !loaded->empty()) break;
                unreadable.push_back(fmt::format("group {} is listed, but none of its rows reads back under that key "
                                                 "(the file was edited or damaged; `mqajit db check` names such "
                                                 "rows): not used", group_string(*choice.group)));
                const Key passed_over = *choice.group;
                const auto erased =
                    std::erase_if(tuned, [&](const Key& listed) { return same_group(listed, passed_over); });
                MQAJIT_CHECK_KIND(internal, erased > 0, "the chosen group {} is not among the listed ones",
                                  group_string(passed_over));
            }
            std::unique_lock lock(mutex_);
            if (auto found = served_.find(key); found != served_.end()) return *found->second;
            if (generation_ == seen_generation) {
                const Group* rows = &kNoRows;
                if (choice.group) {
                    auto slot = groups_.find(*choice.group);
                    if (slot == groups_.end()) slot = groups_.emplace(*choice.group, std::move(loaded)).first;
                    rows = slot->second.get();
                }
                auto entry = std::make_unique<const Served>(Served{.rows = rows, .group = std::move(choice.group),
                                                                    .fallbacks = std::move(choice.fallbacks),
                                                                    .declined = std::move(choice.declined),
                                                                    .unreadable = std::move(unreadable),
                                                                    .table_empty = table_empty});
                return *served_.emplace(group_of(key), std::move(entry)).first->second;
            }
            seen_generation = generation_;
        }
    }

    // After an insert of `rows`: their groups are read again, and every answer worked out again.
    void invalidate(std::span<const TunedRowOf<Key>> rows) {
        std::unique_lock lock(mutex_);
        ++generation_;
        for (const auto& row : rows) {
            auto found = groups_.find(row.key);
            if (found == groups_.end()) continue;
            retired_.push_back(std::move(found->second));
            groups_.erase(found);
        }
        // NOTES: a new group can change which group answers any call (another mode, a nearer SM
        // count), so every answer is worked out again.
        for (auto& [key, entry] : served_) retired_served_.push_back(std::move(entry));
        served_.clear();
    }

private:
    std::shared_mutex mutex_;
    // Both keyed by a group (a key whose lengths are 0), found by any key of the group.
    std::map<Key, std::unique_ptr<const Group>, GroupLess> groups_;   // by their own group
    std::map<Key, std::unique_ptr<const Served>, GroupLess> served_;  // by the call's group
    // NOTES: what an insert replaces is kept, not freed, so pointers and references handed out
    // stay valid; inserts are rare (tuning runs), so these grow by little.
    std::vector<std::unique_ptr<const Group>> retired_;
    std::vector<std::unique_ptr<const Served>> retired_served_;
    std::uint64_t generation_ = 0;  // bumped by each insert, so a load racing it retries
};

TuningDb& TuningDb::instance() {
    static TuningDb database = [] {
        const auto location = tuning::locate_system_db();
        if (!location.path) {
            std::vector<std::string> searched;
            for (const auto& path : location.searched) searched.push_back(path.string());
            log().warn("no system tuning database found (looked for {}); untuned shapes use the baseline kernel. "
                       "Build or install mqajit, or set MQAJIT_SYSTEM_DB.", fmt::join(searched, ", "));
        }
        return TuningDb(location.path, settings().user_db_path, {.nearest_cu_num = settings().nearest_cu_num});
    }();
    return database;
}

TuningDb::TuningDb(std::optional<std::filesystem::path> system_db, std::filesystem::path user_db,
                   LookupOptions options)
    : user_(std::make_unique<tuning::UserDb>(std::move(user_db))),
      options_(options),
      mqa_logits_(std::make_unique<Table<ShapeKey>>()),
      paged_mqa_logits_(std::make_unique<Table<PagedShapeKey>>()),
      mqa_topk_(std::make_unique<Table<TopkShapeKey>>()) {
    if (system_db) {
        try {
            system_ = std::make_unique<tuning::SystemDb>(*system_db);
        } catch (const Error& e) {
            log().warn("{}; untuned shapes use the baseline kernel", e.what());
            if (e.kind() != ErrorKind::not_found) system_problem_ = e.what();
        }
    }
}

TuningDb::~TuningDb() = default;

template <class Key>
TuningDb::Table<Key>& TuningDb::table() const {
    if constexpr (std::is_same_v<Key, ShapeKey>) return *mqa_logits_;
    else if constexpr (std::is_same_v<Key, PagedShapeKey>) return *paged_mqa_logits_;
    else return *mqa_topk_;
}

template <class Key>
std::vector<TunedRowOf<Key>> TuningDb::group_rows(const Key& group) const {
    std::vector<TunedRowOf<Key>> system_rows;
    if (system_) {
        try {
            system_rows = system_->group_rows(group);
        } catch (const Error& e) {
            log().warn("reading the system tuning database failed: {}; using user rows only", e.what());
        }
    }
    return merge_user_over_system(std::move(system_rows), user_->group_rows(group));
}

template <class Key>
std::vector<Key> TuningDb::tuned_groups() const {
    std::vector<Key> keys;
    if (system_) {
        try {
            keys = system_->group_keys<Key>();
        } catch (const Error& e) {
            log().warn("reading the system tuning database failed: {}; using user rows only", e.what());
        }
    }
    for (Key& key : user_->group_keys<Key>()) keys.push_back(std::move(key));
    return keys;
}

const TunedRow* TuningDb::lookup(const ShapeKey& shape) const {
    return table<ShapeKey>().served(*this, shape).rows->find(shape);
}

const PagedTunedRow* TuningDb::lookup(const PagedShapeKey& shape) const {
    return table<PagedShapeKey>().served(*this, shape).rows->find(shape);
}

const TopkTunedRow* TuningDb::lookup(const TopkShapeKey& shape) const {
    return table<TopkShapeKey>().served(*this, shape).rows->find(shape);
}

LookupResult TuningDb::explain(const ShapeKey& shape) const { return explain_any(shape); }
PagedLookupResult TuningDb::explain(const PagedShapeKey& shape) const { return explain_any(shape); }
TopkLookupResult TuningDb::explain(const TopkShapeKey& shape) const { return explain_any(shape); }

template <class Key>
LookupResultOf<Key> TuningDb::explain_any(const Key& shape) const {
    LookupResultOf<Key> result;
    const auto& answer = table<Key>().served(*this, shape);
    result.steps = answer.unreadable;
    if (!answer.group) {
        result.steps.push_back(fmt::format("no tuned rows for group {}: use the baseline kernel", group_string(shape)));
        if (!answer.declined.empty()) result.steps.push_back(answer.declined);
        if (answer.table_empty) {
            result.steps.push_back(fmt::format("the {} table has no tuned rows at all (none shipped, none in the user "
                                               "database); `{}` tunes some", Key::kOp.name, Key::kOp.tune_command));
        }
        return result;
    }
    const auto& rows = *answer.rows;
    result.fallbacks = answer.fallbacks;
    if (!answer.fallbacks.empty()) {
        result.steps.push_back(fmt::format("no tuned rows for group {}", group_string(shape)));
        result.steps.insert(result.steps.end(), answer.fallbacks.begin(), answer.fallbacks.end());
    }
    const auto num_user = std::ranges::count_if(rows.rows(), [](const TunedRowOf<Key>& row) {
        return row.origin.starts_with("user:");
    });
    result.steps.push_back(fmt::format("group {}: {} tuned row(s) ({} from the user database, {} from the system "
                                       "database)", group_string(*answer.group), rows.size(), num_user,
                                       rows.size() - num_user));
    const auto* row = rows.explain(shape, result.steps);
    result.steps.push_back(describe_row(*row));
    result.row = *row;
    return result;
}

void TuningDb::insert(const TunedRow& row) { insert_any<ShapeKey>(std::span<const TunedRow>(&row, 1)); }
void TuningDb::insert(std::span<const TunedRow> rows) { insert_any<ShapeKey>(rows); }
void TuningDb::insert(const PagedTunedRow& row) { insert_any<PagedShapeKey>(std::span<const PagedTunedRow>(&row, 1)); }
void TuningDb::insert(std::span<const PagedTunedRow> rows) { insert_any<PagedShapeKey>(rows); }
void TuningDb::insert(const TopkTunedRow& row) { insert_any<TopkShapeKey>(std::span<const TopkTunedRow>(&row, 1)); }
void TuningDb::insert(std::span<const TopkTunedRow> rows) { insert_any<TopkShapeKey>(rows); }

template <class Key>
void TuningDb::insert_any(std::span<const TunedRowOf<Key>> rows) {
    for (const auto& row : rows) {
        if (auto problem = row_problem(row))
            MQAJIT_FAIL(invalid_argument, "cannot store the tuned {} row for {}: {}", Key::kOp.name,
                        to_string(row.key), *problem);
    }
    user_->insert(rows);
    table<Key>().invalidate(rows);
}

template <class Key>
std::vector<TunedRowOf<Key>> TuningDb::rows() const {
    return merge_user_over_system(system_rows<Key>(), user_rows<Key>());
}

template <class Key>
std::vector<TunedRowOf<Key>> TuningDb::user_rows() const {
    return user_->all_rows<Key>();
}

template <class Key>
std::vector<TunedRowOf<Key>> TuningDb::system_rows() const {
    if (!system_) return {};
    return system_->all_rows<Key>();
}

template std::vector<TunedRow> TuningDb::rows<ShapeKey>() const;
template std::vector<TunedRow> TuningDb::user_rows<ShapeKey>() const;
template std::vector<TunedRow> TuningDb::system_rows<ShapeKey>() const;
template std::vector<PagedTunedRow> TuningDb::rows<PagedShapeKey>() const;
template std::vector<PagedTunedRow> TuningDb::user_rows<PagedShapeKey>() const;
template std::vector<PagedTunedRow> TuningDb::system_rows<PagedShapeKey>() const;
template std::vector<TopkTunedRow> TuningDb::rows<TopkShapeKey>() const;
template std::vector<TopkTunedRow> TuningDb::user_rows<TopkShapeKey>() const;
template std::vector<TopkTunedRow> TuningDb::system_rows<TopkShapeKey>() const;

const std::filesystem::path& TuningDb::user_db_path() const { return user_->path(); }

std::optional<std::filesystem::path> TuningDb::system_db_path() const {
    if (!system_) return std::nullopt;
    return system_->path();
}

bool TuningDb::user_db_in_memory() const { return user_->in_memory(); }

std::optional<std::string> TuningDb::user_db_read_problem() const { return user_->read_problem(); }

}  // namespace mqajit
