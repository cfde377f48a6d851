// mqa_logits() end to end on a fake AMD device: a child process finds the fake libamdhip64 and
// libhiprtc of tests/fake_hip/ by their real names (LD_LIBRARY_PATH), so the library's own
// dispatcher runs as it would on an MI355X: live-arch lookups despite MQAJIT_ARCH, hiprtc for the
// full target ID, aot code objects without hiprtc, and the baseline with one warning when the
// kernel is for another arch or hiprtc is missing. Nothing is computed: the fake records launches.

#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "codegen/family_support.hpp"
#include "codegen/prebuilt_amd.hpp"
#include "mqajit/error.hpp"
#include "mqajit/mqa_logits.hpp"
#include "runtime/backend.hpp"
#include "runtime/compiler_clang_hip.hpp"
#include "tests/hip_fakes.hpp"
#include "tests/support.hpp"
#include "tuning_db/sqlite.hpp"
#include "tuning_db/tuning_db.hpp"

using namespace mqajit;

namespace {

constexpr int kHeads = 32;
constexpr int kHeadDim = 128;

// One call on host memory (the fake device's memory is host memory); prints what served it.
void call_once(const mqajit::testing::FakeRocm& rocm, std::int64_t seq_len, std::int64_t seq_len_kv, bool clean_logits) {
    std::vector<unsigned char> q(seq_len * kHeads * kHeadDim), kv(seq_len_kv * kHeadDim);
    std::vector<float> scales(seq_len_kv, 1.0f), weights(seq_len * kHeads, 1.0f), logits(seq_len * seq_len_kv);
    std::vector<int> starts(seq_len, 0), ends(seq_len, static_cast<int>(seq_len_kv));
    DispatchReport report;
    try {
        mqa_logits(TensorView::contiguous(q.data(), DType::float8_e4m3, {seq_len, kHeads, kHeadDim}),
                   TensorView::contiguous(kv.data(), DType::float8_e4m3, {seq_len_kv, kHeadDim}),
                   TensorView::contiguous(scales.data(), DType::float32, {seq_len_kv}),
                   TensorView::contiguous(weights.data(), DType::float32, {seq_len, kHeads}),
                   TensorView::contiguous(starts.data(), DType::int32, {seq_len}),
                   TensorView::contiguous(ends.data(), DType::int32, {seq_len}),
                   TensorView::contiguous(logits.data(), DType::float32, {seq_len, seq_len_kv}),
                   MqaLogitsOptions{.clean_logits = clean_logits, .report = &report});
    } catch (const Error& e) {
        std::printf("ERROR %s\n", e.what());
        return;
    }
    const FakeHipLaunch& launch = rocm.last_launch();
    std::printf("RESULT %s launched %s block %u\nREASON %s\nLOADED %d\n", report.kernel.c_str(), launch.kernel,
                launch.block[0], report.reason.c_str(), rocm.live_modules());
}

// args: "hiprtc" | "wrong-arch" | "no-hiprtc", then seq_len:seq_len_kv[:clean_logits] calls (clean_logits
// 1 unless given).
MQAJIT_TEST_CHILD("hip-dispatch", [](const std::vector<std::string>& args) {
    const bool with_hiprtc = args.at(0) != "no-hiprtc";
    const mqajit::testing::FakeRocm rocm("libamdhip64.so", with_hiprtc ? "libhiprtc.so" : "");
    rocm.devices({mqajit::testing::kFakeMi355x});
    if (with_hiprtc) rocm.hiprtc(6, 2, false, args.at(0) == "wrong-arch" ? "gfx942" : nullptr);
    for (std::size_t i = 1; i < args.size(); ++i) {
        const std::size_t colon = args[i].find(':');
        const std::size_t mode = args[i].find(':', colon + 1);
        call_once(rocm, std::stoll(args[i].substr(0, colon)), std::stoll(args[i].substr(colon + 1, mode - colon - 1)),
                  mode == std::string::npos || args[i].substr(mode + 1) != "0");
    }
    if (with_hiprtc) std::printf("HIPRTC %d compile(s), last: %s\n", rocm.hiprtc_compiles(), rocm.hiprtc_options().c_str());
    std::fflush(stdout);
    return 0;
});

// Runs this test binary as the hip-dispatch child on the fake libraries, with `environment` added.
std::string run_child(const mqajit::testing::FakeRocmInstall& rocm, const std::string& environment,
                      const std::string& mode, const std::string& shapes) {
    std::string output;
    const int exit_code = rocm.run(environment + " " + std::filesystem::read_symlink("/proc/self/exe").string() +
                                       " --mqajit-child=hip-dispatch " + mode + " " + shapes,
                                   &output);
    INFO(output);
    CHECK(exit_code == 0);
    return output;
}

int count(const std::string& text, const std::string& needle) {
    int found = 0;
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++found;
    return found;
}

// Where a real GPU answers, the child would dispatch to it, not to the fake.
bool real_gpu_present() { return live_driver_status().available; }

const std::string kBaselineKernel = "mqa_logits_baseline_h32_d128";
// The gfx950 rows for (cu_num 256, H 32, D 128) of the shipped GLM-5 table.
const std::string kVariantA = "mfma32x32x64_bkv64_r1_w2_lds2";  // seq_len 256, seq_len_kv 4096
const std::string kVariantB = "mfma32x32x64_bkv64_r2_w2_lds3";  // seq_len 1024, seq_len_kv 4096

}  // namespace

