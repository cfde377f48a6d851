#include "tuning_db/tuning_db.hpp"

#include <algorithm>
#include <mutex>

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

std::vector<TunedRow> merge_user_over_system(std::vector<TunedRow> system_rows, std::vector<TunedRow> user_rows) {
    std::map<ShapeKey, TunedRow> by_key;
    for (TunedRow& row : system_rows) by_key.insert_or_assign(row.key, std::move(row));
    for (TunedRow& row : user_rows) by_key.insert_or_assign(row.key, std::move(row));
    std::vector<TunedRow> merged;
    merged.reserve(by_key.size());
    for (auto& [key, row] : by_key) merged.push_back(std::move(row));
    return merged;
}

std::string describe_row(const TunedRow& row) {
    std::string text = fmt::format("answer: {} ({} us", row.choice(), row.us);
    if (row.baseline_us) text += fmt::format(", baseline {} us", *row.baseline_us);
    return text + fmt::format(") from {}", row.origin);
}

}  // namespace

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
    : user_(std::make_unique<tuning::UserDb>(std::move(user_db))), options_(options) {
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

std::unique_ptr<const tuning::TunedGroup> TuningDb::load_group(const GroupKeyView& key) const {
    std::vector<TunedRow> system_rows;
    if (system_) {
        try {
            system_rows = system_->group_rows(key);
        } catch (const Error& e) {
            log().warn("reading the system tuning database failed: {}; using user rows only", e.what());
        }
    }
    return std::make_unique<const tuning::TunedGroup>(merge_user_over_system(std::move(system_rows),
                                                                             user_->group_rows(key)));
}

std::vector<ShapeKey> TuningDb::tuned_groups() const {
    std::vector<ShapeKey> keys;
    if (system_) {
        try {
            keys = system_->group_keys();
        } catch (const Error& e) {
            log().warn("reading the system tuning database failed: {}; using user rows only", e.what());
        }
    }
    for (ShapeKey& key : user_->group_keys()) keys.push_back(std::move(key));
    return keys;
}

const TuningDb::Served& TuningDb::served(const GroupKeyView& key) const {
    static const tuning::TunedGroup kNoRows{std::vector<TunedRow>{}};
    std::uint64_t seen_generation = 0;
    {
        std::shared_lock lock(mutex_);
        if (auto found = served_.find(key); found != served_.end()) return *found->second;
        seen_generation = generation_;
    }
    while (true) {
        // NOTES: SQLite is read outside the lock so lookups of loaded groups never wait on disk;
        // if an insert landed meanwhile, what was read may predate it, so read again.
        tuning::GroupChoice choice = tuning::choose_group(key, tuned_groups(), options_.nearest_cu_num);
        auto loaded = choice.group ? load_group(GroupKeyView::of(*choice.group)) : nullptr;
        std::unique_lock lock(mutex_);
        if (auto found = served_.find(key); found != served_.end()) return *found->second;
        if (generation_ == seen_generation) {
            const tuning::TunedGroup* rows = &kNoRows;
            if (choice.group) {
                auto slot = groups_.find(*choice.group);
                if (slot == groups_.end()) slot = groups_.emplace(*choice.group, std::move(loaded)).first;
                rows = slot->second.get();
            }
            auto entry = std::make_unique<const Served>(Served{.rows = rows, .group = std::move(choice.group),
                                                                .fallbacks = std::move(choice.fallbacks),
                                                                .declined = std::move(choice.declined)});
            return *served_.emplace(key.key(), std::move(entry)).first->second;
        }
        seen_generation = generation_;
    }
}

const TunedRow* TuningDb::lookup(const ShapeKey& shape) const {
    return served(GroupKeyView::of(shape)).rows->find(shape.seq_len, shape.seq_len_kv);
}

LookupResult TuningDb::explain(const ShapeKey& shape) const {
    LookupResult result;
    const GroupKeyView key = GroupKeyView::of(shape);
    const Served& answer = served(key);
    if (!answer.group) {
        result.steps.push_back(fmt::format("no tuned rows for group {}: use the baseline kernel", to_string(key)));
        if (!answer.declined.empty()) result.steps.push_back(answer.declined);
        return result;
    }
    const tuning::TunedGroup& rows = *answer.rows;
    result.fallbacks = answer.fallbacks;
    if (!answer.fallbacks.empty()) {
        result.steps.push_back(fmt::format("no tuned rows for group {}", to_string(key)));
        result.steps.insert(result.steps.end(), answer.fallbacks.begin(), answer.fallbacks.end());
    }
    const auto num_user = std::ranges::count_if(rows.rows(), [](const TunedRow& row) {
        return row.origin.starts_with("user:");
    });
    result.steps.push_back(fmt::format("group {}: {} tuned row(s) ({} from the user database, {} from the system "
                                       "database)", to_string(GroupKeyView::of(*answer.group)), rows.size(), num_user,
                                       rows.size() - num_user));
    const TunedRow* row = rows.explain(shape.seq_len, shape.seq_len_kv, result.steps);
    result.steps.push_back(describe_row(*row));
    result.row = *row;
    return result;
}

void TuningDb::insert(const TunedRow& row) { insert(std::span<const TunedRow>(&row, 1)); }

void TuningDb::insert(std::span<const TunedRow> rows) {
    for (const TunedRow& row : rows) {
        if (auto problem = row_problem(row))
            MQAJIT_FAIL(invalid_argument, "cannot store the tuned row for {}: {}", to_string(row.key), *problem);
    }
    user_->insert(rows);
    std::unique_lock lock(mutex_);
    ++generation_;
    for (const TunedRow& row : rows) {
        auto found = groups_.find(GroupKeyView::of(row.key));
        if (found == groups_.end()) continue;
        retired_.push_back(std::move(found->second));
        groups_.erase(found);
    }
    // NOTES: a new group can change which group answers any call (another mode, a nearer SM
    // count), so every answer is worked out again.
    for (auto& [key, entry] : served_) retired_served_.push_back(std::move(entry));
    served_.clear();
}

std::vector<TunedRow> TuningDb::rows() const { return merge_user_over_system(system_rows(), user_rows()); }

std::vector<TunedRow> TuningDb::user_rows() const { return user_->all_rows(); }

std::vector<TunedRow> TuningDb::system_rows() const {
    if (!system_) return {};
    return system_->all_rows();
}

const std::filesystem::path& TuningDb::user_db_path() const { return user_->path(); }

std::optional<std::filesystem::path> TuningDb::system_db_path() const {
    if (!system_) return std::nullopt;
    return system_->path();
}

bool TuningDb::user_db_in_memory() const { return user_->in_memory(); }

std::optional<std::string> TuningDb::user_db_read_problem() const { return user_->read_problem(); }

}  // namespace mqajit
