// SingleFlightCache: one factory run per key however many callers, no waiting across keys, failures
// shared by the waiters of one run, and LRU eviction at capacity.

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <latch>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "runtime/memory_cache.hpp"

using mqajit::SingleFlightCache;
using namespace std::chrono_literals;

TEST_CASE("memory cache: 16 threads asking for one key run the factory once and share its value") {
    SingleFlightCache<std::string, int> cache(8);
    std::atomic<int> factory_runs{0};
    constexpr int kThreads = 16;
    std::latch start(kThreads);
    std::vector<std::shared_ptr<int>> results(kThreads);
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
        threads.emplace_back([&, i] {
            start.arrive_and_wait();
            results[i] = cache.get_or_create("kernel", [&] {
                ++factory_runs;
                std::this_thread::sleep_for(50ms);  // long enough that every thread arrives mid-flight
                return std::make_shared<int>(7);
            });
        });
    }
    for (auto& thread : threads) thread.join();
    CHECK(factory_runs == 1);
    for (const auto& result : results) {
        REQUIRE(result != nullptr);
        CHECK(result.get() == results[0].get());
        CHECK(*result == 7);
    }
    CHECK(cache.size() == 1);
}

TEST_CASE("memory cache: a slow key does not block another key") {
    SingleFlightCache<std::string, int> cache(8);
    std::promise<void> release_slow;
    std::shared_future<void> slow_gate = release_slow.get_future().share();
    std::promise<void> slow_started;
    auto slow = std::async(std::launch::async, [&] {
        return cache.get_or_create("slow", [&] {
            slow_started.set_value();
            slow_gate.wait();
            return std::make_shared<int>(1);
        });
    });
    slow_started.get_future().wait();

    auto fast = std::async(std::launch::async, [&] {
        return cache.get_or_create("fast", [] { return std::make_shared<int>(2); });
    });
    REQUIRE(fast.wait_for(5s) == std::future_status::ready);
    CHECK(*fast.get() == 2);
    CHECK(slow.wait_for(0s) == std::future_status::timeout);  // still in its factory

    release_slow.set_value();
    CHECK(*slow.get() == 1);
}

TEST_CASE("memory cache: a factory's exception reaches every waiter, and a later call retries") {
    SingleFlightCache<std::string, int> cache(8);
    std::atomic<int> factory_runs{0};
    std::promise<void> open_gate;
    std::shared_future<void> gate = open_gate.get_future().share();
    constexpr int kThreads = 6;
    std::atomic<int> failures{0};
    std::vector<std::string> messages(kThreads);
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
        threads.emplace_back([&, i] {
            try {
                cache.get_or_create("broken", [&]() -> std::shared_ptr<int> {
                    ++factory_runs;
                    gate.wait();
                    throw std::runtime_error("compile failed: bad template");
                });
            } catch (const std::runtime_error& e) {
                ++failures;
                messages[i] = e.what();
            }
        });
    }
    // NOTES: the gate stays shut until every thread has had ample time to join the one flight.
    std::this_thread::sleep_for(300ms);
    open_gate.set_value();
    for (auto& thread : threads) thread.join();

    CHECK(factory_runs == 1);
    CHECK(failures == kThreads);
    for (const auto& message : messages) CHECK(message == "compile failed: bad template");
    CHECK_FALSE(cache.contains("broken"));

    auto value = cache.get_or_create("broken", [&] {
        ++factory_runs;
        return std::make_shared<int>(3);
    });
    CHECK(*value == 3);
    CHECK(factory_runs == 2);
    CHECK(cache.contains("broken"));
}

TEST_CASE("memory cache: at capacity the least recently used entry goes, held values stay valid") {
    SingleFlightCache<std::string, std::string> cache(2);
    auto make = [](std::string text) { return [text] { return std::make_shared<std::string>(text); }; };
    auto a = cache.get_or_create("a", make("A"));
    auto b = cache.get_or_create("b", make("B"));
    cache.get_or_create("a", make("unused"));  // a is now the most recent
    auto c = cache.get_or_create("c", make("C"));

    CHECK(cache.size() == 2);
    CHECK(cache.contains("a"));
    CHECK(cache.contains("c"));
    CHECK_FALSE(cache.contains("b"));
    CHECK(*b == "B");  // evicted, still alive for its holder

    int runs = 0;
    auto b_again = cache.get_or_create("b", [&] {
        ++runs;
        return std::make_shared<std::string>("B2");
    });
    CHECK(runs == 1);
    CHECK(*b_again == "B2");
    CHECK_FALSE(cache.contains("a"));  // c and b were used after a
}

TEST_CASE("memory cache: an entry still being made is not evicted") {
    SingleFlightCache<int, int> cache(1);
    std::promise<void> release;
    std::shared_future<void> gate = release.get_future().share();
    std::promise<void> started;
    std::atomic<int> runs_of_one{0};
    auto first = std::async(std::launch::async, [&] {
        return cache.get_or_create(1, [&] {
            ++runs_of_one;
            started.set_value();
            gate.wait();
            return std::make_shared<int>(10);
        });
    });
    started.get_future().wait();
    CHECK(*cache.get_or_create(2, [] { return std::make_shared<int>(20); }) == 20);
    CHECK(cache.contains(1));  // in flight: kept although over capacity

    auto second = std::async(std::launch::async, [&] {
        return cache.get_or_create(1, [&] {
            ++runs_of_one;
            return std::make_shared<int>(11);
        });
    });
    std::this_thread::sleep_for(100ms);
    release.set_value();
    CHECK(*first.get() == 10);
    CHECK(*second.get() == 10);
    CHECK(runs_of_one == 1);
}