TEST_CASE("hip dispatch (fake MI355X): rows are looked up with the live arch despite MQAJIT_ARCH, and hiprtc "
          "builds for the full target ID") {
    if (real_gpu_present()) MQAJIT_SKIP("a real GPU is present, so dispatch would not reach the fake AMD device");
    const mqajit::testing::FakeRocmInstall rocm(/*with_hiprtc=*/true);
    const std::string output = run_child(rocm, "MQAJIT_ARCH=gfx942", "hiprtc", "256:4096");
    INFO(output);
    const std::string kernel = generated_kernel_name(Variant::parse(kVariantA), kHeads, kHeadDim);
    CHECK(count(output, "RESULT " + kVariantA + " launched " + kernel + " block 128\n") == 1);
    CHECK(count(output, "HIPRTC 1 compile(s), last: --offload-arch=gfx950:sramecc+:xnack- ") == 1);
    CHECK(count(output, "MQAJIT_ARCH=gfx942 names gfx942, but the device is gfx950:sramecc+:xnack-") == 1);
    CHECK(count(output, "using the baseline") == 0);
}

TEST_CASE("hip dispatch (fake MI355X): a kernel built for another arch never runs, the baseline serves, with one "
          "warning") {
    if (real_gpu_present()) MQAJIT_SKIP("a real GPU is present, so dispatch would not reach the fake AMD device");
    const mqajit::testing::FakeRocmInstall rocm(/*with_hiprtc=*/true);
    const std::string output = run_child(rocm, "", "wrong-arch", "256:4096 256:4096");
    INFO(output);
    CHECK(count(output, "HIPRTC 1 compile(s)") == 1);
    CHECK(count(output, "variant " + kVariantA + " is unavailable on gfx950, using the baseline kernel instead") == 1);
    CHECK(count(output, "was built for gfx942, which this gfx950:sramecc+:xnack- device cannot run") >= 1);
    if (prebuilt_amd_archs().empty()) {
        CHECK(count(output, "ERROR this build of mqajit has no AMD baseline or reference kernel") == 2);
        return;
    }
    CHECK(count(output, "RESULT baseline launched " + kBaselineKernel + " block 256\n") == 2);
    CHECK(count(output, "REASON " + kVariantA + " failed to build: the code object of") == 2);
}

