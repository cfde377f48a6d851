// The per-call cost of TuningDb::lookup once a group is loaded (target: well under 1 us), from one
// and from several threads, for the prefill table (two lengths) and the decode table (the batch),
// next to the one-time cost of loading a group from SQLite.

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tuning_db/tuning_db.hpp"

namespace {

using mqajit::PagedShapeKey;
using mqajit::PagedTunedRow;
using mqajit::ShapeKey;
using mqajit::TunedRow;
using mqajit::TuningDb;

constexpr std::int64_t kSeqLens[] = {256, 1024, 2048, 4096, 8192};
constexpr std::int64_t kSeqLensKv[] = {4096, 8192, 16384, 32768, 49152, 60000};
// The shipped decode shapes' batches (tuning_db/configs/model_configs/paged_mqa_logits_untuned_*.csv).
constexpr std::int64_t kBatches[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048};

PagedShapeKey decode_shape(std::int64_t batch) {
    return {.arch = "sm_90a", .cu_num = 132, .next_n = 2, .heads = 64, .head_dim = 128, .block_kv = 64,
            .clean_logits = 0, .batch = batch};
}

// A user database in a temp folder holding a GLM-5-sized group (30 rows), removed at exit.
struct BenchDatabase {
    std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("mqajit-bench-lookup-" + std::to_string(getpid()));
    std::filesystem::path user_db = dir / "tuning.db";

    BenchDatabase() {
        std::filesystem::remove_all(dir);
        TuningDb db(std::nullopt, user_db);
        std::vector<TunedRow> rows;
        for (std::int64_t n : kSeqLensKv) {
            for (std::int64_t s : kSeqLens) {
                TunedRow row;
                row.key = {.arch = "gfx950", .cu_num = 256, .heads = 32, .head_dim = 128, .seq_len = s, .seq_len_kv = n};
                row.backend = "jit";
                row.variant = "mfma32x32x64_bkv128_r2_w4_lds3";
                row.us = 1.0;
                rows.push_back(row);
            }
        }
        db.insert(rows);
        std::vector<PagedTunedRow> decode_rows;
        for (std::int64_t batch : kBatches) {
            PagedTunedRow row;
            row.key = decode_shape(batch);
            row.backend = "jit";
            row.variant = "pwgmma64x128x32_bkv64_r2_w2_lds4";
            row.us = 1.0;
            decode_rows.push_back(row);
        }
        db.insert(decode_rows);
    }
    ~BenchDatabase() {
        std::error_code ignored;
        std::filesystem::remove_all(dir, ignored);
    }
};

const BenchDatabase& bench_database() {
    static const BenchDatabase database;
    return database;
}

// Shapes between, on and outside the tuned lengths, so the searches do not always take one path.
std::vector<ShapeKey> query_shapes(int heads) {
    std::vector<ShapeKey> shapes;
    for (std::int64_t s = 1; s <= 10000; s = s * 3 + 7)
        for (std::int64_t n = 100; n <= 100000; n = n * 2 + 13)
            shapes.push_back({.arch = "gfx950", .cu_num = 256, .heads = heads, .head_dim = 128, .seq_len = s, .seq_len_kv = n});
    return shapes;
}

// Looks the shapes up in turn, each a loaded group's (the first lookup loads it).
template <class Key>
void time_loaded_lookups(benchmark::State& state, const TuningDb& db, const std::vector<Key>& shapes) {
    if (db.lookup(shapes.front()) == nullptr) state.SkipWithError("the benchmark group did not load");
    std::size_t next = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(db.lookup(shapes[next]));
        next = next + 1 == shapes.size() ? 0 : next + 1;
    }
    state.SetItemsProcessed(state.iterations());
}

void BM_lookup_loaded_group(benchmark::State& state) {
    static TuningDb db(std::nullopt, bench_database().user_db);
    time_loaded_lookups(state, db, query_shapes(32));
}
BENCHMARK(BM_lookup_loaded_group)->ThreadRange(1, 4)->UseRealTime();

void BM_paged_lookup_loaded_group(benchmark::State& state) {
    static TuningDb db(std::nullopt, bench_database().user_db);
    std::vector<PagedShapeKey> shapes;
    for (std::int64_t batch = 1; batch <= 5000; batch = batch * 3 + 1) shapes.push_back(decode_shape(batch));
    time_loaded_lookups(state, db, shapes);
}
BENCHMARK(BM_paged_lookup_loaded_group)->ThreadRange(1, 4)->UseRealTime();

void BM_lookup_untuned_group(benchmark::State& state) {
    static TuningDb db(std::nullopt, bench_database().user_db);
    const auto shapes = query_shapes(7);  // no rows: the baseline answer, also cached after one load
    for (auto _ : state) benchmark::DoNotOptimize(db.lookup(shapes[0]));
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_lookup_untuned_group);

void BM_explain(benchmark::State& state) {
    static TuningDb db(std::nullopt, bench_database().user_db);
    const auto shapes = query_shapes(32);
    std::size_t next = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(db.explain(shapes[next]));
        next = next + 1 == shapes.size() ? 0 : next + 1;
    }
}
BENCHMARK(BM_explain);

// The first lookup of a group: open nothing new, but read the group's rows from SQLite and sort them.
void BM_first_lookup_loads_group(benchmark::State& state) {
    const auto shapes = query_shapes(32);
    for (auto _ : state) {
        state.PauseTiming();
        auto db = std::make_unique<TuningDb>(std::nullopt, bench_database().user_db);
        state.ResumeTiming();
        benchmark::DoNotOptimize(db->lookup(shapes[0]));
        state.PauseTiming();
        db.reset();
        state.ResumeTiming();
    }
}
BENCHMARK(BM_first_lookup_loads_group)->Unit(benchmark::kMicrosecond);

}  // namespace
