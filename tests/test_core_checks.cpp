// The core checks the hardening rests on: SHA-256 and HMAC-SHA256 against their published test
// vectors, UTF-8 well-formedness, checked number parsing, bounded regular-file reads, atomic
// writes and the folder trust walk.

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "core/files.hpp"
#include "core/parse_number.hpp"
#include "core/sha256.hpp"
#include "core/trusted_path.hpp"
#include "core/utf8.hpp"
#include "mqajit/error.hpp"
#include "tests/support.hpp"

using namespace mqajit;
using mqajit::testing::TempDir;
namespace fs = std::filesystem;

namespace {

std::string hmac_hex(std::string_view key, std::string_view message) {
    return to_hex(hmac_sha256(std::span(reinterpret_cast<const std::uint8_t*>(key.data()), key.size()), message));
}

}  // namespace

TEST_CASE("core: SHA-256 and HMAC-SHA256 give the published test vectors") {
    // FIPS 180-4 examples.
    CHECK(to_hex(sha256("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(to_hex(sha256("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(to_hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    CHECK(to_hex(sha256(std::string(1000000, 'a'))) ==
          "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    // Fed in pieces that straddle the 64-byte blocks: the same digest.
    Sha256 pieces;
    const std::string text(200, 'q');
    for (std::size_t at = 0; at < text.size(); at += 7) pieces.add(std::string_view(text).substr(at, 7));
    CHECK(to_hex(pieces.finish()) == to_hex(sha256(text)));
    // RFC 4231 test cases 1, 2 and 6 (a key longer than a block).
    CHECK(hmac_hex(std::string(20, '\x0b'), "Hi There") ==
          "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    CHECK(hmac_hex("Jefe", "what do ya want for nothing?") ==
          "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    CHECK(hmac_hex(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First") ==
          "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    CHECK(equal_in_constant_time("abc", "abc"));
    CHECK_FALSE(equal_in_constant_time("abc", "abd"));
    CHECK_FALSE(equal_in_constant_time("abc", "ab"));
}

TEST_CASE("core: UTF-8 well-formedness follows RFC 3629") {
    CHECK_FALSE(invalid_utf8_at("plain ascii").has_value());
    CHECK_FALSE(invalid_utf8_at("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf").has_value());
    CHECK(invalid_utf8_at("caf\xe9") == 3u);               // Latin-1
    CHECK(invalid_utf8_at("\xc0\xaf") == 0u);              // overlong '/'
    CHECK(invalid_utf8_at("a\xe0\x80\xaf") == 1u);         // overlong, 3 bytes
    CHECK(invalid_utf8_at("\xed\xa0\x80") == 0u);          // a surrogate
    CHECK(invalid_utf8_at("\xf4\x90\x80\x80") == 0u);      // past U+10FFFF
    CHECK(invalid_utf8_at("ok\xe2\x82") == 2u);            // cut short
    CHECK(invalid_utf8_at("\x80") == 0u);                  // a lone continuation byte
    CHECK(to_valid_utf8("caf\xe9!") == "caf\xef\xbf\xbd!");
    CHECK(to_valid_utf8("caf\xc3\xa9") == "caf\xc3\xa9");
}

TEST_CASE("core: numbers parse checked, never wrapped or saturated") {
    std::string problem;
    CHECK(parse_whole_int("2147483647") == 2147483647);
    CHECK(parse_whole_int("-2147483648") == -2147483647 - 1);
    CHECK_FALSE(parse_whole_int("2147483648", &problem).has_value());
    CHECK(problem.find("out of range") != std::string::npos);
    CHECK_FALSE(parse_whole_int("4294967297").has_value());
    CHECK_FALSE(parse_whole_int64("99999999999999999999", &problem).has_value());
    CHECK(problem.find("out of range") != std::string::npos);
    for (const char* bad : {"", " 1", "1 ", "+1", "0x10", "12x", "1.0", "--1"}) {
        CAPTURE(bad);
        CHECK_FALSE(parse_whole_int64(bad, &problem).has_value());
        CHECK(problem.find("not a whole number") != std::string::npos);
    }
    CHECK_FALSE(parse_whole_uint64("-1").has_value());
    CHECK(parse_finite_double("2.5e-3") == 2.5e-3);
    for (const char* bad : {"nan", "inf", "-inf", "1e999", "infinity", "NAN"}) {
        CAPTURE(bad);
        CHECK_FALSE(parse_finite_double(bad, &problem).has_value());
        CHECK(problem.find("not a finite number") != std::string::npos);
    }
    CHECK_FALSE(parse_finite_double("1.5x", &problem).has_value());
    CHECK(problem.find("not a number") != std::string::npos);
}

TEST_CASE("core: whole-file reads take regular files only, within a limit, and writes are atomic") {
    TempDir dir("core-files");
    const fs::path file = dir.path() / "table.csv";
    write_file_atomically(file, "a,b\n1,2\n");
    CHECK(read_regular_file(file, "table") == "a,b\n1,2\n");
    CHECK((fs::status(file).permissions() & fs::perms::all) == (fs::perms::owner_read | fs::perms::owner_write |
                                                                  fs::perms::group_read | fs::perms::others_read));
    write_file_atomically(file, "replaced");
    CHECK(read_regular_file(file, "table") == "replaced");
    CHECK_THROWS_AS(read_regular_file(file, "table", 4), Error);  // over the limit

    const fs::path fifo = dir.path() / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    try {
        read_regular_file(fifo, "shapes file");  // would block forever with a plain open
        FAIL("a FIFO was read");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::io);
        CHECK(std::string(e.what()).find("is a FIFO, not a regular file") != std::string::npos);
    }
    CHECK_THROWS_AS(read_regular_file("/dev/zero", "table"), Error);
    CHECK_THROWS_AS(read_regular_file(dir.path(), "table"), Error);
    CHECK_THROWS_AS(read_regular_file(dir.path() / "absent", "table"), Error);
    // Nothing but the two files is left in the folder by the writes.
    CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()) == 2);

    // Writers racing on one target each publish a whole file.
    std::vector<std::thread> writers;
    for (int i = 0; i < 8; ++i)
        writers.emplace_back([&, i] { write_file_atomically(file, std::string(1000, static_cast<char>('a' + i))); });
    for (auto& writer : writers) writer.join();
    const std::string last = read_regular_file(file, "table");
    CHECK(last.size() == 1000);
    CHECK(last == std::string(1000, last[0]));
}

TEST_CASE("core: an atomic write follows links, keeps a file's permissions and writes pipes and devices in place") {
    TempDir dir("core-files-kinds");
    const fs::path file = dir.path() / "table.csv";
    write_file_atomically(file, "precious");
    fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
    const fs::path link = dir.path() / "link.csv";
    fs::create_symlink(file, link);
    write_file_atomically(link, "through the link");
    CHECK(fs::is_symlink(link));  // the link stays, the file it names is replaced
    CHECK(read_regular_file(file, "table") == "through the link");
    CHECK((fs::status(file).permissions() & fs::perms::all) == (fs::perms::owner_read | fs::perms::owner_write));

    // A pipe is written, not replaced by a file: a reader sees the bytes.
    const fs::path fifo = dir.path() / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    std::string received;
    std::thread reader([&] {
        std::ifstream in(fifo);
        received.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    });
    write_file_atomically(fifo, "into the pipe");
    reader.join();
    CHECK(received == "into the pipe");
    CHECK(fs::is_fifo(fifo));
    write_file_atomically("/dev/null", "discarded");
    CHECK(fs::is_character_file("/dev/null"));
    try {
        write_file_atomically(dir.path(), "x");
        FAIL("a folder was written");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find("it is a folder") != std::string::npos);
    }
    // No temporary file is left: the file, the link and the pipe.
    CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()) == 3);
}