TEST_CASE("hip dispatch (fake MI355X): without hiprtc every tuned row falls back to the baseline with one warning") {
    if (real_gpu_present()) MQAJIT_SKIP("a real GPU is present, so dispatch would not reach the fake AMD device");
    const mqajit::testing::FakeRocmInstall rocm(/*with_hiprtc=*/false);
    const std::string output = run_child(rocm, "", "no-hiprtc", "256:4096 1024:4096");
    INFO(output);
    CHECK(count(output, "using the baseline kernel instead: hiprtc (libhiprtc.so) not found") == 1);
    CHECK(count(output, "using the baseline kernel instead") == 1);
    if (prebuilt_amd_archs().empty()) {
        CHECK(count(output, "ERROR this build of mqajit has no AMD baseline or reference kernel") == 2);
        return;
    }
    CHECK(count(output, "RESULT baseline launched " + kBaselineKernel + " block 256\n") == 2);
    CHECK(count(output, "REASON " + kVariantA + " failed to build: hiprtc (libhiprtc.so) not found") == 1);
    CHECK(count(output, "REASON " + kVariantB + " failed to build: hiprtc (libhiprtc.so) not found") == 1);

    // With JIT off the baseline serves without a warning.
    const std::string off = run_child(rocm, "MQAJIT_DISABLE_JIT=1", "no-hiprtc", "256:4096");
    CHECK(count(off, "RESULT baseline launched " + kBaselineKernel + " block 256\nREASON MQAJIT_DISABLE_JIT is set") == 1);
    CHECK(count(off, "warning") == 0);
}

TEST_CASE("hip dispatch (fake MI355X): a code object from `mqajit aot` serves without hiprtc") {
    if (real_gpu_present()) MQAJIT_SKIP("a real GPU is present, so dispatch would not reach the fake AMD device");
    try {
        ClangHipCompiler clang;
    } catch (const Error& e) {
        MQAJIT_SKIP(e.what());
    }
    const mqajit::testing::FakeRocmInstall rocm(/*with_hiprtc=*/false);
    std::string aot_output;
    REQUIRE(mqajit::testing::run_command("MQAJIT_CACHE_DIR=" + rocm.cache().string() + " " +
                                             mqajit::testing::cli_path().string() + " aot --arch gfx950 --variants " +
                                             kVariantA + " --heads 32 --head-dim 128 2>&1",
                                         &aot_output) == 0);
    const std::string output = run_child(rocm, "", "no-hiprtc", "256:4096");
    INFO(aot_output);
    INFO(output);
    const std::string kernel = generated_kernel_name(Variant::parse(kVariantA), kHeads, kHeadDim);
    CHECK(count(output, "RESULT " + kVariantA + " launched " + kernel + " block 128\n") == 1);
    CHECK(count(output, "warning") == 0);
}

TEST_CASE("hip dispatch (fake MI355X): a call is served by a row of its own clean_logits mode, else the other's") {
    if (real_gpu_present()) MQAJIT_SKIP("a real GPU is present, so dispatch would not reach the fake AMD device");
    const mqajit::testing::FakeRocmInstall rocm(/*with_hiprtc=*/true);
    // The shipped gfx950 rows are clean_logits=1 rows: a clean_logits=0 call is served by them, and says so.
    const std::string stand_in = run_child(rocm, "", "hiprtc", "1024:4096:0 256:4096:1");
    INFO(stand_in);
    CHECK(count(stand_in, "RESULT " + kVariantB + " launched") == 1);
    CHECK(count(stand_in, "; tuned with clean_logits=1, none with 0)") == 1);
    CHECK(count(stand_in, "RESULT " + kVariantA + " launched") == 1);

    // A user row tuned with clean_logits=0 serves the clean_logits=0 calls; the clean_logits=1 calls keep theirs.
    mqajit::testing::TempDir dir("hip-modes");
    const auto user_db = dir.path() / "tuning.db";
    // NOTES: a named key, not a nested temporary, which GCC 12 at -O3 falsely warns may be uninitialized.
    const ShapeKey callers_key{.arch = "gfx950", .cu_num = mqajit::testing::kFakeMi355x.compute_units, .heads = kHeads,
                               .head_dim = kHeadDim, .clean_logits = 0, .seq_len = 256, .seq_len_kv = 4096};
    TunedRow callers{.key = callers_key, .backend = "jit", .variant = kVariantB, .us = 1.0};
    TuningDb(std::nullopt, user_db).insert(callers);
    const std::string own = run_child(rocm, "MQAJIT_TUNING_DB=" + user_db.string(), "hiprtc", "256:4096:0 1024:4096:0 256:4096:1");
    INFO(own);
    CHECK(count(own, "RESULT " + kVariantB + " launched") == 2);
    CHECK(count(own, "REASON tuned row user:" + user_db.string() + " (seq_len 256, seq_len_kv 4096)\n") == 2);
    CHECK(count(own, "RESULT " + kVariantA + " launched") == 1);
    CHECK(count(own, "none with") == 0);
}

