#pragma once
// CLI11 validators that check a number's text before CLI11 converts it: CLI11 2.1 saturates a
// 64-bit integer that overflows and takes nan and inf for reals; these refuse both (exit 2).

#include <CLI/CLI.hpp>

#include <string>

#include "core/parse_number.hpp"

namespace mqajit::cli {

inline CLI::Validator whole_int64() {
    return CLI::Validator(
        [](std::string& text) {
            std::string problem;
            return parse_whole_int64(text, &problem) ? std::string() : problem;
        },
        "INT64", "whole_int64");
}

inline CLI::Validator finite_real() {
    return CLI::Validator(
        [](std::string& text) {
            std::string problem;
            return parse_finite_double(text, &problem) ? std::string() : problem;
        },
        "REAL", "finite_real");
}

}  // namespace mqajit::cli
