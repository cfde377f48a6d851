#pragma once
// CLI11 validators that check a number's text before CLI11 converts it: CLI11 2.1 saturates a
// 64-bit integer that overflows and takes nan and inf for reals; these refuse both (exit 2).

#include <CLI/CLI.hpp>

#include <string>

#include "core/parse_number.hpp"

namespace mqajit::cli {

// A validator from one of core/parse_number.hpp's parsers: its problem text is CLI11's message.
template <auto parse>
CLI::Validator checked_number(const char* type_name, const char* validator_name) {
    return CLI::Validator(
        [](std::string& text) {
            std::string problem;
            return parse(text, &problem) ? std::string() : problem;
        },
        type_name, validator_name);
}

inline CLI::Validator whole_int64() { return checked_number<parse_whole_int64>("INT64", "whole_int64"); }
inline CLI::Validator finite_real() { return checked_number<parse_finite_double>("REAL", "finite_real"); }

}  // namespace mqajit::cli
