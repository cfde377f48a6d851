#pragma once
// A bounded, single-flight map from keys to shared values. Concurrent callers of one key wait for a
// single factory run; callers of other keys never wait on it; a factory's exception reaches every
// caller waiting on that run and the key is then forgotten, so a later call tries again.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace mqajit {

template <typename Key, typename Value, typename Hash = std::hash<Key>>
class SingleFlightCache {
public:
    using ValuePtr = std::shared_ptr<Value>;

    explicit SingleFlightCache(std::size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}
    SingleFlightCache(const SingleFlightCache&) = delete;
    SingleFlightCache& operator=(const SingleFlightCache&) = delete;

    // The value for `key`, made by `factory()` (returning ValuePtr) if no call has made it yet.
    // `factory` must not call get_or_create for the same key (it would wait on itself).
    template <typename Factory>
    ValuePtr get_or_create(const Key& key, Factory&& factory) {
        std::unique_lock lock(mutex_);
        if (auto found = slots_.find(key); found != slots_.end()) {
            recency_.splice(recency_.begin(), recency_, found->second.recency);
            std::shared_future<ValuePtr> pending = found->second.value;
            lock.unlock();
            return pending.get();
        }

        std::promise<ValuePtr> promise;
        const std::uint64_t generation = ++next_generation_;
        recency_.push_front(key);
        slots_.emplace(key, Slot{promise.get_future().share(), recency_.begin(), generation});
        evict_over_capacity();
        lock.unlock();

        // NOTES: the factory runs with no lock held, so other keys proceed while this one compiles.
        try {
            ValuePtr value = std::forward<Factory>(factory)();
            promise.set_value(value);
            return value;
        } catch (...) {
            promise.set_exception(std::current_exception());
            forget(key, generation);
            throw;
        }
    }

    bool contains(const Key& key) const {
        const std::lock_guard lock(mutex_);
        return slots_.count(key) != 0;
    }
    std::size_t size() const {
        const std::lock_guard lock(mutex_);
        return slots_.size();
    }
    std::size_t capacity() const { return capacity_; }
    void clear() {
        const std::lock_guard lock(mutex_);
        slots_.clear();
        recency_.clear();
    }

private:
    struct Slot {
        std::shared_future<ValuePtr> value;
        typename std::list<Key>::iterator recency;
        std::uint64_t generation;  // tells this run's slot from a later one for the same key
    };

    static bool is_ready(const std::shared_future<ValuePtr>& value) {
        return value.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
    }

    // Drops least recently used finished entries until the cache fits. Values stay alive while a
    // caller holds them; entries still being made are kept so their key stays single-flight.
    void evict_over_capacity() {
        auto position = recency_.end();
        while (slots_.size() > capacity_ && position != recency_.begin()) {
            --position;
            auto slot = slots_.find(*position);
            if (!is_ready(slot->second.value)) continue;
            slots_.erase(slot);
            position = recency_.erase(position);
        }
    }

    void forget(const Key& key, std::uint64_t generation) {
        const std::lock_guard lock(mutex_);
        auto slot = slots_.find(key);
        if (slot == slots_.end() || slot->second.generation != generation) return;
        recency_.erase(slot->second.recency);
        slots_.erase(slot);
    }

    const std::size_t capacity_;
    mutable std::mutex mutex_;
    std::unordered_map<Key, Slot, Hash> slots_;
    std::list<Key> recency_;  // most recently used first
    std::uint64_t next_generation_ = 0;
};

}  // namespace mqajit
