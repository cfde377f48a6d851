#pragma once
// The two preprocessor lines that kernel templates are tied together with, read from one line of
// text: the template closure (templates.cpp) and `codegen --expand` (expanded_unit.cpp) both
// follow a template's includes.

#include <optional>
#include <string_view>

namespace mqajit {

// The name in an `#include "name"` line (spaces and tabs allowed around the '#'), else nullopt.
// `#include <name>` lines give nullopt.
std::optional<std::string_view> quoted_include(std::string_view line);

// Whether `line` is `#pragma once` (spaces and tabs allowed around each word).
bool is_pragma_once(std::string_view line);

}  // namespace mqajit