TEST_CASE("hip dispatch (fake MI355X): MQAJIT_MEMORY_CACHE_CAPACITY bounds the kernels that stay loaded") {
    if (real_gpu_present()) MQAJIT_SKIP("a real GPU is present, so dispatch would not reach the fake AMD device");
    const mqajit::testing::FakeRocmInstall rocm(/*with_hiprtc=*/true);
    // Rows A, B, A, B: with room for one kernel each call finds its kernel evicted and loads it
    // again (from the disk cache: hiprtc compiles each once), and only one stays loaded.
    const std::string output =
        run_child(rocm, "MQAJIT_MEMORY_CACHE_CAPACITY=1", "hiprtc", "256:4096 1024:4096 256:4096 1024:4096");
    INFO(output);
    CHECK(count(output, "RESULT " + kVariantA + " launched") == 2);
    CHECK(count(output, "RESULT " + kVariantB + " launched") == 2);
    CHECK(count(output, "LOADED 1\n") == 4);
    CHECK(count(output, "HIPRTC 2 compile(s)") == 1);
    // With room for both, both stay.
    const std::string roomy = run_child(rocm, "MQAJIT_MEMORY_CACHE_CAPACITY=8", "hiprtc", "256:4096 1024:4096 256:4096");
    INFO(roomy);
    CHECK(count(roomy, "LOADED 2\n") == 2);
}

TEST_CASE("hip dispatch (fake MI355X): a tuned row whose variant no longer parses serves the baseline with one "
          "warning") {
    if (real_gpu_present()) MQAJIT_SKIP("a real GPU is present, so dispatch would not reach the fake AMD device");
    const mqajit::testing::FakeRocmInstall rocm(/*with_hiprtc=*/true);
    // A row imported while it was valid, then renamed behind mqajit's back (another version wrote it,
    // or someone edited the file with sqlite3).
    const std::filesystem::path user_db = rocm.cache() / "edited.db";
    {
        TuningDb database(std::nullopt, user_db);
        TunedRow row;
        row.key = {.arch = "gfx950", .cu_num = 256, .heads = kHeads, .head_dim = kHeadDim, .clean_logits = 1,
                   .seq_len = 256, .seq_len_kv = 4096};
        row.backend = "jit";
        row.variant = kVariantA;
        row.us = 10.0;
        database.insert(row);
    }
    {
        sqlite::Database database(user_db, sqlite::OpenMode::read_write);
        database.execute("UPDATE tuned_mqa_logits SET variant = variant || '_v2'");
    }
    const std::string output = run_child(rocm, "MQAJIT_TUNING_DB=" + user_db.string(), "hiprtc", "256:4096 300:4096");
    INFO(output);
    CHECK(count(output, "ERROR") == 0);
    const std::string unparsable = "names variant '" + kVariantA + "_v2', which this build cannot parse";
    CHECK(count(output, unparsable + ": ") == 3);  // the warning, then each call's reason
    CHECK(count(output, "; using the baseline kernel instead (check the table with `mqajit db check`)") == 1);
    CHECK(count(output, "REASON tuned row user:" + user_db.string() + " " + unparsable) == 2);
    CHECK(count(output, "HIPRTC 0 compile(s)") == 1);
    if (prebuilt_amd_archs().empty()) return;
    CHECK(count(output, "RESULT baseline launched " + kBaselineKernel + " block 256\n") == 2);
}