TEST_CASE("core: the folder trust walk") {
    const TrustPolicy policy = TrustPolicy::for_process(std::nullopt);
    TempDir dir("core-trust");
    CHECK_FALSE(untrusted_folder_problem(dir.path(), policy).has_value());
    CHECK_FALSE(untrusted_folder_problem(dir.path() / "not" / "yet", policy).has_value());
    // /tmp itself is sticky and every user's: fine to pass through, not to hold the files.
    CHECK(untrusted_folder_problem(fs::temp_directory_path(), policy).has_value());

    const fs::path open = dir.path() / "open";
    fs::create_directory(open);
    fs::permissions(open, fs::perms::all);
    auto problem = untrusted_folder_problem(open / "cache", policy);
    REQUIRE(problem.has_value());
    CHECK(problem->find("is writable by every user (mode 0777)") != std::string::npos);

    // A link is followed, and the folders where it leads are checked.
    fs::create_directory_symlink(open, dir.path() / "link");
    CHECK(untrusted_folder_problem(dir.path() / "link" / "cache", policy).has_value());
    fs::permissions(open, fs::perms::owner_all);
    CHECK_FALSE(untrusted_folder_problem(dir.path() / "link" / "cache", policy).has_value());
    std::ofstream(dir.path() / "file") << "x";
    CHECK(untrusted_folder_problem(dir.path() / "file" / "cache", policy).has_value());

    create_trusted_folders(dir.path() / "made" / "here", policy);
    CHECK((fs::status(dir.path() / "made" / "here").permissions() & fs::perms::all) == fs::perms::owner_all);

    if (geteuid() != 0) {
        MESSAGE("skipped the other-owner cases: they need root");
        return;
    }
    const fs::path theirs = dir.path() / "theirs";
    fs::create_directory(theirs);
    REQUIRE(::chown(theirs.c_str(), 65534, 65534) == 0);
    problem = untrusted_folder_problem(theirs / "cache", policy);
    REQUIRE(problem.has_value());
    CHECK(problem->find("owned by uid 65534") != std::string::npos);
    // A symbolic link another user owns is not followed, wherever it points.
    fs::create_directory_symlink(dir.path() / "made", dir.path() / "their-link");
    REQUIRE(::lchown((dir.path() / "their-link").c_str(), 65534, 65534) == 0);
    problem = untrusted_folder_problem(dir.path() / "their-link" / "here", policy);
    REQUIRE(problem.has_value());
    CHECK(problem->find("is a symbolic link owned by uid 65534") != std::string::npos);
    // A shared group must be one this process may use.
    CHECK_THROWS_AS(TrustPolicy::for_process(std::string("no-such-group-mqajit")), Error);
}
