// The include and pragma lines the template closure and `codegen --expand` follow.

#include <doctest/doctest.h>

#include <optional>
#include <string_view>

#include "codegen/include_lines.hpp"

using mqajit::is_pragma_once;
using mqajit::quoted_include;

TEST_CASE("include lines: a quoted include gives its name, blanks around '#' allowed") {
    CHECK(quoted_include("#include \"sm90_wgmma.cuh\"") == std::optional<std::string_view>("sm90_wgmma.cuh"));
    CHECK(quoted_include(" \t#  include\t\"a.cuh\"  // why\r") == std::optional<std::string_view>("a.cuh"));
    CHECK(quoted_include("#include\"a.cuh\"") == std::optional<std::string_view>("a.cuh"));
}

TEST_CASE("include lines: anything else is not a quoted include") {
    CHECK_FALSE(quoted_include("#include <cuda.h>"));
    CHECK_FALSE(quoted_include("#include \"unterminated.cuh"));
    CHECK_FALSE(quoted_include("#includes \"a.cuh\""));
    CHECK_FALSE(quoted_include("// #include \"a.cuh\""));
    CHECK_FALSE(quoted_include("int x;  #include \"a.cuh\""));
    CHECK_FALSE(quoted_include(""));
}

TEST_CASE("include lines: #pragma once, and only it") {
    CHECK(is_pragma_once("#pragma once"));
    CHECK(is_pragma_once("  #  pragma   once \r"));
    CHECK_FALSE(is_pragma_once("#pragma unroll"));
    CHECK_FALSE(is_pragma_once("#pragmaonce"));
    CHECK_FALSE(is_pragma_once("#pragma once_more"));
    CHECK_FALSE(is_pragma_once("// #pragma once"));
}
