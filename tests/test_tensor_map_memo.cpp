// The per-thread memo of encoded tensor maps: a hit needs an equal request in every field, a
// different request in the same slot replaces it, and a miss never returns a stale map.

#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "runtime/tensor_map_memo.hpp"

namespace {

mqajit::TensorMapRequest request_at(std::uintptr_t address) {
    mqajit::TensorMapRequest r;
    r.base = reinterpret_cast<const void*>(address);
    r.rank = 2;
    r.dims[0] = 128;
    r.dims[1] = 4096;
    r.strides_bytes[0] = 128;
    r.box[0] = 128;
    r.box[1] = 64;
    return r;
}

MqaTensorMap map_with(unsigned long long word) {
    MqaTensorMap map{};
    for (auto& w : map.words) w = word;
    return map;
}

}  // namespace

TEST_CASE("tensor map memo: hits only on an equal request") {
    mqajit::TensorMapMemo memo;
    const auto base = request_at(0x7f0000000000);
    CHECK(memo.find(base) == nullptr);
    memo.insert(base, map_with(42));
    REQUIRE(memo.find(base) != nullptr);
    CHECK(memo.find(base)->words[15] == 42);

    // Any field that changes the encoding must miss.
    std::vector<mqajit::TensorMapRequest> others(9, base);
    others[0].base = reinterpret_cast<const void*>(0x7f0000000100);
    others[1].rank = 3;
    others[2].dims[1] = 4097;
    others[3].dims[2] = 1;
    others[4].strides_bytes[0] = 256;
    others[5].strides_bytes[1] = 4096;
    others[6].box[1] = 128;
    others[7].element_bytes = 4;
    others[8].swizzle_bytes = 64;
    for (const auto& other : others) {
        CHECK_FALSE(mqajit::same_request(other, base));
        CHECK(memo.find(other) == nullptr);
    }
}

TEST_CASE("tensor map memo: a request that lands in a used slot replaces the old one") {
    mqajit::TensorMapMemo memo;
    std::vector<mqajit::TensorMapRequest> requests;
    for (int i = 0; i < 64; ++i) requests.push_back(request_at(0x7f0000000000 + 0x100000ull * i));
    for (std::size_t i = 0; i < requests.size(); ++i) memo.insert(requests[i], map_with(i));
    int hits = 0;
    for (std::size_t i = 0; i < requests.size(); ++i) {
        if (const MqaTensorMap* found = memo.find(requests[i])) {
            CHECK(found->words[0] == i);  // never another request's map
            ++hits;
        }
    }
    CHECK(hits >= 1);
    CHECK(hits <= static_cast<int>(mqajit::TensorMapMemo::kSlots));
    // The most recent insert is always found.
    REQUIRE(memo.find(requests.back()) != nullptr);
    CHECK(memo.find(requests.back())->words[0] == requests.size() - 1);
}
