// Decode shapes files that are no regular file, missing or huge: `read_paged_shapes_csv` (and so
// `mqajit bench/tune --op paged_mqa_logits --shapes/-i`) refuses them with the same hardened read
// as the prefill shapes reader, instead of blocking on a FIFO or reading a folder as an empty file.

#include <sys/stat.h>

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "core/check.hpp"
#include "core/files.hpp"
#include "tests/error_kind.hpp"
#include "tests/support.hpp"
#include "tools/common/paged_shapes.hpp"
#include "tools/common/shapes.hpp"

using namespace mqajit;
using namespace mqajit::testing;
namespace fs = std::filesystem;

namespace {

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

// The message and kind of the error reading `path` as a decode shapes file.
std::pair<ErrorKind, std::string> paged_refusal(const fs::path& path) {
    try {
        (void)tools::read_paged_shapes_csv(path);
    } catch (const Error& e) {
        return {e.kind(), e.what()};
    }
    FAIL("no error for " << path.string());
    return {};
}

int cli(const std::string& arguments, std::string* output) {
    const int code = run_command("env -u MQAJIT_ARCH '" + cli_path().string() + "' " + arguments, output);
    INFO(*output);
    return code;
}

}  // namespace

TEST_CASE("paged shapes files: a folder, a FIFO and a huge file are refused as io errors, as for prefill") {
    TempDir dir("paged-shapes-files");
    const auto [folder_kind, folder_message] = paged_refusal(dir.path());
    CHECK(folder_kind == ErrorKind::io);
    CHECK(contains(folder_message, "decode shapes file"));
    CHECK(contains(folder_message, "is a folder, not a regular file"));
    CHECK(error_kind_of([&] { (void)tools::read_shapes_csv(dir.path()); }) == folder_kind);

    const fs::path fifo = dir.path() / "shapes.fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const auto [fifo_kind, fifo_message] = paged_refusal(fifo);  // a plain open would wait for a writer
    CHECK(fifo_kind == ErrorKind::io);
    CHECK(contains(fifo_message, "is a FIFO, not a regular file"));

    const fs::path huge = dir.path() / "huge.csv";
    write_file_atomically(huge, "batch,next_n,heads,context_len\n");
    fs::resize_file(huge, kMaxTableFileBytes + 1);  // sparse: nothing is written
    const auto [huge_kind, huge_message] = paged_refusal(huge);
    CHECK(huge_kind == ErrorKind::io);
    CHECK(contains(huge_message, "files over"));

    const auto [missing_kind, missing_message] = paged_refusal(dir.path() / "absent.csv");
    CHECK(missing_kind == ErrorKind::not_found);
    CHECK(contains(missing_message, "absent.csv does not exist"));
}

TEST_CASE("paged shapes files: a byte-order mark and CRLF line ends read as the prefill reader reads them") {
    TempDir dir("paged-shapes-bom");
    const fs::path file = dir.path() / "shapes.csv";
    write_file_atomically(file, "\xEF\xBB\xBF" "batch,next_n,heads,context_len\r\n4,2,64,4096;8192\r\n\r\n# note\r\n");
    const auto shapes = tools::read_paged_shapes_csv(file);
    REQUIRE(shapes.size() == 1);
    CHECK(shapes[0].batch == 4);
    CHECK(shapes[0].next_n == 2);
    CHECK(shapes[0].contexts == std::vector<int>{4096, 8192});
}

TEST_CASE("paged shapes files: `bench --op paged_mqa_logits --shapes` a folder or a missing file exits 1, saying why") {
    TempDir dir("paged-shapes-cli");
    std::string output;
    CHECK(cli("bench --op paged_mqa_logits --shapes '" + dir.path().string() + "'", &output) == 1);
    CHECK(contains(output, "is a folder, not a regular file"));
    CHECK(cli("bench --op paged_mqa_logits --shapes '" + (dir.path() / "none.csv").string() + "'", &output) == 1);
    CHECK(contains(output, "none.csv does not exist"));
}
